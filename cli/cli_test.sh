#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end test of the tahq program: every command on a small tensor, the
# exit status and message of bad inputs, and that no partial output is left.
# usage: cli_test.sh PATH/TO/tahq WORKDIR [SOURCE_ROOT]
# (with SOURCE_ROOT, the --json output of tahq conform on golden/v1 too)
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"

T="$(abs_file "$1")"
D="$2"
SRC="${3:-}"
[ -z "$SRC" ] || SRC="$(abs_dir "$SRC")"
D="$(fresh_dir "$D")"
cd "$D"

# expect_rc WANT CMD...: run, keep stdout/stderr in out.txt/err.txt
expect_rc() {
  local want="$1"
  shift
  local rc=0
  "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want; stderr: $(cat err.txt)"
}

expect_err() { # expect_err TEXT: err.txt holds TEXT, on one line
  grep -qF -- "$1" err.txt || fail "stderr lacks '$1': $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "stderr is not one line: $(cat err.txt)"
}

size_of() { wc -c <"$1" | tr -d ' '; }

# check_json FILE EXPR...: FILE holds one JSON object (parsed by Python's
# json module) and every Python expression EXPR over it (named d) is true.
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the --json outputs"
check_json() {
  local f="$1"
  shift
  python3 - "$f" "$@" <<'PY'
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as fh:
        d = json.load(fh)
except ValueError as e:
    sys.exit("%s: not valid JSON: %s" % (sys.argv[1], e))
if not isinstance(d, dict):
    sys.exit("%s: a JSON %s, not an object" % (sys.argv[1], type(d).__name__))
for e in sys.argv[2:]:
    try:
        ok = eval(e, {"all": all, "len": len, "sum": sum, "isinstance": isinstance,
                      "int": int, "float": float, "str": str, "list": list, "dict": dict}, {"d": d})
    except Exception as x:  # a missing key is a failed check
        sys.exit("%s: %s: %s: %s" % (sys.argv[1], e, type(x).__name__, x))
    if not ok:
        sys.exit("%s: false: %s" % (sys.argv[1], e))
PY
}
CONFIG_KEYS="{'tile', 'hi_bits', 'lo_bits', 'hi_permille', 'alloc', 'tau', 'rounding', 'seed', 'meta'}"

# --- version and help ------------------------------------------------------
expect_rc 0 "$T" --version
[ "$(cat out.txt)" = "tahq 0.1.0, format 1" ] || fail "--version prints '$(cat out.txt)'"
expect_rc 0 "$T" --help
for c in encode decode inspect roundtrip report bench gen-llm; do
  expect_rc 0 "$T" "$c" --help
  grep -q "usage: tahq $c" out.txt || fail "$c --help"
done
expect_rc 2 "$T"
expect_rc 2 "$T" frobnicate

# --- the commands on a small tensor ----------------------------------------
expect_rc 0 "$T" gen-llm x.npy --seq 64 --channels 256
[ "$(size_of x.npy)" -eq $((128 + 64 * 256 * 4)) ] || fail "x.npy size"
expect_rc 0 "$T" gen-llm x2.npy --seq 64 --channels 256
cmp -s x.npy x2.npy || fail "gen-llm is not deterministic"

expect_rc 0 "$T" encode x.npy x.tahq
expect_rc 0 "$T" encode x.npy x2.tahq --json
cmp -s x.tahq x2.tahq || fail "encode is not deterministic"
cp out.txt encode.json
check_json encode.json "d['command'] == 'encode'" "d['input'] == 'x.npy'" \
  "d['output'] == 'x2.tahq'" "d['shape'] == [1, 64, 256]" "d['elements'] == 64 * 256" \
  "d['bytes'] == $(size_of x2.tahq)" "d['bits_per_element'] == d['bytes'] * 8 / d['elements']" \
  "set(d['config']) == $CONFIG_KEYS" "d['config']['tile'] == 64 and d['config']['meta'] == 'fp16'" \
  "isinstance(d['n_low'], int) and isinstance(d['n_flagged'], int)" ||
  fail "encode --json"
# the check itself must fail on broken JSON and on a wrong or missing key
head -c -2 encode.json >broken.json
! check_json broken.json 2>/dev/null || fail "check_json accepted truncated JSON"
! check_json encode.json "d['bytes'] == 1" 2>/dev/null || fail "check_json accepted a false check"
! check_json encode.json "d['no_such_key'] == 0" 2>/dev/null || fail "check_json accepted a missing key"
printf '[1, 2]' >array.json
! check_json array.json 2>/dev/null || fail "check_json accepted a JSON array"
[ "$(head -c 4 x.tahq)" = "TAHQ" ] || fail "message magic"

expect_rc 0 "$T" decode x.tahq y.npy
[ "$(size_of y.npy)" -eq $((128 + 64 * 256 * 4)) ] || fail "y.npy size"
[ "$(head -c 6 y.npy | tail -c 5)" = "NUMPY" ] || fail "y.npy magic"
expect_rc 0 "$T" decode x.tahq y.f32
[ "$(size_of y.f32)" -eq $((64 * 256 * 4)) ] || fail "y.f32 size"
tail -c $((64 * 256 * 4)) y.npy | cmp -s - y.f32 || fail "y.npy and y.f32 differ"

expect_rc 0 "$T" inspect x.tahq
grep -q "bits/element" out.txt || fail "inspect"
expect_rc 0 "$T" inspect x.tahq --tiles
[ "$(wc -l <out.txt)" -ge $((64 * 4)) ] || fail "inspect --tiles lines"
expect_rc 0 "$T" inspect x.tahq --tiles --json
check_json out.txt "d['command'] == 'inspect'" "d['file'] == 'x.tahq'" \
  "d['bytes'] == $(size_of x.tahq)" "d['header_bytes'] == 72" \
  "d['header_bytes'] + d['payload_bytes'] == d['bytes']" "d['version'] == 1" \
  "set(d['config']) == $CONFIG_KEYS" "d['shape'] == [1, 64, 256]" "d['elements'] == 64 * 256" \
  "d['tiles'] == 64 * 256 // 64" "d['low_tiles'] + d['high_tiles'] == d['tiles']" \
  "d['unit'] == 'token' and d['units'] == 64" "d['low_tiles'] == d['n_low'] * 256 // 64" \
  "len(d['tile_info']) == d['tiles']" \
  "[t['tile'] for t in d['tile_info']] == list(range(d['tiles']))" \
  "all(set(t) == {'tile', 'row', 'col', 'bits', 'flagged', 'pivot', 'zero', 'scale', 'bound'} for t in d['tile_info'])" \
  "sum(t['flagged'] for t in d['tile_info']) == d['n_flagged']" \
  "sum(t['bits'] == 3 for t in d['tile_info']) == d['low_tiles']" \
  "all(t['bits'] in (3, 4) and t['scale'] > 0 and t['bound'] > 0 for t in d['tile_info'])" \
  "isinstance(d['crc32c'], int)" ||
  fail "inspect --tiles --json"
python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(a["n_low"] != b["n_low"] or a["n_flagged"] != b["n_flagged"])' \
  encode.json out.txt || fail "encode --json and inspect --json disagree on n_low / n_flagged"

expect_rc 0 "$T" roundtrip x.npy
grep -q "within its error bound" out.txt || fail "roundtrip"
expect_rc 0 "$T" roundtrip x.npy --tile 8 --bits 8/1 --ratio 0 --alloc tile --tau 0 \
  --rounding stochastic --seed 99 --meta bf16 --json
check_json out.txt "d['command'] == 'roundtrip'" "d['input'] == 'x.npy'" \
  "d['shape'] == [1, 64, 256]" "d['elements'] == 64 * 256" \
  "d['config'] == {'tile': 8, 'hi_bits': 8, 'lo_bits': 1, 'hi_permille': 0, 'alloc': 'tile', 'tau': 0, 'rounding': 'stochastic', 'seed': 99, 'meta': 'bf16'}" \
  "d['bits_per_element'] == d['bytes'] * 8 / d['elements']" \
  "d['n_low'] == 64 * 256 // 8" "d['ok'] is True" "d['n_over_bound'] == 0" \
  "0 < d['max_err_over_bound'] <= 1" "0 < d['rel_mse'] < 1" "d['sqnr_db'] > 0" \
  "d['max_abs_err'] > 0" "isinstance(d['n_flagged'], int)" ||
  fail "roundtrip --json"
expect_rc 0 "$T" roundtrip y.f32 --shape 2x32x256 --tau inf --meta fp32

# a decoded tensor encodes and decodes again
expect_rc 0 "$T" encode y.f32 y.tahq --shape 64x256
expect_rc 0 "$T" encode y.npy y2.tahq --batch 4
expect_rc 0 "$T" inspect y2.tahq
grep -q "B=4 S=16 C=256" out.txt || fail "--batch 4 shape"

expect_rc 0 "$T" report --input x.npy
grep -q "all errors within the SPEC bound" out.txt || fail "report --input"
# the keys plots/report.py reads
expect_rc 0 "$T" report --input x.npy --json
check_json out.txt "d['command'] == 'report'" "d['input'] == 'x.npy'" "d['shape'] == [1, 64, 256]" \
  "d['ok'] is True" "d['failed'] == 0" "d['configurations'] == len(d['rows']) > 0" \
  "isinstance(d['verdict'], str)" \
  "all({'name', 'bytes', 'bits_per_element', 'rel_mse', 'sqnr_db', 'max_abs_err', 'max_err_over_bound', 'n_over_bound', 'n_flagged', 'deterministic', 'decode_stable', 'skipped', 'ok'} <= set(r) for r in d['rows'])" \
  "all(r['ok'] is True for r in d['rows'])" \
  "all(r['skipped'] or (r['n_over_bound'] == 0 and r['max_err_over_bound'] <= 1) for r in d['rows'])" ||
  fail "report --json"

# --- bad inputs --------------------------------------------------------------
expect_rc 1 "$T" encode missing.npy o.tahq
expect_err "missing.npy: cannot open"

head -c -5 x.npy >trunc.npy
expect_rc 1 "$T" encode trunc.npy o.tahq
expect_err "data size mismatch"

head -c 40 x.npy >trunc_hdr.npy
expect_rc 1 "$T" encode trunc_hdr.npy o.tahq
expect_err "truncated"

LC_ALL=C sed "1s/'<f4'/'<f8'/" x.npy >f8.npy
expect_rc 1 "$T" encode f8.npy o.tahq
expect_err "dtype '<f8' not supported (need float32 '<f4')"

LC_ALL=C sed "1s/False/True /" x.npy >fortran.npy
expect_rc 1 "$T" encode fortran.npy o.tahq
expect_err "Fortran-order"

printf 'not a numpy file at all' >bad.npy
expect_rc 1 "$T" encode bad.npy o.tahq
expect_err "bad magic"

expect_rc 2 "$T" encode y.f32 o.tahq
expect_err "needs --shape"
expect_rc 1 "$T" encode y.f32 o.tahq --shape 64x255
expect_err "size mismatch"

expect_rc 1 "$T" encode x.npy /nonexistent-dir/o.tahq
expect_err "cannot create output file"
mkdir -p adir
expect_rc 1 "$T" encode x.npy adir
expect_err "is a directory"

# usage errors
expect_rc 2 "$T" encode x.npy
expect_rc 2 "$T" encode x.npy o.tahq --tile 48
expect_err "invalid configuration: tile: must be a power of two 8..256, got 48 (option --tile)"
expect_rc 2 "$T" encode x.npy o.tahq --bits 3/4
expect_err "lo_bits: must be 1..hi_bits (3), got 4 (option --bits)"
expect_rc 2 "$T" roundtrip x.npy --bits 9
expect_err "hi_bits: must be 1..8, got 9 (option --bits)"
expect_rc 2 "$T" encode x.npy o.tahq --ratio 1001
expect_rc 2 "$T" encode x.npy o.tahq --tau -1
expect_rc 2 "$T" encode x.npy o.tahq --alloc sometimes
expect_rc 2 "$T" encode x.npy o.tahq --seed 18446744073709551616
expect_rc 2 "$T" encode x.npy o.tahq --tile
expect_err "needs a value"
expect_rc 2 "$T" encode x.npy o.tahq --no-such-option
expect_rc 2 "$T" encode x.npy o.tahq --batch 3
expect_rc 2 "$T" bench --mib 0
expect_rc 2 "$T" report --tile 32

# C not a multiple of G
"$T" gen-llm c100.npy --seq 4 --channels 100 >/dev/null
expect_rc 1 "$T" encode c100.npy o.tahq
expect_err "does not fit tile 64"

# corrupted and truncated messages
cp x.tahq flip.tahq
printf '\377' | dd of=flip.tahq bs=1 seek=100 conv=notrunc status=none
expect_rc 1 "$T" decode flip.tahq o.npy
expect_err "err_crc"
expect_rc 1 "$T" inspect flip.tahq
head -c -1 x.tahq >trunc.tahq
expect_rc 1 "$T" decode trunc.tahq o.npy
expect_err "err_truncated"
expect_rc 1 "$T" decode x.npy o.npy
expect_err "err_magic"

# a failed command leaves an existing output untouched and no temporary files
printf 'old' >keep.tahq
expect_rc 1 "$T" encode trunc.npy keep.tahq
[ "$(cat keep.tahq)" = "old" ] || fail "failed encode changed its output"
printf 'old' >keep.npy
expect_rc 1 "$T" decode flip.tahq keep.npy
[ "$(cat keep.npy)" = "old" ] || fail "failed decode changed its output"
[ ! -e o.tahq ] || fail "o.tahq left behind"
[ ! -e o.npy ] || fail "o.npy left behind"
left="$(find . -name '*.tmp-*')"
[ -z "$left" ] || fail "temporary files left behind: $left"

# --- every command's --json output: one JSON object that parses, with its
# members in the documented order and of the documented types ------------------
# keys FILE K1,K2,...: the object's members, in this order
keys() { check_json "$1" "list(d) == '$2'.split(',')"; }
CFG_ORDER="list(d['config']) == ['tile', 'hi_bits', 'lo_bits', 'hi_permille', 'alloc', 'tau', 'rounding', 'seed', 'meta']"
# a file name that needs escaping, and one that is not UTF-8
cp x.npy 'we"ird\name.npy'
expect_rc 0 "$T" encode 'we"ird\name.npy' j.tahq --seed 18446744073709551615 --json
cp out.txt j_encode.json
keys j_encode.json command,input,output,shape,config,elements,bytes,bits_per_element,n_low,n_flagged
check_json j_encode.json "d['input'] == 'we\"ird\\\\name.npy'" "$CFG_ORDER" \
  "d['config']['seed'] == 18446744073709551615" \
  "all(isinstance(v, (int, float)) for v in (d['elements'], d['bytes'], d['bits_per_element']))"
cp x.npy "$(printf 'bad\377name.npy')"
expect_rc 0 "$T" encode "$(printf 'bad\377name.npy')" j2.tahq --json
check_json out.txt "d['input'] == 'bad\ufffdname.npy'"
expect_rc 0 "$T" decode j.tahq j.npy --json
keys out.txt command,input,output,shape,elements,bytes
check_json out.txt "d['shape'] == [1, 64, 256]"
expect_rc 0 "$T" inspect j.tahq --json
keys out.txt command,file,bytes,header_bytes,payload_bytes,version,config,shape,elements,tiles,bits_per_element,unit,units,n_low,low_tiles,high_tiles,n_flagged,crc32c
check_json out.txt "$CFG_ORDER" "'tile_info' not in d"
expect_rc 0 "$T" inspect j.tahq --tiles --json
check_json out.txt "list(d)[-1] == 'tile_info'" \
  "all(list(t) == ['tile', 'row', 'col', 'bits', 'flagged', 'pivot', 'zero', 'scale', 'bound'] for t in d['tile_info'])"
expect_rc 0 "$T" roundtrip x.npy --json
keys out.txt command,input,shape,config,elements,bytes,bits_per_element,rel_mse,sqnr_db,max_abs_err,max_err_over_bound,n_over_bound,max_tile_l2_over_bound,n_tiles_over_l2_bound,n_low,n_flagged,ok
check_json out.txt "d['ok'] is True"
expect_rc 0 "$T" report --input x.npy --json
keys out.txt command,input,data_seed,shape,elements,max_abs,rms,rows,configurations,skipped,failed,seconds,ok,verdict
check_json out.txt "d['data_seed'] is None" "all(isinstance(r['skipped'], bool) for r in d['rows'])"
expect_rc 0 "$T" bench --mib 1 --reps 1 --paths scalar --json
keys out.txt command,shape,input_bytes,message_bytes,bits_per_element,config,reps,threads,memcpy_gbps,encode_gbps,decode_gbps,encode_over_memcpy,decode_over_memcpy,memcpy_s,encode_s,decode_s,date,machine,load_before,load_after,max_threads,cpu_paths,cpu_path_best,results,scaling,roundtrip_memory
check_json out.txt "[(r['profile'], r['rounding'], r['codec'], r['cpu_path'], r['threads']) for r in d['results']] == [('canonical', 'nearest', 'reference', None, 1), ('canonical', 'nearest', 'parallel', 'scalar', 1), ('canonical', 'stochastic', 'reference', None, 1), ('canonical', 'stochastic', 'parallel', 'scalar', 1), ('paper-v1', 'nearest', 'reference', None, 1), ('paper-v1', 'nearest', 'parallel', None, 1)]" \
  "d['cpu_paths'] == ['scalar']" \
  "all(r['cpu_path_runs']['avx2'] == 0 and r['cpu_path_runs']['avx512'] == 0 for r in d['results'])" \
  "d['roundtrip_memory']['peak_rss_bytes'] >= d['roundtrip_memory']['input_bytes']" "d['machine']['cpu_model'] != ''"
expect_rc 0 "$T" gen-llm j_gen.npy --seq 4 --channels 64 --seed 18446744073709551615 --json
keys out.txt command,output,shape,seed,elements
check_json out.txt "d['seed'] == 18446744073709551615" "d['shape'] == [1, 4, 64]"
expect_rc 0 "$T" encode x.npy jp.tahq --profile paper-v1 --json
keys out.txt command,profile,input,output,shape,config,elements,bytes,bits_per_element
check_json out.txt "list(d['config']) == ['tile', 'hi_bits', 'lo_bits', 'hi_permille']"
expect_rc 0 "$T" decode jp.tahq jp.npy --profile paper-v1 --shape 1x64x256 --json
keys out.txt command,profile,input,output,shape,elements,bytes
expect_rc 0 "$T" bounds --quick --dist gauss --out-dir jb
keys jb/bounds.json command,mode,data_seed,csv,distributions,findings,points,points_run,skipped,unencodable,failed,max_err_over_bound,ok
check_json jb/bounds.json "list(d['findings']) == ['gauss']" \
  "all(list(p)[:5] == ['index', 'set', 'dist', 'config', 'status'] and list(p)[-1] == 'ok' for p in d['points'])"
# --threads: the same message and the same decoded file for every thread count
expect_rc 0 "$T" encode x.npy th1.tahq --threads 1
for n in 2 3 7; do
  expect_rc 0 "$T" encode x.npy "th$n.tahq" --threads "$n"
  cmp -s th1.tahq "th$n.tahq" || fail "encode --threads $n gave another message"
  expect_rc 0 "$T" decode th1.tahq "th$n.npy" --threads "$n"
done
expect_rc 0 "$T" decode th1.tahq th1.npy
for n in 2 3 7; do cmp -s th1.npy "th$n.npy" || fail "decode --threads $n gave other values"; done
# control: cmp sees a changed message
cp th1.tahq thx.tahq && printf 'X' | dd of=thx.tahq bs=1 seek=100 conv=notrunc 2>/dev/null
if cmp -s th1.tahq thx.tahq; then fail "control: cmp blind to a changed byte"; fi
expect_rc 0 "$T" roundtrip x.npy --threads 3
# paper-v1 through its fast codec (--threads > 1): the reference's bytes and floats
expect_rc 0 "$T" decode jp.tahq jp1.npy --profile paper-v1 --shape 1x64x256
for n in 2 3 7; do
  expect_rc 0 "$T" encode x.npy "jp$n.tahq" --profile paper-v1 --threads "$n"
  cmp -s jp.tahq "jp$n.tahq" || fail "paper-v1 encode --threads $n gave another message"
  expect_rc 0 "$T" decode jp.tahq "jp$n.npy" --profile paper-v1 --shape 1x64x256 --threads "$n"
  cmp -s jp1.npy "jp$n.npy" || fail "paper-v1 decode --threads $n gave other values"
done
# gain allocation (alloc 3, header version 3) through the parallel codec:
# 3 sequences of 37 rows (no thread count divides 111 rows evenly)
expect_rc 0 "$T" gen-llm xg.npy --batch 3 --seq 37 --channels 320
for r in nearest stochastic; do
  expect_rc 0 "$T" encode xg.npy "g1$r.tahq" --alloc gain --rounding "$r" --seed 5 --tile 32
  for n in 2 3 7; do
    expect_rc 0 "$T" encode xg.npy "g$n$r.tahq" --alloc gain --rounding "$r" --seed 5 --tile 32 \
      --threads "$n"
    cmp -s "g1$r.tahq" "g$n$r.tahq" || fail "encode --alloc gain --rounding $r --threads $n gave another message"
    expect_rc 0 "$T" decode "g1$r.tahq" "g$n$r.npy" --threads "$n"
  done
  expect_rc 0 "$T" decode "g1$r.tahq" "g1$r.npy"
  for n in 2 3 7; do
    cmp -s "g1$r.npy" "g$n$r.npy" || fail "decode --threads $n of a gain message gave other values"
  done
done
expect_rc 0 "$T" inspect g1nearest.tahq --json
check_json out.txt "d['version'] == 3" "d['config']['alloc'] == 'gain'"
expect_rc 0 "$T" roundtrip xg.npy --alloc gain --threads 3 --json
check_json out.txt "d['ok'] is True"
# every CPU path this machine has (cpu_paths), side by side: per canonical
# case the reference, then each path on 1 and 2 threads; each row's run
# counters show its path's code ran and no other path's
expect_rc 0 "$T" bench --mib 1 --reps 1 --threads 2 --json
check_json out.txt "d['cpu_paths'] == ['scalar', 'avx2', 'avx512'][:['scalar', 'avx2', 'avx512'].index(d['cpu_path_best']) + 1]" \
  "[(r['profile'], r['codec'], r['cpu_path'], r['threads']) for r in d['results']] == 2 * ([('canonical', 'reference', None, 1)] + [('canonical', 'parallel', p, t) for p in d['cpu_paths'] for t in (1, 2)]) + [('paper-v1', 'reference', None, 1), ('paper-v1', 'parallel', None, 1), ('paper-v1', 'parallel', None, 2)]" \
  "all(r['message_identical_to_reference'] and r['output_identical_to_reference'] for r in d['results'] if r['codec'] == 'parallel')" \
  "all(all((n > 0) == (q == r['cpu_path']) for q, n in r['cpu_path_runs'].items()) for r in d['results'] if r['cpu_path'])" \
  "[(s['cpu_path'], s['threads']) for s in d['scaling']] == 2 * [(p, t) for p in d['cpu_paths'] for t in (1, 2)] + [(None, 1), (None, 2)]" \
  "d['thread_scaling_control']['threads'] == 2 and d['thread_scaling_control']['speedup'] > 0" \
  "(d['thread_scaling_control']['vector']['skipped'] is None) == (d['thread_scaling_control']['vector']['speedup'] is not None)" \
  "d['thread_scaling_control']['vector']['skipped'] in (None, 'no AVX2')" \
  "d['thread_scaling_control']['stream']['passes'] >= 1 and d['thread_scaling_control']['stream']['one_thread_gbps'] > 0 and d['thread_scaling_control']['stream']['all_threads_gbps'] > 0" \
  "d['thread_scaling_control']['stream']['bytes_read_per_element'] == 4 and d['thread_scaling_control']['stream']['bytes_written_per_element'] == 0.5" \
  "abs(d['thread_scaling_control']['stream']['speedup'] * d['thread_scaling_control']['stream']['all_threads_s'] - d['thread_scaling_control']['stream']['one_thread_s']) < 1e-9" \
  "[(e['profile'], e['rounding'], e['cpu_path']) for e in [d['thread_scaling_control']['encode']]] == [('canonical', 'nearest', d['cpu_path_best'])]"
# the text report: the three controls and the encode's scaling beside them
expect_rc 0 "$T" bench --mib 1 --reps 1 --threads 2 --paths scalar
for l in 'control: the same integer work' 'vector control: ' 'stream control: ' \
  'encode scaling '; do
  [ "$(grep -c "^$l" out.txt)" -eq 1 ] || fail "bench --threads 2 lacks one line '$l': $(cat out.txt)"
done
grep -q '^encode scaling [0-9.]*x (canonical nearest, parallel codec, scalar path: .*); controls: integer [0-9.]*x, vector \([0-9.]*x\|skipped\), stream [0-9.]*x$' out.txt ||
  fail "bench: the encode scaling line: $(grep '^encode scaling' out.txt)"
expect_rc 2 "$T" bench --paths avx3
expect_rc 0 "$T" bench --mib 1 --reps 1 --threads 2 --gain --paths scalar --json
check_json out.txt "[(r['profile'], r['rounding'], r['codec'], r['threads']) for r in d['results'] if r['profile'] == 'gain'] == [('gain', 'nearest', 'reference', 1), ('gain', 'nearest', 'parallel', 1), ('gain', 'nearest', 'parallel', 2), ('gain', 'stochastic', 'reference', 1), ('gain', 'stochastic', 'parallel', 1), ('gain', 'stochastic', 'parallel', 2)]" \
  "all(r['config']['alloc'] == 'gain' for r in d['results'] if r['profile'] == 'gain')" \
  "all(r['message_identical_to_reference'] and r['output_identical_to_reference'] for r in d['results'] if r['codec'] == 'parallel')"
if [ -n "$SRC" ]; then
  expect_rc 0 "$T" conform --vectors "$SRC/golden/v1" --check --json
  keys out.txt vectors,set,cases,valid
  expect_rc 0 "$T" conform --vectors "$SRC/golden/v1" --candidate "$SRC/golden/v1/expected" \
    --case sweep-g008 --tolerance --json
  keys out.txt vectors,set,mode,cases,summary
  check_json out.txt "len(d['cases']) > 0" \
    "all(list(c) == ['id', 'kind', 'pass', 'verdict', 'tolerant_pass', 'checks'] for c in d['cases'])" \
    "list(d['summary'])[-3:] == ['tolerant_passed', 'tolerant_only', 'tolerant_failed']"
  expect_rc 1 "$T" conform --vectors "$SRC/golden/v1" --run false --case sweep-g008-b1 --json
  check_json out.txt "list(d['cases'][0]['checks'][0]['candidate']) == ['op', 'ran', 'exit_status', 'signal', 'timed_out', 'status_word', 'stderr_tail']"
fi

echo "cli_test: all checks passed"
