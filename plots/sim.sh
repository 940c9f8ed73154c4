#!/bin/sh
# SPDX-License-Identifier: MIT
# Render the plots of tahq-sim (PNG with pngcairo, and SVG) from the CSVs
# that `tahq-sim converge|delta|train|throughput --out OUTDIR` wrote.
# usage: plots/sim.sh [OUTDIR]        (default build-sim/sim)
#   or:  tahq-sim plots --out OUTDIR
# A missing CSV skips its plot with a message; without gnuplot it says so
# and exits 0.
set -eu
out=${1:-build-sim/sim}
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots/sim.sh: gnuplot not found; plots skipped"
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
methods() { awk -F, -v col="$2" 'NR > 1 && !seen[$col]++ { printf "%s%s", sep, $col; sep = " " }' "$1"; }
render() { # name csv extra-vars
  name=$1; csv=$2; shift 2
  if [ ! -s "$csv" ]; then
    echo "plots/sim.sh: $csv missing; $name skipped (run tahq-sim with --out $out)" >&2
    return 0
  fi
  for fmt in png svg; do
    gnuplot -e "plotdir='$here'; csv='$csv'; outdir='$out'; fmt='$fmt'; $*" "$here/$name.gp"
  done
  echo "plots/sim.sh: wrote $out/$name.png and $out/$name.svg"
}
[ -s "$out/train_eval.csv" ] && render sim_loss "$out/train_eval.csv" "methods='$(methods "$out/train_eval.csv" 1)'"
if [ -s "$out/converge_model.csv" ] && [ -s "$out/converge_verdict.csv" ]; then
  [ -s "$out/converge_summary.csv" ] && render sim_converge "$out/converge_summary.csv" \
    "fit='$out/converge_model.csv'; verdict='$out/converge_verdict.csv'; methods='$(methods "$out/converge_summary.csv" 1)'"
  [ -s "$out/converge_local.csv" ] && render sim_local "$out/converge_local.csv" \
    "methods='$(methods "$out/converge_local.csv" 1)'"
fi
[ -s "$out/delta.csv" ] && render sim_delta "$out/delta.csv"
[ -s "$out/floor.csv" ] && render sim_floor "$out/floor.csv"
[ -s "$out/throughput.csv" ] && render sim_throughput "$out/throughput.csv" \
  "methods='$(methods "$out/throughput.csv" 2)'"
for f in train_eval converge_summary delta throughput; do
  [ -s "$out/$f.csv" ] || echo "plots/sim.sh: $out/$f.csv missing; its plot skipped" >&2
done
exit 0
