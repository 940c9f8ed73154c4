#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the build tools if they are missing (Debian/Ubuntu, apt-get), then
# configure and build tahq into build/ (Release, -O2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The package list is scripts/debian-packages.txt (also read by .ci/run).
packages=()
while read -r line; do
  line="${line%%#*}"
  line="${line//[[:space:]]/}"
  [ -n "$line" ] && packages+=("$line")
done <scripts/debian-packages.txt
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
else
  # not a Debian system: only say what is missing of the essentials
  for c in cmake cc make; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
fi

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
cmake_version="$(cmake --version | sed -n '1s/[^0-9.]*\([0-9.]*\).*/\1/p')"
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
