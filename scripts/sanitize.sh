#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (CMake option TAHQ_SANITIZE=ON) into build-asan/ and run the CTest suite
# there. Any sanitizer report aborts the test that triggered it.
#
# usage: scripts/sanitize.sh [extra ctest arguments, e.g. -R codec]
# Environment: CC (gcc or clang; default: the system cc), SANITIZE_BUILD_DIR
# (default build-asan), SANITIZE_EXCLUDE (ctest -LE regex; default
# 'slow|proofs|gpu|valgrind|fuzz': the exhaustive parts, which take several
# minutes each under ASan, proofs and GPU checks, and the valgrind and fuzz
# tests, which have their own scripts). Every other test runs: unit, codec,
# integrity, CLI end-to-end and bad-input, golden and bounds.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir="${SANITIZE_BUILD_DIR:-build-asan}"
exclude="${SANITIZE_EXCLUDE:-slow|proofs|gpu|valgrind|fuzz}"
jobs="$(nproc 2>/dev/null || echo 2)"

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAHQ_SANITIZE=ON
cmake --build "$dir" -j"$jobs"

# Leaks count as errors; UBSan prints a stack for each report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$dir" --output-on-failure --no-tests=error -j2 -LE "$exclude" "$@"
