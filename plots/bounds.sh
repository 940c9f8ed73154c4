#!/bin/sh
# SPDX-License-Identifier: MIT
# Render the plots of `tahq bounds` (PNG with pngcairo, and SVG).
# usage: plots/bounds.sh [OUTDIR [CSV]]
#   OUTDIR  where tahq bounds wrote bounds.csv, bounds_front.csv and
#           bounds.json, and where the plots go (build/bounds)
#   CSV     the per-point CSV, if not OUTDIR/bounds.csv (tahq bounds --csv)
# Each plot is rendered into a temporary folder and moved into OUTDIR only
# when gnuplot succeeded, so a failure leaves no blank or partial file; the
# exit status is then 1. Without gnuplot it says so and exits 0.
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
# distributions in CSV order (column 3); those with a point of status ok
# (column 12); those with an ablation point (column 2) of status ok
dists=$(awk -F, 'NR > 1 && !seen[$3]++ { printf "%s%s", sep, $3; sep = " " }' "$csv")
ok_dists=$(awk -F, 'NR > 1 && $12 == "ok" && !seen[$3]++ { printf "%s%s", sep, $3; sep = " " }' "$csv")
abl_dists=$(awk -F, 'NR > 1 && $12 == "ok" && $2 == "ablation" && !seen[$3]++ { printf "%s%s", sep, $3; sep = " " }' "$csv")
if [ -z "$ok_dists" ]; then
  echo "plots/bounds.sh: $csv has no point of status ok; nothing to plot" >&2
  exit 1
fi
# the input tensor's file name and shape (tahq bounds --input), for the titles
input_name=input
if [ -s "$out/bounds.json" ]; then
  in=$(sed -n 's/^ *{"name": "input", "description": "\([^"]*\)", "shape": \[\([^]]*\)\].*/\1|\2/p' \
    "$out/bounds.json" | head -n 1)
  [ -z "$in" ] || input_name="$(basename "${in%%|*}") [${in#*|}]"
fi
tmp=$(mktemp -d "$out/.plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for s in pareto ablation ratio; do
  for fmt in png svg; do
    if ! gnuplot -e "plotdir='$here'; csv='$csv'; front='$front'; outdir='$tmp'; dists='$dists'; ok_dists='$ok_dists'; abl_dists='$abl_dists'; input_name='$input_name'; fmt='$fmt'" \
      "$here/bounds_$s.gp"; then
      echo "plots/bounds.sh: gnuplot failed on bounds_$s.gp ($fmt); no bounds_$s.$fmt written" >&2
      exit 1
    fi
    if [ ! -s "$tmp/bounds_$s.$fmt" ]; then
      echo "plots/bounds.sh: gnuplot wrote no bounds_$s.$fmt" >&2
      exit 1
    fi
  done
  mv -f "$tmp/bounds_$s.png" "$tmp/bounds_$s.svg" "$out/"
  echo "plots/bounds.sh: wrote $out/bounds_$s.png and $out/bounds_$s.svg"
done
