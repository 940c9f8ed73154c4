#!/bin/sh
# CTest (label report): plots/report.py --smoke writes a report into WORKDIR
# that passes `report.py --check` (every section present, report.json parses,
# every linked plot exists), with the codec sections and, when tahq-sim is
# built, the simulator sections available; then the check must reject copies
# with a deleted plot, a deleted section, a missing heading and broken JSON.
# usage: plots/report_test.sh PYTHON3 BUILD_DIR WORKDIR
set -eu
py=$1
build=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "FAIL: $*"
  exit 1
}

if ! "$py" "$here/report.py" --smoke --build "$build" --out "$work/report" >"$work/report.log" 2>&1; then
  tail -n 20 "$work/report.log"
  fail "report.py --smoke exited non-zero"
fi
"$py" "$here/report.py" --check "$work/report" || fail "the smoke report does not pass --check"

# sections that must hold data on this build, not just "not available"
need="verification conformance bounds machine"
[ -x "$build/sgd_sim/tahq-sim" ] && need="$need convergence delta throughput"
"$py" - "$work/report/report.json" $need <<'PY' || fail "a section that this build can fill is missing"
import json, sys
rep = json.load(open(sys.argv[1]))
bad = [k for k in sys.argv[2:] if rep["sections"][k]["status"] != "ok"]
for k in bad:
    print("section %s: %s" % (k, rep["sections"][k]))
sys.exit(1 if bad else 0)
PY

# The check must be able to fail.
broken() { # name: a fresh copy of the report
  rm -rf "$work/$1"
  cp -r "$work/report" "$work/$1"
}
expect_reject() { # name what
  if "$py" "$here/report.py" --check "$work/$1" >"$work/$1.txt" 2>&1; then
    fail "--check accepted a report with $2"
  fi
  echo "--check rejects a report with $2: $(head -n 1 "$work/$1.txt")"
}
png=$(sed -n 's/^!\[[^]]*\](\([^)]*\.png\))$/\1/p' "$work/report/index.md" | head -n 1)
if [ -n "$png" ]; then
  broken noplot
  rm "$work/noplot/$png"
  expect_reject noplot "a deleted plot ($png)"
else
  echo "no plot linked (gnuplot missing?): deleted-plot case skipped"
fi
broken nosection
"$py" - "$work/nosection/report.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
del rep["sections"]["delta"]
json.dump(rep, open(sys.argv[1], "w"))
PY
expect_reject nosection "the delta section deleted from report.json"
broken noheading
sed -i 's/^## Proof status.*$/## Proofs/' "$work/noheading/index.md"
expect_reject noheading "the proof-status heading missing from index.md"
broken badjson
printf '{"sections": ' >"$work/badjson/report.json"
expect_reject badjson "a truncated report.json"

# A failing codec verification or conformance must fail the report (exit
# status non-zero, verdict FAIL), with the report still written: a stand-in
# for tahq whose `report` exits 1 and whose `conform` fails at once.
mkdir -p "$work/failing/cli"
tahq=$(cd "$build/cli" && pwd)/tahq
cat >"$work/failing/cli/tahq" <<SH
#!/bin/sh
case "\$1" in
report) "$tahq" "\$@"; exit 1 ;;
conform) echo "tahq conform: injected failure" >&2; exit 1 ;;
*) exec "$tahq" "\$@" ;;
esac
SH
chmod +x "$work/failing/cli/tahq"
if "$py" "$here/report.py" --smoke --build "$work/failing" --out "$work/failing/report" \
  >"$work/failing.log" 2>&1; then
  fail "the report exited 0 although the verification and conformance failed"
fi
"$py" - "$work/failing/report/report.json" <<'PY' || fail "the failures are not in report.json"
import json, sys
rep = json.load(open(sys.argv[1]))
s = rep["sections"]
ok = (rep["ok"] is False and s["verification"]["status"] == "fail"
      and s["conformance"]["status"] == "fail" and s["bounds"]["status"] == "ok")
print("failing run: ok=%s verification=%s conformance=%s" % (
    rep["ok"], s["verification"]["status"], s["conformance"]["status"]))
sys.exit(0 if ok else 1)
PY
echo "report: smoke report complete, the check rejects broken reports, and failed codec checks fail it"
