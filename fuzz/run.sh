#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the libFuzzer harnesses of fuzz/ with clang and run them.
#
#   fuzz/run.sh                      build, then run every harness FUZZ_SECONDS
#                                    seconds (default 60) one after another
#   fuzz/run.sh decode json          only these harnesses
#   fuzz/run.sh --build-only         build the harnesses and seed corpora only
#
# Environment: FUZZ_SECONDS (per harness), FUZZ_BUILD_DIR (default
# build-fuzz/ in the repository), CLANG (default: clang, else clang-14),
# TAHQ_GENERATED_INCLUDE (the CMake build's include/ with tahq_version.h;
# default build/include in the repository).
# The harnesses are built directly from the source lists below (no CMake),
# with -fsanitize=fuzzer,address,undefined. Seed corpora are generated from
# golden/v1 into FUZZ_BUILD_DIR/seeds/NAME; the working corpora grow in
# FUZZ_BUILD_DIR/corpus/NAME, crash inputs land in FUZZ_BUILD_DIR/crashes/NAME;
# inputs that once crashed (fixed since) are kept in fuzz/regress/NAME and
# run first every time, with the committed corpus fuzz/corpus/NAME.
# diff_decode and diff_pv1 are differential: cpu/'s parallel codec (the one
# the CLI runs, x86 fast paths included) against ref/, 1..256 jobs.
# Every run appends "harness runs seconds crashes" to FUZZ_BUILD_DIR/stats.tsv.
# Exit status: 0 no crash, 1 a harness crashed or failed to build,
# 77 no clang with libFuzzer on this machine (CTest shows it as skipped).
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"
t_tag fuzz

root="$(abs_dir "$(dirname "$0")/..")"
out="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
all=(decode header npy json roundtrip diff_decode diff_pv1)

build_only=0
names=()
for a in "$@"; do
  case "$a" in
    --build-only) build_only=1 ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) names+=("$a") ;;
  esac
done
[ "${#names[@]}" -gt 0 ] || names=("${all[@]}")

cc="${CLANG:-}"
if [ -z "$cc" ]; then
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1; then cc="$c"; break; fi
  done
fi
[ -n "$cc" ] || skip "no clang found"

mkdir -p "$out"
gen_include="${TAHQ_GENERATED_INCLUDE:-$root/build/include}"
if [ ! -f "$gen_include/tahq_version.h" ]; then
  echo "fuzz: $gen_include/tahq_version.h not found: configure with CMake first, or set TAHQ_GENERATED_INCLUDE" >&2
  exit 2
fi
flags=(-std=c11 -g -O1 -I"$root/ref" -I"$root/cpu" -fsanitize=fuzzer,address,undefined,float-cast-overflow
       -fno-sanitize-recover=all -fno-omit-frame-pointer
       -ffp-contract=off -fno-fast-math -Wall -Wextra -Werror -Wvla
       -D_POSIX_C_SOURCE=200809L -I"$root/include" -I"$gen_include" -I"$root/support"
       -I"$root/golden/kit")
probe="$out/probe.c"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe"
if ! "$cc" "${flags[@]}" "$probe" -o "$out/probe" >/dev/null 2>&1; then
  skip "$cc cannot build libFuzzer targets (libclang-rt-14-dev missing?)"
fi

ref_src=("$root"/ref/status.c "$root"/ref/fp16.c "$root"/ref/rng.c "$root"/ref/entropy.c "$root"/ref/gain.c
         "$root"/ref/hadamard.c "$root"/ref/quant.c "$root"/ref/bitpack.c "$root"/ref/format.c
         "$root"/ref/codec.c "$root"/ref/fixpoint.c
         "$root"/cpu/ref_accel.c) # the fast forms ref/ calls (ref/internal.h)
# the parallel codec the CLI runs (cpu/, with its x86 fast paths), for the
# differential harnesses
cpu_src="$root/ref/paper_v1.c $root/cpu/parallel.c $root/cpu/fast_tile.c $root/cpu/paper_v1_fast.c $root/cpu/fast_encode.c $root/cpu/fast_gain.c"
sources_of() {
  case "$1" in
    decode|header|roundtrip) echo ;;
    diff_decode|diff_pv1) echo "$cpu_src" ;;
    npy) echo "$root/support/npy.c $root/support/util.c" ;;
    json) echo "$root/golden/kit/golden_common.c $root/golden/kit/golden_paper_v1.c $root/ref/paper_v1.c $root/support/util.c" ;;
    *) echo "fuzz: unknown harness '$1' (have: ${all[*]})" >&2; return 1 ;;
  esac
}
max_len_of() {
  case "$1" in
    decode|header|diff_decode|diff_pv1) echo 16384 ;;
    npy) echo 8192 ;;
    json) echo 4096 ;;
    roundtrip) echo 4120 ;;
  esac
}

# the tools' sources (util.c, golden_common.c) read and write JSON with
# jansson; its flags are part of every object's flags, so that the shared
# objects stay valid whichever harnesses a run names
jansson_cflags=()
jansson_libs=()
if pkg-config --exists jansson 2>/dev/null; then
  read -r -a jansson_cflags <<<"$(pkg-config --cflags jansson)"
  read -r -a jansson_libs <<<"$(pkg-config --libs jansson)"
else
  for n in "${names[@]}"; do
    case "$n" in npy|json) fail "jansson not found (pkg-config jansson): install libjansson-dev" ;; esac
  done
fi

# ----- build -----
# Every source is compiled once into objects shared by the harnesses
# ($out/obj, -fsanitize=fuzzer-no-link), in parallel, and rebuilt only when
# it, a header or the flags changed; each harness then links its own file
# with what it needs. -O1, as OSS-Fuzz builds: under ASan the x86 register
# paths of cpu/ take minutes per file at -O2 and the harnesses spend their
# time in the codec either way.
objdir="$out/obj"
mkdir -p "$objdir"
cflags=("${flags[@]/#-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" ${jansson_cflags[@]+"${jansson_cflags[@]}"})
flag_text="$cc ${cflags[*]}"
if [ "$(cat "$objdir/flags" 2>/dev/null)" != "$flag_text" ]; then
  rm -f "$objdir"/*.o
  printf '%s\n' "$flag_text" >"$objdir/flags"
fi
obj_of() { local r="${1#"$root"/}"; echo "$objdir/${r//\//_}.o"; }
headers=("$root"/include/*.h "$root"/ref/*.h "$root"/support/*.h "$root"/golden/kit/*.h "$root"/cpu/*.h
         "$root"/fuzz/*.h "$gen_include/tahq_version.h")
newest_header="$(ls -t "${headers[@]}" | head -n1)"
# everything harness NAME links: its own file, ref/, and its extra sources
harness_sources() { echo "$root/fuzz/fuzz_$1.c ${ref_src[*]} $(sources_of "$1")"; }
# the sources every named harness needs, each once
declare -A wanted=()
for n in "${names[@]}"; do
  for f in $(harness_sources "$n"); do wanted["$f"]=1; done
done
stale=()
for f in "${!wanted[@]}"; do
  o="$(obj_of "$f")"
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then stale+=("$f"); fi
done
if [ "${#stale[@]}" -gt 0 ]; then
  echo "fuzz: compiling ${#stale[@]} sources into $objdir" >&2
  export -f obj_of
  export root objdir
  # xargs appends the source after the compiler and its flags
  printf '%s\0' "${stale[@]}" |
    xargs -0 -n1 -P "$(nproc 2>/dev/null || echo 2)" bash -c \
      'src="${*: -1}"; o="$(obj_of "$src")"; "${@:1:$#-1}" -c "$src" -o "$o.tmp" && mv "$o.tmp" "$o"' \
      _ "$cc" "${cflags[@]}" ||
    { echo "fuzz: compiling failed (see the compiler's messages above)" >&2; exit 1; }
fi
for n in "${names[@]}"; do
  exe="$out/fuzz_$n"
  objs=()
  for f in $(harness_sources "$n"); do objs+=("$(obj_of "$f")"); done
  fresh=1
  [ -x "$exe" ] || fresh=0
  for o in "${objs[@]}"; do [ "$o" -nt "$exe" ] && fresh=0; done
  if [ "$fresh" -eq 0 ]; then
    echo "fuzz: linking $exe" >&2
    lib=()
    case "$n" in npy|json) lib=(${jansson_libs[@]+"${jansson_libs[@]}"}) ;; esac
    "$cc" "${flags[@]}" "${objs[@]}" ${lib[@]+"${lib[@]}"} -lm -lpthread -o "$exe"
  fi
done

# ----- seed corpora from the golden vectors (regenerated when missing) -----
g="$root/golden/v1"
seed_dir() { echo "$out/seeds/$1"; }
# bytes N...: one byte per number (mod 256)
bytes() {
  local b
  for b in "$@"; do printf "\\x$(printf %02x $((b % 256)))"; done
}
make_seeds() {
  local n="$1" d
  d="$(seed_dir "$n")"
  [ -d "$d" ] && [ -n "$(ls -A "$d" 2>/dev/null)" ] && return 0
  mkdir -p "$d"
  case "$n" in
    decode|header)
      find "$g/expected" -name '*.bin' -size -16k -exec cp {} "$d/" \; ;;
    npy)
      find "$g/inputs" -name '*.npy' -size -8k -exec cp {} "$d/" \; ;;
    diff_decode)
      # the messages of every set as given (jobs 4, in-thread runner), and
      # inputs to encode: 28 bytes of configuration (each alloc mode), the
      # float data of small golden inputs
      local f i=0
      for f in $(find "$root"/golden/v[123]/expected "$root"/golden/v[123]/inputs -name '*.bin' -size -16k | sort); do
        i=$((i + 1))
        { printf '\x03\x01\x00'; cat "$f"; } >"$d/msg-$i"
      done
      i=0
      for f in $(find "$g/inputs" -name '*.npy' -size -4k | sort | head -n 48); do
        i=$((i + 1))
        {
          # jobs, runner, mode: encode; tile, bits 3/2, alloc i % 4 (gain
          # too), rounding, meta, r = 800; tau 2; seed 7; B, S, tiles per
          # row; CRC resealed or not, changed byte and its mask, one more
          bytes $((i * 7)) $((i % 4)) 1 $((i % 6)) 3 2 $((i % 4)) $((i % 2)) $((i % 3 % 2)) 0x20 3
          bytes 0 0 0 0x40 7 0 0 0 0 0 0 0
          bytes $((i % 4)) $((i % 16)) $((i % 4)) $((i % 4)) $((i * 13)) 0 $((i % 3 == 0)) 0
          tail -c +129 "$f"
        } >"$d/enc-$i"
      done ;;
    diff_pv1)
      # inputs to encode with paper-v1 configurations (G 8..256, 3..4 high
      # and 2..4 low bits, r = 800), the float data of small golden inputs
      local f i=0
      for f in $(find "$g/inputs" -name '*.npy' -size -4k | sort | head -n 48); do
        i=$((i + 1))
        {
          bytes $((i * 7)) $((i % 4)) 1 $((i % 6)) $((3 + i % 2)) $((2 + i % 3)) 0x20 3
          bytes $((i % 2)) $((i % 8)) $((i % 4)) $((i * 13)) 0 $((i % 3 == 0))
          tail -c +129 "$f"
        } >"$d/enc-$i"
      done ;;
    json)
      # one seed per manifest case (the cases are objects on lines of their own)
      awk -v d="$d" '
        /^    \{/ { n++; f = sprintf("%s/case-%04d.json", d, n); buf = "" ; on = 1 }
        on { buf = buf $0 "\n" }
        /^    \},?$/ && on { sub(/,\n$/, "\n", buf); printf "%s", buf > f; close(f); on = 0 }
      ' "$g/manifest.json"
      head -n 7 "$g/manifest.json" | sed 's/"cases": \[/"cases": []}/' >"$d/head.json" ;;
    roundtrip)
      # a configuration prefix (24 bytes) + the float data of small golden inputs
      local i=0 f
      for f in $(find "$g/inputs" -name '*.npy' -size -4k | sort | head -n 64); do
        i=$((i + 1))
        {
          printf "\\x$(printf %02x $((i % 6)))\\x04\\x03\\x$(printf %02x $((i % 3)))"
          printf "\\x$(printf %02x $((i % 2)))\\x$(printf %02x $((i % 3)))\\x20\\x03"
          printf '\x00\x00\x00\x40\x07\x00\x00\x00\x00\x00\x00\x00'
          printf "\\x$(printf %02x $((i % 4)))\\x$(printf %02x $((i % 16)))\\x$(printf %02x $((i % 4)))\\x00"
          tail -c +129 "$f"
        } >"$d/seed-$i"
      done ;;
  esac
}
for n in "${names[@]}"; do make_seeds "$n"; done
[ "$build_only" -eq 1 ] && exit 0

# ----- run, one harness at a time -----
status=0
for n in "${names[@]}"; do
  corpus="$out/corpus/$n"
  crashes="$out/crashes/$n"
  mkdir -p "$corpus" "$crashes"
  log="$out/fuzz_$n.log"
  # inputs that once crashed a harness (fuzz/regress/NAME) are always re-run
  regress=()
  [ -d "$root/fuzz/regress/$n" ] && regress=("$root/fuzz/regress/$n")
  # the committed corpus (fuzz/corpus/NAME: inputs of earlier long runs that
  # reach new code, kept small) is read as seeds, never written
  [ -d "$root/fuzz/corpus/$n" ] && regress+=("$root/fuzz/corpus/$n")
  echo "fuzz: $n for ${seconds}s" >&2
  set +e
  "$out/fuzz_$n" -max_total_time="$seconds" -max_len="$(max_len_of "$n")" -timeout=20 \
    -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus" "$(seed_dir "$n")" ${regress[@]+"${regress[@]}"} >"$log" 2>&1
  rc=$?
  set -e
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)"
  found="$(find "$crashes" -type f | wc -l)"
  printf '%s\t%s\t%s\t%s\n' "$n" "${runs:-0}" "$seconds" "$rc" >>"$out/stats.tsv"
  echo "fuzz: $n: ${runs:-0} executions, exit $rc, crash files in $crashes: $found" >&2
  if [ "$rc" -ne 0 ]; then
    grep -m1 -A30 -E 'ERROR: |runtime error|deadly signal' "$log" >&2 || tail -n 30 "$log" >&2
    status=1
  fi
done
exit "$status"
