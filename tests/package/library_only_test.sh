#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# package_library_only: libtahq alone (-DTAHQ_BUILD_CLI=OFF and the other
# parts off, as pip and a vendoring project build it) configures, builds and
# installs on a machine without jansson: pkg-config is pointed at an empty
# folder, so jansson cannot be found. The control: the same configure with
# the CLI on must fail and name jansson (the hiding works, so the first
# check can fail).
# usage: library_only_test.sh SOURCE_DIR WORK_DIR CMAKE
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
src="$1" work="$2" cmake="$3"

rm -rf "$work"
mkdir -p "$work/no-pkgconfig"
export PKG_CONFIG_LIBDIR="$work/no-pkgconfig" PKG_CONFIG_PATH=""
parts_off=(-DTAHQ_BUILD_SIM=OFF -DTAHQ_BUILD_KERNELS=OFF -DTAHQ_BUILD_PROOFS=OFF
           -DTAHQ_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug)

# the control: the CLI needs jansson, and says so
if "$cmake" -S "$src" -B "$work/with-cli" "${parts_off[@]}" >"$work/with-cli.log" 2>&1; then
  fail "control: configure with the CLI succeeded although jansson is hidden"
fi
grep -q "jansson" "$work/with-cli.log" ||
  fail "control: the failed configure does not name jansson: $(tail -n 5 "$work/with-cli.log")"

"$cmake" -S "$src" -B "$work/lib" -DTAHQ_BUILD_CLI=OFF "${parts_off[@]}" >"$work/lib.log" 2>&1 ||
  fail "library-only configure failed without jansson: $(tail -n 5 "$work/lib.log")"
"$cmake" --build "$work/lib" -j2 >>"$work/lib.log" 2>&1 ||
  fail "library-only build failed: $(tail -n 5 "$work/lib.log")"
"$cmake" --install "$work/lib" --prefix "$work/prefix" >>"$work/lib.log" 2>&1 ||
  fail "library-only install failed: $(tail -n 5 "$work/lib.log")"
for f in lib/libtahq.a include/tahq.h lib/pkgconfig/tahq.pc share/doc/tahq/LICENSE; do
  [ -e "$work/prefix/$f" ] || fail "library-only install lacks $f"
done
[ ! -e "$work/prefix/bin/tahq" ] || fail "library-only install has bin/tahq"
echo "package_library_only: libtahq configured, built and installed without jansson"
