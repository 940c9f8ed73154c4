#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# package_consumer: install a tahq build into a temporary prefix, then use it
# from outside the source tree as a user would:
#   1. a CMake project (consumer/) with find_package(tahq), linking
#      tahq::tahq (static) and tahq::shared;
#   2. one compiler call with pkg-config --cflags --libs tahq.
# Each program encodes, decodes and checks the SPEC bound, and must print
# the installed version. Also checks that the installed tahq program runs.
# usage: consumer_test.sh BUILD_DIR WORK_DIR CC CMAKE [PKG_CONFIG]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
build="$1" work="$2" cc="$3" cmake="$4" pkgconfig="${5:-}"
src="$(abs_dir "$(dirname "$0")")"

work="$(fresh_dir "$work")"
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
[ -f "$prefix/share/doc/tahq/LICENSE" ] || fail "not installed: share/doc/tahq/LICENSE"
grep -q "^MIT License" "$prefix/share/doc/tahq/LICENSE" || fail "the installed LICENSE is not MIT"
# every program this build made is installed, with the data it needs
for p in cli/tahq sgd_sim/tahq-sim sgd_sim/transformer/tahq-train sgd_sim/transformer/tahq-train-mpi; do
  if [ -x "$build/$p" ]; then
    [ -x "$prefix/bin/$(basename "$p")" ] || fail "$(basename "$p") was built but not installed"
  fi
done
if [ -x "$prefix/bin/tahq" ] || [ -x "$prefix/bin/tahq-sim" ]; then
  for f in bounds.sh sim.sh style.gp; do
    [ -f "$prefix/share/tahq/plots/$f" ] || fail "not installed: share/tahq/plots/$f"
  done
  [ ! -e "$prefix/share/tahq/plots/train_plots_test.sh" ] || fail "a plot test was installed"
fi
# no LD_LIBRARY_PATH: every program below must find libtahq.so by itself
unset LD_LIBRARY_PATH

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
# shared, as the README says: the rpath from pkg-config's libdir, so the
# program starts without LD_LIBRARY_PATH
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/consumer_pc" "$src/consumer/consumer.c" \
  $("$pkgconfig" --cflags --libs tahq) -Wl,-rpath,"$("$pkgconfig" --variable=libdir tahq)" ||
  fail "pkg-config build failed"
out="$("$work/consumer_pc")" || fail "consumer_pc failed"
[[ "$out" == "tahq $version ok"* ]] || fail "consumer_pc printed '$out'"
# static, the other route the README names: no libtahq.so needed at all
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/consumer_pc_static" "$src/consumer/consumer.c" \
  $("$pkgconfig" --cflags tahq) "$("$pkgconfig" --variable=libdir tahq)/libtahq.a" \
  $("$pkgconfig" --libs-only-other --static tahq) -lm || fail "static pkg-config build failed"
libs="$(ldd "$work/consumer_pc_static" 2>&1 || true)"
! grep -q "libtahq" <<<"$libs" || fail "consumer_pc_static loads libtahq.so"
out="$("$work/consumer_pc_static")" || fail "consumer_pc_static failed"
[[ "$out" == "tahq $version ok"* ]] || fail "consumer_pc_static printed '$out'"

# 3. the installed tree, moved: the programs find their data next to their
# bin/ folder, not in the source or build tree
moved="$work/moved-prefix"
mv "$prefix" "$moved"
if [ -x "$moved/bin/tahq" ]; then
  help="$("$moved/bin/tahq" bounds --help)" || fail "moved tahq bounds --help failed"
  [[ "$help" == *"here: $moved/bin/../share/tahq/plots)"* ]] ||
    fail "moved tahq does not find its plots in $moved/share/tahq/plots: $(grep -A1 plots-dir <<<"$help")"
  if command -v gnuplot >/dev/null 2>&1; then
    (cd "$work" && "$moved/bin/tahq" bounds --quick --dist gauss --no-progress --plots \
      --out-dir "$work/bounds" >"$work/bounds.log" 2>&1) ||
      fail "moved tahq bounds --plots failed: $(tail -n 3 "$work/bounds.log")"
    [ -s "$work/bounds/bounds_pareto.png" ] || fail "moved tahq bounds --plots drew no bounds_pareto.png"
  fi
fi
if [ -x "$moved/bin/tahq-train" ]; then
  mkdir -p "$work/empty"
  rc=0
  (cd "$work/empty" && env -u TAHQ_TRAIN_DATA "$moved/bin/tahq-train" --steps 1 \
    >"$work/train.out" 2>"$work/train.err") || rc=$?
  [ "$rc" -eq 1 ] || fail "tahq-train without a corpus exited $rc"
  grep -qF "corpus not found: shakespeare/train.bin" "$work/train.err" ||
    fail "tahq-train's default --data is not ./shakespeare: $(cat "$work/train.err")"
  grep -qF "$moved/bin/../share/tahq/fetch_corpus.sh" "$work/train.err" ||
    fail "tahq-train does not name the installed fetch_corpus.sh: $(cat "$work/train.err")"
fi
echo "package_consumer: tahq $version installed to a prefix, used by find_package (static, shared) and pkg-config (rpath, static), the programs run from the moved prefix"
