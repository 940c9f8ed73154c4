#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest sim_tables: the generated tables of sgd_sim/README.md equal what
# sgd_sim/tables.py derives from the committed CSVs (results/sgd_sim/
# sim-tables), and the current tahq-sim still writes those CSVs. Every tool
# run here is deterministic, so its output is compared byte for byte:
#   floor --range --quick          floor_range_quick.csv (tah3/2, 40 iterations: a
#                                  regression check of the floor --range code path)
#   delta (all its codecs)         delta.csv, the whole file (table delta_ray)
#   delta --trajectory --methods tah    the tah rows of delta_traj.csv and
#                                  delta_cross.csv (tables delta_traj, delta_end)
#   train --methods tah            the tah row of train.txt (table train_llm)
#   plots/train_paired.py          on the committed runs.csv of
#                                  results/sgd_sim/train-paired: its paired*.csv/.md/.dat
#                                  and pilot*, and that folder's README tables
#   throughput                     throughput.txt without its measured codec
#                                  times (the message sizes, the model's
#                                  assumptions and its 'codec free' table)
# The other tables (floor_bits, floor_codec, floor_dataset, floor_range,
# converge_*, the tahq-train tables train_*, throughput's codec times) are
# checked against their committed files only: rerunning the tools behind
# them is long (results/sgd_sim/sim-tables/README.md), or their numbers
# are times.
# Controls: a README copy with one table digit changed
# must fail the check, and so must a CSV directory with one delta.csv value
# changed and a throughput printout with TAH's message size changed.
#   tables_test.sh PYTHON TAHQ_SIM WORKDIR
set -u
. "$(dirname "$0")/../tests/lib.sh"
PY=$1
SIM=$2
W=$3
HERE=$(abs_dir "$(dirname "$0")")
C=$HERE/../results/sgd_sim/sim-tables
W=$(fresh_dir "$W") || exit 1
"$PY" "$HERE/tables.py" check || fail_later "tables.py check failed"
# control: change the first digit after the first generated-table header
awk 'BEGIN { done = 0 } /^<!-- table / { inside = 1 }
     inside && !done && /^\| [^-]/ && NR > 0 && ++n == 2 { sub(/[0-9]/, "X"); done = 1 }
     { print }' "$HERE/README.md" >"$W/README.md"
if "$PY" "$HERE/tables.py" check --readme "$W/README.md" >/dev/null 2>&1; then
    fail_later "control: a README with a changed table digit passed the check"
else
    echo "control: a README with a changed table digit fails the check"
fi
# control: the same README against a CSV folder whose delta.csv has one
# delta changed (tah at alpha 0.1) must fail too
mkdir -p "$W/csv"
cp "$C"/* "$W/csv/"
awk -F, 'BEGIN { OFS = "," } $1 == "tah" && $4 == "0.1" { $7 = $7 + 0.01 } { print }' "$C/delta.csv" >"$W/csv/delta.csv"
if "$PY" "$HERE/tables.py" check --csv "$W/csv" >/dev/null 2>&1; then
    fail_later "control: a changed delta.csv value passed the check"
else
    echo "control: a changed delta.csv value fails the check"
fi
export OPENBLAS_NUM_THREADS=1
same() { # what, produced, committed
    if cmp -s "$2" "$3"; then
        echo "$1: identical to the committed $(basename "$3")"
    else
        fail_later "$1 differs from the committed $(basename "$3") (regenerate it: sgd_sim/tables.sh, or for train-paired the commands of its README):"
        diff "$2" "$3" | head -20
    fi
}
"$SIM" floor --range --quick --jobs 1 --out "$W/q" >"$W/q.txt" 2>&1 || true
same "floor --range --quick" "$W/q/floor_range.csv" "$C/floor_range_quick.csv"
"$SIM" delta --jobs 1 --out "$W/d" >"$W/d.txt" 2>&1 || true
same "delta" "$W/d/delta.csv" "$C/delta.csv"
"$SIM" delta --trajectory --jobs 1 --methods tah --out "$W/t" >"$W/t.txt" 2>&1 || true
for f in delta_traj delta_cross; do
    awk -F, 'NR == 1 || $1 == "tah"' "$C/$f.csv" >"$W/$f.committed.csv"
    same "delta --trajectory --methods tah ($f)" "$W/t/$f.csv" "$W/$f.committed.csv"
done
"$SIM" train --jobs 1 --methods tah --out "$W/tr" >"$W/tr.txt" 2>/dev/null || true
grep '^tah ' "$W/tr.txt" >"$W/tr.row" || true
grep '^tah ' "$C/train.txt" >"$W/tr.committed.row" || true
if [ -s "$W/tr.row" ] && cmp -s "$W/tr.row" "$W/tr.committed.row"; then
    echo "train --methods tah: the row of the committed train.txt"
else
    fail_later "train --methods tah prints another row than the committed train.txt:"
    cat "$W/tr.row" "$W/tr.committed.row"
fi
# throughput: everything but the measured codec times (the last two columns
# of the message table, the 'codec cpu' table) is a function of the codec's
# bytes and the model's constants
untimed() {
    awk '/^method +fwd_bytes/ { t = 1 } /^tokens\/s \(codec cpu/ { skip = 1 }
         /^$/ { t = 0; if (skip) { skip = 0; next } }
         skip { next } t { print $1, $2, $3; next } { print }' "$1"
}
"$SIM" throughput --out "$W/tp" >"$W/tp.txt" 2>/dev/null || true
untimed "$W/tp.txt" >"$W/tp.untimed"
untimed "$C/throughput.txt" >"$W/tp.committed.untimed"
if [ "$(wc -l <"$W/tp.untimed")" -gt 20 ]; then
    same "throughput (untimed lines)" "$W/tp.untimed" "$W/tp.committed.untimed"
    # control: the filter must keep the message sizes (TAH's forward bytes + 1)
    sed 's/^\(tah  *\)\([0-9][0-9]*\)/\1\21/' "$C/throughput.txt" | untimed /dev/stdin >"$W/tp.altered"
    if cmp -s "$W/tp.altered" "$W/tp.untimed"; then
        fail_later "control: a changed TAH message size passed the throughput comparison"
    else
        echo "control: a changed TAH message size fails the throughput comparison"
    fi
else
    fail_later "throughput printed $(wc -l <"$W/tp.untimed") untimed lines"
fi
# the paired tahq-train sweep: plots/train_paired.py on the committed
# runs.csv writes the committed analysis, and the folder's README tables
# are those files
P=$HERE/../results/sgd_sim/train-paired
TP=$HERE/../plots/train_paired.py
mkdir -p "$W/paired"
cp "$P/runs.csv" "$W/paired/"
"$PY" "$TP" "$W/paired" --complete >/dev/null 2>&1 || true
"$PY" "$TP" "$W/paired" --complete --seeds 1-7 --prefix pilot >/dev/null 2>&1 || true
for f in paired.csv paired.md paired_seeds.md paired_contrasts.csv paired_contrasts.md paired.dat pilot.csv pilot.md; do
    same "train_paired.py on runs.csv ($f)" "$W/paired/$f" "$P/$f"
done
# control of the TOST verdict: it must flip when the margin covers the
# interval. TAH 4/3's committed 90% interval is [+0.0051, +0.0132]: "not
# shown" at the pre-set margin 0.01 (0.0132 > 0.01), "equivalent" at 0.02
# (both ends inside +-0.02); a verdict that never says "equivalent" fails.
mkdir -p "$W/tost"
cp "$P/runs.csv" "$W/tost/"
"$PY" "$TP" "$W/tost" --complete --margin 0.02 --prefix wide >/dev/null 2>&1 || true
tost_of() { "$PY" -c 'import csv,sys
print(next((r["tost"] for r in csv.DictReader(open(sys.argv[1])) if r["method"] == "tah"), "missing"))' "$1"; }
narrow=$(tost_of "$W/paired/paired.csv"); wide=$(tost_of "$W/tost/wide.csv")
if [ "$narrow" = "not shown" ] && [ "$wide" = "equivalent" ]; then
    echo "control: the TOST verdict for tah flips from 'not shown' (+-0.01) to 'equivalent' (+-0.02)"
else
    fail_later "control: TOST verdict for tah at +-0.01 '$narrow', at +-0.02 '$wide'"
fi
"$PY" "$HERE/tables.py" check --readme "$P/README.md" || fail_later "tables.py check failed"
finish sim_tables
