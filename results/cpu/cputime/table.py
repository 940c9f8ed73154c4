#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""table.py DIR - the table of run.sh's cputime-*.json: per path and
measure, base and new min / median / max in GB/s (thread CPU time), new /
base of each alternating pair, and the ratios the issue's targets use."""
import glob
import json
import os
import statistics
import sys

d = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(d, "cputime-*-*-*.json"))):
    which, path, i = os.path.basename(f)[len("cputime-"):-len(".json")].split("-")
    with open(f) as fh:
        runs.setdefault(path, {}).setdefault(which, {})[int(i)] = json.load(fh)

def mmm(v):
    return "%.2f / %.2f / %.2f" % (min(v), statistics.median(v), max(v))

keys = ["canonical_nearest_encode_gbps", "gain_nearest_encode_gbps",
        "gain_stochastic_encode_gbps", "canonical_nearest_decode_gbps"]
print("| path | measure | base GB/s | new GB/s | new / base (per pair) |")
print("|---|---|---|---|---|")
for path in sorted(runs):
    b, n = runs[path]["base"], runs[path]["new"]
    pairs = sorted(set(b) & set(n))
    for k in keys:
        rb = [b[i][k] for i in pairs]
        rn = [n[i][k] for i in pairs]
        print("| %s | %s | %s | %s | %s |" % (path, k[:-5], mmm(rb), mmm(rn),
              mmm([rn[j] / rb[j] for j in range(len(pairs))])))
print()
print("| path | build | gain nearest / canonical nearest encode | gain stochastic / gain nearest encode | messages and output as new's |")
print("|---|---|---|---|---|")
for path in sorted(runs):
    b, n = runs[path]["base"], runs[path]["new"]
    pairs = sorted(set(b) & set(n))
    for which, r in (("base", b), ("new", n)):
        same = all(r[i][h] == n[pairs[0]][h] for i in pairs for h in
                   ("canonical_nearest_message_fnv", "gain_nearest_message_fnv",
                    "gain_stochastic_message_fnv", "decode_output_fnv"))
        gn = [r[i]["gain_nearest_encode_gbps"] / r[i]["canonical_nearest_encode_gbps"] for i in pairs]
        gs = [r[i]["gain_stochastic_encode_gbps"] / r[i]["gain_nearest_encode_gbps"] for i in pairs]
        print("| %s | %s | %s | %s | %s |" % (path, which, mmm(gn), mmm(gs), "yes" if same else "NO"))
