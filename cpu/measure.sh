#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# measure.sh - the before/after measurement of results/cpu/README.md.
#
# usage: cpu/measure.sh BEFORE_TAHQ AFTER_TAHQ OUTDIR [RUNS] [MIB] [THREADS]
#
# Runs `tahq bench --json --mib MIB --reps 5` RUNS times (default 3) for each
# program, alternating before and after so that both see the same machine
# load, at nice -5 where allowed; the after program with --threads THREADS
# (default 2). Writes OUTDIR/before-N.json, OUTDIR/after-N.json and
# OUTDIR/uptime.txt (uptime before and after every run), then the table
# (cpu/bench_table.py) to OUTDIR/table.md. A run that fails stops the script.
#
# With kernel autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled
# = 1), nice orders threads only inside one session: a nice 19 job started
# from another session still takes half the cores. AUTOGROUP_NICE=N sets
# this session's autogroup to nice N for the runs (then back to 0), so that
# the priority the nice value asks for holds against other sessions too.
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
if [ -n "${AUTOGROUP_NICE:-}" ] && [ -w /proc/self/autogroup ]; then
  echo "$AUTOGROUP_NICE" > /proc/self/autogroup
  trap 'echo 0 > /proc/self/autogroup 2>/dev/null || true' EXIT
  echo "autogroup: $(cat /proc/self/autogroup)" >> "$out/uptime.txt"
fi
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
