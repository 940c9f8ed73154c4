#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build (installing missing tools), then run the test suite with CTest.
# Extra arguments go to ctest (e.g. -R codec, -L unit; the labels are unit,
# codec, golden, bounds, report, sim, fuzz, valgrind, proofs, kernels, gpu,
# cuda-host: ctest --test-dir build --print-labels). A selection that matches
# no test is an error (--no-tests=error), not a pass.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
ctest --test-dir build --output-on-failure --no-tests=error -j2 "$@"
