#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest check of `tahq bounds --quick`: the sweep exits 0 with no BOUND
# VIOLATION; every point of the CSV has every element within its SPEC §6
# bound (n_over_bound = 0, max |error|/bound <= 1), and its message length
# equals 72 + the SPEC §8.2 payload size, recomputed here from the CSV
# (configuration, shape, n_low, n_flagged) independently of the program;
# bits/element is bytes*8/elements. The output is the same for 1 and 2
# threads, and a user .npy tensor (C = 96: tiles 64..256 do not fit) runs too,
# with its plots (--plots); a plot that fails exits 1 and leaves no file.
# usage: bounds_test.sh PATH/TO/tahq WORKDIR
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"

T="$(abs_file "$1")"
SRC="$(abs_dir "$(dirname "$0")/..")"
D="$(fresh_dir "$2")"
cd "$D"

# check_csv FILE MIN_ROWS: the per-point checks above.
check_csv() {
  awk -F, -v min_rows="$2" '
    function ceil8(b) { return int((b + 7) / 8) }
    function low(n, r) { return int(n * (1000 - r) / 1000) }
    NR == 1 {
      for (i = 1; i <= NF; ++i) col[$i] = i
      need = "G hi_bits lo_bits hi_permille alloc meta status elements batch seq_len " \
             "channels bytes payload_bytes bits_per_elem bits_per_elem_formula size_ok " \
             "n_low n_flagged max_err_over_bound n_over_bound ok"
      n = split(need, names, " ")
      for (i = 1; i <= n; ++i)
        if (!(names[i] in col)) { print "missing column " names[i]; bad = 1 }
      next
    }
    {
      rows++
      if ($col["ok"] != 1) { print "row " NR ": ok = " $col["ok"]; bad = 1 }
      st = $col["status"]
      if (st == "skipped") { skipped++; next }
      if (st != "ok") { print "row " NR ": status " st; bad = 1; next }
      if ($col["n_over_bound"] != 0 || $col["max_err_over_bound"] + 0 > 1) {
        print "row " NR ": error above bound: " $col["n_over_bound"] " elements, max ratio " \
              $col["max_err_over_bound"]; bad = 1
      }
      G = $col["G"]; hi = $col["hi_bits"]; lo = $col["lo_bits"]; r = $col["hi_permille"]
      B = $col["batch"]; S = $col["seq_len"]; C = $col["channels"]
      nl = $col["n_low"]; nf = $col["n_flagged"]; bytes = $col["bytes"]; n_el = $col["elements"]
      if (B * S * C != n_el) { print "row " NR ": shape does not match elements"; bad = 1 }
      rws = B * S; T = C / G; N = rws * T
      k = 0; for (g = G; g > 1; g /= 2) k++
      mb = ($col["meta"] == "fp32") ? 4 : 2
      a = $col["alloc"]
      if (a == "none") { map = 0; nlo = 0; want_nl = 0 }
      else if (a == "token") { map = rws; nlo = nl * T; want_nl = B * low(S, r) }
      else { map = N; nlo = nl; want_nl = rws * low(T, r) }
      if (nl != want_nl) { print "row " NR ": n_low " nl ", SPEC 4.2 gives " want_nl; bad = 1 }
      pay = ceil8(map) + ceil8(N) + 2 * N * mb + ((N - nlo) * G * hi + nlo * G * lo) / 8 + ceil8(nf * k)
      if (72 + pay != bytes || pay != $col["payload_bytes"]) {
        print "row " NR ": " bytes " bytes, payload_bytes " $col["payload_bytes"] \
              ", SPEC 8.2 formula 72 + " pay; bad = 1
      }
      if ($col["size_ok"] != 1) { print "row " NR ": size_ok = 0"; bad = 1 }
      want = sprintf("%.10g", bytes * 8 / n_el)
      if ($col["bits_per_elem"] != want || $col["bits_per_elem_formula"] != want) {
        print "row " NR ": bits/element " $col["bits_per_elem"] ", bytes*8/elements " want; bad = 1
      }
      checked++
    }
    END {
      if (rows < min_rows) { print "only " rows " rows, expected >= " min_rows; bad = 1 }
      if (checked == 0) { print "no point checked"; bad = 1 }
      printf "%d rows, %d checked, %d skipped\n", rows, checked, skipped
      exit bad ? 1 : 0
    }' "$1" || fail "$1: per-point checks failed"
}

# 1. the quick sweep on all synthetic distributions, 2 threads
rc=0
"$T" bounds --quick --jobs 2 --out-dir q2 >q2.out 2>q2.err || rc=$?
[ "$rc" -eq 0 ] || fail "tahq bounds --quick exited $rc: $(cat q2.err)"
! grep -q "BOUND VIOLATION" q2.err || fail "bound violation: $(grep 'BOUND VIOLATION' q2.err)"
grep -q "^findings" q2.out || fail "no findings section"
grep -q "every element within its SPEC bound" q2.out || fail "no verdict line"
for f in q2/bounds.csv q2/bounds.json q2/bounds_front.csv; do
  [ -s "$f" ] || fail "$f missing"
done
for d in gauss laplace student-t llm; do
  grep -q ",$d," q2/bounds.csv || fail "no rows for $d"
  grep -q "^$d," q2/bounds_front.csv || fail "no Pareto front for $d"
done
grep -q '"findings"' q2/bounds.json || fail "no findings in the JSON"
grep -q '"tau_ablation"' q2/bounds.json || fail "no tau ablation in the JSON"
grep -q '"alloc_equal_budget"' q2/bounds.json || fail "no allocation comparison in the JSON"
check_csv q2/bounds.csv 1600

# 2. one thread gives the same output (one distribution, to keep it short)
"$T" bounds --quick --jobs 1 --dist gauss --out-dir q1 >q1.out 2>q1.err ||
  fail "tahq bounds --jobs 1 failed: $(cat q1.err)"
"$T" bounds --quick --jobs 2 --dist gauss --out-dir q1b >/dev/null 2>q1b.err ||
  fail "tahq bounds --jobs 2 --dist gauss failed: $(cat q1b.err)"
cmp -s q1/bounds.csv q1b/bounds.csv || fail "CSV differs between 1 and 2 threads"
cmp -s q1/bounds_front.csv q1b/bounds_front.csv || fail "front differs between 1 and 2 threads"
sed 's/"csv": "[^"]*"//' q1/bounds.json >q1.json
sed 's/"csv": "[^"]*"//' q1b/bounds.json >q1b.json
cmp -s q1.json q1b.json || fail "JSON differs between 1 and 2 threads"
# --json without a file: the same JSON on standard output, the summary on
# standard error, no bounds.json written
"$T" bounds --quick --jobs 2 --dist gauss --out-dir q1c --json --no-progress >q1c.out 2>q1c.err ||
  fail "tahq bounds --json (to stdout) failed: $(cat q1c.err)"
sed 's/"csv": "[^"]*"//' q1c.out >q1c.json
cmp -s q1.json q1c.json || fail "bounds --json on stdout differs from bounds.json"
grep -q "^findings" q1c.err || fail "bounds --json: the summary is not on stderr"
[ ! -e q1c/bounds.json ] || fail "bounds --json wrote q1c/bounds.json as well"
grep ',gauss,' q2/bounds.csv | cut -d, -f2- >all.gauss
grep ',gauss,' q1/bounds.csv | cut -d, -f2- >one.gauss
cmp -s all.gauss one.gauss || fail "gauss rows differ between --dist gauss and the full list"

# 3. a user tensor (.npy) whose C = 96 does not fit G = 64, 128, 256
"$T" gen-llm x.npy --seq 32 --channels 96 >/dev/null 2>&1 || fail "gen-llm failed"
rc=0
"$T" bounds --input x.npy --out-dir qi --csv qi/points.csv >qi.out 2>qi.err || rc=$?
[ "$rc" -eq 0 ] || fail "tahq bounds --input exited $rc: $(cat qi.err)"
[ -s qi/points.csv ] || fail "--csv did not write qi/points.csv"
grep -q ',input,16,' qi/points.csv || fail "no G=16 rows for the input tensor"
grep -q ',input,64,.*,skipped,' qi/points.csv || fail "G=64 rows of C=96 are not skipped"
check_csv qi/points.csv 400

# 3b. plots of that tensor (C = 96: no G = 64 point, so no ablation panel
# and no paper point): every figure written as a valid PNG, exit 0; a plot
# that fails (a copy of plots/ with a broken script) exits 1 and leaves no
# PNG of it, blank or otherwise.
if command -v gnuplot >/dev/null 2>&1; then
  rc=0
  "$T" bounds --input x.npy --out-dir qp --plots --plots-dir "$SRC/plots" >qp.out 2>qp.err || rc=$?
  [ "$rc" -eq 0 ] || fail "tahq bounds --input (C = 96) --plots exited $rc: $(tail -n 3 qp.err)"
  for s in pareto ablation ratio; do
    f=qp/bounds_$s.png
    [ -s "$f" ] || fail "$f not written"
    [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$f is not a PNG"
    [ -s "qp/bounds_$s.svg" ] || fail "qp/bounds_$s.svg not written"
  done
  grep -q 'x\.npy \[1, 32, 96\]' qp/bounds_pareto.svg || fail "the pareto plot does not name x.npy"
  mkdir -p brokenplots
  cp "$SRC"/plots/*.gp "$SRC"/plots/bounds.sh brokenplots/
  printf 'plot "/nonexistent/file" using 1:2\n' >>brokenplots/bounds_ablation.gp
  rc=0
  "$T" bounds --input x.npy --out-dir qb --plots --plots-dir "$PWD/brokenplots" >qb.out 2>qb.err || rc=$?
  [ "$rc" -eq 1 ] || fail "a failing plot: tahq bounds exited $rc, expected 1"
  grep -q "plotting failed" qb.err || fail "a failing plot is not reported: $(cat qb.err)"
  [ ! -e qb/bounds_ablation.png ] || fail "a failing plot left qb/bounds_ablation.png"
  [ -z "$(find qb -name '.plots.*')" ] || fail "a failing plot left its temporary folder"
  [ -s qb/bounds_pareto.png ] || fail "the plot before the failing one was not kept"
else
  echo "gnuplot not found: the --plots checks skipped"
fi

# 4. usage errors
rc=0
"$T" bounds --dist nosuch >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "--dist nosuch exited $rc, expected 2"
rc=0
"$T" bounds --jobs 0 >/dev/null 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || fail "--jobs 0 exited $rc, expected 2"

echo "bounds_test: all checks passed"
