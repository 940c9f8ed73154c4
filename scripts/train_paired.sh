#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Paired seeds for an equivalence test (TOST) of tahq-train methods against
# fp32: every method runs with the same seed (same initialisation, same
# training windows in the same order, same validation windows), so the
# difference of validation losses at the last step is a paired observation.
# Seeds run in order, all methods of a seed before the next seed, so an
# interrupted sweep leaves complete pairs. One row per finished run is
# appended to OUT/runs.csv; a rerun skips the (method, seed) pairs already
# there (resume). plots/train_paired.py OUT analyses the rows.
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: scripts/train_paired.sh [--seeds A-B] [--stride S] [--out DIR] [--build DIR] [--quick]
  --seeds A-B  seeds A..B (1-10: the pilot)
  --stride S   every S-th seed from A (1): two processes with --seeds A-B and
               --seeds A+1-B at --stride 2 share the cores and the runs.csv
  --out DIR    results folder (results/sgd_sim/train-paired)
  --build DIR  the CMake build holding sgd_sim/transformer/tahq-train (build)
  --quick      20 steps, 2 seeds, 16 validation windows (tests the script only)
Setting (fixed before the pilot): methods fp32, tah (4/3 token), tah-gain
(4/3 gain), plain4, tah3/2 (token), tah3/2-gain, each with the fixpoint-6
backward except fp32; K = 4 stages; C = 128, 4 blocks, 4 heads, context 64;
4 micro-batches of 2 sequences; 300 steps, AdamW peak lr 2e-3, linear
decay; a fresh training window per sample (no repeats, no overfitting);
validation loss over 256 evenly spaced windows of the validation works
every 100 steps. About 25 s of one core per run.
USAGE
}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
first=1 last=10 stride=1 out=results/sgd_sim/train-paired build=build quick=0
while [ "$#" -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --quick) quick=1; shift ;;
  --seeds | --stride | --out | --build)
    [ "$#" -ge 2 ] || { echo "train_paired.sh: $1 needs a value" >&2; exit 2; }
    case "$1" in
    --seeds)
      [[ "$2" =~ ^([1-9][0-9]*)-([1-9][0-9]*)$ ]] || { echo "train_paired.sh: --seeds A-B" >&2; exit 2; }
      first=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]} ;;
    --stride)
      [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "train_paired.sh: --stride S (S >= 1)" >&2; exit 2; }
      stride=$2 ;;
    --out) out=$2 ;;
    --build) build=$2 ;;
    esac
    shift 2 ;;
  *) echo "train_paired.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
bin="$build/sgd_sim/transformer/tahq-train"
[ -x "$bin" ] || { echo "train_paired.sh: $bin not found (build with cmake first)" >&2; exit 1; }
data="$build/shakespeare"
[ -s "$data/train.bin" ] || scripts/fetch_corpus.sh "$data"
methods=(fp32 tah tah-gain plain4 tah3/2 tah3/2-gain)
steps=300 eval_windows=256 eval_every=100
if [ "$quick" -eq 1 ]; then
  steps=20 eval_windows=16 eval_every=10
  [ "$last" -gt "$((first + 1))" ] && last=$((first + 1))
fi
model=(--stages 4 --channels 128 --layers 4 --heads 4 --context 64 --micro 4 --batch 2
       --steps "$steps" --lr 2e-3 --eval-windows "$eval_windows" --eval-every "$eval_every")
mkdir -p "$out/runs"
rows="$out/runs.csv"
[ -s "$rows" ] || echo "method,seed,steps,val_loss_last,val_loss_mid,train_loss_last10,fwd_bytes_per_step,bwd_bytes_per_step" >"$rows"
export OPENBLAS_NUM_THREADS=1
for ((seed = first; seed <= last; seed += stride)); do
  for m in "${methods[@]}"; do
    if awk -F, -v m="$m" -v s="$seed" -v n="$steps" '$1 == m && $2 == s && $3 == n { f = 1 } END { exit !f }' "$rows"; then
      continue
    fi
    tag="$(tr '/+' '-_' <<<"$m")_k4_s$seed"
    log="$out/runs/$tag.log" # one log per run: concurrent processes do not share it
    "$bin" --data "$data" --method "$m" --seed "$seed" "${model[@]}" --print-every 0 \
      --out "$out/runs" >"$log" 2>&1 ||
      { echo "train_paired.sh: $m seed $seed failed: $(tail -n 3 "$log")" >&2; exit 1; }
    f="$out/runs/$tag.csv"
    [ -s "$f" ] || { echo "train_paired.sh: $f missing after the run" >&2; exit 1; }
    # the last step's validation loss, the one half-way, the mean training
    # loss of the last 10 steps, the mean message bytes per step
    awk -F, -v m="$m" -v s="$seed" -v n="$steps" -v mid="$((steps / 2 - (steps / 2) % eval_every))" '
      NR > 1 { if ($1 == n) vl = $4; if ($1 == mid) vm = $4; if ($1 > n - 10) { t += $3; nt++ }
               fb += $6; bb += $7; k++ }
      END { printf "%s,%d,%d,%s,%s,%.6f,%.0f,%.0f\n", m, s, n, vl, vm, t / nt, fb / k, bb / k }' "$f" >>"$rows"
    echo "train_paired.sh: $m seed $seed: $(tail -n 1 "$rows")"
  done
done
