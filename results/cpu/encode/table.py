#!/usr/bin/env python3
"""table.py DIR: min / median / max over DIR/before-*.json and DIR/after-*.json
(tahq bench --json) of the canonical rows: encode GB/s, encode x memcpy,
decode x memcpy, and the two-thread control."""
import glob, json, statistics, sys

def mmm(v):
    v = sorted(v)
    return "%.3f / %.3f / %.3f" % (v[0], statistics.median(v), v[-1])

d = sys.argv[1]
print("| build | rounding | codec | threads | memcpy GB/s | encode GB/s | encode x memcpy | decode x memcpy |")
print("|---|---|---|---|---|---|---|---|")
ctl = {}
for which in ("before", "after"):
    runs = [json.load(open(f)) for f in sorted(glob.glob("%s/%s-*.json" % (d, which)))]
    keys = []
    for r in runs[0]["results"]:
        if r["profile"] == "canonical":
            keys.append((r["rounding"], r["codec"], r["threads"]))
    for k in keys:
        rows = [r for run in runs for r in run["results"]
                if (r["profile"] == "canonical" and (r["rounding"], r["codec"], r["threads"]) == k)]
        print("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
            which, k[0], k[1], k[2], mmm([r["memcpy_gbps"] for r in rows]),
            mmm([r["encode_gbps"] for r in rows]), mmm([r["encode_over_memcpy"] for r in rows]),
            mmm([r["decode_over_memcpy"] for r in rows])))
    ctl[which] = [run["thread_scaling_control"]["encode_length"]["speedup"] for run in runs
                  if "thread_scaling_control" in run]
    ctl[which + " load"] = [run["load_before"][0] for run in runs] + [run["load_after"][0] for run in runs]
print()
for which in ("before", "after"):
    if ctl[which]:
        print("two-thread control (as long as the encode), %s runs: %s; load average (1 min) around the runs: %.2f-%.2f"
              % (which, mmm(ctl[which]), min(ctl[which + " load"]), max(ctl[which + " load"])))
