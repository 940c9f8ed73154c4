#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tahq-train loss figure from fresh runs: every method over several
# seeds through K = 4 pipeline stages on the Shakespeare corpus, then
# plots/train.sh (seed statistics and train_loss.png with min-max bands).
# Runs are written as they finish and a rerun resumes (tahq-train skips a
# run whose CSV exists), so an interrupted sweep loses at most its current
# runs. Each job prints its ETA on a terminal.
set -euo pipefail
usage() {
  cat <<'USAGE'
usage: scripts/train_sweep.sh [--quick | --full] [--out DIR] [--build DIR] [--jobs N] [-- TAHQ_TRAIN_OPTIONS...]
  --full       8 methods x 3 seeds, 400 steps each (default): fp32 fp16 tah
               tah-tile tah3/2 tah2/1 plain4 aqsgd, all with the fixpoint-6
               backward except fp32; about 4 minutes of CPU per run, i.e.
               about 50 minutes on two free cores
  --quick      fp32, tah and aqsgd, one seed, 60 steps, 128 windows (3.75
               epochs, so AQ-SGD reaches its delta messages; a few minutes)
  --out DIR    results (default build/train-sweep, or build/train-quick)
  --build DIR  the CMake build holding sgd_sim/transformer/tahq-train (build)
  --jobs N     tahq-train processes at once, each on part of the methods (2)
With --full every method uses the same fixed set of 1024 training windows per seed
(--train-windows 1024, 128 KiB of text visited 3.1 times in 400 steps:
AQ-SGD needs repeated samples, and the others see the same data; with 256
windows the model overfits from about 5 epochs on, see
results/sgd_sim/train-w256-overfit/). Options after -- go to every tahq-train call. The corpus is
fetched with scripts/fetch_corpus.sh when BUILD/shakespeare is missing.
--full starts from the runs committed in results/sgd_sim/train-sweep/ (copied
into DIR when missing there); copy DIR's finished run files back there to
commit them.
USAGE
}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=full out="" build=build jobs=2 extra=()
while [ "$#" -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --full) mode=full; shift ;;
  --quick) mode=quick; shift ;;
  --out | --build | --jobs)
    [ "$#" -ge 2 ] || { echo "train_sweep.sh: $1 needs a value" >&2; exit 2; }
    case "$1" in --out) out=$2 ;; --build) build=$2 ;; --jobs) jobs=$2 ;; esac
    shift 2 ;;
  --) shift; extra=("$@"); break ;;
  *) echo "train_sweep.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "train_sweep.sh: --jobs needs a positive integer" >&2; exit 2; }
bin="$build/sgd_sim/transformer/tahq-train"
[ -x "$bin" ] || { echo "train_sweep.sh: $bin not found (build with cmake first)" >&2; exit 1; }
data="$build/shakespeare"
[ -s "$data/train.bin" ] || scripts/fetch_corpus.sh "$data"
if [ "$mode" = full ]; then
  methods=(fp32 fp16 tah tah-tile tah3/2 tah2/1 plain4 aqsgd) seeds=1,2,3 steps=400 windows=1024
  out=${out:-$build/train-sweep}
else
  methods=(fp32 tah aqsgd) seeds=1 steps=60 windows=128
  out=${out:-$build/train-quick}
fi
mkdir -p "$out"
# the full sweep's committed runs (results/sgd_sim/train-sweep/) count as done:
# copied in when missing, so a sweep spread over several sessions resumes
committed=results/sgd_sim/train-sweep
if [ "$mode" = full ] && [ -d "$committed" ]; then
  for f in "$committed"/*_k4_s*.csv; do
    [ -e "$f" ] && [ ! -e "$out/$(basename "$f")" ] && cp "$f" "$out/"
  done
fi
export OPENBLAS_NUM_THREADS=1
# methods dealt round-robin to the jobs; each job runs its methods over every seed
pids=()
for ((j = 0; j < jobs && j < ${#methods[@]}; j++)); do
  part=()
  for ((i = j; i < ${#methods[@]}; i += jobs)); do part+=("${methods[i]}"); done
  list=$(IFS=,; echo "${part[*]}")
  echo "train_sweep.sh: job $((j + 1)): $list, seeds $seeds, $steps steps -> $out (log $out/job$((j + 1)).log)"
  "$bin" --data "$data" --method "$list" --seed "$seeds" --steps "$steps" --stages 4 \
    --train-windows "$windows" --print-every 50 --out "$out" ${extra[@]+"${extra[@]}"} \
    >"$out/job$((j + 1)).log" 2>&1 &
  pids+=("$!")
done
# progress: finished runs (their CSVs) and an ETA at the pace so far
total=$(( ${#methods[@]} * $(tr ',' '\n' <<<"$seeds" | wc -l) ))
count() { find "$out" -maxdepth 1 -name '*_k*_s*.csv' | wc -l; }
start=$(date +%s) before=$(count)
while :; do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ "$alive" -eq 1 ] || break
  sleep 20
  done_now=$(count) el=$(( $(date +%s) - start ))
  if [ "$done_now" -gt "$before" ]; then
    eta=$(( el * (total - done_now) / (done_now - before) ))
    echo "train_sweep.sh: $done_now/$total runs done, ${el} s elapsed, about ${eta} s left"
  else
    echo "train_sweep.sh: $done_now/$total runs done, ${el} s elapsed"
  fi
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
if [ "$status" -ne 0 ]; then
  echo "train_sweep.sh: a job failed; see $out/job*.log (finished runs are kept; rerun to resume)" >&2
  exit 1
fi
sh plots/train.sh "$out"
