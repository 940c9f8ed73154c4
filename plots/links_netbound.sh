#!/bin/sh
# SPDX-License-Identifier: MIT
# The network-bound slow-link analysis: per results folder (runs.csv of
# scripts/slow_links.sh) the calibration input, `tahq-sim throughput
# --calibrate` (model, residuals, curves, projection), then netbound.csv,
# netbound_curves.csv and the figure links_netbound.png in the parent.
# usage: plots/links_netbound.sh BUILD_DIR PARENT_DIR FOLDER...
# (FOLDER names relative to PARENT_DIR). Without gnuplot the figure is
# skipped with a message; a gnuplot failure exits 1.
set -eu
[ $# -ge 3 ] || { echo "usage: plots/links_netbound.sh BUILD_DIR PARENT_DIR FOLDER..." >&2; exit 2; }
build=$1
parent=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
sim=$build/sgd_sim/tahq-sim
[ -x "$sim" ] || { echo "plots/links_netbound.sh: $sim not built" >&2; exit 1; }
dirs=""
for f in "$@"; do
  d=$parent/$f
  [ -s "$d/runs.csv" ] || { echo "plots/links_netbound.sh: $d/runs.csv missing" >&2; exit 1; }
  python3 "$here/links.py" summary "$d/runs.csv" --out "$d" >"$d/summary.txt"
  python3 "$here/links.py" calib "$d/runs.csv" "$d/calib_input.csv"
  "$sim" throughput --calibrate "$d/calib_input.csv" --out "$d" >"$d/calibration.txt"
  dirs="$dirs $d"
done
# shellcheck disable=SC2086
python3 "$here/links.py" netbound "$parent/netbound.csv" $dirs --curves "$parent/netbound_curves.csv" \
  >"$parent/netbound.txt"
cat "$parent/netbound.txt"
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plots/links_netbound.sh: gnuplot not found; figure skipped"
  exit 0
fi
gnuplot -e "plotdir='$here'; pts='$parent/netbound.csv'; cur='$parent/netbound_curves.csv'; out='$parent/links_netbound.png'" \
  "$here/links_netbound.gp" || { echo "plots/links_netbound.sh: gnuplot failed" >&2; exit 1; }
echo "plots/links_netbound.sh: wrote $parent/links_netbound.png"
