#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest (label report): plots/report.py --smoke writes a report into WORKDIR
# that passes `report.py --check` (every section present, report.json parses,
# every linked plot exists), with the codec sections and, when tahq-sim is
# built, the simulator sections available; then the check must reject copies
# with a deleted plot, a deleted section, a missing heading and broken JSON.
# usage: plots/report_test.sh PYTHON3 BUILD_DIR WORKDIR
set -eu
. "$(dirname "$0")/../tests/lib.sh"
py=$1
build=$2
work=$3
here=$(abs_dir "$(dirname "$0")")
work=$(fresh_dir "$work")

# The proof section against the tree (no tool runs; a copy of the files the
# proofs read, in $work/proofs): "ok" for a stats.json that proofs/run.sh's
# own recording code stamped on this copy, "stale" once a ref/ file of the
# copy changes, "unknown" for a stats.json without digests, "fail" for an
# unproved goal or an Eva alarm that is not in the expected list.
root=$(cd "$here/.." && pwd)
pw="$work/proofs"
mkdir -p "$pw/ref" "$pw/include" "$pw/proofs" "$pw/tests"
cp "$root"/ref/*.c "$root"/ref/*.h "$pw/ref/"
cp "$root"/include/*.h "$pw/include/"
cp "$root"/proofs/stats.py "$root"/proofs/README.md "$root"/proofs/theorems.c \
  "$root"/proofs/eva_driver.c "$pw/proofs/"
cp "$root"/tests/acsl_axioms.c "$root"/tests/CMakeLists.txt "$pw/tests/"
"$py" - "$root/proofs/stats.json" "$pw/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.pop("last_run", None)  # as committed before run.sh recorded it
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
cp "$pw/old.json" "$pw/proofs/stats.json"
# the recording step of proofs/run.sh, as it runs there
sed -n "/<<'PY' || STATS_RC=2/,/^PY\$/p" "$root/proofs/run.sh" | sed '1d;$d' >"$pw/record.py"
[ -s "$pw/record.py" ] || fail "cannot find the recording step in proofs/run.sh"
"$py" "$pw/record.py" "$pw/proofs/stats.json" "$pw" update 1 >/dev/null ||
  fail "proofs/run.sh's recording step failed"
proof_status() { # stats.json expected-status [text the reason must hold]
  "$py" - "$here/report.py" "$pw" "$@" <<'PY' || fail "proof section: $*"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("report", sys.argv[1])
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
s = r.section_proofs(sys.argv[3], root=sys.argv[2])
want, text = sys.argv[4], (sys.argv[5] if len(sys.argv) > 5 else None)
md = r.md_section("proofs", "Proof status (proofs/stats.json)", s)
print("proof section of %s: %s (%s), %d lines" % (sys.argv[3].split("/")[-1], s["status"],
                                                  s.get("reason"), len(md)))
ok = s["status"] == want and (text is None or text in (s.get("reason") or ""))
# short: the prose under 16 lines; the per-file table one row per proved file
# (it grows with ref/, so it is counted against stats.json, not a fixed cap)
prose = [l for l in md if not l.startswith("|")]
rows = [l for l in md if l.startswith("|")]
nfiles = len(json.load(open(sys.argv[3])).get("files") or {})
if len(prose) >= 16 or rows and len(rows) != nfiles + 2:
    print("the section has %d prose lines and %d table lines for %d files"
          % (len(prose), len(rows), nfiles)); ok = False
sys.exit(0 if ok else 1)
PY
}
proof_status "$pw/proofs/stats.json" ok
proof_status "$pw/old.json" unknown "stats.json predates recording"
printf '/* edited after the proofs ran */\n' >>"$pw/ref/quant.c"
proof_status "$pw/proofs/stats.json" stale "changed since the proofs ran"
proof_status "$pw/proofs/stats.json" stale "ref/quant.c"
cp "$root/ref/quant.c" "$pw/ref/quant.c"
proof_status "$pw/proofs/stats.json" ok
cp "$root/include/tahq.h" "$pw/ref/extra.h" # a new file under a recorded glob
proof_status "$pw/proofs/stats.json" stale "ref/extra.h (new)"
rm "$pw/ref/extra.h"
"$py" - "$pw/proofs/stats.json" "$pw/unproved.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["total"]["proved"] -= 1
d["files"]["codec.c"]["proved"] -= 1
json.dump(d, open(sys.argv[2], "w"))
PY
proof_status "$pw/unproved.json" fail "WP proved"
"$py" - "$pw/proofs/stats.json" "$pw/alarm.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["eva"]["alarms"].append({"file": "codec.c", "line": "1", "function": "tahq_decode",
                           "alarm": "mem_access", "status": "Unknown", "property": "x"})
json.dump(d, open(sys.argv[2], "w"))
PY
proof_status "$pw/alarm.json" fail "tahq_decode mem_access"

# One style for every figure: each plots/*.gp loads style.gp, directly or
# through a *_common.gp that does.
for gp in "$here"/*.gp; do
  case "$(basename "$gp")" in style.gp) continue ;; esac
  if grep -q "^load .*/style\.gp" "$gp"; then continue; fi
  common=$(sed -n "s/^load plotdir *\. *['\"]\/\([a-z_]*_common\.gp\)['\"].*/\1/p" "$gp" | head -n 1)
  [ -n "$common" ] && grep -q "^load .*/style\.gp" "$here/$common" ||
    fail "$(basename "$gp") does not load plots/style.gp"
done
echo "every plots/*.gp loads style.gp"

# Statuses come from the data, not from a tool's own flag; numbers near an
# integer keep the digits that tell them from it.
"$py" - "$here/report.py" "$work/units" <<'PY' || fail "a section status or number format"
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("report", sys.argv[1])
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
out = sys.argv[2]
os.makedirs(os.path.join(out, "data", "bounds"), exist_ok=True)
bad = []
row = {"name": "paper", "bytes": 1, "bits_per_element": 4.3, "rel_mse": 1e-4, "sqnr_db": 40,
       "max_abs_err": 0.1, "max_err_over_bound": 0.999995, "n_over_bound": 0, "n_flagged": 1,
       "deterministic": True, "decode_stable": True, "skipped": False, "ok": True}
def verify(rows, **kw):
    d = {"ok": True, "verdict": "v", "configurations": len(rows), "failed": 0, "rows": rows}
    d.update(kw)
    json.dump(d, open(os.path.join(out, "data", "verify.json"), "w"))
    return r.section_verification(out, 0, 0)["status"]
if verify([row]) != "ok":
    bad.append("a passing verification is not ok")
for k, v in (("n_over_bound", 3), ("max_err_over_bound", 1.5), ("deterministic", False),
             ("decode_stable", False), ("ok", False)):
    if verify([dict(row, **{k: v})]) != "fail":
        bad.append("verification ok although a row has %s = %s (the tool said ok)" % (k, v))
if verify([]) != "fail":
    bad.append("verification ok with no rows")
if verify([row], configurations=11) != "fail":
    bad.append("verification ok with 1 row for 11 configurations")
def conform(summary, cases):
    json.dump({"set": "v1", "summary": summary, "cases": cases},
              open(os.path.join(out, "data", "conform.json"), "w"))
    return r.section_conformance(out, 0)["status"]
if conform({"cases": 2, "passed": 2, "failed": 0}, [{"id": 1, "pass": True}] * 2) != "ok":
    bad.append("a passing conformance is not ok")
if conform({"cases": 0, "passed": 0, "failed": 0}, []) != "fail":
    bad.append("conformance ok with no case run")
if conform({"cases": 2, "passed": 2, "failed": 0},
           [{"id": 1, "pass": True}, {"id": 2, "pass": False}]) != "fail":
    bad.append("conformance ok with a failed case")
if r.table_status(0, "t", [{"delta": "nan"}], ("delta",))[0] != "fail" or \
        r.table_status(0, "t", [], ("delta",))[0] != "fail" or \
        r.table_status(1, "t", [{"delta": "0.5"}], ("delta",))[0] != "fail" or \
        r.table_status(0, "t", [{"delta": "0.5"}], ("delta",))[0] != "ok":
    bad.append("table_status")
for v, want in ((0.999995, "0.999995"), (0.9999989, "0.9999989"), (2.99999, "2.99999"),
                (1.0000004, "1.0000004"), (1.0, "1"), (0.25, "0.25"), (3.339502e-06, "3.34e-06"),
                (54.7632, "54.76")):
    if r.fmt(v) != want:
        bad.append("fmt(%r) = %r, not %r" % (v, r.fmt(v), want))
for b in bad:
    print(b)
print("statuses and number formats: %d problems" % len(bad))
sys.exit(1 if bad else 0)
PY

if ! "$py" "$here/report.py" --smoke --build "$build" --out "$work/report" >"$work/report.log" 2>&1; then
  tail -n 20 "$work/report.log"
  fail "report.py --smoke exited non-zero"
fi
"$py" "$here/report.py" --check "$work/report" || fail "the smoke report does not pass --check"

# sections that must hold data on this build, not just "not available"
need="verification conformance bounds machine"
[ -x "$build/sgd_sim/tahq-sim" ] && need="$need convergence delta delta_trajectory throughput"
"$py" - "$work/report/report.json" $need <<'PY' || fail "a section that this build can fill is missing"
import json, sys
rep = json.load(open(sys.argv[1]))
bad = [k for k in sys.argv[2:] if rep["sections"][k]["status"] != "ok"]
for k in bad:
    print("section %s: %s" % (k, rep["sections"][k]))
sys.exit(1 if bad else 0)
PY

# The proof section of the smoke report: prose under 16 lines (the per-file
# table beside it grows with ref/), and "ok" only with recorded input digests
# that match the tree.
"$py" - "$work/report/index.md" "$work/report/report.json" <<'PY' || fail "the proof section"
import json, sys
md = open(sys.argv[1]).read().split("\n## ")
sec = [x for x in md if x.startswith("Proof status")]
p = json.load(open(sys.argv[2]))["sections"]["proofs"]
n = len([l for l in sec[0].splitlines() if not l.startswith("|")]) if sec else 0
print("proof section: %d prose lines, status %s (%s)" % (n, p["status"], p.get("reason")))
ok = 0 < n < 16 and (p["status"] != "ok" or p.get("freshness") == "ok")
sys.exit(0 if ok else 1)
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
      and s["conformance"]["status"] == "fail" and s["bounds"]["status"] == "ok"
      and s["machine"]["status"] == "fail" and "verification" in s["machine"]["reason"])
print("failing run: ok=%s verification=%s conformance=%s" % (
    rep["ok"], s["verification"]["status"], s["conformance"]["status"]))
sys.exit(0 if ok else 1)
PY
echo "report: smoke report complete, the check rejects broken reports, and failed codec checks fail it"
