#!/bin/sh
# SPDX-License-Identifier: MIT
# The slow-link figures (plots/links.gp) from a results folder that holds
# summary.csv (plots/links.py summary) and the links_*.csv of
# `tahq-sim throughput --calibrate`: links_measured, links_epochs and
# links_projection (.png and .svg), in that folder.
# usage: plots/links.sh DIR
# A gnuplot failure exits 1 and leaves no figure; without gnuplot the
# figures are skipped with a message.
set -eu
[ $# -eq 1 ] || { echo "usage: plots/links.sh DIR" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")" && pwd)
for f in summary.csv links_model_points.csv links_model_curve.csv links_epochs.csv links_projection.csv; do
  [ -s "$out/$f" ] || { echo "plots/links.sh: $out/$f missing" >&2; exit 1; }
done
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots/links.sh: gnuplot not found; figures skipped"
  exit 0
fi
# the best-fitting model (smallest RMS residual, as tahq-sim picks it): column
# 4 overlap, 5 blocking, 6 protocol
mode=$(awk -F, 'NR > 1 { a += $11 * $11; b += $12 * $12; c += $13 * $13 }
  END { m = 4; v = a; if (b < v) { m = 5; v = b } if (c < v) m = 6; print m }' "$out/links_model_points.csv")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for fmt in png; do
  gnuplot -e "plotdir='$here'; dir='$out'; outdir='$tmp'; fmt='$fmt'; mode=$mode" "$here/links.gp" ||
    { echo "plots/links.sh: gnuplot failed; no figure written" >&2; exit 1; }
done
for n in links_measured links_epochs links_projection; do mv "$tmp/$n.png" "$out/"; done
echo "plots/links.sh: wrote $out/links_measured, links_epochs, links_projection (.png)"
