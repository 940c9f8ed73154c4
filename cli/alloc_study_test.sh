#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest check of `tahq alloc-study` on small inputs (about a second):
#  - the exactness control: real --alloc tile, --alloc token and --alloc gain
#    encodes equal the study's reconstruction from two uniform encodes
#    (alloc_control.csv: same map, 0 decoded elements differ, same bytes, same
#    relative MSE; one row per input and allocation), and the inverse
#    selection (highest entropy, largest gain) differs from the real map (the
#    control can tell two selections apart);
#  - the oracle is never beaten: recomputed here from the CSV, independently
#    of the program's own verdict, for every input and budget: no policy row
#    has a relative MSE below the oracle's by more than the summation
#    tolerance 2 N 2^-53 (cmd_alloc_study.c derives it), and no row exceeds
#    the budget in bytes; SPEC token rows sit exactly at the budget;
#  - a control of that check: the same awk run on a copy of the CSV whose
#    oracle rows carry the SPEC token error instead must report a beaten
#    oracle (the check can fail);
#  - max |error|/bound <= 1 everywhere;
#  - bad input: LO >= HI, --alloc, C not a multiple of G, a missing file, a
#    non-finite element, --ratios out of range, an unknown distribution: the
#    right exit status, one line naming the program, nothing written.
# usage: alloc_study_test.sh PATH/TO/tahq WORKDIR
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"

T="$(abs_file "$1")"
D="$(fresh_dir "$2")"
cd "$D"

# --- a run on small inputs: three synthetic distributions and a .npy -----------
"$T" gen-llm x.npy --batch 2 --seq 16 --channels 512 --seed 3 >/dev/null
rc=0
"$T" alloc-study --dist gauss,student-t,llm --synth-shape 2x16x512 --input x.npy \
  --ratios 500,700,800,900 --out-dir out >run.txt 2>run.err || rc=$?
[ "$rc" -eq 0 ] || fail "alloc-study exited $rc: $(cat run.err)"
out="$(cat run.txt)"
case "$out" in *"oracle never beaten: yes; every error within its SPEC 6 bound: yes"*) ;;
  *) fail "summary line missing: $out" ;; esac

# --json: the same summary as one JSON object; the CSV it points to is the
# same as the text run's
"$T" alloc-study --dist gauss --synth-shape 2x16x512 --ratios 500,800 --out-dir js \
  --json >js.json 2>js.err || fail "alloc-study --json failed: $(cat js.err)"
"$T" alloc-study --dist gauss --synth-shape 2x16x512 --ratios 500,800 --out-dir jt \
  >jt.txt 2>jt.err || fail "alloc-study (text) failed: $(cat jt.err)"
cmp -s js/alloc_study.csv jt/alloc_study.csv || fail "alloc-study --json changed the CSV"
python3 - js.json jt.txt <<'PY' || fail "alloc-study --json: wrong summary"
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert d["command"] == "alloc-study" and d["ok"] is True, d.get("ok")
assert d["control_exact"] and d["oracle_never_beaten"] and d["within_bound"]
assert d["budgets"] == 2 and d["config"]["hi_permille"] == 800
(inp,) = d["inputs"]
assert inp["name"] == "gauss" and inp["shape"] == [2, 16, 512]
rows = {r["label"]: r for r in inp["at_main_budget"]}
# the text names the oracle's and the SPEC token's relMSE: the JSON agrees
orc = float(re.search(r"oracle relMSE (\S+)", text).group(1))
tok = float(re.search(r"SPEC token (\S+)", text).group(1))
assert abs(rows["oracle"]["rel_mse"] / orc - 1) < 1e-3, (rows["oracle"], orc)
assert abs(rows["spec-token"]["rel_mse"] / tok - 1) < 1e-3, (rows["spec-token"], tok)
assert all(r["rel_mse"] >= rows["oracle"]["rel_mse"] * (1 - 1e-12) for r in inp["at_main_budget"] if r["reachable"])
PY

# the exactness control, from the control CSV
awk -F, '
  NR == 1 { next }
  {
    n++
    $2 = $5
    if ($7 != $8) bad = bad sprintf("%s %s: bytes %s vs %s\n", $1, $2, $7, $8)
    if ($9 != 0 || $10 != 0 || $11 != 0) bad = bad sprintf("%s %s: map %s, decoded %s, gate %s differ\n", $1, $2, $9, $10, $11)
    if ($12 != $13) bad = bad sprintf("%s %s: relMSE %s vs %s\n", $1, $2, $12, $13)
    if ($14 == 0) bad = bad sprintf("%s %s: the inverse selection equals the real map (no power)\n", $1, $2)
    if ($15 != 1) bad = bad sprintf("%s %s: not ok\n", $1, $2)
    seen[$1 "/" $5]++
  }
  END {
    if (n != 12) bad = bad sprintf("%d control rows, expected 12 (4 inputs x tile, token, gain)\n", n)
    split("gauss student-t llm x.npy", ins, " ")
    split("tile token gain", als, " ")
    for (i = 1; i <= 4; i++)
      for (j = 1; j <= 3; j++)
        if (seen[ins[i] "/" als[j]] != 1) bad = bad sprintf("no single control row for %s --alloc %s\n", ins[i], als[j])
    printf "%s", bad
    exit bad != ""
  }' out/alloc_control.csv >ctl.txt || fail "control: $(cat ctl.txt)"

# check_oracle FILE: the oracle and budget checks above; prints the problems
check_oracle() {
  awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    {
      k = $c["input"] "@" $c["budget_r"]
      if ($c["rel_mse"] == "") next
      tiles = $c["batch"] * $c["seq_len"] * $c["channels"] / $c["G"]
      tol[k] = 2 * tiles * 2^-53
      if ($c["bytes"] + 0 > $c["budget_bytes"] + 0) bad = bad sprintf("%s %s/%s/%s: %s bytes over the budget %s\n", k, $c["policy"], $c["unit"], $c["scope"], $c["bytes"], $c["budget_bytes"])
      if ($c["label"] == "spec-token" && $c["bytes"] != $c["budget_bytes"]) bad = bad sprintf("%s spec-token: %s bytes, budget %s\n", k, $c["bytes"], $c["budget_bytes"])
      if ($c["max_err_over_bound"] + 0 > 1) bad = bad sprintf("%s %s: max |error|/bound %s\n", k, $c["policy"], $c["max_err_over_bound"])
      if ($c["policy"] == "oracle") { orc[k] = $c["rel_mse"] + 0; next }
      if (!(k in best) || $c["rel_mse"] + 0 < best[k]) { best[k] = $c["rel_mse"] + 0; who[k] = $c["policy"] "/" $c["unit"] "/" $c["scope"] }
      rows++
    }
    END {
      for (k in best) {
        if (!(k in orc)) { bad = bad sprintf("%s: no oracle row\n", k); continue }
        if (best[k] < orc[k] * (1 - tol[k])) bad = bad sprintf("%s: %s %.17g beats the oracle %.17g\n", k, who[k], best[k], orc[k])
        nk++
      }
      if (nk != 16) bad = bad sprintf("%d (input, budget) pairs, expected 16\n", nk)
      printf "%s", bad
      exit bad != ""
    }' "$1"
}
check_oracle out/alloc_study.csv >oracle.txt || fail "oracle check: $(cat oracle.txt)"

# control of the oracle check: the oracle rows given the SPEC token error
awk -F, 'NR == 1 { print; next }
  $13 == "spec-token" { v[$1 "@" $10] = $21 }
  { line[NR] = $0; key[NR] = $1 "@" $10; pol[NR] = $12 }
  END {
    for (i = 2; i <= NR; i++) {
      if (pol[i] == "oracle") { n = split(line[i], f, ","); f[21] = v[key[i]]; s = f[1]; for (j = 2; j <= n; j++) s = s "," f[j]; print s }
      else print line[i]
    }
  }' OFS=, out/alloc_study.csv >spoiled.csv
if check_oracle spoiled.csv >spoiled.txt; then
  fail "the oracle check accepts oracle rows that are beaten (control)"
fi
grep -q "beats the oracle" spoiled.txt || fail "control: unexpected message: $(cat spoiled.txt)"

# --- bad input --------------------------------------------------------------------
n_bad=0
bad() {
  local want="$1"
  shift
  local rc=0
  rm -rf bad.out
  "$@" --out-dir bad.out >bad.txt 2>bad.err || rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want: $(cat bad.err)"
  [ "$(wc -l <bad.err)" -eq 1 ] || fail "'$*': stderr is not one line: $(cat bad.err)"
  grep -q '^tahq alloc-study: ' bad.err || fail "'$*': stderr does not name the command: $(cat bad.err)"
  [ ! -e bad.out ] || fail "'$*' wrote bad.out"
  n_bad=$((n_bad + 1))
}
has_err() { has bad.err "$1" stderr; }

bad 2 "$T" alloc-study --bits 3/3 --dist gauss;            has_err "needs LO < HI"
bad 2 "$T" alloc-study --alloc tile --dist gauss;          has_err "--alloc"
"$T" gen-llm c96.npy --seq 8 --channels 96 >/dev/null
bad 2 "$T" alloc-study --input c96.npy;                    has_err "multiple of G"
bad 2 "$T" alloc-study --dist gauss --synth-shape 2x16x96; has_err "not a multiple of --tile"
bad 1 "$T" alloc-study --input missing.npy;                has_err "missing.npy"
bad 2 "$T" alloc-study --dist gauss --ratios 500,1001;     has_err "1001"
bad 2 "$T" alloc-study --dist cauchy;                      has_err "cauchy"
bad 2 "$T" alloc-study --input a,b.npy;                    has_err "comma"
# a NaN in the first element of a copy of x.npy
cp x.npy nan.npy
off=$(($(wc -c <x.npy) - 2 * 16 * 512 * 4))
printf '\000\000\300\177' | dd of=nan.npy bs=1 seek="$off" conv=notrunc status=none
bad 1 "$T" alloc-study --input nan.npy;                    has_err "element 0 is not finite"

help="$("$T" alloc-study --help)"
case "$help" in *"usage: tahq alloc-study"*"oracle"*) ;; *) fail "--help: $help" ;; esac

echo "alloc_study: control exact on 4 inputs x 3 allocations (tile, token, gain), oracle unbeaten at 16 (input, budget) pairs (the check's control fails as it must), $n_bad bad inputs refused"
