#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check (or, with --fix, apply) the tree's C, C++ and CUDA formatting
# (.clang-format) over the folders listed below. CTest `format_check`.
# usage: scripts/check_format.sh [--fix] [--list] [--self-test]
# Exit 0 formatted, 1 files differ, 2 usage, 77 no usable clang-format.
#
# clang-format's output changes between major versions, so the check runs
# with the version the tree was formatted with (Debian 12's clang-format 14);
# another version reports SKIPPED rather than a verdict on its own style.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FORMAT_MAJOR=14
FOLDERS=(cli common cpu fuzz golden include kernels proofs ref sgd_sim support tests)

fix=0
list=0
self_test=0
for a in "$@"; do
  case "$a" in
  --fix) fix=1 ;;
  --list) list=1 ;;
  --self-test) self_test=1 ;;
  -h | --help)
    sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "check_format.sh: unknown option '$a' (see --help)" >&2
    exit 2
    ;;
  esac
done

cf=""
for c in clang-format-$FORMAT_MAJOR clang-format; do
  if command -v "$c" >/dev/null 2>&1; then
    cf="$c"
    break
  fi
done
if [ -z "$cf" ]; then
  echo "check_format: SKIPPED: clang-format is not installed (Debian: apt-get install clang-format)" >&2
  exit 77
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$major" != "$FORMAT_MAJOR" ]; then
  echo "check_format: SKIPPED: $cf is version $major; the tree is formatted with $FORMAT_MAJOR" >&2
  exit 77
fi

# unformatted FILE: clang-format with the tree's style would change FILE
unformatted() { ! "$cf" --style=file:.clang-format --dry-run --Werror "$1" >/dev/null 2>&1; }

if [ "$self_test" = 1 ]; then
  # control: the check tells a formatted file from one that is not
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf 'int f(int x)\n{\n    return x + 1;\n}\n' >"$tmp/good.c"
  printf 'int f( int x ){return x+1;}\n' >"$tmp/bad.c"
  if unformatted "$tmp/good.c" || ! unformatted "$tmp/bad.c"; then
    echo "check_format: self-test FAILED: the check does not tell good.c from bad.c" >&2
    exit 1
  fi
  echo "check_format: self-test: a formatted file passes, an unformatted one is reported"
  exit 0
fi

mapfile -t files < <(git ls-files -- "${FOLDERS[@]}" | grep -E '\.(c|h|cpp|hpp|cu|cuh)$' || true)
if [ "${#files[@]}" -eq 0 ]; then
  echo "check_format: no source files found (not a git checkout?)" >&2
  exit 2
fi
if [ "$list" = 1 ]; then
  printf '%s\n' "${files[@]}"
  exit 0
fi
if [ "$fix" = 1 ]; then
  "$cf" -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if unformatted "$f"; then
    bad+=("$f")
  fi
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted (scripts/check_format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  for f in "${bad[@]:0:3}"; do
    "$cf" "$f" | diff -u "$f" - | head -20 >&2 || true
  done
  exit 1
fi
echo "check_format: ${#files[@]} files formatted ($cf $major)"
