#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: build (installing missing tools), then write the report
# directory report/ (index.md with the plots, report.json with the same
# numbers, data/ with every tool output): codec verification, golden
# conformance, error per bit budget, the simulator's convergence, delta and
# throughput results, proof status and the machine. Exits non-zero when the
# codec verification, golden conformance or the bound sweep fails.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/report.sh [--out DIR] [--full] [--build DIR] [--jobs N] [TAHQ_REPORT_OPTIONS...]
  --out DIR     report directory (default: report/ at the repository root)
  --full        the whole sweeps: bounds --full, convergence of all five methods
                for T = 2^8..2^16, loss curves (the quick default takes about a
                minute of CPU time; --full about 15 minutes of CPU time, i.e.
                about 7 minutes of two free cores)
  --build DIR   use the CMake build in DIR (configured already) instead of
                running scripts/setup.sh, which installs missing packages and
                builds build/
  --jobs N      worker threads for the sweeps (2)
Other options (e.g. --input x.npy) go to `tahq report`. At the end it prints
where to open the report.
USAGE
}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=""
args=()
extra=()
while [ "$#" -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --full) args+=(--full); shift ;;
  --out | --jobs)
    [ "$#" -ge 2 ] || { echo "report.sh: $1 needs a value" >&2; usage >&2; exit 2; }
    args+=("$1" "$2"); shift 2 ;;
  --build)
    [ "$#" -ge 2 ] || { echo "report.sh: --build needs a directory" >&2; exit 2; }
    build="$2"; shift 2 ;;
  *) extra+=("$1"); shift ;;
  esac
done

if [ -z "$build" ]; then
  ./scripts/setup.sh
  build=build
else
  [ -f "$build/CMakeCache.txt" ] || { echo "report.sh: $build is not a configured CMake build" >&2; exit 2; }
  cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)"
fi
exec python3 plots/report.py --build "$build" ${args[@]+"${args[@]}"} -- ${extra[@]+"${extra[@]}"}
