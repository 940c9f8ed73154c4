#!/bin/sh
# SPDX-License-Identifier: MIT
# The full allocation study (tahq alloc-study) and its figures.
# usage: plots/alloc_study.sh TAHQ OUTDIR [ACTIVATION.npy ...]
#        plots/alloc_study.sh --figures OUTDIR
#        plots/alloc_study.sh --gap-png OUTDIR
#   TAHQ     the tahq program (build/cli/tahq)
#   OUTDIR   where the CSVs, tables and figures go
#   ACTIVATION.npy  real activations (e.g. tahq-train --dump-activations);
#            without them the real-activation part is left out (and the
#            summary says which inputs it has)
# Runs: the four synthetic inputs at [2, 64, 1024]; the LLM-like tensor at
# [1, 1024, 1536]; the activations, if any (each run's stdout kept as
# OUTDIR/run_*.txt); then merges the CSVs into OUTDIR/alloc_study.csv and
# OUTDIR/alloc_control.csv
# (plots/alloc_study.py merge), writes summary.md and summary.json
# (plots/alloc_study.py summary) and renders alloc_study_relmse and
# alloc_study_gap (PNG; --figures adds SVG) with gnuplot. A figure is drawn into a temporary
# folder and moved into place only when gnuplot succeeded; any failure exits 1.
# --figures only renders the figures of OUTDIR/alloc_study.csv (as written by
# tahq alloc-study --out-dir OUTDIR, or by a full run); --gap-png only
# alloc_study_gap.png (the report's figure, a quarter of the time).
set -eu
if [ "$#" -lt 2 ]; then
  echo "usage: plots/alloc_study.sh TAHQ OUTDIR [ACTIVATION.npy ...] | --figures OUTDIR | --gap-png OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
figures() {
  out=$1
  whats=${2:-relmse gap}
  fmts=${3:-png svg}
  if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots/alloc_study.sh: gnuplot not found; figures skipped"
    return 0
  fi
  [ -s "$out/alloc_study.csv" ] || { echo "plots/alloc_study.sh: $out/alloc_study.csv missing" >&2; return 1; }
  inputs=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s%s", sep, $1; sep = " " }' "$out/alloc_study.csv")
  tmp=$(mktemp -d "$out/.plots.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  for what in $whats; do
    for fmt in $fmts; do
      if ! gnuplot -e "plotdir='$here'; csv='$out/alloc_study.csv'; outdir='$tmp'; inputs='$inputs'; fmt='$fmt'; what='$what'" \
        "$here/alloc_study.gp"; then
        echo "plots/alloc_study.sh: gnuplot failed ($what, $fmt)" >&2
        return 1
      fi
      [ -s "$tmp/alloc_study_$what.$fmt" ] || { echo "plots/alloc_study.sh: no alloc_study_$what.$fmt" >&2; return 1; }
    done
    for fmt in $fmts; do
      mv -f "$tmp/alloc_study_$what.$fmt" "$out/"
      echo "plots/alloc_study.sh: wrote $out/alloc_study_$what.$fmt"
    done
  done
}
if [ "$1" = "--figures" ]; then
  figures "$2"
  exit $?
fi
if [ "$1" = "--gap-png" ]; then
  figures "$2" gap png
  exit $?
fi
tahq=$1
out=$2
shift 2
mkdir -p "$out"
# the three runs write into a scratch folder; only the merged CSVs and each
# run's summary (stdout) are kept
runs=$(mktemp -d "$out/.runs.XXXXXX")
trap 'rm -rf "$runs"' EXIT
"$tahq" alloc-study --dist gauss,laplace,student-t,llm --synth-shape 2x64x1024 \
  --out-dir "$runs/synthetic" >"$out/run_synthetic.txt"
"$tahq" alloc-study --dist llm --synth-shape 1x1024x1536 --out-dir "$runs/llm" >"$out/run_llm.txt"
parts="$runs/synthetic/alloc_study.csv $runs/llm/alloc_study.csv"
ctls="$runs/synthetic/alloc_control.csv $runs/llm/alloc_control.csv"
if [ "$#" -gt 0 ]; then
  args=""
  for f in "$@"; do args="$args --input $f"; done
  # shellcheck disable=SC2086
  "$tahq" alloc-study $args --out-dir "$runs/activations" >"$out/run_activations.txt"
  parts="$parts $runs/activations/alloc_study.csv"
  ctls="$ctls $runs/activations/alloc_control.csv"
fi
# shellcheck disable=SC2086
python3 "$here/alloc_study.py" merge "$out/alloc_study.csv" $parts
# shellcheck disable=SC2086
python3 "$here/alloc_study.py" merge "$out/alloc_control.csv" $ctls
python3 "$here/alloc_study.py" summary "$out/alloc_study.csv" --md "$out/summary.md" \
  --json "$out/summary.json"
rm -rf "$runs"
trap - EXIT
figures "$out" "relmse gap" png
