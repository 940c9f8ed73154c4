#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest links_quick (label links): scripts/slow_links.sh --quick (fp32 and
# TAH over a 100 Mbit/s shaped link, K = 2, a small model, a built-in text)
# must finish, write its two rows, and pass its own byte check: in each
# direction the TCP payload the qdisc counted (bytes - 66 x packets) lies
# between the bytes the program handed to MPI and that plus the bound on
# Open MPI's own headers and collectives (plots/links.py, check_row). The
# control repeats the check with program counts that leave out the
# tied-embedding exchange (what a program counting only the boundary
# messages would report), and every comparison must then fail, so the check
# can see a miscount. Exit 77 (SKIP) where the script cannot make a network
# namespace or shape lo.
#   slow_links_test.sh BUILD_DIR WORKDIR
set -u
. "$(dirname "$0")/../tests/lib.sh"
t_tag links_quick
[ "$#" -eq 2 ] || usage "slow_links_test.sh BUILD_DIR WORKDIR"
build=$1
here=$(cd "$(dirname "$0")" && pwd)
w=$(fresh_dir "$2") || fail "cannot make $2"
mkdir -p "$w/corpus"
i=0
while [ $i -lt 200 ]; do
  echo "A message between two stages crosses a shaped link; the qdisc counts its bytes, and so does the program. $i"
  i=$((i + 1))
done >"$w/corpus/train.bin"
head -c 4000 "$w/corpus/train.bin" >"$w/corpus/val.bin"
bash "$here/slow_links.sh" --quick --build "$build" --data "$w/corpus" --out "$w/out" >"$w/run.log" 2>&1
rc=$?
cat "$w/run.log"
[ $rc -ne 77 ] || skip "slow_links.sh --quick cannot run here (see above)"
[ $rc -eq 0 ] || fail "slow_links.sh --quick exited $rc"
n=$(($(wc -l <"$w/out/runs.csv") - 1))
[ "$n" -eq 2 ] || fail "expected 2 rows in runs.csv, got $n"
python3 "$here/../plots/links.py" check --control "$w/out/runs.csv" ||
  fail "the control (a count without the tied-embedding exchange) passed the byte check"
finish links_quick
