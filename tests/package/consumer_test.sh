#!/usr/bin/env bash
# package_consumer: install a tahq build into a temporary prefix, then use it
# from outside the source tree as a user would:
#   1. a CMake project (consumer/) with find_package(tahq), linking
#      tahq::tahq (static) and tahq::shared;
#   2. one compiler call with pkg-config --cflags --libs tahq.
# Each program encodes, decodes and checks the SPEC bound, and must print
# the installed version. Also checks that the installed tahq program runs.
# usage: consumer_test.sh BUILD_DIR WORK_DIR CC CMAKE [PKG_CONFIG]
set -euo pipefail
build="$1" work="$2" cc="$3" cmake="$4" pkgconfig="${5:-}"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  fail "cmake --install failed: $(tail -n 5 "$work/install.log")"
version="$(sed -n 's/^#define TAHQ_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/tahq_version.h")"
[ -n "$version" ] || fail "installed tahq_version.h has no TAHQ_VERSION_STRING"
for f in include/tahq.h include/tahq_spec.h include/tahq_paper_v1.h include/tahq_version.h lib/libtahq.a lib/cmake/tahq/tahqConfig.cmake \
         lib/cmake/tahq/tahqConfigVersion.cmake lib/pkgconfig/tahq.pc; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
ls "$prefix"/lib/libtahq.so* >/dev/null 2>&1 || fail "libtahq.so not installed"
if [ -x "$prefix/bin/tahq" ]; then
  # output captured first: with pipefail, a grep -q that stops reading early
  # can fail the pipeline through the writer's SIGPIPE
  installed_version="$("$prefix/bin/tahq" --version)" || fail "installed tahq --version exited non-zero"
  [[ "$installed_version" == *"tahq $version,"* ]] || fail "installed tahq --version printed '$installed_version'"
fi
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 1. CMake: find_package(tahq) from the prefix only
"$cmake" -S "$src/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 ||
  fail "consumer configure failed: $(tail -n 5 "$work/cmake.log")"
"$cmake" --build "$work/cmake-build" >>"$work/cmake.log" 2>&1 ||
  fail "consumer build failed: $(tail -n 5 "$work/cmake.log")"
for p in consumer_static consumer_shared; do
  out="$("$work/cmake-build/$p")" || fail "$p failed"
  [[ "$out" == "tahq $version ok"* ]] || fail "$p printed '$out'"
done
# the shared consumer must really load the installed libtahq.so (ldd's
# output captured whole: piping it into grep -q under pipefail fails the
# test at random when grep exits before ldd has written its last line)
libs="$(ldd "$work/cmake-build/consumer_shared")" || fail "ldd consumer_shared failed"
grep -qF "=> $prefix/lib/libtahq.so" <<<"$libs" ||
  fail "consumer_shared does not load $prefix/lib/libtahq.so; ldd says: $(tr '\n' ' ' <<<"$libs")"
# a version the package does not satisfy is refused by find_package
mkdir -p "$work/too-new"
sed 's/find_package(tahq 0.1 REQUIRED)/find_package(tahq 99.0 REQUIRED)/' \
  "$src/consumer/CMakeLists.txt" >"$work/too-new/CMakeLists.txt"
cp "$src/consumer/consumer.c" "$work/too-new/"
if "$cmake" -S "$work/too-new" -B "$work/too-new/build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/too-new.log" 2>&1; then
  fail "find_package(tahq 99.0) succeeded against $version"
fi

# 2. pkg-config
if [ -z "$pkgconfig" ]; then
  echo "package_consumer: no pkg-config; the pkg-config consumer was not built" >&2
  exit 1
fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$("$pkgconfig" --modversion tahq)" = "$version" ] || fail "pkg-config --modversion"
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/consumer_pc" "$src/consumer/consumer.c" \
  $("$pkgconfig" --cflags --libs tahq) -lm || fail "pkg-config build failed"
out="$("$work/consumer_pc")" || fail "consumer_pc failed"
[[ "$out" == "tahq $version ok"* ]] || fail "consumer_pc printed '$out'"
echo "package_consumer: tahq $version installed to a prefix and used by find_package (static, shared) and pkg-config"
