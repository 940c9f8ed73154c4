#!/usr/bin/env bash
# Build (installing missing tools), then run the test suite with CTest.
# Extra arguments go to ctest (e.g. -R codec, -L fast).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
ctest --test-dir build --output-on-failure -j2 "$@"
