#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the CSVs behind the generated tables of sgd_sim/README.md with
# the current tahq-sim, then the tables themselves (sgd_sim/tables.py).
#   sgd_sim/tables.sh [BUILD_DIR] [JOBS]     (build, 2)
# Runs (CPU time at 2.7 ms per descent iteration; converge about 10 min):
#   floor                      floor.csv (30 configurations)
#   floor --range              floor_range.csv, floor_range_summary.csv
#   floor --range --quick      floor_range_quick.csv (the CTest's reference)
#   converge --quick           converge_verdict.csv (quick methods and tah-gain)
#   delta --trajectory         delta_traj.csv (token and gain, 4/3 and 3/2)
# Each run writes into a scratch folder, and its CSV is copied into
# sgd_sim/results/sim-tables only when the run succeeded.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
J=${2:-2}
SIM=$B/sgd_sim/tahq-sim
[ -x "$SIM" ] || { echo "tables.sh: $SIM not found (build first)" >&2; exit 1; }
D=sgd_sim/results/sim-tables
W=$B/sim-tables
mkdir -p "$D" "$W"
export OPENBLAS_NUM_THREADS=1
"$SIM" floor --jobs "$J" --out "$W/floor" >"$W/floor.txt"
cp "$W/floor/floor.csv" "$D/"
"$SIM" floor --range --jobs "$J" --out "$W/range" >"$W/range.txt"
cp "$W/range/floor_range.csv" "$W/range/floor_range_summary.csv" "$D/"
"$SIM" floor --range --quick --jobs 1 --out "$W/rangeq" >"$W/rangeq.txt"
cp "$W/rangeq/floor_range.csv" "$D/floor_range_quick.csv"
"$SIM" converge --quick --jobs "$J" --methods fp32,tah,tah-gain,tah3/2,bias2,fp32@0.75,fp32@0.4,fp32@0.35,fp32@0.6 --out "$W/conv" >"$W/conv.txt"
cp "$W/conv/converge_verdict.csv" "$D/"
"$SIM" delta --trajectory --jobs "$J" --methods tah,tah-gain,tah3/2,tah3/2-gain,tah-sr,tah-gain-sr \
    --out "$W/traj" >"$W/traj.txt"
cp "$W/traj/delta_traj.csv" "$D/"
python3 sgd_sim/tables.py write
