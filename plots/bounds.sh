#!/bin/sh
# Render the plots of `tahq bounds` (PNG with pngcairo, and SVG).
# usage: plots/bounds.sh [OUTDIR [CSV]]
#   OUTDIR  where tahq bounds wrote bounds.csv and bounds_front.csv, and
#           where the plots go (build/bounds)
#   CSV     the per-point CSV, if not OUTDIR/bounds.csv (tahq bounds --csv)
# Without gnuplot it says so and exits 0.
set -eu
out=${1:-build/bounds}
csv=${2:-$out/bounds.csv}
front=$out/bounds_front.csv
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots/bounds.sh: gnuplot not found; plots skipped"
  exit 0
fi
for f in "$csv" "$front"; do
  if [ ! -s "$f" ]; then
    echo "plots/bounds.sh: $f missing; run 'tahq bounds --out-dir $out' first" >&2
    exit 1
  fi
done
here=$(cd "$(dirname "$0")" && pwd)
# distributions in CSV order (column 3)
dists=$(awk -F, 'NR > 1 && !seen[$3]++ { printf "%s%s", sep, $3; sep = " " }' "$csv")
for s in pareto ablation ratio; do
  for fmt in png svg; do
    gnuplot -e "plotdir='$here'; csv='$csv'; front='$front'; outdir='$out'; dists='$dists'; fmt='$fmt'" \
      "$here/bounds_$s.gp"
  done
  echo "plots/bounds.sh: wrote $out/bounds_$s.png and $out/bounds_$s.svg"
done
