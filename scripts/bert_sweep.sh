#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MiniLM fine-tuning ablation, reduced: masked-language-model
# fine-tuning of the pretrained encoder (tahq-train --model minilm) through
# K = 3 pipeline stages on the Shakespeare corpus, for a few boundary
# methods over paired seeds (each seed: the same windows, masks and
# validation masks for every method), with the outlier gate's statistics
# at every boundary every --dump-every steps. Each (method, seed) is one
# tahq-train process under /usr/bin/time (peak memory); a rerun skips the
# runs whose CSV exists (resume). Progress and ETA on a terminal.
#
#   scripts/bert_sweep.sh [--out DIR] [--build DIR] [--seeds LIST] [--methods LIST]
#                         [-- TAHQ_TRAIN_OPTIONS...]
#
# Defaults (1-5 minutes per seed and method on this machine, depending on
# what else runs; 20 runs, under an hour in all): methods fp32, tah4/3 (token
# allocation, tau 2, the paper's operating point), tah4/3-tauinf (the same
# allocation without the gate), plain4 (one width, no gate); seeds 1..5;
# 40 steps of 2 x 4 samples of 64 tokens (9 masked each), lr 1e-4 with 4
# warm-up steps, fixpoint-6 backward for the compressed methods;
# validation on 32 windows (288 masked tokens) every 10 steps. Output:
# DIR/METHOD_k3_sSEED.csv, DIR/acts/RUN/act_stats.csv, DIR/mem.csv (run,
# peak resident KiB), DIR/*.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=build/bert-sweep build=build seeds=1,2,3,4,5 methods=fp32,tah4/3,tah4/3-tauinf,plain4 extra=()
while [ "$#" -gt 0 ]; do
  case "$1" in
  --out) out=$2; shift 2 ;;
  --build) build=$2; shift 2 ;;
  --seeds) seeds=$2; shift 2 ;;
  --methods) methods=$2; shift 2 ;;
  --) shift; extra=("$@"); break ;;
  *) echo "bert_sweep.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build/sgd_sim/transformer/tahq-train"
[ -x "$bin" ] || { echo "bert_sweep.sh: $bin not found (build with cmake first)" >&2; exit 1; }
[ -s "$build/minilm/model.safetensors" ] || scripts/fetch_model.sh "$build/minilm"
[ -s "$build/shakespeare/train.bin" ] || scripts/fetch_corpus.sh "$build/shakespeare"
mkdir -p "$out/acts"
[ -s "$out/mem.csv" ] || echo "run,peak_rss_kib,seconds" >"$out/mem.csv"
IFS=, read -r -a ml <<<"$methods"
IFS=, read -r -a sl <<<"$seeds"
total=$((${#ml[@]} * ${#sl[@]})) n=0 ran=0 skipped=0 t0=$(date +%s)
# seeds outer: a stopped sweep has whole seeds (complete pairs) first
for s in "${sl[@]}"; do
  for m in "${ml[@]}"; do
    n=$((n + 1))
    name=$(printf '%s' "$m" | tr '/+' '-_')_k3_s$s
    if [ -s "$out/$name.csv" ]; then
      echo "[$n/$total] $name done"
      skipped=$((skipped + 1))
      continue
    fi
    /usr/bin/time -f "%M %e" -o "$out/$name.time" nice -n 10 "$bin" --model minilm \
      --model-dir "$build/minilm" --data "$build/shakespeare" --stages 3 --context 64 \
      --micro 2 --batch 4 --steps 40 --warmup 4 --lr 1e-4 --eval-every 10 --eval-windows 32 \
      --print-every 10 --method "$m" --seed "$s" --out "$out" \
      --dump-activations "$out/acts" --dump-every 10 "${extra[@]}" >"$out/$name.log" 2>&1 ||
      { echo "bert_sweep.sh: $name failed (see $out/$name.log)" >&2; exit 1; }
    read -r rss sec <"$out/$name.time"
    echo "$name,$rss,$sec" >>"$out/mem.csv"
    rm -f "$out/acts/$name/"*.npy # the statistics stay; the tensors are large
    el=$(($(date +%s) - t0)) ran=$((ran + 1))
    # the ETA from the runs made by this invocation (resumed ones took no time)
    echo "[$n/$total] $name: $(grep '^run .*: loss' "$out/$name.log" | sed 's/^run [^:]*: //'); peak ${rss} KiB; sweep eta $((el * (total - n) / ran)) s"
  done
done
echo "bert_sweep.sh: $total runs in $out"
