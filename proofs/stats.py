#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""proofs/stats.py - turn a WP JSON report (and the Eva log) into
proofs/stats.json and the table of proofs/README.md; check for regressions.

Called by proofs/run.sh; exits 1 if a goal is unproved, if fewer goals are
proved than in the committed stats.json, or if Eva reports an alarm that
proofs/README.md does not list (the `eva-expected` block there)."""
import argparse
import csv
import json
import os
import re
import sys

BEGIN = "<!-- BEGIN GENERATED: proofs/run.sh -->"
END = "<!-- END GENERATED: proofs/run.sh -->"
EVA_BEGIN = "<!-- BEGIN eva-expected -->"
EVA_END = "<!-- END eva-expected -->"
PROVERS = ("qed", "Z3", "CVC5", "script")


def prover_key(name):
    if name == "qed":
        return "qed"
    if name == "script":
        return "script"
    if name.startswith("Z3"):
        return "Z3"
    if name.startswith("CVC5"):
        return "CVC5"
    return name


# Headers of ref/ whose static inline helpers are compiled into every file
# that includes them (run.sh proves the first copy and skips the others).
HELPER_HEADERS = ["ref/internal.h", "ref/tahq_core.h"]
# Headers of ref/ read for admits and axioms besides the sources.
ACSL_HEADERS = ["ref/internal.h", "ref/tahq_core.h", "ref/tahq_logic.h"]


def function_files(sources):
    """function name -> source file, from the definitions in ref/."""
    where = {}
    # (indented definitions are the ghost functions inside /*@ ghost */; a
    # one-line ghost definition starts with the comment itself)
    pat = re.compile(r"^\s*(?:/\*@\s*ghost\s+)?[A-Za-z_][A-Za-z0-9_ ]*[ *]([a-z_][a-z0-9_]*)\(")
    for src in sources:
        with open(src, encoding="utf-8") as f:
            for line in f:
                m = pat.match(line)
                if m and m.group(1) not in ("if", "for", "while", "switch", "return", "sizeof"):
                    where.setdefault(m.group(1), os.path.basename(src))
    for header in HELPER_HEADERS:
        if os.path.exists(header):
            with open(header, encoding="utf-8") as f:
                for line in f:
                    m = re.match(r"(?:static inline|TAHQ_CORE_FN) [a-z0-9_]+ \**(tahq_[a-z0-9_]+)\(", line)
                    if m:
                        where[m.group(1)] = os.path.basename(header)
    return where


def goal_times(log):
    """goal name -> prover time in ms, from the WP console output."""
    times = {}
    pat = re.compile(r"^\[wp\] \[([^\]]+)\] Goal (\S+) : Valid(?: \(([^)]*)\))?")
    unit = {"ms": 1.0, "s": 1000.0}
    for line in log.splitlines():
        m = pat.match(line)
        if not m:
            continue
        ms = 0.0
        if m.group(3):
            for val, u in re.findall(r"([0-9.]+)(ms|s)\b", m.group(3)):
                ms = max(ms, float(val) * unit[u])
        times[m.group(2)] = ms
    return times


def classify(goal):
    """The prover that proved the goal (first of qed, script, Z3, CVC5), or None."""
    main = goal.get("wp:main", {})
    if main.get("valid", 0) < main.get("total", 0) or main.get("total", 0) == 0:
        return None
    for name, res in goal.items():
        if name == "wp:main":
            continue
        if res.get("valid", 0) >= 1 and prover_key(name) == "qed":
            return "qed"
    for name, res in goal.items():
        if name != "wp:main" and res.get("valid", 0) >= 1 and prover_key(name) != "script":
            return prover_key(name)
    return "script"


# Property kinds of the Frama-C 25 report CSV that are not runtime-error
# alarms: the contract clauses (with -no-annot, only the assigns/from clauses
# that the kernel generates for libc and Frama_C_* prototypes).
EVA_NOT_ALARM = {"assigns clause", "from clause", "postcondition", "exits clause",
                 "breaks clause", "continues clause", "returns clause", "terminates clause",
                 "complete behaviors", "disjoint behaviors", "decreases clause",
                 "loop assigns", "loop variant", "loop invariant"}


def eva_alarms(csv_path, log_path):
    """The Eva alarms of the report CSV(s) of run.sh: rows whose "property
    kind" is a runtime-error alarm kind (mem_access, initialization,
    float_to_int, ...) and whose status is not Valid. The CSV is the one of
    `frama-c -then -report -report-csv` (columns directory, file, line,
    function, "property kind", status, property; tab-separated); run.sh
    concatenates one per Eva entry point, so a property found by several
    analyses is counted once. Copies f_0, f_1, ... of a static inline helper
    of internal.h or tahq_core.h are reported under the helper's name."""
    alarms = []
    if not csv_path or not os.path.exists(csv_path):
        return alarms
    seen = set()
    with open(csv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        return alarms
    head = [h.strip().strip('"').lower() for h in rows[0]]
    for r in rows[1:]:
        if not r or [c.strip().strip('"').lower() for c in r] == head:
            continue  # a blank line, or the header of a concatenated report
        rec = {k: v.strip() for k, v in zip(head, r)}
        kind = rec.get("property kind", "")
        status = rec.get("status", "").lower()
        if not kind or kind.lower() in EVA_NOT_ALARM:
            continue
        if status.startswith("valid") or status in ("unreachable", "dead", "considered valid"):
            continue
        file = os.path.basename(rec.get("file", ""))
        fn = rec.get("function", "")
        m = re.fullmatch(r"(tahq_[a-z0-9_]+?)_[0-9]+", fn)
        if file in [os.path.basename(h) for h in HELPER_HEADERS] and m:
            fn = m.group(1)
        key = (file, rec.get("line", ""), fn, kind, rec.get("property", ""))
        if key in seen:
            continue
        seen.add(key)
        alarms.append({
            "file": file,
            "line": rec.get("line", ""),
            "function": fn,
            "alarm": kind,
            "status": rec.get("status", ""),
            "property": rec.get("property", ""),
        })
    return alarms


def expected_eva(readme):
    """(function, kind) pairs listed between the eva-expected markers of
    README.md, one per line: "- `function`: kind — reason"."""
    if not os.path.exists(readme):
        return set()
    text = open(readme, encoding="utf-8").read()
    if EVA_BEGIN not in text:
        return set()
    block = text.split(EVA_BEGIN, 1)[1].split(EVA_END, 1)[0]
    out = set()
    for line in block.splitlines():
        m = re.match(r"\s*[-*]\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*:\s*`?([a-z_]+)`?", line)
        if m:
            out.add((m.group(1), m.group(2)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", nargs="+", required=True)
    ap.add_argument("--log", nargs="+", required=True)
    ap.add_argument("--eva-log")
    ap.add_argument("--eva-csv")
    ap.add_argument("--eva-rc", type=int, default=0)
    ap.add_argument("--run-eva", type=int, default=1)
    ap.add_argument("--sources", nargs="+", required=True)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--write", type=int, default=1)
    ap.add_argument("--wp-seconds", type=int, default=0)
    ap.add_argument("--eva-seconds", type=int, default=0)
    ap.add_argument("--skipped", default="")
    ap.add_argument("--cache-mode", default="update")
    a = ap.parse_args()

    reports = [json.load(open(r, encoding="utf-8")) for r in a.report]
    log = "\n".join(open(p, encoding="utf-8", errors="replace").read() for p in a.log)
    times = goal_times(log)
    where = function_files(a.sources)

    per_fn = {}
    unproved = []

    def add(fn, file, gname, goal):
        rec = per_fn.setdefault(fn, {"file": file, "goals": 0, "proved": 0,
                                     "by": {p: 0 for p in PROVERS}, "time_ms": 0.0})
        rec["goals"] += 1
        who = classify(goal)
        if who is None:
            unproved.append(f"{fn}: {gname}")
        else:
            rec["proved"] += 1
            rec["by"][who] = rec["by"].get(who, 0) + 1
        rec["time_ms"] += times.get("typed_" + gname, times.get(gname, 0.0))

    # The runs select disjoint sets of functions; a lemma may be proved in
    # more than one run and is counted once.
    seen = set()
    for report in reports:
        for fn, goals in report.get("wp:functions", {}).items():
            base = re.sub(r"_[0-9]+$", "", fn) if fn not in where else fn
            file = where.get(fn, where.get(base, "?"))
            for gname, goal in goals.items():
                if gname == "wp:section" or (fn, gname) in seen:
                    continue
                seen.add((fn, gname))
                add(fn, file, gname, goal)
        for _section, lemmas in report.get("wp:axiomatics", {}).items():
            for gname, goal in lemmas.items():
                if gname == "wp:section" or ("(lemmas)", gname) in seen:
                    continue
                seen.add(("(lemmas)", gname))
                add("(lemmas)", "lemmas", gname, goal)

    admits = []
    for src in a.sources + [h for h in ACSL_HEADERS if os.path.exists(h)]:
        with open(src, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = re.search(r"admit\s+([A-Za-z_0-9]+)\s*:", line)
                if m:
                    admits.append({"file": os.path.basename(src), "line": n, "name": m.group(1)})
    axioms = []
    for src in a.sources + [h for h in ACSL_HEADERS if os.path.exists(h)]:
        with open(src, encoding="utf-8") as f:
            for line in f:
                m = re.search(r"\baxiom\s+([a-z_0-9]+)\s*:", line)
                if m:
                    axioms.append({"file": os.path.basename(src), "name": m.group(1)})

    alarms = eva_alarms(a.eva_csv, a.eva_log) if a.run_eva else []
    expected = expected_eva(a.readme)
    unexpected = [x for x in alarms if (x["function"], x["alarm"]) not in expected]

    total = sum(r["goals"] for r in per_fn.values())
    proved = sum(r["proved"] for r in per_fn.values())
    by = {p: sum(r["by"].get(p, 0) for r in per_fn.values()) for p in PROVERS}
    per_file = {}
    for fn, r in per_fn.items():
        f = per_file.setdefault(r["file"], {"functions": 0, "goals": 0, "proved": 0,
                                            "by": {p: 0 for p in PROVERS}, "time_ms": 0.0})
        f["functions"] += 1
        f["goals"] += r["goals"]
        f["proved"] += r["proved"]
        f["time_ms"] += r["time_ms"]
        for p in PROVERS:
            f["by"][p] += r["by"].get(p, 0)

    old_proved = None
    if os.path.exists(a.stats):
        try:
            old_proved = json.load(open(a.stats, encoding="utf-8"))["total"]["proved"]
        except (ValueError, KeyError, TypeError):
            old_proved = None

    stats = {
        "tool": "Frama-C 25 WP (-wp-rte, -warn-unsigned-overflow, -warn-unsigned-downcast), Eva",
        "total": {"goals": total, "proved": proved, "by": by,
                  "prover_time_ms": round(sum(r["time_ms"] for r in per_fn.values()))},
        "run": {"cache": a.cache_mode, "wp_wall_s": a.wp_seconds, "eva_wall_s": a.eva_seconds},
        "files": {k: {**v, "time_ms": round(v["time_ms"])} for k, v in sorted(per_file.items())},
        "functions": {k: {**v, "time_ms": round(v["time_ms"])} for k, v in sorted(per_fn.items())},
        "not_given_to_wp": [p for p in a.skipped.split(",") if p] + ["tahq_bits_of", "tahq_float_of", "tahq_bits_of64"],
        "admitted": admits,
        "axioms": axioms,
        "eva": {"run": bool(a.run_eva), "alarms": alarms} if a.run_eva else {"run": False},
    }

    # README table
    lines = [BEGIN, "",
             f"WP: **{proved} / {total}** goals proved "
             f"(Qed {by['qed']}, Z3 {by['Z3']}, CVC5 {by['CVC5']}, tactics {by['script']}); "
             f"{len(admits)} admitted annotations, {len(axioms)} axioms "
             f"(see below); functions not given to WP: {', '.join(stats['not_given_to_wp'])}.",
             "",
             f"This table was written by a run with the WP cache in `{a.cache_mode}` mode: WP "
             f"{a.wp_seconds} s, Eva {a.eva_seconds} s of wall time. Prover times are those the "
             "provers reported; a result taken from the cache counts 0.",
             ""]
    if a.run_eva:
        lines.append(f"Eva (proofs/eva_driver.c): {len(alarms)} alarm(s)"
                     + (f", {len(unexpected)} not listed in the expected-alarm block." if unexpected else
                        ", all listed in the expected-alarm block." if alarms else "."))
        lines.append("")
    lines += ["| file | functions | goals | proved | Qed | Z3 | CVC5 | tactics | prover time (s) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, v in sorted(per_file.items()):
        lines.append(f"| {k} | {v['functions']} | {v['goals']} | {v['proved']} | {v['by']['qed']} | "
                     f"{v['by']['Z3']} | {v['by']['CVC5']} | {v['by']['script']} | "
                     f"{v['time_ms'] / 1000:.1f} |")
    lines.append(f"| **total** | {len(per_fn)} | {total} | {proved} | {by['qed']} | {by['Z3']} | "
                 f"{by['CVC5']} | {by['script']} | {stats['total']['prover_time_ms'] / 1000:.1f} |")
    lines += ["", "Per-function numbers: `proofs/stats.json`.", "", END]
    table = "\n".join(lines)

    if a.write:
        new_stats = json.dumps(stats, indent=1, sort_keys=False) + "\n"
        if not os.path.exists(a.stats) or open(a.stats, encoding="utf-8").read() != new_stats:
            with open(a.stats, "w", encoding="utf-8") as f:
                f.write(new_stats)
        if os.path.exists(a.readme):
            text = open(a.readme, encoding="utf-8").read()
            if BEGIN in text and END in text:
                pre = text.split(BEGIN, 1)[0]
                post = text.split(END, 1)[1]
                new = pre + table + post
                if new != text:
                    with open(a.readme, "w", encoding="utf-8") as f:
                        f.write(new)

    print(f"proofs: WP {proved}/{total} goals proved "
          f"(Qed {by['qed']}, Z3 {by['Z3']}, CVC5 {by['CVC5']}, tactics {by['script']}) "
          f"in {a.wp_seconds} s")
    rc = 0
    if unproved:
        print(f"proofs: FAILED: {len(unproved)} goal(s) not proved:")
        for g in unproved[:50]:
            print("   ", g)
        rc = 1
    if old_proved is not None and proved < old_proved:
        print(f"proofs: FAILED: {proved} goals proved, fewer than the committed {old_proved}")
        rc = 1
    if a.run_eva:
        print(f"proofs: Eva {len(alarms)} alarm(s) in {a.eva_seconds} s")
        if a.eva_rc != 0:
            print(f"proofs: FAILED: frama-c -eva exited with status {a.eva_rc}")
            rc = 1
        if unexpected:
            print(f"proofs: FAILED: {len(unexpected)} Eva alarm(s) not listed in proofs/README.md:")
            for x in unexpected[:50]:
                print(f"    {x['file']}:{x['line']} {x['function']}: {x['alarm']} {x['property']}")
            rc = 1
    print("proofs: OK" if rc == 0 else "proofs: see the logs in the build directory")
    return rc


if __name__ == "__main__":
    sys.exit(main())
