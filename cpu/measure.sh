#!/usr/bin/env bash
# measure.sh - the before/after measurement of cpu/README.md.
#
# usage: cpu/measure.sh BEFORE_TAHQ AFTER_TAHQ OUTDIR [RUNS] [MIB] [THREADS]
#
# Runs `tahq bench --json --mib MIB --reps 5` RUNS times (default 3) for each
# program, alternating before and after so that both see the same machine
# load, at nice -5 where allowed; the after program with --threads THREADS
# (default 2). Writes OUTDIR/before-N.json, OUTDIR/after-N.json and
# OUTDIR/uptime.txt (uptime before and after every run), then the table
# (cpu/bench_table.py) to OUTDIR/table.md. A run that fails stops the script.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,12p' "$0"
  exit 2
fi
before=$1
after=$2
out=$3
runs=${4:-3}
mib=${5:-64}
threads=${6:-2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nice_cmd=(nice -n -5)
"${nice_cmd[@]}" true 2>/dev/null || nice_cmd=()
: > "$out/uptime.txt"
for i in $(seq 1 "$runs"); do
  for which in before after; do
    prog=$before
    extra=()
    if [ "$which" = after ]; then
      prog=$after
      extra=(--threads "$threads")
    fi
    echo "$which $i start: $(uptime)" >> "$out/uptime.txt"
    "${nice_cmd[@]}" "$prog" bench --json --mib "$mib" --reps 5 "${extra[@]}" > "$out/$which-$i.json"
    echo "$which $i end:   $(uptime)" >> "$out/uptime.txt"
    echo "$which run $i of $runs done"
  done
done
before_files=()
after_files=()
for i in $(seq 1 "$runs"); do
  before_files+=("$out/before-$i.json")
  after_files+=("$out/after-$i.json")
done
python3 "$here/bench_table.py" "${before_files[@]}" -- "${after_files[@]}" > "$out/table.md"
echo "table: $out/table.md"
