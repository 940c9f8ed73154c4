#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kernels/device-check.sh - the whole GPU check of the CUDA kernels in one
# call, for a machine with an sm_90 GPU (H100/H200):
#   1. configure + build (Release) in a fresh build directory,
#   2. run the kernel tests with CTest (label `kernels`: the CPU emulation
#      test and the GPU cross-checks against libtahq),
#   3. run the benchmark (1 GiB of float32 activations, best of 5),
#   4. print a short table (last, so it ends up in the tail of the output).
# Raw outputs go to $OUT if set (else a temporary directory): env.txt,
# configure.txt, build.txt, ctest.txt, ctest_log.txt (every test's output),
# bench.txt, summary.txt.
# Target: under 5 minutes on an H200. Exit status 0 only if the build, every
# test and the benchmark succeed; a skipped GPU test counts as a failure
# here (this script exists to run them).
#
# Environment: TAHQ_DEVICE_BUILD (build dir, default build-device-check),
# TAHQ_GPU_TEST_TILES (tiles per configuration family, default 1000000),
# TAHQ_BENCH_MIB (default 1024).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# fail, fresh_dir (tests/lib.sh): "FAIL (device-check): ...", exit 1
. tests/lib.sh
t_tag device-check
OUTDIR="${OUT:-$(mktemp -d /tmp/tahq-device-check.XXXXXX)}"
mkdir -p "$OUTDIR"
BUILD="${TAHQ_DEVICE_BUILD:-build-device-check}"
JOBS="$(nproc 2>/dev/null || echo 4)"
MIB="${TAHQ_BENCH_MIB:-1024}"
START=$SECONDS
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
# a failure before the tests: recorded in summary.txt, then fail
stop() {
  echo "FAIL: $*" >>"$SUMMARY"
  fail "$*"
}
stamp() { echo "[$((SECONDS - START)) s] $*"; }

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm), $(nproc) CPUs"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
    --format=csv 2>&1 || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version | head -1
  git log -1 --format='commit %H %s' 2>/dev/null || true
  git status --short 2>/dev/null | head -20 || true
} > "$OUTDIR/env.txt" 2>&1

rc=0
stamp "configure ($BUILD)"
BUILD_ABS=$(fresh_dir "$BUILD") || stop "cannot make the build directory $BUILD"
BUILD=$BUILD_ABS
if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > "$OUTDIR/configure.txt" 2>&1; then
  tail -30 "$OUTDIR/configure.txt"
  stop "configure (see configure.txt)"
fi
if ! grep -q "kernels" "$BUILD/CTestTestfile.cmake" 2>/dev/null; then
  stop "kernels/ not configured (no CUDA compiler found?)"
fi

stamp "build (-j$JOBS)"
BT0=$SECONDS
if ! cmake --build "$BUILD" -j"$JOBS" --target tahq test_device_math test_cuda_codec tahq_cuda_bench \
     > "$OUTDIR/build.txt" 2>&1; then
  grep -E -i "error|warning" "$OUTDIR/build.txt" | head -30
  stop "build (see build.txt)"
fi
BUILD_S=$((SECONDS - BT0))
WARN=$(grep -c -i "warning" "$OUTDIR/build.txt" || true)

stamp "tests (ctest -L kernels)"
TT0=$SECONDS
TAHQ_GPU_TEST_TILES="${TAHQ_GPU_TEST_TILES:-1000000}" \
  ctest --test-dir "$BUILD" -L kernels --no-tests=error --output-on-failure --timeout 400 -j2 > "$OUTDIR/ctest.txt" 2>&1
ctest_rc=$?
TEST_S=$((SECONDS - TT0))
cp "$BUILD/Testing/Temporary/LastTest.log" "$OUTDIR/ctest_log.txt" 2>/dev/null || true
[ $ctest_rc -eq 0 ] || rc=1
if grep -q "Skipped" "$OUTDIR/ctest.txt"; then rc=1; fi

stamp "benchmark ($MIB MiB)"
"$BUILD/kernels/tahq_cuda_bench" --mib "$MIB" --reps 5 > "$OUTDIR/bench.txt" 2>&1
bench_rc=$?
[ $bench_rc -eq 0 ] || rc=1

# ---- the table ------------------------------------------------------------------
say ""
say "== tahq CUDA device check: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) =="
say "build: Release, sm_90 + compute_90, ${BUILD_S} s, ${WARN} warning lines"
say "tests (${TEST_S} s, ctest exit $ctest_rc):"
grep -E "Test +#[0-9]+: kernels_" "$OUTDIR/ctest.txt" \
  | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: /  /; s/\.{3,}/ /' | tee -a "$SUMMARY"
grep -h -E "^test_cuda_codec |^test_device_math:|^family |^device 0:" "$OUTDIR/ctest_log.txt" 2>/dev/null \
  | awk '!seen[$0]++' | sed 's/^/  /' | tee -a "$SUMMARY"
grep -h -E "FAILED|SKIP" "$OUTDIR/ctest.txt" "$OUTDIR/ctest_log.txt" 2>/dev/null | awk '!seen[$0]++' | head -10 \
  | sed 's/^/  ! /' | tee -a "$SUMMARY"
say "benchmark (exit $bench_rc):"
sed 's/^/  /' "$OUTDIR/bench.txt" | tee -a "$SUMMARY" > /dev/null
cat "$OUTDIR/bench.txt"
say "total $((SECONDS - START)) s; raw outputs in $OUTDIR; result: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
