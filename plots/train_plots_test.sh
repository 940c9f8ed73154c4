#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest train_plots: the loss figure pipeline of a tahq-train sweep
# (plots/train_summary.py, plots/train.sh) on a tiny sweep: K = 2, a small
# model, 2 seeds x fp32 and tah, 12 steps, on a generated text.
#   train_plots_test.sh TAHQ_TRAIN WORKDIR
# Checks: every CSV is written with one row per (method, step) and n = 2;
# fp32's paired difference to itself is exactly 0 at every evaluation (the
# pairing is by seed: a wrong pairing gives a non-zero difference, which
# the control below shows on swapped seed files); the PNG exists; a folder
# without runs exits 1; a broken gnuplot script exits 1 and leaves no PNG.
set -u
. "$(dirname "$0")/../tests/lib.sh"
BIN=$1
W=$2
here=$(abs_dir "$(dirname "$0")")
rm -rf "$W"
mkdir -p "$W/runs"
i=0
while [ $i -lt 40 ]; do
  echo "Each stage sends its activations to the next one and receives gradients back, $i times."
  i=$((i + 1))
done >"$W/train.txt"
tail -c 600 "$W/train.txt" >"$W/val.txt"
"$BIN" --method fp32,tah --seed 1,2 --steps 12 --channels 64 --layers 2 --heads 2 --context 32 \
  --stages 2 --micro 2 --batch 2 --train-file "$W/train.txt" --val-file "$W/val.txt" \
  --eval-windows 4 --eval-every 4 --print-every 0 --out "$W/runs" >"$W/train.log" 2>&1 ||
  fail_later "tahq-train failed: $(tail -n 3 "$W/train.log")"
sh "$here/train.sh" "$W/runs" >"$W/plot.log" 2>&1 || fail_later "train.sh failed: $(tail -n 3 "$W/plot.log")"
for f in train_curves train_val train_val_diff train_final; do
  [ -s "$W/runs/$f.csv" ] || fail_later "$f.csv missing"
done
# 2 methods x 12 steps of curves; evaluations at 4, 8, 12
[ "$(awk 'END { print NR - 1 }' "$W/runs/train_curves.csv")" = 24 ] || fail_later "train_curves.csv rows"
[ "$(awk -F, 'NR > 1 && $6 == 2' "$W/runs/train_val.csv" | wc -l)" = 6 ] || fail_later "train_val.csv rows with n = 2"
awk -F, 'NR > 1 && $1 == "fp32_k2" && ($3 != 0 || $4 != 0 || $5 != 0) { b = 1 } END { exit b }' \
  "$W/runs/train_val_diff.csv" || fail_later "fp32 minus fp32 is not 0"
[ "$(awk -F, 'NR > 1 && $1 == "tah_k2"' "$W/runs/train_val_diff.csv" | wc -l)" = 3 ] || fail_later "tah's paired differences"
[ -s "$W/runs/train_loss.png" ] || fail_later "train_loss.png missing"
# control: fp32's seed files swapped, so seed 1 of fp32 is paired with seed 2
mkdir -p "$W/swap"
cp "$W/runs/"*_s[12].csv "$W/swap/"
mv "$W/swap/fp32_k2_s1.csv" "$W/swap/t"; mv "$W/swap/fp32_k2_s2.csv" "$W/swap/fp32_k2_s1.csv"
mv "$W/swap/t" "$W/swap/fp32_k2_s2.csv"
python3 "$here/train_summary.py" "$W/swap" >/dev/null || fail_later "summary of the swapped set"
cmp -s "$W/swap/train_val_diff.csv" "$W/runs/train_val_diff.csv" && fail_later "swapped seeds give the same paired differences"
# no fp32 run: two panels, none of them the (empty) difference to fp32
mkdir -p "$W/nofp32"
cp "$W/runs/"tah_k2_s[12].csv "$W/nofp32/"
sh "$here/train.sh" "$W/nofp32" >"$W/nofp32.log" 2>&1 || fail_later "train.sh without fp32 failed: $(tail -n 3 "$W/nofp32.log")"
grep -q "no fp32 run" "$W/nofp32.log" || fail_later "train.sh without fp32 does not say that the panel is left out"
[ -s "$W/nofp32/train_loss.svg" ] || fail_later "train.sh without fp32 drew no figure"
grep -q "minus fp32" "$W/nofp32/train_loss.svg" && fail_later "train.sh without fp32 drew the difference panel"
grep -q "minus fp32" "$W/runs/train_loss.svg" || fail_later "control: the figure with fp32 lacks the difference panel"
# errors: no runs; a gnuplot failure
mkdir -p "$W/empty"
python3 "$here/train_summary.py" "$W/empty" >/dev/null 2>&1 && fail_later "an empty folder is accepted"
mkdir -p "$W/broken"
cp "$here"/*.gp "$here/train.sh" "$here/train_summary.py" "$W/broken/"
echo "plot nonsense_that_fails(x)" >>"$W/broken/train_loss.gp"
rm -f "$W/runs/train_loss.png"
sh "$W/broken/train.sh" "$W/runs" >/dev/null 2>&1 && fail_later "a gnuplot failure exits 0"
[ -e "$W/runs/train_loss.png" ] && fail_later "a gnuplot failure left a PNG"
finish train_plots
