#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bert_summary.py - the MiniLM fine-tuning sweep (scripts/bert_sweep.sh):
paired differences, flagged tiles along training, cost; data for the figure.

  bert_summary.py SWEEP_DIR [CONTROL_CSV]

Reads SWEEP_DIR/METHOD_kK_sSEED.csv (tahq-train --model minilm --out),
SWEEP_DIR/acts/RUN/act_stats.csv, SWEEP_DIR/mem.csv and the runs' logs
(tokens/s). Writes, in SWEEP_DIR:

  bert_val.csv    method,step,mean,min,max,n: validation masked-token loss
  bert_val_diff.csv  the same for the loss minus fp32's in the same seed
  bert_flags.csv  run,step,boundary,gate,flagged_share,kurtosis,top1_ratio
  summary.md      the tables: per method; paired differences of the
                  validation loss (per seed: the same windows, masks and
                  validation masks) with 95% t-intervals over the seeds, at
                  the last step and averaged over the evaluations from step
                  20 on; the flagged-tile share along training; cost.

CONTROL_CSV: the random-initialisation run (same options), for the table.
"""
import csv
import glob
import math
import os
import re
import sys

RUN = re.compile(r"^(?P<method>.+_k\d+)_s(?P<seed>\d+)\.csv$")
# two-sided 95% Student t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def evals(rows):
    return {int(r["step"]): (float(r["val_loss"]), float(r["val_acc"]))
            for r in rows if r["val_loss"] not in ("", "nan")}


def ci(d):
    n = len(d)
    m = sum(d) / n
    if n < 2:
        return m, None
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    return m, T95.get(n - 1, 1.96) * sd / math.sqrt(n)


def main():
    out = sys.argv[1]
    runs = {}
    for p in sorted(glob.glob(os.path.join(out, "*.csv"))):
        m = RUN.match(os.path.basename(p))
        if m:
            runs.setdefault(m["method"], {})[int(m["seed"])] = evals(rows_of(p))
    if not runs:
        print("bert_summary: no run files in " + out)
        return 1
    # each method over its own seeds; each pair over the seeds both have
    mseeds = {m: sorted(v) for m, v in runs.items()}
    order = [m for m in ("fp32_k3", "tah4-3_k3", "tah4-3-tauinf_k3", "plain4_k3") if m in runs]
    order += sorted(m for m in runs if m not in order)
    tps, mem = {}, {}
    for p in glob.glob(os.path.join(out, "*.log")):
        name = os.path.basename(p)[:-4]
        for line in open(p):
            g = re.search(r"([0-9.]+) tokens/s", line)
            if line.startswith("run ") and g:
                tps[name] = float(g.group(1))
    if os.path.exists(os.path.join(out, "mem.csv")):
        for r in rows_of(os.path.join(out, "mem.csv")):
            mem[r["run"]] = int(r["peak_rss_kib"])
    with open(os.path.join(out, "bert_val.csv"), "w") as f:
        f.write("method,step,mean,min,max,n\n")
        for m in order:
            seeds = mseeds[m]
            for s in sorted(set.intersection(*(set(runs[m][k]) for k in seeds))):
                v = [runs[m][k][s][0] for k in seeds]
                f.write("%s,%d,%.6f,%.6f,%.6f,%d\n" % (m, s, sum(v) / len(v), min(v), max(v), len(v)))
    # validation loss minus fp32's in the same seed, at each evaluation
    with open(os.path.join(out, "bert_val_diff.csv"), "w") as f:
        f.write("method,step,mean,min,max,n\n")
        for m in order:
            if m == "fp32_k3" or "fp32_k3" not in runs:
                continue
            seeds = sorted(set(runs[m]) & set(runs["fp32_k3"]))
            if not seeds:
                continue
            for s in sorted(runs[m][seeds[0]]):
                d = [runs[m][k][s][0] - runs["fp32_k3"][k][s][0] for k in seeds
                     if s in runs[m][k] and s in runs["fp32_k3"][k]]
                if len(d) == len(seeds):
                    f.write("%s,%d,%.6f,%.6f,%.6f,%d\n" % (m, s, sum(d) / len(d), min(d), max(d), len(d)))
    flags = []
    for p in sorted(glob.glob(os.path.join(out, "acts", "*", "act_stats.csv"))):
        run = os.path.basename(os.path.dirname(p))
        for r in rows_of(p):
            flags.append((run, int(r["step"]), int(r["boundary"]), r["gate"],
                          float(r["flagged_share"] or "nan"), float(r["excess_kurtosis"]),
                          float(r["top1_ratio"])))
    with open(os.path.join(out, "bert_flags.csv"), "w") as f:
        f.write("run,step,boundary,gate,flagged_share,kurtosis,top1_ratio\n")
        for x in flags:
            f.write("%s,%d,%d,%s,%.6f,%.4f,%.4f\n" % x)

    md = ["# MiniLM MLM fine-tuning sweep: summary (plots/bert_summary.py)", ""]
    md.append("Paired seeds: each seed has the same windows, masks and validation masks for "
              "every method.")
    md += ["", "| method | seeds | val loss (last step), mean | min .. max | val accuracy, mean | "
           "tokens/s, mean | peak RSS MiB |", "|---|---|---|---|---|---|---|"]
    for m in order:
        seeds = mseeds[m]
        st = max(runs[m][seeds[0]])
        v = [runs[m][k][st][0] for k in seeds]
        a = [runs[m][k][st][1] for k in seeds]
        t = [tps.get("%s_s%d" % (m, k)) for k in seeds]
        t = [x for x in t if x]
        r = [mem.get("%s_s%d" % (m, k)) for k in seeds]
        r = [x for x in r if x]
        md.append("| %s | %s | %.4f | %.4f .. %.4f | %.4f | %s | %s |" % (
            m, ",".join(map(str, seeds)), sum(v) / len(v), min(v), max(v), sum(a) / len(a),
            "%.0f" % (sum(t) / len(t)) if t else "", "%.0f" % (max(r) / 1024) if r else ""))
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        e = evals(rows_of(sys.argv[2]))
        st = max(e)
        md.append("| control: fp32, random init | 1 | %.4f | | %.4f | | |" % (e[st][0], e[st][1]))
        md += ["", "Control (random initialisation, fp32, seed 1) against the pretrained fp32 run "
               "of seed 1, validation masked-token loss at each evaluation:", "",
               "| step | pretrained | random init |", "|---|---|---|"]
        for s in sorted(e):
            if "fp32_k3" in runs and s in runs["fp32_k3"].get(1, {}):
                md.append("| %d | %.4f | %.4f |" % (s, runs["fp32_k3"][1][s][0], e[s][0]))
    pairs = [(a, "fp32_k3") for a in order if a != "fp32_k3"]
    pairs += [("tah4-3_k3", "tah4-3-tauinf_k3"), ("plain4_k3", "tah4-3_k3")]
    md += ["", "Paired differences of the validation masked-token loss (A - B, per seed; "
           "mean and 95% Student-t interval over the seeds, n - 1 degrees of freedom):", "",
           "| A - B | seeds | last step: mean | 95% CI | per seed | evaluations from step 20 on, "
           "mean: mean | 95% CI |",
           "|---|---|---|---|---|---|---|"]
    for a, b in pairs:
        if a not in runs or b not in runs:
            continue
        seeds = sorted(set(runs[a]) & set(runs[b]))
        if not seeds:
            continue
        st = max(runs[a][seeds[0]])
        d = [runs[a][k][st][0] - runs[b][k][st][0] for k in seeds]
        late = [s for s in runs[a][seeds[0]] if s >= 20]
        dl = [sum(runs[a][k][s][0] - runs[b][k][s][0] for s in late) / len(late) for k in seeds]
        m1, h1 = ci(d)
        m2, h2 = ci(dl)
        fmt = lambda m, h: ("%+.4f" % m, "" if h is None else "[%+.4f, %+.4f]" % (m - h, m + h))
        md.append("| %s - %s | %s | %s | %s | %s | %s | %s |" % (
            a, b, ",".join(map(str, seeds)), *fmt(m1, h1), " ".join("%+.4f" % x for x in d), *fmt(m2, h2)))
    md += ["", "Flagged-tile share of the tah gate (tau = 2, G = 64) at each boundary along "
           "training (runs whose dumps use that gate: fp32 and tah4/3), mean over seeds:", "",
           "| run group | step | boundary 0 | boundary 1 |", "|---|---|---|---|"]
    for grp in ("fp32_k3", "tah4-3_k3"):
        steps = sorted({x[1] for x in flags if x[0].startswith(grp + "_s")})
        for s in steps:
            cells = []
            for b in (0, 1):
                v = [x[4] for x in flags if x[0].startswith(grp + "_s") and x[1] == s and x[2] == b]
                cells.append("%.2f%%" % (100 * sum(v) / len(v)) if v else "")
            md.append("| %s | %d | %s | %s |" % (grp, s, *cells))
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


sys.exit(main())
