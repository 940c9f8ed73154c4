#!/bin/sh
# SPDX-License-Identifier: MIT
# The MiniLM sweep's summary and figure: plots/bert_summary.py, then
# bert_sweep.png (gnuplot) in the sweep's folder.
#   plots/bert_sweep.sh DIR [CONTROL_CSV]
set -eu
dir=$1 control=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/bert_summary.py" "$dir" $control >/dev/null
command -v gnuplot >/dev/null 2>&1 || { echo "plots/bert_sweep.sh: gnuplot not found; figure skipped"; exit 0; }
gnuplot -e "plotdir='$here'; dir='$dir'; control='${control:-/dev/null}'; out='$dir/bert_sweep.png'" "$here/bert_sweep.gp"
echo "plots/bert_sweep.sh: wrote $dir/summary.md and $dir/bert_sweep.png"
