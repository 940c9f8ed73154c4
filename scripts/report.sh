#!/usr/bin/env bash
# Build (installing missing tools), then run the verification report on the
# built-in LLM-like tensor. Extra arguments go to `tahq report`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
./build/cli/tahq report "$@"
