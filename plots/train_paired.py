#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""train_paired.py - paired differences to fp32 and equivalence tests (TOST)
of a scripts/train_paired.sh sweep.

  train_paired.py DIR [--margin M] [--column val_loss_last|val_loss_mid] [--complete]
                      [--seeds A-B] [--prefix NAME]

Reads DIR/runs.csv (one row per finished run: method,seed,steps,...). For
each method other than fp32, the seeds where both it and fp32 finished give
the paired differences d_s = loss(method, s) - loss(fp32, s). Writes, in DIR:

  paired.csv   method,n,mean,sd,ci95_lo,ci95_hi,ci90_lo,ci90_hi,margin,
               tost,difference,mdd80,n_tost80,n_tost80_if_0,eq_margin,seeds
  paired.md    the same as a Markdown table
  paired.dat   gnuplot rows: index, method, mean, ci95 lo/hi, ci90 lo/hi
  paired_contrasts.csv  gain minus token allocation in the same seeds
               (tah-gain - tah, tah3/2-gain - tah3/2): n, mean, sd, 95% CI,
               difference (and as Markdown, paired_contrasts.md)
  paired_seeds.md  per seed fp32's loss and each method's difference
--seeds A-B keeps only seeds A..B (the pilot: --seeds 1-7); --prefix NAME
writes NAME.csv, NAME.md, NAME.dat, NAME_contrasts.csv and NAME_seeds.md
instead. The .md files are the tables of the folder's README
(sgd_sim/tables.py checks them there).

Statistics (all Student t with n - 1 degrees of freedom, seeds independent):
  ci95      mean +- t(0.975) sd / sqrt(n): the 95% interval of the mean
            paired difference
  tost      two one-sided tests at alpha = 0.05 against the margin +-M:
            "equivalent" when the 90% interval (mean +- t(0.95) sd/sqrt(n))
            lies inside (-M, +M) (Schuirmann 1987: both one-sided tests
            reject at 5% exactly then); otherwise "not shown"
  difference "worse"/"better" when the 95% interval excludes 0, else "none
            shown"
  mdd80     the smallest true difference a two-sided 5% test with these n
            seeds detects with 80% power at the observed sd:
            (t(0.975) + t(0.80)) sd / sqrt(n)
  n_tost80  the seeds TOST needs for 80% power at the observed sd if the
            true difference were the observed mean (|mean| < M; otherwise
            "none": no n shows equivalence): the smallest n with
            (t(0.95) + t(0.80)) sd / sqrt(n) <= M - |mean| (the usual
            normal-approximation formula with t quantiles, iterated in n)
  n_tost80_if_0  the same if the true difference were 0: the design's
            sample size for TOST at 5% with 80% power at the observed sd
  eq_margin the smallest margin at which these data would show equivalence
            by TOST at 5%: max(|ci90_lo|, |ci90_hi|)
Exit status: 0, 1 when runs.csv has no complete pair, 2 on a usage error.
"""
import argparse
import csv
import math
import os
import sys


def betacf(a, b, x):
    """Continued fraction of the regularised incomplete beta (Numerical
    Recipes, modified Lentz); converges for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1 - x) / b


def t_cdf(t, nu):
    p = 0.5 * betainc(nu / 2.0, 0.5, nu / (nu + t * t))
    return 1 - p if t > 0 else p


def t_quantile(p, nu):
    """Student t quantile by bisection on t_cdf (p in (0.5, 1))."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, nu) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def n_for_tost(sd, mean, margin):
    room = margin - abs(mean)
    if room <= 0 or not sd > 0:
        return None
    for n in range(3, 100000):
        nu = n - 1
        if (t_quantile(0.95, nu) + t_quantile(0.80, nu)) * sd / math.sqrt(n) <= room:
            return n
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--margin", type=float, default=0.01)
    ap.add_argument("--column", default="val_loss_last", choices=["val_loss_last", "val_loss_mid"])
    ap.add_argument("--complete", action="store_true",
                    help="only the seeds where every method finished (a sweep cut off mid-seed)")
    ap.add_argument("--seeds", default=None, help="A-B: only seeds A..B")
    ap.add_argument("--prefix", default="paired")
    a = ap.parse_args()
    keep = None
    if a.seeds is not None:
        try:
            lo_s, hi_s = (int(x) for x in a.seeds.split("-"))
        except ValueError:
            print("train_paired.py: --seeds A-B", file=sys.stderr)
            return 2
        keep = range(lo_s, hi_s + 1)
    rows = {}
    order = []
    with open(os.path.join(a.dir, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            m = r["method"]
            if m not in rows:
                rows[m] = {}
                order.append(m)
            if keep is None or int(r["seed"]) in keep:
                rows[m][int(r["seed"])] = float(r[a.column])
    if a.complete:
        full = set.intersection(*(set(v) for v in rows.values()))
        rows = {m: {sd: x for sd, x in v.items() if sd in full} for m, v in rows.items()}
    if "fp32" not in rows:
        print("train_paired.py: no fp32 runs", file=sys.stderr)
        return 1
    out = []
    for m in order:
        if m == "fp32":
            continue
        seeds = sorted(set(rows[m]) & set(rows["fp32"]))
        n = len(seeds)
        if n < 2:
            continue
        d = [rows[m][s] - rows["fp32"][s] for s in seeds]
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        se = sd / math.sqrt(n)
        t975, t95, t80 = t_quantile(0.975, n - 1), t_quantile(0.95, n - 1), t_quantile(0.80, n - 1)
        c95 = (mean - t975 * se, mean + t975 * se)
        c90 = (mean - t95 * se, mean + t95 * se)
        tost = "equivalent" if -a.margin < c90[0] and c90[1] < a.margin else "not shown"
        diff = "worse" if c95[0] > 0 else "better" if c95[1] < 0 else "none shown"
        nt = n_for_tost(sd, mean, a.margin)
        n0 = n_for_tost(sd, 0.0, a.margin)
        out.append(dict(method=m, n=n, mean=mean, sd=sd, ci95_lo=c95[0], ci95_hi=c95[1], ci90_lo=c90[0],
                        ci90_hi=c90[1], margin=a.margin, tost=tost, difference=diff,
                        mdd80=(t975 + t80) * se, n_tost80=nt if nt is not None else "none",
                        n_tost80_if_0=n0 if n0 is not None else "none",
                        eq_margin=max(abs(c90[0]), abs(c90[1])),
                        seeds="%d-%d" % (seeds[0], seeds[-1]) if seeds == list(range(seeds[0], seeds[-1] + 1))
                        else " ".join(map(str, seeds))))
    if not out:
        print("train_paired.py: no complete pair", file=sys.stderr)
        return 1
    keys = ["method", "n", "mean", "sd", "ci95_lo", "ci95_hi", "ci90_lo", "ci90_hi", "margin", "tost",
            "difference", "mdd80", "n_tost80", "n_tost80_if_0", "eq_margin", "seeds"]
    with open(os.path.join(a.dir, a.prefix + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in out:
            w.writerow([("%.6f" % r[k]) if isinstance(r[k], float) else r[k] for k in keys])
    with open(os.path.join(a.dir, a.prefix + ".md"), "w") as f:
        f.write("| method | seeds | minus fp32: mean [95%% CI] | paired sd | 90%% CI | TOST at ±%g | "
                "difference from 0 | detectable (80%% power) | smallest margin shown | "
                "seeds TOST needs (80%% power): at the mean / if 0 |\n" % a.margin)
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        for r in out:
            f.write("| %s | %d | %+.4f [%+.4f, %+.4f] | %.4f | [%+.4f, %+.4f] | %s | %s | %.4f | ±%.4f | %s / %s |\n" % (
                r["method"], r["n"], r["mean"], r["ci95_lo"], r["ci95_hi"], r["sd"], r["ci90_lo"], r["ci90_hi"],
                r["tost"], r["difference"], r["mdd80"], r["eq_margin"], r["n_tost80"], r["n_tost80_if_0"]))
    contrasts = []
    for gain, token in (("tah-gain", "tah"), ("tah3/2-gain", "tah3/2")):
        if gain not in rows or token not in rows:
            continue
        seeds = sorted(set(rows[gain]) & set(rows[token]))
        n = len(seeds)
        if n < 2:
            continue
        d = [rows[gain][s] - rows[token][s] for s in seeds]
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        h = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
        contrasts.append([gain + " - " + token, n, "%.6f" % mean, "%.6f" % sd, "%.6f" % (mean - h),
                          "%.6f" % (mean + h),
                          "worse" if mean - h > 0 else "better" if mean + h < 0 else "none shown"])
    with open(os.path.join(a.dir, a.prefix + "_contrasts.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["contrast", "n", "mean", "sd", "ci95_lo", "ci95_hi", "difference"])
        w.writerows(contrasts)
    with open(os.path.join(a.dir, a.prefix + "_contrasts.md"), "w") as f:
        f.write("| contrast | seeds | mean [95% CI] | paired sd | difference from 0 |\n|---|---|---|---|---|\n")
        for c in contrasts:
            f.write("| %s | %d | %+.4f [%+.4f, %+.4f] | %.4f | %s |\n" % (
                c[0], c[1], float(c[2]), float(c[4]), float(c[5]), float(c[3]), c[6]))
    # per seed: fp32's loss and every method's difference to it (the seeds
    # where fp32 finished; "-" where the method did not)
    others = [m for m in order if m != "fp32"]
    with open(os.path.join(a.dir, a.prefix + "_seeds.md"), "w") as f:
        f.write("| seed | fp32 | " + " | ".join(others) + " |\n")
        f.write("|---|---|" + "---|" * len(others) + "\n")
        for sd_ in sorted(rows["fp32"]):
            f.write("| %d | %.4f | " % (sd_, rows["fp32"][sd_]) +
                    " | ".join("%+.4f" % (rows[m][sd_] - rows["fp32"][sd_]) if sd_ in rows[m] else "-"
                               for m in others) + " |\n")
    with open(os.path.join(a.dir, a.prefix + ".dat"), "w") as f:
        # two data blocks (gnuplot's index 0 and 1): the 4-bit methods, then
        # 3/2 bits, an order of magnitude further from fp32 (one axis would
        # hide the 4-bit intervals); the first column counts within a block
        f.write("# index method mean ci95_lo ci95_hi ci90_lo ci90_hi n\n")
        for pn in (0, 1):
            if pn:
                f.write("\n\n")
            i = 0
            for r in out:
                if (1 if "3/2" in r["method"] else 0) != pn:
                    continue
                f.write("%d \"%s\" %.6f %.6f %.6f %.6f %.6f %d\n" % (i, r["method"], r["mean"], r["ci95_lo"],
                                                                  r["ci95_hi"], r["ci90_lo"], r["ci90_hi"], r["n"]))
                i += 1
    print(open(os.path.join(a.dir, a.prefix + ".md")).read(), end="")
    for c in contrasts:
        print("%s: %+.4f [%+.4f, %+.4f] (95%%, %d seeds): %s" % (c[0], float(c[2]), float(c[4]), float(c[5]),
                                                             c[1], c[6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
