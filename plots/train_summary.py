#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""train_summary.py - seed statistics of a tahq-train sweep, for the loss figures.

  train_summary.py DIR [--smooth N]

Reads every run file DIR/METHOD_kK_sSEED.csv that tahq-train --out DIR wrote
(columns step,lr,loss,val_loss,val_bpb,fwd_bytes,bwd_bytes) and groups the
runs by METHOD_kK. Writes, in DIR:

  train_curves.csv  method,step,mean,min,max,n: the training loss, each seed's
                    curve first averaged over the last N steps (--smooth, 10;
                    a trailing mean, so a point never uses later steps), then
                    mean, min and max over the seeds at each step
  train_val.csv     method,step,mean,min,max,n: the validation loss at the
                    evaluation steps
  train_val_diff.csv  method,step,mean,min,max,n: the validation loss minus
                    fp32's (the run fp32_kK of the same K) in the same seed,
                    paired per seed, at the evaluation steps both have (none
                    without fp32 runs)
  train_final.csv   method,seeds,val_mean,val_sd,val_min,val_max,val_bpb_mean,
                    fwd_bytes_mean,fwd_bytes_last,bwd_bytes_last: at the last
                    step (sd: the sample standard deviation over seeds, empty
                    for one seed); fwd_bytes_mean averages over every step
                    (AQ-SGD sends binary32 in its first epoch)

Steps present in only some seeds' files (an unfinished sweep writes no file
for the run it was cut in) are left out, so every point has all n seeds.
Exit status: 0, 1 when DIR holds no run file, 2 on a usage error.
"""
import argparse
import csv
import glob
import math
import os
import re
import sys

RUN = re.compile(r"^(?P<method>.+_k\d+)_s(?P<seed>\d+)\.csv$")


def read_run(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


def trailing_mean(xs, n):
    out, acc = [], 0.0
    for i, x in enumerate(xs):
        acc += x
        if i >= n:
            acc -= xs[i - n]
        out.append(acc / min(i + 1, n))
    return out


def stats(vals):
    m = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else None
    return m, min(vals), max(vals), sd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--smooth", type=int, default=10, help="trailing mean over N steps (10)")
    a = ap.parse_args()
    if a.smooth < 1:
        ap.error("--smooth must be at least 1")
    runs = {}
    for path in sorted(glob.glob(os.path.join(a.dir, "*_k*_s*.csv"))):
        m = RUN.match(os.path.basename(path))
        if m:
            runs.setdefault(m.group("method"), {})[int(m.group("seed"))] = read_run(path)
    if not runs:
        print("train_summary: no run files METHOD_kK_sSEED.csv in %s" % a.dir, file=sys.stderr)
        return 1
    curves, vals, diffs, finals = [], [], [], []
    for method in runs:  # file order: sorted by name
        seeds = runs[method]
        steps = None
        for rows in seeds.values():
            s = {int(r["step"]) for r in rows}
            steps = s if steps is None else steps & s
        steps = sorted(steps)
        loss = {}
        for seed, rows in seeds.items():
            by = {int(r["step"]): float(r["loss"]) for r in rows}
            sm = trailing_mean([by[s] for s in steps], a.smooth)
            loss[seed] = dict(zip(steps, sm))
        for s in steps:
            mean, lo, hi, _ = stats([loss[k][s] for k in seeds])
            curves.append([method, s, mean, lo, hi, len(seeds)])
        for s in steps:
            v = [float(r["val_loss"]) for rows in seeds.values() for r in rows
                 if int(r["step"]) == s and r["val_loss"] not in ("", "nan")]
            if len(v) == len(seeds):
                mean, lo, hi, _ = stats(v)
                vals.append([method, s, mean, lo, hi, len(seeds)])
        ref = runs.get(re.sub(r"^.*(_k\d+)$", r"fp32\1", method))
        if ref is not None:
            common = [k for k in seeds if k in ref]
            for s in steps:
                d = []
                for k in common:
                    a_ = [r for r in seeds[k] if int(r["step"]) == s and r["val_loss"] not in ("", "nan")]
                    b_ = [r for r in ref[k] if int(r["step"]) == s and r["val_loss"] not in ("", "nan")]
                    if a_ and b_:
                        d.append(float(a_[0]["val_loss"]) - float(b_[0]["val_loss"]))
                if common and len(d) == len(common):
                    mean, lo, hi, _ = stats(d)
                    diffs.append([method, s, mean, lo, hi, len(d)])
        last = steps[-1]
        lastrows = [next(r for r in rows if int(r["step"]) == last) for rows in seeds.values()]
        v = [float(r["val_loss"]) for r in lastrows if r["val_loss"] not in ("", "nan")]
        # MLM runs (tahq-train --model minilm) have val_acc in place of val_bpb
        bpb = [float(r["val_bpb"]) for r in lastrows if r.get("val_bpb", "") not in ("", "nan")]
        fwd = [float(r["fwd_bytes"]) for rows in seeds.values() for r in rows]
        if len(v) == len(seeds):
            mean, lo, hi, sd = stats(v)
            finals.append([method, len(seeds), mean, "" if sd is None else sd, lo, hi,
                           sum(bpb) / len(bpb) if bpb else "", sum(fwd) / len(fwd),
                           lastrows[0]["fwd_bytes"], lastrows[0]["bwd_bytes"]])
    for name, header, rows in (
            ("train_curves.csv", ["method", "step", "mean", "min", "max", "n"], curves),
            ("train_val.csv", ["method", "step", "mean", "min", "max", "n"], vals),
            ("train_val_diff.csv", ["method", "step", "mean", "min", "max", "n"], diffs),
            ("train_final.csv", ["method", "seeds", "val_mean", "val_sd", "val_min", "val_max",
                                 "val_bpb_mean", "fwd_bytes_mean", "fwd_bytes_last",
                                 "bwd_bytes_last"], finals)):
        tmp = os.path.join(a.dir, name + ".tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([("%.6g" % x) if isinstance(x, float) else x for x in r])
        os.replace(tmp, os.path.join(a.dir, name))
    print("train_summary: %d methods, %d runs -> %s/train_{curves,val,val_diff,final}.csv"
          % (len(runs), sum(len(s) for s in runs.values()), a.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
