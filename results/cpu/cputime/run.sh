#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - builds cputime.c against the libtahq of two build trees and
# alternates them RUNS times per path; writes cputime-<which>-<path>-<i>.json
# and uptime.txt here, then the table (table.py).
# usage: run.sh BASE_SRC BASE_BUILD NEW_SRC NEW_BUILD [RUNS] [PATHS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base_src=$1 base_build=$2 new_src=$3 new_build=$4
runs=${5:-3}
shift 5 || shift $#
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(avx2 avx512)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for which in base new; do
  src=$base_src build=$base_build
  [ "$which" = new ] && src=$new_src build=$new_build
  cc -O2 -I"$src/include" -I"$src/support" -I"$src/cpu" "$here/cputime.c" \
    "$build/ref/libtahq.a" "$build/support/libtahq_support.a" -lm -lpthread -o "$tmp/cputime-$which"
done
: > "$here/uptime.txt"
for i in $(seq 1 "$runs"); do
  for p in "${paths[@]}"; do
    for which in base new; do
      echo "$which $p $i start: $(uptime)" >> "$here/uptime.txt"
      "$tmp/cputime-$which" "$p" 7 > "$here/cputime-$which-$p-$i.json"
    done
  done
done
echo "end: $(uptime)" >> "$here/uptime.txt"
python3 "$here/table.py" "$here" > "$here/table.md"
cat "$here/table.md"
