#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input in every command of the tahq program: missing files, wrong dtype
# or shape in .npy, non-finite values, huge dimensions that would overflow a
# size computation, unwritable output. Each must give a one-line error on
# stderr, a non-zero exit status and no output file (nor temporary file).
# usage: bad_input_test.sh PATH/TO/tahq WORKDIR [SOURCE_ROOT]
# (with SOURCE_ROOT, the golden manifest checks of tahq conform run too)
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"

T="$(abs_file "$1")"
D="$2"
SRC="${3:-}"
[ -z "$SRC" ] || SRC="$(abs_dir "$SRC")"
D="$(fresh_dir "$D")"
cd "$D"

n_checks=0

# bad RC CMD...: the command exits with RC (1 or 2), prints exactly one line
# on stderr, and leaves no file named out.* and no temporary file behind.
bad() {
  local want="$1"
  shift
  local rc=0
  "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want; stderr: $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "'$*': stderr is not one line: $(cat err.txt)"
  grep -q '^tahq' err.txt || fail "'$*': stderr does not name the program: $(cat err.txt)"
  if grep -qiE 'AddressSanitizer|runtime error|LeakSanitizer' err.txt; then
    fail "'$*': sanitizer report"
  fi
  local left
  left="$(find . -name 'out.*' ! -name out.txt -o -name '*.tmp-*' | head -n 3)"
  [ -z "$left" ] || fail "'$*' left $left behind"
  n_checks=$((n_checks + 1))
}
has_err() { has err.txt "$1" stderr; }

# mknpy FILE DESCR SHAPE_TUPLE DATA_BYTES [MAJOR]: a .npy with the given
# header (version 1.0 by default), padded to 128 bytes, and DATA_BYTES zero
# bytes of data (or the float32 values in $NPY_DATA, raw bytes, if set)
mknpy() {
  local f="$1" descr="$2" shape="$3" nbytes="$4" major="${5:-1}"
  local h="{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
  local pre=10
  [ "$major" -eq 1 ] || pre=12
  local hl=$((128 - pre))
  while [ "${#h}" -ge "$hl" ]; do hl=$((hl + 64)); done
  {
    printf '\223NUMPY'
    printf "\\x$(printf %02x "$major")\\x00"
    printf "\\x$(printf %02x $((hl & 255)))\\x$(printf %02x $((hl >> 8)))"
    [ "$major" -eq 1 ] || printf '\x00\x00'
    printf '%s' "$h"
    printf '%*s' $((hl - ${#h} - 1)) ''
    printf '\n'
    if [ -n "${NPY_DATA:-}" ]; then
      printf "$NPY_DATA"
    else
      head -c "$nbytes" /dev/zero
    fi
  } >"$f"
}

# --- good inputs to start from -----------------------------------------------
"$T" gen-llm x.npy --seq 16 --channels 128 >/dev/null
"$T" encode x.npy x.tahq >/dev/null
"$T" decode x.tahq x.f32 >/dev/null
rows_c="16x128"

# --- missing and unreadable inputs, every command ---------------------------
bad 1 "$T" encode missing.npy out.tahq;          has_err "missing.npy: cannot open"
bad 1 "$T" encode missing.f32 out.tahq --shape 4x8; has_err "missing.f32: cannot open"
bad 1 "$T" decode missing.tahq out.npy;          has_err "missing.tahq"
bad 1 "$T" inspect missing.tahq;                 has_err "missing.tahq"
bad 1 "$T" roundtrip missing.npy;                has_err "missing.npy"
bad 1 "$T" report --input missing.npy;           has_err "missing.npy"
bad 1 "$T" bounds --input missing.npy --out-dir out.bounds --no-progress; has_err "missing.npy"
bad 2 "$T" conform --vectors missing-dir --check; has_err "missing-dir"
mkdir -p adir
bad 1 "$T" encode adir out.tahq
bad 1 "$T" decode adir out.npy;                  has_err "is a directory"
bad 1 "$T" inspect adir;                         has_err "is a directory"
bad 1 "$T" roundtrip adir
: >empty.npy
bad 1 "$T" encode empty.npy out.tahq
bad 1 "$T" roundtrip empty.npy
: >empty.tahq
bad 1 "$T" decode empty.tahq out.npy;            has_err "err_truncated"
bad 1 "$T" inspect empty.tahq;                   has_err "err_truncated"

# --- wrong dtype, order, version, shape in .npy --------------------------------
for d in '<f8' '>f4' '<f2' '|u1' '<i4' '|b1' 'f4'; do
  mknpy dt.npy "$d" "(16, 128)" $((16 * 128 * 4))
  bad 1 "$T" encode dt.npy out.tahq;  has_err "dtype '$d' not supported"
  bad 1 "$T" roundtrip dt.npy;        has_err "not supported"
  bad 1 "$T" report --input dt.npy;   has_err "not supported"
done
mknpy s4.npy '<f4' "(2, 2, 4, 128)" $((2 * 2 * 4 * 128 * 4))
bad 1 "$T" encode s4.npy out.tahq;   has_err "more than 3 dimensions"
mknpy s0.npy '<f4' "()" 4
bad 1 "$T" encode s0.npy out.tahq;   has_err "0-dimensional"
mknpy sz.npy '<f4' "(0, 128)" 0
bad 1 "$T" encode sz.npy out.tahq;   has_err "empty array"
mknpy c7.npy '<f4' "(16, 7)" $((16 * 7 * 4))
bad 1 "$T" encode c7.npy out.tahq;   has_err "does not fit tile"
mknpy short.npy '<f4' "(16, 128)" $((16 * 128 * 4 - 1))
bad 1 "$T" encode short.npy out.tahq; has_err "data size mismatch"
mknpy long.npy '<f4' "(16, 128)" $((16 * 128 * 4 + 4))
bad 1 "$T" encode long.npy out.tahq;  has_err "data size mismatch"
mknpy v9.npy '<f4' "(16, 128)" $((16 * 128 * 4)) 9
bad 1 "$T" encode v9.npy out.tahq;    has_err "unsupported .npy version"
printf '\223NUMPY\001\000\377\377{' >hl.npy
bad 1 "$T" encode hl.npy out.tahq;    has_err "truncated .npy file"
printf '\223NU' >magic3.npy
bad 1 "$T" encode magic3.npy out.tahq
# non-numeric shape, garbage dictionary
mknpy g1.npy '<f4' "(16, x)" 8
bad 1 "$T" encode g1.npy out.tahq;    has_err "shape"
mknpy g2.npy '<f4' "[16, 128]" 8
bad 1 "$T" encode g2.npy out.tahq;    has_err "not a tuple"

# --- huge dimensions: rejected before any allocation or size overflow -------------
# 2^40 + 1 elements; 2^64 (wraps a 64-bit product to 0); 2^64 * 4 bytes
# (wraps the byte count); a dimension above 2^64; 2^40 exactly (accepted by
# the parser, then the data size does not match)
for shape in "(1099511627777,)" "(4294967296, 4294967296)" "(1048576, 1048576, 16777216)" \
             "(4611686018427387904, 1)" "(18446744073709551615, 1, 1)" \
             "(65536, 65536, 65536)" "(3, 6148914691236517206, 8)"; do
  mknpy huge.npy '<f4' "$shape" 64
  bad 1 "$T" encode huge.npy out.tahq;  has_err "too many elements"
  bad 1 "$T" roundtrip huge.npy;        has_err "too many elements"
done
mknpy huge.npy '<f4' "(99999999999999999999999, 8)" 64
bad 1 "$T" encode huge.npy out.tahq;    has_err "too large"
mknpy limit.npy '<f4' "(1024, 1024, 1048576)" 64
bad 1 "$T" encode limit.npy out.tahq;   has_err "data size mismatch"
mknpy limit2.npy '<f4' "(1024, 1024, 1048576)" 64 2
bad 1 "$T" roundtrip limit2.npy;        has_err "data size mismatch"
# raw input: --shape beyond the limit or wrapping
for s in 1099511627777 4294967296x4294967296 65536x65536x65536 18446744073709551616 \
         3x6148914691236517206x8 0x128 16x0 16x 16xx128 -16x128 1x2x3x4; do
  bad 2 "$T" encode x.f32 out.tahq --shape "$s"; has_err "--shape"
done
# batch / seq splits that do not divide the rows, or overflow 32 bits
bad 2 "$T" encode x.npy out.tahq --batch 4294967296
bad 2 "$T" encode x.npy out.tahq --seq 99999999999999999999
bad 2 "$T" encode x.f32 out.tahq --shape 1x1x2048 --batch 3
bad 2 "$T" gen-llm out.npy --batch 4294967295 --seq 4294967295 --channels 4294967295
has_err "exceeds 2^40"
bad 2 "$T" gen-llm out.npy --batch 65536 --seq 65536 --channels 257; has_err "exceeds 2^40"
# a message header claiming 2^40+ elements (CRC made valid): rejected as a header
"$T" inspect x.tahq >/dev/null
cp x.tahq big.tahq
printf '\377\377\377\377\377\377\377\377' | dd of=big.tahq bs=1 seek=20 conv=notrunc status=none
bad 1 "$T" decode big.tahq out.npy
bad 1 "$T" inspect big.tahq

# --- non-finite and out-of-range values ---------------------------------------
for v in '\x00\x00\xc0\x7f' '\x00\x00\x80\x7f' '\x00\x00\x80\xff' '\x00\x00\x80\x5f' \
         '\x00\x00\x80\xdf' '\xff\xff\x7f\x7f'; do
  NPY_DATA="$(printf '\\x00%.0s' $(seq 1 $((4 * 100))))$v$(printf '\\x00%.0s' $(seq 1 $((4 * 27))))"
  NPY_DATA="$NPY_DATA" mknpy nf.npy '<f4' "(1, 128)" 0
  want="err_nonfinite"
  case "$v" in '\x00\x00\x80\x5f'|'\x00\x00\x80\xdf'|'\xff\xff\x7f\x7f') want="err_range" ;; esac
  bad 1 "$T" encode nf.npy out.tahq --tile 8; has_err "$want"
  bad 1 "$T" roundtrip nf.npy --tile 8;       has_err "$want"
  bad 1 "$T" report --input nf.npy  # runs every configuration, each row FAIL
done

# --- unwritable output -----------------------------------------------------------
bad 1 "$T" encode x.npy nodir/out.tahq;          has_err "cannot create output file"
bad 1 "$T" encode x.npy x.npy/out.tahq;          has_err "cannot create output file"
bad 1 "$T" decode x.tahq nodir/out.npy;          has_err "cannot create output file"
bad 1 "$T" decode x.tahq nodir/out.f32;          has_err "cannot create output file"
bad 1 "$T" gen-llm nodir/out.npy --seq 4 --channels 64; has_err "cannot create output file"
bad 1 "$T" encode x.npy adir;                    has_err "is a directory"
bad 2 "$T" encode x.npy "";                      has_err "empty output path"
if [ -w /dev/full ]; then
  bad 1 "$T" encode x.npy /dev/full
  bad 1 "$T" decode x.tahq /dev/full
fi
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p ro && chmod 555 ro
  bad 1 "$T" encode x.npy ro/out.tahq;           has_err "cannot create output file"
  chmod 755 ro
fi
# --- damaged golden manifests (tahq conform) -----------------------------------
if [ -n "$SRC" ] && [ -f "$SRC/golden/v1/manifest.json" ]; then
  mkdir -p gv
  ln -s "$SRC/golden/v1/inputs" gv/inputs
  ln -s "$SRC/golden/v1/expected" gv/expected
  # a duplicate case id (this error path once read freed memory)
  sed '0,/"id": "sweep-g008-b2"/s//"id": "sweep-g008-b1"/' \
    "$SRC/golden/v1/manifest.json" >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check;       has_err "duplicate case id sweep-g008-b1"
  head -c 5000 "$SRC/golden/v1/manifest.json" >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check
  printf '{"schema": "tahq-golden-manifest/1", "cases": [' >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check
  printf '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]' >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check;       has_err "nesting too deep"
  printf '{"schema": 1\000}' >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check
  # a member given twice in an object
  sed '0,/"set": "v1",/s//"set": "v1", "set": "v2",/' \
    "$SRC/golden/v1/manifest.json" >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check;       has_err "duplicate object key"
  # seeds are strings: the whole u64 range, 18446744073709551615 included
  # (the old reader refused u64 values from 18446744073709551610 up); one
  # more is out of range
  sed '0,/"seed":"0"/s//"seed":"18446744073709551615"/' \
    "$SRC/golden/v1/manifest.json" >gv/manifest.json
  grep -q '"seed":"18446744073709551615"' gv/manifest.json || fail "seed not replaced"
  "$T" conform --vectors gv --check >out.txt 2>err.txt ||
    fail "seed 18446744073709551615 refused: $(cat err.txt)"
  sed '0,/"seed":"0"/s//"seed":"18446744073709551616"/' \
    "$SRC/golden/v1/manifest.json" >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check;       has_err "seed '18446744073709551616'"
  # numbers are integers of at most 63 bits (jansson's json_int_t)
  sed '0,/"bytes": 768,/s//"bytes": 18446744073709551615,/' \
    "$SRC/golden/v1/manifest.json" >gv/manifest.json
  bad 1 "$T" conform --vectors gv --check;       has_err "too big integer"
fi

# --- the option table: every command refuses an unknown option, an option
# given twice (a value or a flag, the same value or not) and a missing value,
# each with one line "tahq CMD: ..." and exit 2 ---------------------------------
# line TEXT: stderr is exactly the line TEXT
line() { [ "$(cat err.txt)" = "$1" ] || fail "stderr is '$(cat err.txt)', expected '$1'"; }
bad 2 "$T" encode x.npy out.tahq --bogus;                   line "tahq encode: unknown option --bogus"
bad 2 "$T" encode x.npy out.tahq --bogus=1;                 line "tahq encode: unknown option --bogus"
bad 2 "$T" encode x.npy out.tahq --tile 64 --tile 32;       line "tahq encode: --tile given twice"
bad 2 "$T" encode x.npy out.tahq --seed 1 --seed=1;         line "tahq encode: --seed given twice"
bad 2 "$T" encode x.npy out.tahq --shape 8x128 --shape 8x128 --json
line "tahq encode: --shape given twice"
bad 2 "$T" encode x.npy out.tahq --json --json;             line "tahq encode: --json given twice"
bad 2 "$T" encode x.npy out.tahq --json=yes;                line "tahq encode: option --json takes no value"
bad 2 "$T" encode x.npy out.tahq --tile;                    line "tahq encode: option --tile needs a value"
bad 2 "$T" encode x.npy out.tahq --tile --json;             line "tahq encode: option --tile needs a value"
bad 2 "$T" encode x.npy out.tahq --profile paper-v1 --bits 4/3 --bits 4/3
line "tahq encode: --bits given twice"
bad 2 "$T" decode x.tahq out.npy --bogus;                   line "tahq decode: unknown option --bogus"
bad 2 "$T" decode x.tahq out.npy --json --json;             line "tahq decode: --json given twice"
bad 2 "$T" decode x.tahq out.npy --profile paper-v1 --profile paper-v1
line "tahq decode: --profile given twice"
bad 2 "$T" decode x.tahq out.npy --profile;                 line "tahq decode: option --profile needs a value"
bad 2 "$T" decode x.tahq out.npy --profile --json;          line "tahq decode: option --profile needs a value"
bad 2 "$T" decode x.tahq out.npy --tile 64;                 has_err "--tile applies only with --profile paper-v1"
bad 2 "$T" bounds --out-dir out.b --bogus;                  line "tahq bounds: unknown option --bogus"
bad 2 "$T" bounds --out-dir out.b --jobs 1 --jobs 2;        line "tahq bounds: --jobs given twice"
bad 2 "$T" bounds --out-dir out.b --quick --quick;          line "tahq bounds: --quick given twice"
bad 2 "$T" bounds --out-dir out.b --quick --full;           line "tahq bounds: --quick and --full: give one"
bad 2 "$T" bounds --out-dir out.b --input x.npy --seq 4 --seq 4
line "tahq bounds: --seq given twice"
bad 2 "$T" bounds --out-dir out.b --jobs;                   line "tahq bounds: option --jobs needs a value"
bad 2 "$T" bounds --out-dir --quick;                        line "tahq bounds: option --out-dir needs a value"
bad 2 "$T" conform --vectors gv --check --bogus;            line "tahq conform: unknown option --bogus"
bad 2 "$T" conform --vectors gv --vectors gv --check;       line "tahq conform: --vectors given twice"
bad 2 "$T" conform --vectors gv --check --check;            line "tahq conform: --check given twice"
bad 2 "$T" conform --vectors gv --check --case a --case b --json --json
line "tahq conform: --json given twice"
bad 2 "$T" conform --check --vectors;                       line "tahq conform: option --vectors needs a value"
bad 2 "$T" conform --vectors --check;                       line "tahq conform: option --vectors needs a value"
bad 2 "$T" inspect x.tahq --tiles --tiles;                  line "tahq inspect: --tiles given twice"
bad 2 "$T" inspect x.tahq --tile;                           line "tahq inspect: unknown option --tile"
bad 2 "$T" roundtrip x.npy --ratio 500 --ratio 500;         line "tahq roundtrip: --ratio given twice"
bad 2 "$T" roundtrip x.npy --profile paper-v1;              line "tahq roundtrip: unknown option --profile"
bad 2 "$T" report --data-seed 1 --data-seed 2;              line "tahq report: --data-seed given twice"
bad 2 "$T" report --input x.npy --batch 2 --batch 2;        line "tahq report: --batch given twice"
bad 2 "$T" report --tile 32;                                line "tahq report: unknown option --tile"
bad 2 "$T" bench --reps 1 --reps 1;                         line "tahq bench: --reps given twice"
bad 2 "$T" bench --mib;                                     line "tahq bench: option --mib needs a value"
bad 2 "$T" bench --threads 0;                               line "tahq bench: invalid value '0' for --threads (need 1..256)"
bad 2 "$T" encode x.npy out.tahq --threads 257;             line "tahq encode: invalid value '257' for --threads (need 1..256)"
bad 2 "$T" encode x.npy out.tahq --profile paper-v1 --threads 257
line "tahq encode: invalid value '257' for --threads (need 1..256)"
bad 2 "$T" gen-llm out.npy --seq 4 --seq 8;                 line "tahq gen-llm: --seq given twice"
bad 2 "$T" gen-llm out.npy --shape 4x64;                    line "tahq gen-llm: unknown option --shape"
bad 2 "$T" golden-gen out.g --set v1 --set v1;              line "tahq golden-gen: --set given twice"
bad 2 "$T" golden-gen out.g --set;                          line "tahq golden-gen: option --set needs a value"
bad 2 "$T" golden-gen out.g --bogus;                        line "tahq golden-gen: unknown option --bogus"

# an existing output survives a failed command untouched
printf 'old' >keep.tahq
bad 1 "$T" encode short.npy keep.tahq
[ "$(cat keep.tahq)" = "old" ] || fail "failed encode changed its output"

# --- an output that is an input, a symlink, or "-" -----------------------------
# unchanged FILE SUM: FILE still has the sha256 SUM it had before the command
unchanged() { [ "$(sha256sum <"$1")" = "$2" ] || fail "$1 was changed"; }
x_sum="$(sha256sum <x.npy)"
m_sum="$(sha256sum <x.tahq)"
bad 2 "$T" encode x.npy x.npy;                     has_err "same file as the input x.npy"
unchanged x.npy "$x_sum"
bad 2 "$T" encode x.npy ./x.npy;                   has_err "same file as the input"
bad 2 "$T" encode x.npy "$PWD/x.npy";              has_err "same file as the input"
ln -f x.npy x_hardlink.npy
bad 2 "$T" encode x.npy x_hardlink.npy;            has_err "same file as the input"
ln -f x.tahq x_msg_link.npy
bad 2 "$T" decode x.tahq x_msg_link.npy;           has_err "same file as the input x.tahq"
unchanged x.tahq "$m_sum"
# an output name decode does not write (.npy bytes under another extension)
bad 2 "$T" decode x.tahq x.tahq;                   has_err "x.tahq: unknown output type"
unchanged x.tahq "$m_sum"
bad 2 "$T" decode x.tahq y.txt;                    has_err "give a name ending in .npy"
[ ! -e y.txt ] || fail "decode to y.txt wrote a file"
bad 2 "$T" gen-llm y.txt --seq 4 --channels 64;    has_err "y.txt: unknown output type"
[ ! -e y.txt ] || fail "gen-llm to y.txt wrote a file"
"$T" encode --profile paper-v1 x.npy x.pv1 >/dev/null
p_sum="$(sha256sum <x.pv1)"
bad 2 "$T" encode --profile paper-v1 x.npy x.npy;  has_err "same file as the input"
ln -f x.pv1 x_pv1_link.npy
bad 2 "$T" decode --profile paper-v1 x.pv1 x_pv1_link.npy --shape 1x16x128; has_err "same file as the input"
bad 2 "$T" decode --profile paper-v1 x.pv1 y.txt --shape 1x16x128; has_err "unknown output type"
unchanged x.pv1 "$p_sum"
bad 2 "$T" encode x.f32 x.f32 --shape "$rows_c";   has_err "same file as the input x.f32"
unchanged x.npy "$x_sum"
unchanged x.tahq "$m_sum"
# a symbolic link as the output is refused, whatever it points to, and is
# left a link to its target (which keeps its contents)
ln -s x.npy link_to_input.npy
bad 2 "$T" encode x.npy link_to_input.npy;         has_err "symbolic link"
printf 'old' >target.tahq
ln -s target.tahq link_out.tahq
bad 2 "$T" encode x.npy link_out.tahq;             has_err "symbolic link"
[ -L link_out.tahq ] || fail "the symlinked output was replaced"
[ "$(cat target.tahq)" = "old" ] || fail "the symlink's target was changed"
ln -s nowhere.tahq dangling.tahq
bad 2 "$T" encode x.npy dangling.tahq;             has_err "symbolic link"
[ ! -e nowhere.tahq ] || fail "a dangling link's target was created"
unchanged x.npy "$x_sum"
# "-" is standard output (never a file named "-"); a tensor cannot come from
# standard input; a message can
"$T" encode x.npy - >stdout.tahq || fail "encode to - failed"
[ ! -e ./- ] || fail "encode - created a file named -"
cmp -s stdout.tahq x.tahq || fail "encode to - differs from encode to a file"
"$T" decode - from_stdin.f32 <x.tahq >/dev/null || fail "decode from - failed"
cmp -s from_stdin.f32 x.f32 || fail "decode of standard input differs"
"$T" decode x.tahq - >stdout.npy || fail "decode to - failed"
"$T" decode x.tahq file.npy >/dev/null
cmp -s stdout.npy file.npy || fail "decode to - differs from decode to a file"
bad 2 "$T" encode - out.tahq <x.npy;               has_err "not from standard input"
[ ! -e ./- ] || fail "a file named - was created"
rm -f stdout.tahq stdout.npy file.npy from_stdin.f32 x_hardlink.npy link_to_input.npy \
  link_out.tahq target.tahq dangling.tahq
# the control: a different output path next to the input is written
"$T" encode x.npy ./x_copy.tahq >/dev/null || fail "encode to a new path failed"
cmp -s x_copy.tahq x.tahq || fail "encode to a new path differs"
rm -f x_copy.tahq

echo "bad_input_test: $n_checks bad inputs rejected cleanly"
