#!/bin/sh
# SPDX-License-Identifier: MIT
# Activations of the pretrained MiniLM encoder at its stage boundaries, and
# what TAH-Quant's outlier gate does with them.
#
#   scripts/minilm_act_study.sh OUT_DIR [BUILD_DIR]
#
# 1. tahq-train --model minilm, fp32, K = 6 (a boundary after each of blocks
#    1..5), one step of 4 Shakespeare windows of 128 tokens, seed 1: each
#    boundary's forward activation before any update (BUILD/minilm-acts,
#    float32 [4, 128, 384], not committed) and its statistics
#    (OUT/act_stats_step1.csv: channel RMS, kurtosis, top channels, the tah
#    gate's flagged tiles);
# 2. tahq roundtrip of each tensor over tau {0, 0.5, 1, 2, 4, inf} x tile
#    G {32, 64, 128} at 4/3 bits, r = 0.8, token allocation:
#    OUT/gate_grid.csv (flagged-tile share, relative MSE, bits/element);
# 3. tahq alloc-study on the five tensors: OUT/run_alloc_study.txt,
#    alloc_study.csv, alloc_control.csv;
# 4. tahq bounds --quick on each tensor (error per bit budget against the
#    SPEC bound, the gate and allocation ablations): OUT/run_bounds.txt.
set -eu
OUT=$1 BUILD=${2:-build}
TRAIN=$BUILD/sgd_sim/transformer/tahq-train TAHQ=$BUILD/cli/tahq
ACTS=$BUILD/minilm-acts
mkdir -p "$OUT"
[ -s "$BUILD/minilm/model.safetensors" ] || scripts/fetch_model.sh "$BUILD/minilm"
[ -s "$BUILD/shakespeare/train.bin" ] || scripts/fetch_corpus.sh "$BUILD/shakespeare"
rm -rf "$ACTS"
"$TRAIN" --model minilm --model-dir "$BUILD/minilm" --data "$BUILD/shakespeare" --method fp32 \
    --stages 6 --context 128 --micro 1 --batch 4 --steps 1 --eval-windows 4 --seed 1 \
    --dump-activations "$ACTS" >"$OUT/dump.log" 2>&1
cp "$ACTS/fp32_k6_s1/act_stats.csv" "$OUT/act_stats_step1.csv"
echo "boundary,tile,tau,tiles,flagged,flagged_share,rel_mse,bits_per_element" >"$OUT/gate_grid.csv"
for b in 0 1 2 3 4; do
    for g in 32 64 128; do
        for tau in 0 0.5 1 2 4 inf; do
            "$TAHQ" roundtrip "$ACTS/fp32_k6_s1/act_b${b}_step1.npy" --tile "$g" --tau "$tau" --json |
                python3 -c '
import json, sys
r = json.load(sys.stdin)
b, g, tau = sys.argv[1:4]
tiles = r["elements"] // int(g)
f = r["n_flagged"]
print("%s,%s,%s,%d,%d,%.6f,%.6e,%.6f" % (b, g, tau, tiles, f, f / tiles, r["rel_mse"], r["bits_per_element"]))
' "$b" "$g" "$tau" >>"$OUT/gate_grid.csv"
        done
    done
done
"$TAHQ" alloc-study $(for b in 0 1 2 3 4; do echo --input "$ACTS/fp32_k6_s1/act_b${b}_step1.npy"; done) \
    --out-dir "$BUILD/minilm-alloc" >"$OUT/run_alloc_study.txt" 2>&1
cp "$BUILD/minilm-alloc/alloc_study.csv" "$BUILD/minilm-alloc/alloc_control.csv" "$OUT/"
: >"$OUT/run_bounds.txt"
for b in 0 1 2 3 4; do
    "$TAHQ" bounds --quick --jobs 1 --no-progress --input "$ACTS/fp32_k6_s1/act_b${b}_step1.npy" \
        --out-dir "$BUILD/minilm-bounds/b$b" >>"$OUT/run_bounds.txt" 2>&1
done
echo "minilm_act_study: $OUT/act_stats_step1.csv, gate_grid.csv, run_alloc_study.txt, run_bounds.txt"
