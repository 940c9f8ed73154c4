#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the CSVs behind the generated tables of sgd_sim/README.md with
# the current tahq-sim, then the tables themselves (sgd_sim/tables.py).
#   sgd_sim/tables.sh [BUILD_DIR] [JOBS] [PART ...]     (build, 2, all parts)
# Parts (their CPU times: results/sgd_sim/sim-tables/README.md):
#   floor      floor                      floor.csv (30 configurations)
#   range      floor --range              floor_range.csv, floor_range_summary.csv
#                                         (10 methods; the stochastic 5/4 and 6/5
#                                         rows carry 8x and 16x iterations)
#   rangeq     floor --range --quick      floor_range_quick.csv (the CTest's reference)
#   converge   converge --quick           converge_verdict.csv, converge_summary.csv,
#                                         converge_local.csv (quick methods, tah-gain
#                                         and the schedule controls)
#   full       converge                   converge_full_{verdict,summary,local}.csv
#                                         (T = 2^8..2^16, the quick methods)
#   delta      delta                      delta.csv (the ray table)
#   traj       delta --trajectory         delta_traj.csv, delta_cross.csv
#   train      train                      train.txt (its printed table)
#   throughput throughput                 throughput.txt (its printout: message sizes and the
#                                         model are deterministic, codec times measured)
#   ttrain     tahq-train, C = 256            train_w256_*.csv (6 methods seed 1, fp32 and tah
#                                         seeds 2, 3; 150 steps)
#   taqsgd     tahq-train, C = 320, 256 windows  train_aqsgd_*.csv (fp32, tah, aqsgd)
# Each run writes into a scratch folder, and its CSVs are copied into
# results/sgd_sim/sim-tables only when the run succeeded; every part is
# deterministic (no time in its CSVs), so a rerun writes the same bytes.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
J=${2:-2}
[ "$#" -ge 2 ] && shift 2 || shift "$#"
PARTS=${*:-floor range rangeq converge full delta traj train throughput ttrain taqsgd}
SIM=$B/sgd_sim/tahq-sim
[ -x "$SIM" ] || { echo "tables.sh: $SIM not found (build first)" >&2; exit 1; }
D=results/sgd_sim/sim-tables
W=$B/sim-tables
mkdir -p "$D" "$W"
export OPENBLAS_NUM_THREADS=1
QUICK_METHODS=fp32,tah,tah-gain,tah3/2,bias2,fp32@0.75,fp32@0.4,fp32@0.35,fp32@0.6
TRAJ_METHODS=tah,tah-gain,tah-sr,tah-gain-sr,tah3/2,tah3/2-gain,tah3/2-sr,tah-tile-g16,plain4,fp32+bwd-fix6,fp16
for part in $PARTS; do
    echo "tables.sh: $part" >&2
    case $part in
    floor)
        "$SIM" floor --jobs "$J" --out "$W/floor" >"$W/floor.txt"
        cp "$W/floor/floor.csv" "$D/" ;;
    range)
        "$SIM" floor --range --jobs "$J" --out "$W/range" >"$W/range.txt"
        cp "$W/range/floor_range.csv" "$W/range/floor_range_summary.csv" "$D/" ;;
    rangeq)
        "$SIM" floor --range --quick --jobs 1 --out "$W/rangeq" >"$W/rangeq.txt"
        cp "$W/rangeq/floor_range.csv" "$D/floor_range_quick.csv" ;;
    converge)
        "$SIM" converge --quick --jobs "$J" --methods "$QUICK_METHODS" --out "$W/conv" >"$W/conv.txt"
        for f in verdict summary local; do cp "$W/conv/converge_$f.csv" "$D/"; done ;;
    full)
        "$SIM" converge --jobs "$J" --methods "$QUICK_METHODS" --out "$W/full" >"$W/full.txt"
        for f in verdict summary local; do cp "$W/full/converge_$f.csv" "$D/converge_full_$f.csv"; done ;;
    delta)
        "$SIM" delta --jobs "$J" --out "$W/delta" >"$W/delta.txt"
        cp "$W/delta/delta.csv" "$D/" ;;
    traj)
        "$SIM" delta --trajectory --jobs "$J" --methods "$TRAJ_METHODS" --out "$W/traj" >"$W/traj.txt"
        cp "$W/traj/delta_traj.csv" "$W/traj/delta_cross.csv" "$D/" ;;
    train)
        "$SIM" train --jobs "$J" --out "$W/train" >"$W/train.txt"
        cp "$W/train.txt" "$D/train.txt" ;;
    throughput)
        "$SIM" throughput --out "$W/tp" >"$W/throughput.txt"
        cp "$W/throughput.txt" "$D/" ;;
    ttrain | taqsgd)
        TT=$B/sgd_sim/transformer/tahq-train
        [ -x "$TT" ] || { echo "tables.sh: $TT not found (build first)" >&2; exit 1; }
        DATA=${TAHQ_TRAIN_DATA:-$B/shakespeare}
        # K = 4, M = 4 x B = 2 sequences of 128 bytes, seed-determined windows;
        # --out resumes (a finished run's CSV is kept) and the CSVs hold no times
        if [ "$part" = ttrain ]; then
            o="--channels 256 --heads 4 --steps 150 --warmup 15 --eval-every 50"
            runs="fp32,fp16,tah,tah-tile,tah3/2,plain4:1 fp32,tah:2,3" tag=w256
        else
            o="--steps 100 --warmup 10 --eval-every 10 --train-windows 256"
            runs="fp32,tah,aqsgd:1" tag=aqsgd
        fi
        for r in $runs; do
            "$TT" --data "$DATA" $o --method "${r%%:*}" --seed "${r#*:}" --print-every 0 \
                --progress off --out "$W/$part" >>"$W/$part.txt"
        done
        for f in "$W/$part"/*.csv; do cp "$f" "$D/train_${tag}_$(basename "$f")"; done ;;
    *) echo "tables.sh: unknown part $part" >&2; exit 2 ;;
    esac
done
python3 sgd_sim/tables.py write
