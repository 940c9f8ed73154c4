#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Valgrind memcheck of the tahq program on representative commands: gen-llm,
# encode, decode (.npy and .f32), inspect, roundtrip, report on a small input,
# corrupted/truncated messages, and conform on a few golden cases. Any
# memcheck error or definite/indirect leak fails the run.
#
# usage: scripts/valgrind.sh [PATH/TO/tahq [WORKDIR]]
#   defaults: build/cli/tahq, build/valgrind_work
# Exit status: 0 clean, 1 an error was found or a command failed,
# 77 valgrind is not installed (CTest shows the test as skipped).
# The program must be a normal build (not TAHQ_SANITIZE: ASan and valgrind
# do not mix).
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"
t_tag valgrind

root="$(abs_dir "$(dirname "$0")/..")"
T="${1:-$root/build/cli/tahq}"
W="${2:-$root/build/valgrind_work}"

need_cmd valgrind "valgrind is not installed"
[ -x "$T" ] || fail "$T is not an executable (build first)"
T="$(abs_file "$T")"
W="$(fresh_dir "$W")"
cd "$W"

n=0
errors=0
# vg WANT_RC ARGS...: run tahq ARGS under memcheck; WANT_RC is its expected
# exit status (the program's own errors are exercised too)
vg() {
  local want="$1"
  shift
  n=$((n + 1))
  local log="vg-$n.log" rc=0
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    --track-origins=yes --quiet --log-file="$log" "$T" "$@" >"out-$n.txt" 2>"err-$n.txt" || rc=$?
  if [ "$rc" -eq 99 ] || [ -s "$log" ]; then
    echo "valgrind: ERRORS in 'tahq $*':" >&2
    cat "$log" >&2
    errors=$((errors + 1))
  elif [ "$rc" -ne "$want" ]; then
    echo "valgrind: 'tahq $*' exited $rc, expected $want: $(cat "err-$n.txt")" >&2
    errors=$((errors + 1))
  else
    echo "valgrind: clean: tahq $*"
  fi
}

vg 0 gen-llm x.npy --batch 2 --seq 16 --channels 256
vg 0 encode x.npy x.tahq
vg 0 encode x.npy xs.tahq --tile 32 --bits 4/2 --alloc tile --tau 0 --rounding stochastic \
  --seed 7 --meta bf16
vg 0 encode x.npy xf.tahq --tile 128 --alloc none --tau inf --meta fp32 --json
vg 0 decode x.tahq y.npy
vg 0 decode xs.tahq y.f32
# the parallel codec (cpu/): threads, fast paths, parked pivots, CRC in parts
vg 0 encode x.npy xp.tahq --threads 3
vg 0 encode x.npy xsp.tahq --tile 32 --bits 4/2 --alloc tile --tau 0 --rounding stochastic \
  --seed 7 --meta bf16 --threads 2
cmp -s x.tahq xp.tahq || fail "encode --threads 3 gave another message"
cmp -s xs.tahq xsp.tahq || fail "encode --threads 2 gave another message"
vg 0 decode xs.tahq yp.f32 --threads 2
cmp -s y.f32 yp.f32 || fail "decode --threads 2 gave other values"
vg 0 inspect x.tahq --tiles
vg 0 inspect xs.tahq --json
vg 0 roundtrip x.npy
vg 0 roundtrip y.f32 --shape 2x16x256 --tile 8 --bits 8/1 --ratio 500 --json
vg 0 report --input x.npy
# damaged input: the error paths
head -c 100 x.tahq >trunc.tahq
vg 1 decode trunc.tahq z.npy
cp x.tahq flip.tahq
printf '\001' | dd of=flip.tahq bs=1 seek=200 conv=notrunc status=none
vg 1 inspect flip.tahq
vg 1 encode missing.npy z.tahq
head -c 300 x.npy >short.npy
vg 1 roundtrip short.npy
# golden vectors: a few cases through tahq conform (adapter = this tahq, natively)
if [ -f "$root/golden/v1/manifest.json" ]; then
  vg 0 conform --vectors "$root/golden/v1" --run "sh $root/golden/tahq_adapter.sh $T" \
    --case sweep-g016 --workdir "$W/conform"
  vg 0 conform --vectors "$root/golden/v1" --candidate "$W/conform" --case sweep-g016 --json
  vg 0 conform --vectors "$root/golden/v1" --run "sh $root/golden/tahq_adapter.sh $T" \
    --case edge- --workdir "$W/conform-edge"
fi

echo "valgrind: $n commands, $errors with errors"
[ "$errors" -eq 0 ]
