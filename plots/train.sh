#!/bin/sh
# SPDX-License-Identifier: MIT
# The loss figure of a tahq-train sweep: seed statistics (train_summary.py),
# then train_loss.png and .svg, in the sweep's folder.
# usage: plots/train.sh DIR     (DIR: the --out folder of tahq-train)
# A gnuplot failure exits 1 and leaves no figure; without gnuplot the
# statistics are still written and the figure is skipped with a message.
set -eu
[ $# -eq 1 ] || { echo "usage: plots/train.sh DIR" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/train_summary.py" "$out"
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots/train.sh: gnuplot not found; figure skipped"
  exit 0
fi
methods=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s%s", sep, $1; sep = " " }' "$out/train_final.csv")
nseeds=$(awk -F, 'NR > 1 { if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2 } END { print (min == max) ? min : min "-" max }' "$out/train_final.csv")
# the third panel (validation loss minus fp32's) needs an fp32 run of the
# same K; without one it is left out rather than drawn empty
if awk 'NR > 1 { found = 1 } END { exit !found }' "$out/train_val_diff.csv"; then
  hasdiff=1
else
  hasdiff=0
  echo "plots/train.sh: no fp32 run in $out: the panel of differences to fp32 is left out"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for fmt in png svg; do
  gnuplot -e "plotdir='$here'; val='$out/train_val.csv'; curves='$out/train_curves.csv'; diff='$out/train_val_diff.csv'; outdir='$tmp'; fmt='$fmt'; methods='$methods'; nseeds='$nseeds'; hasdiff=$hasdiff" \
    "$here/train_loss.gp" || { echo "plots/train.sh: gnuplot failed; no figure written" >&2; exit 1; }
done
mv "$tmp/train_loss.png" "$tmp/train_loss.svg" "$out/"
echo "plots/train.sh: wrote $out/train_loss.png and $out/train_loss.svg"
