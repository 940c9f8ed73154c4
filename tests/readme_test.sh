#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's examples, run as written (the blocks are read from README.md,
# each after its <!-- example: NAME --> line), and its claims:
#   c       install the build into $HOME/.local (HOME is a fresh folder: the
#           README's `cmake --install build --prefix "$HOME/.local"` line,
#           with build/ this build), write app.c from the README, run the
#           pkg-config block and compare its output with the README's
#   cli     the same install, then the tahq block; output compared
#   python  the Python block against the built package (python/ on
#           PYTHONPATH, TAHQ_LIB this build's libtahq.so); exit 77 (skipped)
#           without numpy
#   docs    the fresh-machine commands as they were; MIT in LICENSE,
#           README and pyproject.toml; kernels/RESULTS.md names no machine
#           infrastructure
# usage: readme_test.sh MODE SOURCE_DIR BUILD_DIR WORK_DIR [CMAKE | PYTHON]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mode="$1" src="$2" build="$3" work="$4" tool="${5:-}"
readme="$src/README.md"

# block NAME: the fenced block after <!-- example: NAME -->, without fences
block() {
  awk -v name="$1" '
    $0 == "<!-- example: " name " -->" { armed = 1; next }
    armed && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$readme"
}
need_block() {
  local text
  text="$(block "$1")"
  [ -n "$text" ] || fail "README.md has no example block '$1'"
  printf '%s\n' "$text"
}

rm -rf "$work"
mkdir -p "$work/home" "$work/cwd"
cd "$work/cwd"

install_as_readme() {
  # the install block's cmake --install line, as written, with build/
  # standing for this build
  local line
  line="$(need_block install | grep '^cmake --install build ')" ||
    fail "the install block has no 'cmake --install build' line"
  ln -s "$build" build
  HOME="$work/home" CMAKE="$tool" bash -euc "${line/#cmake/\"\$CMAKE\"}" >install.log 2>&1 ||
    fail "'$line' failed: $(tail -n 5 install.log)"
  rm build
}

case "$mode" in
c)
  install_as_readme
  need_block app.c >app.c
  need_block build-c >build.sh
  need_block build-c-output >expected.txt
  HOME="$work/home" bash -eu build.sh >got.txt 2>err.txt ||
    fail "the README's C build block failed: $(tail -n 5 err.txt)"
  cmp -s expected.txt got.txt || fail "the C example printed '$(cat got.txt)', the README says '$(cat expected.txt)'"
  echo "readme_c_example: app.c built with pkg-config as the README says; output as printed there"
  ;;
cli)
  install_as_readme
  need_block cli >cli.sh
  need_block cli-output >expected.txt
  HOME="$work/home" bash -eu cli.sh >got.txt 2>err.txt ||
    fail "the README's tahq block failed: $(tail -n 5 err.txt)"
  diff expected.txt got.txt >diff.txt || fail "the tahq block's output differs from the README's: $(cat diff.txt)"
  echo "readme_cli_example: the tahq block ran on the installed program; output as printed there"
  ;;
python)
  need_py_module "$tool" numpy
  need_block python >example.py
  PYTHONPATH="$src/python" TAHQ_LIB="$build/ref/libtahq.so" "$tool" example.py >got.txt 2>err.txt ||
    fail "the README's Python example failed: $(tail -n 5 err.txt)"
  grep -q "every value within its bound" got.txt || fail "the Python example printed '$(cat got.txt)'"
  echo "readme_python_example: $(cat got.txt)"
  ;;
docs)
  grep -qzF $'```sh\n./scripts/report.sh\n./scripts/test.sh\n```' "$readme" ||
    fail "README.md lost the fresh-machine commands ./scripts/report.sh and ./scripts/test.sh"
  head -n 1 "$src/LICENSE" | grep -qx "MIT License" || fail "LICENSE is not the MIT licence"
  grep -q "Copyright (c) The tahq authors" "$src/LICENSE" || fail "LICENSE does not name The tahq authors"
  grep -q "^Licence: MIT" "$readme" || fail "README.md does not state the licence"
  grep -q '^license = { text = "MIT" }' "$src/pyproject.toml" || fail "pyproject.toml has no MIT license field"
  grep -q '"License :: OSI Approved :: MIT License"' "$src/pyproject.toml" ||
    fail "pyproject.toml has no MIT classifier"
  ! grep -n -i -E "firecracker|KINDS\.md|session" "$src/kernels/RESULTS.md" ||
    fail "kernels/RESULTS.md names infrastructure that is no part of the project (above)"
  ! grep -n -E "python/tahq\.py|exports exactly|[0-9]+ tests\b" "$readme" ||
    fail "README.md has a line known to be wrong (above)"
  echo "readme_docs: fresh-machine commands, MIT licence, RESULTS.md neutral"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac
