#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest sim_tables: the generated tables of sgd_sim/README.md equal what
# sgd_sim/tables.py derives from the committed CSVs (sgd_sim/results/
# sim-tables), and the current tahq-sim still writes the committed quick
# reference (floor --range --quick: deterministic, compared byte for byte).
# Control: a README copy with one table digit changed must fail the check.
#   tables_test.sh PYTHON TAHQ_SIM WORKDIR
set -u
PY=$1
SIM=$2
W=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$W"
mkdir -p "$W"
fail=0
"$PY" "$HERE/tables.py" check || fail=1
# control: change the first digit after the first generated-table header
awk 'BEGIN { done = 0 } /^<!-- table / { inside = 1 }
     inside && !done && /^\| [^-]/ && NR > 0 && ++n == 2 { sub(/[0-9]/, "X"); done = 1 }
     { print }' "$HERE/README.md" >"$W/README.md"
if "$PY" "$HERE/tables.py" check --readme "$W/README.md" >/dev/null 2>&1; then
    echo "FAIL control: a README with a changed table digit passed the check"
    fail=1
else
    echo "control: a README with a changed table digit fails the check"
fi
OPENBLAS_NUM_THREADS=1 "$SIM" floor --range --quick --jobs 1 --out "$W/q" >"$W/q.txt" 2>&1 || true
if cmp -s "$W/q/floor_range.csv" "$HERE/results/sim-tables/floor_range_quick.csv"; then
    echo "floor --range --quick: identical to the committed floor_range_quick.csv"
else
    echo "FAIL: floor --range --quick differs from results/sim-tables/floor_range_quick.csv (run sgd_sim/tables.sh):"
    diff "$W/q/floor_range.csv" "$HERE/results/sim-tables/floor_range_quick.csv"
    fail=1
fi
exit $fail
