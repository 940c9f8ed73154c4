#!/usr/bin/env bash
# Install the build tools if they are missing (Debian/Ubuntu, apt-get), then
# configure and build tahq into build/ (Release, -O2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || missing+=(make)
# sgd_sim/ (tahq-sim) needs GSL and OpenBLAS, its plots gnuplot
[ -e /usr/include/gsl/gsl_rng.h ] || missing+=(libgsl-dev)
ls /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so >/dev/null 2>&1 || missing+=(libopenblas-dev)
command -v gnuplot >/dev/null 2>&1 || missing+=(gnuplot-nox)
# python/ tests (independent SPEC implementation, ctypes binding) use Debian's numpy
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || missing+=(python3 python3-numpy)
# fuzz/ harnesses (libFuzzer) and the valgrind check
command -v clang >/dev/null 2>&1 || missing+=(clang)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || missing+=(libclang-rt-14-dev)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
# proofs/ (Frama-C WP + Eva; Why3 drives Z3 and cvc5)
command -v frama-c >/dev/null 2>&1 || missing+=(frama-c-base)
command -v why3 >/dev/null 2>&1 || missing+=(why3)
command -v z3 >/dev/null 2>&1 || missing+=(z3)
command -v cvc5 >/dev/null 2>&1 || missing+=(cvc5)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${missing[*]} and no apt-get; install them by hand" >&2
    exit 1
  fi
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo_cmd=(sudo)
    else
      echo "setup: missing ${missing[*]}; not root and no sudo to install them" >&2
      exit 1
    fi
  fi
  ${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get update
  ${sudo_cmd[@]+"${sudo_cmd[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
fi

# CMake 3.25 or newer is required (Debian 12 has 3.25.1).
cmake_version="$(cmake --version | head -n1 | sed 's/[^0-9.]*\([0-9.]*\).*/\1/')"
cmake_major="${cmake_version%%.*}"
cmake_minor="${cmake_version#*.}"
cmake_minor="${cmake_minor%%.*}"
if [ "$cmake_major" -lt 3 ] || { [ "$cmake_major" -eq 3 ] && [ "$cmake_minor" -lt 25 ]; }; then
  echo "setup: cmake $cmake_version found, tahq needs 3.25 or newer" >&2
  exit 1
fi

jobs="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
