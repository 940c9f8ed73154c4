#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the tahq report directory: run the tools, then write index.md and
report.json from their own JSON/CSV outputs.

usage: plots/report.py [--out DIR] [--build DIR] [--quick | --full | --smoke]
                       [--jobs N] [-- TAHQ_REPORT_ARGS...]
       plots/report.py --check DIR

scripts/report.sh calls this after building (README, "Quick start"). Every
number in the report is copied from a tool's output file (tahq report --json,
tahq conform --json, tahq bounds' bounds.json, tahq-sim's CSVs); nothing is
recomputed here. A section whose input is missing says "not available" and
why. Exit status: 0, or 1 when the codec verification, golden conformance or
the bound sweep failed (the report is written either way), 2 usage error.
--check validates a report directory (sections, JSON, linked images) and
exits 1 on any problem; CTest uses it (label report).
"""

import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Section keys in the order index.md shows them; --check requires all.
SECTIONS = [
    ("verification", "Codec verification (tahq report)"),
    ("conformance", "Golden conformance (tahq conform, golden/v1)"),
    ("bounds", "Error per bit budget (tahq bounds)"),
    ("alloc_study", "Bit allocation policies at equal bits (tahq alloc-study)"),
    ("convergence", "Convergence: rate and floor on the smooth problem (tahq-sim converge)"),
    ("delta", "Relative bias delta and variance per codec (tahq-sim delta)"),
    ("delta_trajectory", "Relative bias delta along SGD's trajectory (tahq-sim delta --trajectory)"),
    ("floor_range", "The floor's range over step size and update precision (tahq-sim floor --range)"),
    ("train_paired", "Paired seeds in tahq-train: differences to fp32 and equivalence (TOST)"),
    ("throughput", "GPipe throughput model (tahq-sim throughput)"),
    ("loss_curves", "Loss curves on the LLM-like pipeline (tahq-sim train)"),
    ("slow_links", "Measured wall-clock over shaped links, and the calibrated model (scripts/slow_links.sh)"),
    ("reliability", "Reliability: fuzzing and hostile inputs (results/fuzz/reliability.json)"),
    ("proofs", "Proof status (proofs/stats.json)"),
    ("machine", "Machine and run"),
]
# "stale": what the section states was true of an earlier tree (the proofs:
# a file they read changed since they ran); "unknown": it cannot be told.
STATUSES = ("ok", "fail", "stale", "unknown", "not available")
# Sections whose failure makes the report exit non-zero: they check the codec
# itself. The simulator's statistical checks are reported, and CTest's
# sim_quick gates them.
GATING = ("verification", "conformance", "bounds")


def log(msg):
    print("report: " + msg, file=sys.stderr, flush=True)


def not_available(reason, **extra):
    d = {"status": "not available", "reason": reason}
    d.update(extra)
    return d


def missing_output(reason, rc):
    """A tool gave no readable output: a failure when it exited non-zero
    (a codec check that failed must not read as merely missing)."""
    if rc:
        return {"status": "fail", "reason": reason, "no_data": True, "exit_status": rc}
    return not_available(reason, exit_status=rc)


# ---------------------------------------------------------------- running


class Runner:
    """Runs the tools one at a time, records exit status, wall and CPU time."""

    def __init__(self, data_dir, total):
        self.data_dir = data_dir
        self.steps = []
        self.total = total

    def run(self, name, argv, stdout_name=None, echo=False):
        """Run argv; stdout goes to data/stdout_name (and to the terminal when
        echo), stderr (the tools' progress lines) to the terminal."""
        log("[%d/%d] %s: %s" % (len(self.steps) + 1, self.total, name,
                                " ".join(os.path.relpath(a, REPO) if a.startswith(REPO) else a
                                         for a in argv)))
        t0 = time.monotonic()
        c0 = os.times()
        try:
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=None, cwd=REPO)
            rc, out = proc.returncode, proc.stdout
        except OSError as e:
            rc, out = 127, ("cannot run %s: %s\n" % (argv[0], e)).encode()
        c1 = os.times()
        wall = time.monotonic() - t0
        cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
        if stdout_name:
            with open(os.path.join(self.data_dir, stdout_name), "wb") as f:
                f.write(out)
        if echo:
            sys.stdout.write(out.decode("utf-8", "replace"))
            sys.stdout.flush()
        step = {"name": name, "command": argv, "exit_status": rc,
                "wall_s": round(wall, 2), "cpu_user_sys_s": round(cpu, 2)}
        self.steps.append(step)
        log("    exit %d, %.1f s wall, %.1f s CPU (user+sys)" % (rc, wall, cpu))
        return rc


# ---------------------------------------------------------------- readers


def shown(path):
    """A path relative to the repository when it is inside it."""
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def read_json(path):
    """(object, None) or (None, reason)."""
    if not os.path.exists(path):
        return None, "%s was not written" % shown(path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, "%s is not valid JSON (%s)" % (shown(path), e)


def read_csv(path):
    """(list of dict rows, None) or (None, reason)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None, "%s was not written" % shown(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f)), None
    except (OSError, csv.Error) as e:
        return None, "%s is unreadable (%s)" % (shown(path), e)


def num(s):
    """CSV field to a number when it is one (the tools print %g)."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return s
    return int(v) if re.fullmatch(r"-?\d+", str(s).strip()) else v


def images(out_dir, folder, names):
    """Relative paths of the PNGs that exist."""
    found = []
    for n in names:
        rel = os.path.join(folder, n + ".png")
        if os.path.exists(os.path.join(out_dir, rel)):
            found.append(rel)
    return found


def table_status(rc, tool, rows, numeric):
    """(status, reason) of a simulator table: "ok" only when the tool exited
    0 and wrote at least one row with a finite number in every column named."""
    why = []
    if rc:
        why.append("%s exited %s" % (tool, rc))
    if not rows:
        why.append("%s wrote no rows" % tool)
    bad = set()
    for r in rows or []:
        for c in numeric:
            v = num(r.get(c))
            if not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
                bad.add(c)
    if bad:
        why.append("non-numeric or missing values in column(s) " + ", ".join(sorted(bad)))
    return ("fail", "; ".join(why)) if why else ("ok", None)


# ---------------------------------------------------------------- sections


def section_verification(out_dir, rc_text, rc_json):
    d, why = read_json(os.path.join(out_dir, "data", "verify.json"))
    if d is None:
        return missing_output("tahq report --json gave no report: " + why, rc_json or rc_text)
    keep = ("name", "bytes", "bits_per_element", "rel_mse", "sqnr_db", "max_abs_err",
            "max_err_over_bound", "n_over_bound", "n_flagged", "deterministic", "decode_stable",
            "skipped", "ok")
    rows = [{k: r.get(k) for k in keep} for r in d.get("rows", [])]
    # ok only from the rows themselves, not just the tool's own flag
    why = []
    if rc_text or rc_json:
        why.append("tahq report exited %d (text), %d (--json)" % (rc_text, rc_json))
    if not d.get("ok"):
        why.append("tahq report --json says ok = %s" % d.get("ok"))
    if not rows or d.get("configurations") != len(rows):
        why.append("%d rows for %s configurations" % (len(rows), d.get("configurations")))
    bad = [r.get("name") for r in rows if not r.get("skipped") and not (
        r.get("ok") is True and r.get("n_over_bound") == 0 and r.get("deterministic") is True
        and r.get("decode_stable") is True and isinstance(r.get("max_err_over_bound"), (int, float))
        and r["max_err_over_bound"] <= 1)]
    if bad:
        why.append("configurations failing a check: " + ", ".join(map(str, bad)))
    if rows and all(r.get("skipped") for r in rows):
        why.append("every configuration was skipped")
    ok = not why
    return {"status": "ok" if ok else "fail", "verdict": d.get("verdict"),
            **({} if ok else {"reason": "; ".join(why)}),
            "input": d.get("input"), "shape": d.get("shape"),
            "configurations": d.get("configurations"), "failed": d.get("failed"),
            "exit_status": rc_json, "rows": rows, "source": "data/verify.json"}


def section_conformance(out_dir, rc):
    d, why = read_json(os.path.join(out_dir, "data", "conform.json"))
    if d is None:
        return missing_output("tahq conform gave no JSON (exit %d): %s" % (rc, why), rc)
    s = d.get("summary", {})
    cases = d.get("cases", [])
    failed_ids = [c.get("id") for c in cases if not c.get("pass")]
    why = []
    if rc:
        why.append("tahq conform exited %d" % rc)
    if not cases or s.get("cases") != len(cases) or s.get("passed") != len(cases):
        why.append("%s of %s cases passed (%d listed)" % (s.get("passed"), s.get("cases"),
                                                         len(cases)))
    if failed_ids or s.get("failed") != 0:
        why.append("%s failed" % (s.get("failed") if s.get("failed") else len(failed_ids)))
    ok = not why
    return {"status": "ok" if ok else "fail", "set": d.get("set"), "mode": d.get("mode"),
            **({} if ok else {"reason": "; ".join(why)}),
            "summary": s, "failed_cases": failed_ids[:50], "exit_status": rc,
            "source": "data/conform.json"}


def section_bounds(out_dir, rc):
    d, why = read_json(os.path.join(out_dir, "data", "bounds", "bounds.json"))
    if d is None:
        return missing_output("tahq bounds gave no bounds.json (exit %d): %s" % (rc, why), rc)
    head = []
    for dist, f in sorted(d.get("findings", {}).items()):
        pp = f.get("paper_operating_point", {})
        best = f.get("best_at_or_below_paper_bits") or {}
        tau = f.get("tau_ablation", {})
        head.append({
            "dist": dist, "config": pp.get("config"),
            "bits_per_element": pp.get("bits_per_element"), "rel_mse": pp.get("rel_mse"),
            "sqnr_db": pp.get("sqnr_db"), "max_err_over_bound": pp.get("max_err_over_bound"),
            "on_pareto_front": pp.get("on_pareto_front"),
            "best_at_or_below_paper_bits": best.get("config"),
            "best_over_paper_rel_mse": f.get("best_over_paper_rel_mse"),
            "rel_mse_tau0": (tau.get("0") or {}).get("rel_mse"),
            "rel_mse_tau_inf": (tau.get("inf") or {}).get("rel_mse"),
        })
    why = []
    if rc:
        why.append("tahq bounds exited %d" % rc)
    if not d.get("ok"):
        why.append("bounds.json says ok = %s" % d.get("ok"))
    if not isinstance(d.get("points_run"), int) or d["points_run"] <= 0:
        why.append("%s points run" % d.get("points_run"))
    if d.get("failed") != 0:
        why.append("%s points failed" % d.get("failed"))
    mr = d.get("max_err_over_bound")
    if not isinstance(mr, (int, float)) or not 0 <= mr <= 1:
        why.append("largest max |error|/bound %s" % fmt(mr, 7))
    if not head:
        why.append("no findings per distribution")
    ok = not why
    return {"status": "ok" if ok else "fail", "mode": d.get("mode"),
            **({} if ok else {"reason": "; ".join(why)}),
            "points_run": d.get("points_run"), "failed": d.get("failed"),
            "max_err_over_bound": d.get("max_err_over_bound"), "exit_status": rc,
            "headline": head,
            "images": images(out_dir, "data/bounds",
                             ["bounds_pareto", "bounds_ablation", "bounds_ratio"]),
            "source": "data/bounds/bounds.json"}


def section_alloc_study(out_dir, rc, rc_fig):
    """The quick allocation study: the exactness control (every row of
    alloc_control.csv ok, checked here), the oracle check (the tool's exit
    status), and the tables of plots/alloc_study.py."""
    d = os.path.join(out_dir, "data", "alloc_study")
    rows, why_rows = read_csv(os.path.join(d, "alloc_study.csv"))
    ctl, _ = read_csv(os.path.join(d, "alloc_control.csv"))
    if not rows:
        return missing_output("tahq alloc-study gave no table (exit %d): %s" % (rc, why_rows), rc)
    why = []
    if rc:
        why.append("tahq alloc-study exited %d (a control, oracle or bound check failed)" % rc)
    bad = [("%s/%s" % (r.get("input"), r.get("alloc"))) for r in ctl or []
           if r.get("ok") != "1" or r.get("map_tiles_differ") != "0"
           or r.get("decoded_elems_differ") != "0" or r.get("study_bytes") != r.get("real_bytes")]
    if not ctl:
        why.append("no alloc_control.csv rows")
    if bad:
        why.append("exactness control failed for " + ", ".join(bad))
    text = None
    try:
        mod = load_module(os.path.join(REPO, "plots", "alloc_study.py"), "alloc_study")
        text, _ = mod.summarize(rows, 800, parts=("relmse", "wins"))
    except (OSError, ValueError, KeyError, SyntaxError) as e:
        why.append("plots/alloc_study.py could not summarize: %s" % e)
    ok = not why
    return {"status": "ok" if ok else "fail", **({} if ok else {"reason": "; ".join(why)}),
            "exit_status": rc, "figures_exit_status": rc_fig,
            "controls": len(ctl or []), "control_failures": bad, "markdown": text,
            "images": images(out_dir, "data/alloc_study", ["alloc_study_gap"]),
            "source": "data/alloc_study/alloc_study.csv"}


def sim_missing(sim_ok):
    return None if sim_ok else not_available(
        "tahq-sim was not built (sgd_sim needs GSL >= 2.7 and OpenBLAS; CMake printed "
        "'sgd_sim skipped')")


def section_convergence(out_dir, rc, sim_ok):
    if not sim_ok:
        return sim_missing(sim_ok)
    sim = os.path.join(out_dir, "data", "sim")
    fit, why = read_csv(os.path.join(sim, "converge_fit.csv"))
    summ, why2 = read_csv(os.path.join(sim, "converge_summary.csv"))
    verdict, why3 = read_csv(os.path.join(sim, "converge_verdict.csv"))
    tune, _ = read_csv(os.path.join(sim, "converge_tuning.csv"))
    model, _ = read_csv(os.path.join(sim, "converge_model.csv"))
    local, _ = read_csv(os.path.join(sim, "converge_local.csv"))
    if fit is None or summ is None or verdict is None:
        return not_available("tahq-sim converge (exit %d): %s" % (rc, why or why2 or why3),
                             exit_status=rc)
    slopes = [{k: num(v) for k, v in r.items()} for r in fit]
    ratios = [{"method": r["method"], "T": num(r["T"]), "eta": num(r["eta"]),
               "mean_avg": num(r["mean_avg"]), "mean_min": num(r["mean_min"]),
               "ratio_avg_vs_fp32": num(r["ratio_avg_vs_fp32"]),
               "ratio_min_vs_fp32": num(r["ratio_min_vs_fp32"])} for r in summ]
    tuning = [{k: num(v) for k, v in r.items()} for r in (tune or [])]
    verdicts = [{k: (v if k in ("method", "rate", "floor", "gd_agrees", "verdict", "paper_claim") else num(v))
                 for k, v in r.items()} for r in verdict]
    models = [{k: (v if k in ("method", "model") else num(v)) for k, v in r.items()}
              for r in (model or [])]
    locals_ = [{k: (v if k == "method" else num(v)) for k, v in r.items()} for r in (local or [])]
    return {"status": "ok" if rc == 0 else "fail", "exit_status": rc, "verdicts": verdicts,
            "models": models, "local_slopes": locals_, "slopes": slopes,
            "per_T": ratios, "tuning": tuning,
            "images": images(out_dir, "data/sim", ["sim_converge", "sim_local"]),
            "source": "data/sim/converge_verdict.csv, converge_model.csv, converge_local.csv, "
                      "converge_summary.csv, converge_fit.csv, converge_tuning.csv"}


def md_convergence(s):
    """The convergence section's body: the verdict per method (rate and floor,
    with the directly measured floor beside the fitted one), then the data."""
    L = []
    L.append("Model: E(T), the seed mean of (1/T) sum_{t<T} |grad f(w_t)|^2, expands in "
             "eta = c/sqrt(T) as a T^-1/2 + a2/T + a3 T^-3/2 + ... + b, where b is the floor that "
             "the codec's bias sets. The rate is the free exponent beta of a T^-beta + a2/T + b; "
             "its verdict is worded by what the horizons resolve: \"band\" when the interval lies "
             "within [3/8, 5/8], which means only that the decay exponent is not resolved from any "
             "in [0.35, 0.65] (the controls fp32@0.35, fp32@0.4 and fp32@0.6 land there), "
             "\"different\" when it lies outside, \"not resolved\" otherwise. The floor's "
             "interval joins the fits with beta fixed at 1/2, 0.35 and 0.65 and free (each also "
             "without the smallest T), so a slower decay is not taken for a floor. Intervals: 95% "
             "bootstrap over seeds; no verdict from fewer than 5 seeds. The direct floor is "
             "|grad f|^2 at the Polyak average of full-batch gradient descent with the codec, with "
             "its range over two step sizes; a direct floor outside the fitted interval fails the "
             "run. The PASS of this report is about these checks; the paper's claim has its own "
             "table below.")
    L.append("")
    L += table(["method", "rate (resolution)", "beta [CI]", "floor b [CI]", "direct floor (GD) [range]",
                "fit and GD agree", "verdict"],
               [[v["method"] + ("" if v.get("schedule") in (None, 0.5) else
                                " (eta ~ T^-%s)" % fmt(v.get("schedule"))),
                 v["rate"], "%s [%s, %s]" % (fmt(v["beta"], 3), fmt(v["beta_lo"], 3),
                                             fmt(v["beta_hi"], 3)),
                 "%s [%s, %s]" % (fmt(v["b"]), fmt(v["b_lo"]), fmt(v["b_hi"])),
                 "%s [%s, %s]" % (fmt(v["b_gd"]), fmt(v["b_gd_lo"]), fmt(v["b_gd_hi"])),
                 v["gd_agrees"], v["verdict"]] for v in s["verdicts"]])
    if any("paper_claim" in v for v in s["verdicts"]):
        dend = s.get("delta_end", {})
        L.append("")
        L.append("The paper's claim, \"SGD reaches a stationary point at O(1/sqrt T)\", per method "
                 "(a finding about the method, not a check of the tool: a method can fail it while "
                 "the report passes). Not reproduced when the rate is shown different, the fit shows "
                 "a floor, or the direct floor is at least 5% of E at the largest T; reproduced to the "
                 "resolution when the rate is in the band, no floor is shown and the direct floor is "
                 "below 5% of E. delta: the relative bias at the last iterate of one SGD run "
                 "(tahq-sim delta --trajectory; the theory assumes delta >= 0.9).")
        L.append("")
        rows = []
        for v in s["verdicts"]:
            claim = v.get("paper_claim", "")
            d = dend.get(v["method"])
            rows.append([v["method"] + ("" if v.get("schedule") in (None, 0.5) else
                                        " (eta ~ T^-%s)" % fmt(v.get("schedule"))),
                         claim if claim.startswith("reproduced") else "**%s**" % claim,
                         "%s [%s, %s]" % (fmt(v["b"]), fmt(v["b_lo"]), fmt(v["b_hi"])),
                         "%s (%s%% of E(T_max) = %s)" % (
                             fmt(v["b_gd"]), fmt(100 * v["b_gd"] / v["E_Tmax"], 3)
                             if isinstance(v.get("E_Tmax"), (int, float)) and v["E_Tmax"] else "-",
                             fmt(v.get("E_Tmax"))),
                         "%s [%s, %s]" % (fmt(d["delta"]), fmt(d["delta_lo"]), fmt(d["delta_hi"]))
                         if d else "-"])
        L += table(["method", "O(1/sqrt T) to a stationary point", "floor b [CI]",
                    "direct floor", "delta at the end of the trajectory [CI]"], rows)
    if s.get("local_slopes"):
        meths = []
        for r in s["local_slopes"]:
            if r["method"] not in meths:
                meths.append(r["method"])
        octs = []
        for r in s["local_slopes"]:
            if (r["T_lo"], r["T_hi"]) not in octs:
                octs.append((r["T_lo"], r["T_hi"]))
        by = {(r["method"], r["T_lo"]): r for r in s["local_slopes"]}
        L.append("")
        L.append("Local slope per octave, d ln E / d ln T (-0.5 for T^-1/2; a floor pulls it "
                 "towards 0 as T grows):")
        L.append("")
        L += table(["method"] + ["%s-%s" % (fmt(a), fmt(b)) for a, b in octs],
                   [[m] + [fmt(by.get((m, a), {}).get("slope"), 3) for a, _ in octs]
                    for m in meths])
    methods = []
    for r in s["per_T"]:
        if r["method"] not in methods:
            methods.append(r["method"])
    Ts = sorted({r["T"] for r in s["per_T"]})
    by = {(r["method"], r["T"]): r for r in s["per_T"]}
    L.append("")
    L.append("Mean over seeds of the average |grad f(w_t)|^2:")
    L.append("")
    L += table(["T"] + methods, [[T] + [by.get((m, T), {}).get("mean_avg") for m in methods]
                                 for T in Ts])
    L.append("")
    L.append("One power law over the whole range (ln of the seed mean against ln T; not the "
             "verdict, which the floor and the T^-1 term make differ from it):")
    L.append("")
    L += table(["method", "quantity", "slope", "95% CI", "c", "gamma"],
               [[r["method"], r["quantity"] + " |grad f|^2", r["slope"],
                 "[%s, %s]" % (fmt(r["ci_lo"]), fmt(r["ci_hi"])), r["c"], r["gamma"]]
                for r in s["slopes"]])
    if s.get("tuning"):
        L.append("")
        L.append("Tuning grid (mean of the average |grad f|^2 over the tuning seeds; "
                 "the chosen c is the smallest):")
        L.append("")
        gam = sorted({r["gamma"] for r in s["tuning"]})
        tb = {(r["method"], r["gamma"]): r["mean_avg_grad2"] for r in s["tuning"]}
        tm = []
        for r in s["tuning"]:
            if r["method"] not in tm:
                tm.append(r["method"])
        L += table(["method"] + ["gamma=%s" % fmt(g) for g in gam],
                   [[m] + [tb.get((m, g)) for g in gam] for m in tm])
    return L


def section_delta(out_dir, rc, sim_ok):
    if not sim_ok:
        return sim_missing(sim_ok)
    rows, why = read_csv(os.path.join(out_dir, "data", "sim", "delta.csv"))
    if rows is None:
        return not_available("tahq-sim delta (exit %d): %s" % (rc, why), exit_status=rc)
    st, why = table_status(rc, "tahq-sim delta", rows, ("fwd_bits_per_elem", "bwd_bits_per_elem",
                                                        "alpha", "delta", "sigma2"))
    return {"status": st, **({"reason": why} if why else {}), "exit_status": rc,
            "rows": [{k: num(v) for k, v in r.items()} for r in rows],
            "images": images(out_dir, "data/sim", ["sim_delta"]),
            "source": "data/sim/delta.csv"}


def section_delta_trajectory(out_dir, rc, sim_ok):
    """delta measured where the iterates go (one SGD run per codec), and the
    |grad f|^2 at which it first falls below 0.9 and below 0 (nan: it does
    not along the run, which is a finding, not a missing value)."""
    if not sim_ok:
        return sim_missing(sim_ok)
    d = os.path.join(out_dir, "data", "sim")
    rows, why = read_csv(os.path.join(d, "delta_traj.csv"))
    if rows is None:
        return not_available("tahq-sim delta --trajectory (exit %s): %s" % (rc, why),
                             exit_status=rc)
    cross, why_c = read_csv(os.path.join(d, "delta_cross.csv"))
    if cross is None:
        return not_available("tahq-sim delta --trajectory wrote no delta_cross.csv: " + why_c,
                             exit_status=rc)
    st, why = table_status(rc, "tahq-sim delta --trajectory", rows,
                           ("t", "grad2", "delta", "delta_lo", "delta_hi"))
    if st == "ok":
        st, why = table_status(rc, "tahq-sim delta --trajectory", cross, ("grad2_end",))
    return {"status": st, **({"reason": why} if why else {}), "exit_status": rc,
            "rows": [{k: num(v) for k, v in r.items()} for r in rows],
            "crossings": [{k: num(v) for k, v in r.items()} for r in cross],
            "source": "data/sim/delta_traj.csv, data/sim/delta_cross.csv"}


SIM_TABLES_DIR = os.path.join(REPO, "results", "sgd_sim", "sim-tables")


def section_floor_range(src=SIM_TABLES_DIR):
    """The committed `tahq-sim floor --range` (about half an hour of CPU: the
    report reads its CSVs and runs nothing; sgd_sim/tables.sh reruns it and
    the CTest sim_tables checks a quick run of the current binary against
    the committed reference). "ok" when every method has a finite range and
    its estimate's own error is below 5%, the bound floor --range itself
    enforces; "fail" otherwise."""
    summ, why = read_csv(os.path.join(src, "floor_range_summary.csv"))
    if summ is None:
        return not_available("no committed floor --range: %s" % why)
    det, why2 = read_csv(os.path.join(src, "floor_range.csv"))
    if det is None:
        return not_available("floor --range summary without its rows: %s" % why2)
    st, why = table_status(0, "tahq-sim floor --range", summ, ("b_min", "b_max", "max_rel_error",
                                                                "bytes_per_elem"))
    over = [r["method"] for r in summ if isinstance(num(r.get("max_rel_error")), float)
            and not num(r["max_rel_error"]) < 0.05]
    if st == "ok" and over:
        st, why = "fail", "estimate's own error not below 5%: " + ", ".join(over)
    return {"status": st, **({"reason": why} if why else {}),
            "summary": [{k: num(v) for k, v in r.items()} for r in summ],
            "rows": [{k: num(v) for k, v in r.items()} for r in det],
            "source": shown(src) + "/floor_range_summary.csv, floor_range.csv (committed; rerun: "
                      "sgd_sim/tables.sh BUILD 2 range)"}


def md_floor_range(s):
    L = ["Full-batch descent with the codec from w*, at the steps 1/L, 1/(4L) and 1/(32L) (SGD "
         "itself runs near 1/(16L)..1/(64L)), each continuing from the previous step's Polyak "
         "average, with the update in binary32 and in binary64. b = |grad f|^2 at the Polyak "
         "average of each phase's second half minus the batch-means estimate of that average's "
         "noise; \"own error\" is that estimate over b. The floor is the range, not one of its "
         "values.", ""]
    by = {}
    for r in s["rows"]:
        by[(r["method"], r["update"], r["step_over_1_over_L"])] = r
    steps = sorted({r["step_over_1_over_L"] for r in s["rows"]}, reverse=True)
    rows = []
    for r in s["summary"]:
        m = r["method"]
        cells = []
        for upd in ("binary32", "binary64"):
            cells.append(" / ".join(fmt(by[(m, upd, st)]["b"], 3) if (m, upd, st) in by else "-"
                                    for st in steps))
        iters = sorted({by[k]["iters"] for k in by if k[0] == m})
        rows.append([m, fmt(r["bytes_per_elem"], 4), "%s .. %s" % (fmt(r["b_min"], 3), fmt(r["b_max"], 3)),
                     "%.0f%%" % (100 * (r["b_max"] - r["b_min"]) / r["b_min"]) if r["b_min"] else "-",
                     cells[0], cells[1], "%.2g%%" % (100 * r["max_rel_error"]),
                     "%d..%d" % (iters[0], iters[-1]) if iters else "-"])
    L += table(["method", "bytes/elem", "floor range", "spread",
                "binary32: " + " / ".join("1/L" if x == 1 else "1/(%gL)" % (1 / x) for x in steps),
                "binary64: same steps", "own error (max)", "iterations per step"], rows)
    return L


PAIRED_DIR = os.path.join(REPO, "results", "sgd_sim", "train-paired")


def section_train_paired(out_dir, src=PAIRED_DIR):
    """The committed paired-seed sweep of tahq-train (hours of CPU: the report
    reads plots/train_paired.py's output and runs nothing). "ok" when every
    method's row parses with numbers; the verdicts are findings, not checks."""
    rows, why = read_csv(os.path.join(src, "paired.csv"))
    if rows is None:
        return not_available("no committed paired sweep: %s" % why)
    st, why = table_status(0, "plots/train_paired.py", rows, ("n", "mean", "sd", "ci95_lo", "ci95_hi",
                                                               "ci90_lo", "ci90_hi", "margin"))
    con, _ = read_csv(os.path.join(src, "paired_contrasts.csv"))
    pilot, _ = read_csv(os.path.join(src, "pilot.csv"))
    dst = os.path.join(out_dir, "data", "train-paired")
    os.makedirs(dst, exist_ok=True)
    if os.path.exists(os.path.join(src, "paired_diff.png")):
        shutil.copy(os.path.join(src, "paired_diff.png"), dst)
    return {"status": st, **({"reason": why} if why else {}),
            "rows": [{k: num(v) for k, v in r.items()} for r in rows],
            "contrasts": [{k: num(v) for k, v in r.items()} for r in (con or [])],
            "pilot": [{k: num(v) for k, v in r.items()} for r in (pilot or [])],
            "images": images(out_dir, "data/train-paired", ["paired_diff"]),
            "source": shown(src) + "/paired.csv (committed; rerun: scripts/train_paired.sh, "
                      "see its README.md)"}


def md_train_paired(s):
    rows = s["rows"]
    margin = rows[0]["margin"] if rows else None
    L = ["Validation loss at the last step minus fp32's in the same seed (same initialisation, "
         "windows and validation set), t-intervals over the seeds. Equivalence margin +-%s "
         "nats/byte, fixed before the runs; TOST at 5%% shows equivalence when the 90%% interval "
         "lies inside it. \"Smallest margin\" is the margin these seeds would show equivalence "
         "at. The setting and the design are in the folder's README." % fmt(margin), ""]
    L += table(["method", "seeds", "minus fp32 [95% CI]", "paired sd", "90% CI",
                "TOST at +-%s" % fmt(margin), "difference from 0", "detectable (80% power)",
                "smallest margin shown"],
               [[r["method"], r["n"], "%+.4f [%+.4f, %+.4f]" % (r["mean"], r["ci95_lo"], r["ci95_hi"]),
                 "%.4f" % r["sd"], "[%+.4f, %+.4f]" % (r["ci90_lo"], r["ci90_hi"]), r["tost"],
                 r["difference"], "%.4f" % r["mdd80"], "+-%.4f" % r["eq_margin"]] for r in rows])
    if s.get("pilot"):
        L.append("")
        L.append("The pilot (its seeds only): the paired sd per method and the seeds TOST at 5% "
                 "needs for 80% power at that sd, if the true difference were 0 and at the pilot's "
                 "mean (\"none\": no number of seeds).")
        L.append("")
        L += table(["method", "pilot seeds", "paired sd", "mean", "seeds needed if 0", "at the mean"],
                   [[r["method"], r["n"], "%.4f" % r["sd"], "%+.4f" % r["mean"], r["n_tost80_if_0"],
                     r["n_tost80"]] for r in s["pilot"]])
    if s.get("contrasts"):
        L.append("")
        L.append("Gain minus token allocation, paired in the same seeds (95% CI):")
        L.append("")
        L += table(["contrast", "seeds", "mean [95% CI]", "difference from 0"],
                   [[c["contrast"], c["n"], "%+.4f [%+.4f, %+.4f]" % (c["mean"], c["ci95_lo"], c["ci95_hi"]),
                     c["difference"]] for c in s["contrasts"]])
    return L


def section_throughput(out_dir, rc, sim_ok):
    if not sim_ok:
        return sim_missing(sim_ok)
    sim = os.path.join(out_dir, "data", "sim")
    rows, why = read_csv(os.path.join(sim, "throughput.csv"))
    if rows is None:
        return not_available("tahq-sim throughput (exit %d): %s" % (rc, why), exit_status=rc)
    st, why = table_status(rc, "tahq-sim throughput", rows,
                           ("bandwidth_bps", "tokens_per_s", "speedup_vs_fp32", "fwd_bytes",
                            "bwd_bytes"))
    assumptions = []
    ap = os.path.join(sim, "throughput_assumptions.txt")
    if os.path.exists(ap):
        with open(ap, encoding="utf-8") as f:
            assumptions = [ln.rstrip("\n") for ln in f if ln.strip()]
    return {"status": st, **({"reason": why} if why else {}), "exit_status": rc,
            "assumptions": assumptions,
            "rows": [{k: num(v) for k, v in r.items()} for r in rows],
            "images": images(out_dir, "data/sim", ["sim_throughput"]),
            "source": "data/sim/throughput.csv, throughput_assumptions.txt"}


def section_loss(out_dir, rc, sim_ok, ran):
    if not sim_ok:
        return sim_missing(sim_ok)
    if not ran:
        return not_available("the loss curves take minutes; they run with --full")
    rows, why = read_csv(os.path.join(out_dir, "data", "sim", "train_eval.csv"))
    if rows is None:
        return not_available("tahq-sim train (exit %d): %s" % (rc, why), exit_status=rc)
    st, why = table_status(rc, "tahq-sim train", rows, ("step", "eval_loss"))
    final = {}
    for r in rows:  # last evaluation per method
        final[r["method"]] = {"method": r["method"], "step": num(r["step"]),
                              "eval_loss": num(r["eval_loss"])}
    return {"status": st, **({"reason": why} if why else {}), "exit_status": rc,
            "final_eval": list(final.values()),
            "images": images(out_dir, "data/sim", ["sim_loss"]),
            "source": "data/sim/train_eval.csv"}


LINKS_DIR = os.path.join(REPO, "results", "sgd_sim", "slow-links")
NETBOUND_DIR = os.path.join(REPO, "results", "sgd_sim", "slow-links-netbound")


def netbound_part(out_dir, src=NETBOUND_DIR):
    """The network-bound sweeps (K = 2 and K = 4, issue 37): netbound.csv
    (every point with its paper-equivalent rate, speed-ups, model residuals),
    the verdict lines of netbound.txt and links_netbound.png; None when not
    committed."""
    rows, _ = read_csv(os.path.join(src, "netbound.csv"))
    if rows is None:
        return None
    verdicts = []
    p = os.path.join(src, "netbound.txt")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            verdicts = [ln.rstrip("\n") for ln in f if ln.startswith(("verdict", "  "))]
    dst = os.path.join(out_dir, "data", "links")
    os.makedirs(dst, exist_ok=True)
    if os.path.exists(os.path.join(src, "links_netbound.png")):
        shutil.copy(os.path.join(src, "links_netbound.png"), dst)
    return {"rows": [{k: num(v) for k, v in r.items()} for r in rows], "verdicts": verdicts,
            "images": images(out_dir, "data/links", ["links_netbound"]),
            "source": shown(src) + "/ (committed; see its README.md)"}


def section_slow_links(out_dir, src=LINKS_DIR):
    """The committed slow-link measurement (scripts/slow_links.sh needs root
    and a network namespace, and a long run: the report reads its
    results and runs nothing). "ok" when the summary and the model's points
    parse with numbers; the figures are copied into data/links/."""
    rows, why = read_csv(os.path.join(src, "summary.csv"))
    if rows is None:
        return not_available("no committed measurement: %s" % why)
    pts, why2 = read_csv(os.path.join(src, "links_model_points.csv"))
    if pts is None:
        return not_available("the measurement has no model calibration: %s" % why2)
    st, why = table_status(0, "slow_links summary", rows, ("link_mbps", "step_s_med", "tokens_per_s_med"))
    st2, why2 = table_status(0, "tahq-sim throughput --calibrate", pts,
                             ("measured_s", "model_overlap_s", "model_blocking_s", "model_protocol_s"))
    if st2 != "ok":
        st, why = st2, why2
    texts = {}
    for name in ("meta.txt", "links_projection.txt"):
        p = os.path.join(src, name)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                texts[name] = [ln.rstrip("\n") for ln in f]
    dst = os.path.join(out_dir, "data", "links")
    os.makedirs(dst, exist_ok=True)
    for n in ("links_measured", "links_epochs", "links_projection"):
        if os.path.exists(os.path.join(src, n + ".png")):
            shutil.copy(os.path.join(src, n + ".png"), dst)
    return {"status": st, **({"reason": why} if why else {}),
            "rows": [{k: num(v) for k, v in r.items()} for r in rows],
            "netbound": netbound_part(out_dir),
            "points": [{k: num(v) for k, v in r.items()} for r in pts],
            "meta": texts.get("meta.txt", []), "projection": texts.get("links_projection.txt", []),
            "images": images(out_dir, "data/links",
                             ["links_measured", "links_epochs", "links_projection", "links_netbound"]),
            "source": shown(src) + "/ (committed; rerun: scripts/slow_links.sh, see its README.md)"}


RELIABILITY_FILE = os.path.join(REPO, "results", "fuzz", "reliability.json")


def section_reliability(path=RELIABILITY_FILE):
    """The committed record of the long fuzz runs and the hostile-input
    tests (fuzz/run.sh runs for hours, the report reads its record and runs
    nothing). "ok" when every harness ran with 0 findings open and every
    attack test passed; "fail" otherwise."""
    d, why = read_json(path)
    if d is None:
        return not_available("no committed reliability record: %s" % why)
    try:
        fuzz = [{"harness": str(r["harness"]), "executions": int(r["executions"]),
                 "seconds": float(r["seconds"]), "findings": int(r["findings"]),
                 "open": int(r.get("open", 0)), "what": str(r.get("what", ""))}
                for r in d["fuzz"]]
        classes = [{"class": str(r["class"]), "inputs": int(r["inputs"]),
                    "passed": int(r["passed"]), "test": str(r.get("test", ""))}
                   for r in d["hostile_inputs"]]
    except (KeyError, TypeError, ValueError) as e:
        return not_available("%s: malformed record (%s)" % (shown(path), e))
    bad = [r["harness"] for r in fuzz if r["open"]] + \
          [r["class"] for r in classes if r["passed"] != r["inputs"]]
    out = {"status": "fail" if bad else "ok", "fuzz": fuzz, "hostile_inputs": classes,
           "fuzz_executions": sum(r["executions"] for r in fuzz),
           "notes": [str(x) for x in d.get("notes", [])],
           "source": shown(path) + " (committed; rerun: fuzz/run.sh, ctest -L attack)"}
    if bad:
        out["reason"] = "open findings or failed attacks: " + ", ".join(bad)
    return out


# Why a function is not given to WP (proofs/README.md, "Not proved by WP" and
# "Trusted base"); a name stats.json lists without an entry here is shown
# with a pointer to that file.
NOT_WP_WHY = {
    "tahq_encode": "carves typed views out of the caller's byte workspace, which WP's typed "
                   "model cannot relate; WP proves everything after the cast, encode_tiles; "
                   "Eva checks the wrapper",
    "tahq_paper_v1_encode": "the paper-v1 encoder: byte-workspace views and a pivot slot that "
                            "rests on two runs of the float gate agreeing; Eva and the paper-v1 "
                            "golden vectors check it",
    "tahq_bits_of": "a memcpy bit view, outside the typed model: trusted, Eva analyses it",
    "tahq_float_of": "a memcpy bit view, outside the typed model: trusted, Eva analyses it",
}
PROOF_FILES_ORDER = ("functions", "goals", "proved", "time_ms")


def load_module(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sha256_of(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def proof_inputs(root, globs, exclude):
    """{relative path: SHA-256} of the files the proof run's globs name now."""
    import glob
    rel = lambda g: {os.path.relpath(f, root) for f in glob.glob(os.path.join(root, g))}
    files = set().union(*[rel(g) for g in globs]) - set().union(set(), *[rel(g) for g in exclude])
    return {f: sha256_of(os.path.join(root, f)) for f in sorted(files)}


def admit_reason(root, rec):
    """(reason, still_there): the comment at a recorded `admit` annotation in
    the tree now (the comment after it on its line, else the comment block
    just above it); still_there is False when file:line no longer holds it."""
    path = os.path.join(root, "ref", rec.get("file", ""))
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None, False
    n = rec.get("line", 0)
    if not (1 <= n <= len(lines)) or not re.search(r"admit\s+%s\s*:" % re.escape(
            str(rec.get("name"))), lines[n - 1]):
        return None, False
    m = re.search(r"\*/\s*/\*\s*(.*?)\s*\*/\s*$", lines[n - 1])
    if m:
        return m.group(1).rstrip("."), True
    block = []
    i = n - 2
    while i >= 0 and not lines[i].strip().endswith("*/"):  # the annotation's own lines
        if lines[i].strip().startswith("/*@"):
            break
        i -= 1
    if i >= 0 and lines[i].strip().startswith("/*@"):
        i -= 1
    while i >= 0:
        t = lines[i].strip()
        if not (t.startswith("/*") or t.startswith("*")) or t.startswith("/*@"):
            break
        block.insert(0, re.sub(r"^/?\*+/?\s?|\s*\*/$", "", t).strip())
        if t.startswith("/*"):
            break
        i -= 1
    text = " ".join(x for x in block if x).rstrip(".")
    return (text or None), True


def section_proofs(stats_path, root=REPO):
    """The proof status from proofs/stats.json, checked against the tree now:
    "ok" only when every WP goal is proved, every Eva alarm is in the
    expected list of proofs/README.md, every axiom is checked by
    tests/acsl_axioms.c, and every file the proofs read is byte for byte the
    one they last ran on (SHA-256 recorded by proofs/run.sh); "stale" when
    one of them changed since, "unknown" when stats.json records no digests."""
    if not os.path.exists(stats_path):
        return not_available("%s does not exist (the proofs runner writes it)"
                             % shown(stats_path))
    d, why = read_json(stats_path)
    if d is None:
        return not_available(why)
    if not isinstance(d, dict) or not isinstance(d.get("total"), dict):
        return not_available("%s has no 'total' object: not written by proofs/run.sh"
                             % shown(stats_path))
    total = d["total"]
    files = d.get("files") or {}
    fail, notes = [], []
    goals, proved = total.get("goals"), total.get("proved")
    if not isinstance(goals, int) or goals <= 0 or proved != goals:
        fail.append("WP proved %s of %s goals" % (proved, goals))
    fsum = (sum(f.get("goals", 0) for f in files.values()),
            sum(f.get("proved", 0) for f in files.values()))
    if fsum != (goals, proved):
        fail.append("the per-file goals (%d proved of %d) do not add up to the total"
                    % (fsum[1], fsum[0]))
    # Eva against the expected list (the same parser as the proofs' own gate)
    eva = d.get("eva") or {}
    alarms = eva.get("alarms") or []
    readme = os.path.join(root, "proofs", "README.md")
    try:
        expected = load_module(os.path.join(root, "proofs", "stats.py"),
                               "tahq_proofs_stats").expected_eva(readme)
    except Exception as e:  # noqa: BLE001 - reported, not raised
        expected = None
        fail.append("cannot read the expected Eva alarms (%s)" % e)
    raised = sorted({(a.get("function"), a.get("alarm")) for a in alarms})
    unexpected = [p for p in raised if expected is not None and p not in expected]
    unraised = sorted(p for p in (expected or set()) if p not in raised)
    if not eva.get("run"):
        fail.append("Eva did not run in the recorded proof run")
    if unexpected:
        fail.append("Eva alarms not in the expected list: " +
                    ", ".join("%s %s" % p for p in unexpected))
    # axioms: each must be checked by the acsl_axioms test
    axioms = d.get("axioms") or []
    try:
        with open(os.path.join(root, "tests", "acsl_axioms.c"), encoding="utf-8") as f:
            ax_src = f.read()
    except OSError:
        ax_src = ""
    untested = [a.get("name") for a in axioms if '{"%s",' % a.get("name") not in ax_src]
    if untested:
        fail.append("axioms not checked by tests/acsl_axioms.c: " + ", ".join(untested))
    admitted = []
    moved = []
    for rec in d.get("admitted") or []:
        reason, there = admit_reason(root, rec)
        admitted.append({"where": "%s:%s" % (rec.get("file"), rec.get("line")),
                         "name": rec.get("name"), "reason": reason})
        if not there:
            moved.append("%s:%s %s" % (rec.get("file"), rec.get("line"), rec.get("name")))
    # provenance: the files the proofs read, then and now
    last = d.get("last_run")
    stale_files = []
    if not isinstance(last, dict) or not isinstance(last.get("input_sha256"), dict):
        freshness = "unknown"
        fresh_why = ("stats.json predates recording: it holds no commit, date or input "
                     "digests (proofs/run.sh records them when it next writes it)")
    else:
        then = last["input_sha256"]
        now = proof_inputs(root, last.get("input_globs") or [], last.get("input_exclude") or [])
        for f in sorted(set(then) | set(now)):
            if f not in now:
                stale_files.append(f + " (removed)")
            elif f not in then:
                stale_files.append(f + " (new)")
            elif then[f] != now[f]:
                stale_files.append(f)
        if not then:
            freshness, fresh_why = "unknown", "stats.json records no input file"
        elif stale_files:
            freshness = "stale"
            fresh_why = ("changed since the proofs ran (commit %s, %s): %s"
                         % ((last.get("commit") or "?")[:7], last.get("date_utc"),
                            ", ".join(stale_files)))
        else:
            freshness = "ok"
            fresh_why = None
    if moved and freshness == "ok":
        freshness = "stale"
        fresh_why = "admitted annotations no longer at their recorded lines: " + ", ".join(moved)
    if fail:
        status, reason = "fail", "; ".join(fail + ([fresh_why] if fresh_why else []))
    elif freshness != "ok":
        status, reason = freshness, fresh_why
    else:
        status, reason = "ok", None
    internal = ""
    try:
        with open(os.path.join(root, "ref", "internal.h"), encoding="utf-8") as f:
            internal = f.read()
        with open(os.path.join(root, "tests", "CMakeLists.txt"), encoding="utf-8") as f:
            tests_cmake = f.read()
    except OSError:
        tests_cmake = ""
    scalar = bool(re.search(r"#if defined\(__FRAMAC__\) && !defined\(TAHQ_SCALAR_ONLY\)\s*\n"
                            r"#define TAHQ_SCALAR_ONLY 1", internal)
                  and "NAME determinism_builds" in tests_cmake
                  and re.search(r"foreach\(variant IN ITEMS default[^)]*scalar\)", tests_cmake))
    out = {"status": status, "source": shown(stats_path),
           "total": total, "files": files,
           "not_given_to_wp": [{"function": n, "why": NOT_WP_WHY.get(n)}
                               for n in d.get("not_given_to_wp") or []],
           "admitted": admitted, "axioms": len(axioms),
           "axiom_files": sorted({a.get("file") for a in axioms}), "axioms_untested": untested,
           "eva": {"run": bool(eva.get("run")), "alarms": len(alarms),
                   "pairs": ["%s %s" % p for p in raised],
                   "unexpected": ["%s %s" % p for p in unexpected],
                   "expected_not_raised": ["%s %s" % p for p in unraised],
                   "expected": None if expected is None else len(expected)},
           "run": d.get("run"), "last_run": None if not isinstance(last, dict) else
           {k: v for k, v in last.items() if k != "input_sha256"},
           "inputs": None if not isinstance(last, dict) else len(last.get("input_sha256") or {}),
           "inputs_changed": stale_files, "freshness": freshness,
           "scalar_build_checked": scalar,
           "git_last_commit": first_line(["git", "-C", root, "log", "-1",
                                          "--format=%h (%cd)", "--date=format:%Y-%m-%d %H:%M %z",
                                          "--", os.path.relpath(stats_path, root)])}
    if reason:
        out["reason"] = reason
    return out


def md_proofs(s):
    """The proof section's body: 25 lines whatever stats.json holds (one per
    topic, one table row per file)."""
    L = []
    t = s["total"]
    by = t.get("by", {})
    lr = s.get("last_run") or {}
    run = s.get("run") or {}
    if lr:
        L.append("- Last proof run: commit `%s`%s, %s; WP %s s, Eva %s s wall (cache %s). Its "
                 "%s input files (ref/, include/, proofs/theorems.c, proofs/eva_driver.c): %s." %
                 ((lr.get("commit") or "?")[:7],
                  "" if lr.get("inputs_as_committed") is not False else " plus uncommitted edits",
                  lr.get("date_utc"), run.get("wp_wall_s"), run.get("eva_wall_s"),
                  lr.get("cache"), s.get("inputs"),
                  "**changed since**: " + ", ".join(s["inputs_changed"]) if s["inputs_changed"]
                  else "each unchanged in this tree (SHA-256)"))
    else:
        L.append("- Last proof run: not recorded in stats.json (%s; WP %s s, Eva %s s wall, "
                 "cache %s), so whether the proofs match this tree is unknown." %
                 ("the file was last committed in %s" % s["git_last_commit"]
                  if s.get("git_last_commit") else "no git history of it",
                  run.get("wp_wall_s"), run.get("eva_wall_s"), run.get("cache")))
    L.append("- WP: **%s / %s** goals proved: Qed %s, Z3 %s, CVC5 %s, WP tactics %s; prover "
             "time %.1f s (a cached result counts 0). %s" %
             (t.get("proved"), t.get("goals"), by.get("qed"), by.get("Z3"), by.get("CVC5"),
              by.get("script"), (t.get("prover_time_ms") or 0) / 1000.0,
              "WP proves the scalar build (`TAHQ_SCALAR_ONLY`, which `ref/internal.h` sets "
              "under Frama-C); the vector paths are checked against it by `determinism_builds` "
              "(default, -O0, -O3 and scalar builds give the same bytes)."
              if s.get("scalar_build_checked") else
              "Which build WP proves could not be confirmed from ref/internal.h and "
              "tests/CMakeLists.txt."))
    L.append("- Not given to WP: " + "; ".join(
        "`%s`: %s" % (n["function"], n["why"] or "see proofs/README.md")
        for n in s["not_given_to_wp"]) + ".")
    L.append("- Axioms: %d (%s), each evaluated in exact integer arithmetic by the CTest test "
             "`acsl_axioms` (tests/acsl_axioms.c)%s." %
             (s["axioms"], ", ".join(s["axiom_files"]) or "-",
              "" if not s["axioms_untested"] else "; **not checked there**: " +
              ", ".join(s["axioms_untested"])))
    e = s["eva"]
    if e["run"]:
        L.append("- Eva: %d alarms on %d (function, kind) pairs; %s; expected but not raised: "
                 "%s." % (e["alarms"], len(e["pairs"]),
                          ("**not in the expected list: %s**" % ", ".join(e["unexpected"]))
                          if e["unexpected"] else
                          "each in the %s-entry expected list of proofs/README.md"
                          % e["expected"],
                          ", ".join(e["expected_not_raised"]) or "none"))
    else:
        L.append("- Eva: did not run in the recorded proof run.")
    L.append("- Admitted annotations (%d, assumed, not proved; the reason is the code's "
             "comment): " % len(s["admitted"]) + "; ".join(
                 "`%s` %s: %s" % (a["where"], a["name"], a["reason"] or "**not at that line now**")
                 for a in s["admitted"]) + ".")
    L.append("")
    rows = [[k, v.get("functions"), v.get("goals"), v.get("proved"),
             "%.1f" % ((v.get("time_ms") or 0) / 1000.0)] for k, v in sorted(s["files"].items())]
    L += table(["file", "functions", "goals", "proved", "prover time (s)"], rows)
    return L


def first_line(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        return p.stdout.decode("utf-8", "replace").splitlines()[0].strip()
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def section_machine(build, mode, steps, started, load0):
    cpu = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    os_name = None
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for ln in f:
                if ln.startswith("PRETTY_NAME="):
                    os_name = ln.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    cc, build_type = None, None
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for ln in f:
                if ln.startswith("CMAKE_C_COMPILER:"):
                    cc = ln.split("=", 1)[1].strip()
                elif ln.startswith("CMAKE_BUILD_TYPE:"):
                    build_type = ln.split("=", 1)[1].strip()
    except OSError:
        pass
    commit = first_line(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    try:
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               timeout=10).stdout.strip() != b""
    except (OSError, subprocess.SubprocessError):
        dirty = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    # ok only when every step ran and exited 0 and the facts below were read
    why = []
    failed = ["%s (exit %s)" % (t["name"], t["exit_status"]) for t in steps if t["exit_status"]]
    if failed:
        why.append("steps that exited non-zero: " + ", ".join(failed))
    unread = [k for k, v in (("CPU model", cpu), ("OS", os_name), ("compiler", cc),
                             ("build type", build_type), ("git commit", commit)) if not v]
    if unread:
        why.append("could not read: " + ", ".join(unread))
    return {"status": "fail" if why else "ok", **({"reason": "; ".join(why)} if why else {}),
            "date_utc": started, "mode": mode,
            "cpu_model": cpu, "logical_cpus": os.cpu_count(), "cpus_usable": affinity,
            "load_average_at_start": load0,
            "os": os_name, "kernel": platform.release(), "machine": platform.machine(),
            "compiler": (first_line([cc, "--version"]) if cc else None) or cc,
            "compiler_path": cc, "build_dir": shown(build),
            "build_type": build_type, "git_commit": commit, "git_tracked_changes": dirty,
            "python": platform.python_version(), "steps": steps}


# ---------------------------------------------------------------- Markdown


def fmt(v, digits=4):
    if v is None or v == "":
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        # Enough digits that rounding makes no claim the number does not
        # make: the distance to the nearest integer is shown to within 5%,
        # so 0.999995 prints as 0.999995 (not 1), 2.99999 not as 3, and a
        # value that is not an integer never as one.
        if v in (float("inf"), float("-inf")) or abs(v) >= 1e15:
            return "%.*g" % (digits, v)
        n = round(v)
        for d in range(digits, 18):
            t = "%.*g" % (d, v)
            if v == n or abs((float(t) - n) - (v - n)) <= 0.05 * abs(v - n):
                return t
        return repr(v)
    return str(v)


def cell(text):
    # a bare '|' (as in |grad f|^2) would end a Markdown table cell
    return text.replace("|", "\\|")


def table(header, rows):
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(cell(fmt(x)) for x in r) + " |")
    return out


def md_section(key, title, s):
    L = ["", "## %s" % title, ""]
    st = s.get("status")
    if st == "not available":
        L.append("**not available**: %s" % s.get("reason"))
        return L
    if s.get("no_data"):
        L.append("**FAIL**: %s" % s.get("reason"))
        return L
    L.append("Status: **%s**%s%s" % (st.upper() if st == "fail" else st,
                                      "" if not s.get("source") else " (from `%s`)" % s["source"],
                                      "" if st == "ok" or not s.get("reason")
                                      else ": " + s["reason"]))
    L.append("")
    if key == "verification":
        L.append("`%s` on %s %s: %s" % ("tahq report", s.get("input"), s.get("shape"),
                                        s.get("verdict")))
        L.append("")
        L += table(["configuration", "bytes", "bits/elem", "rel MSE", "SQNR dB", "max |err|/bound",
                    "flagged tiles", "ok"],
                   [[r["name"], r["bytes"], r["bits_per_element"], r["rel_mse"], r["sqnr_db"],
                     r["max_err_over_bound"], r["n_flagged"], r["ok"]] for r in s["rows"]])
    elif key == "conformance":
        sm = s.get("summary", {})
        L.append("Set `%s`, mode `%s`: %s cases, %s passed, %s failed." %
                 (s.get("set"), s.get("mode"), sm.get("cases"), sm.get("passed"),
                  sm.get("failed")))
        if s.get("failed_cases"):
            L.append("")
            L.append("Failed: " + ", ".join("`%s`" % c for c in s["failed_cases"]))
    elif key == "bounds":
        L.append("%s points (%s sweep), %s failed, largest max |error|/bound %s." %
                 (s.get("points_run"), s.get("mode"), s.get("failed"),
                  fmt(s.get("max_err_over_bound"), 7)))
        L.append("")
        L.append("Paper operating point per input distribution:")
        L.append("")
        L += table(["input", "bits/elem", "rel MSE", "SQNR dB", "max |err|/bound",
                    "on Pareto front", "best config at <= its bits", "best/paper rel MSE",
                    "rel MSE tau=0", "rel MSE tau=inf"],
                   [[h["dist"], h["bits_per_element"], h["rel_mse"], h["sqnr_db"],
                     h["max_err_over_bound"], h["on_pareto_front"],
                     h["best_at_or_below_paper_bits"], h["best_over_paper_rel_mse"],
                     h["rel_mse_tau0"], h["rel_mse_tau_inf"]] for h in s["headline"]])
    elif key == "alloc_study":
        L.append("Which tiles get the low width? Each policy at the message size of SPEC token "
                 "allocation (every byte counted, precision map included), scored exactly from two "
                 "uniform encodes; %d real --alloc tile/token/gain encodes matched that reconstruction "
                 "bit for bit. The full study (LLM-like [1, 1024, 1536] and real tahq-train "
                 "activations too) is in `results/sgd_sim/alloc-study/README.md`." % s["controls"])
        L.append("")
        if s.get("markdown"):
            L += s["markdown"].rstrip("\n").split("\n")
    elif key == "convergence":
        L += md_convergence(s)
    elif key == "delta":
        L.append("1 - delta = |E g_hat - grad f|^2 / |grad f|^2 at w = (1 - alpha) w*; "
                 "sigma^2 = E|g_hat - E g_hat|^2.")
        L.append("")
        alphas = sorted({r["alpha"] for r in s["rows"]}, reverse=True)
        methods, by = [], {}
        for r in s["rows"]:
            if r["method"] not in methods:
                methods.append(r["method"])
            by[(r["method"], r["alpha"])] = r
        hdr = (["method", "fwd bits/elem", "bwd bits/elem"] +
               ["delta a=%s" % fmt(a) for a in alphas] + ["sigma^2 a=%s" % fmt(a) for a in alphas])
        rows = []
        for m in methods:
            r0 = by[(m, alphas[0])]
            rows.append([m, r0["fwd_bits_per_elem"], r0["bwd_bits_per_elem"]] +
                        [by.get((m, a), {}).get("delta") for a in alphas] +
                        [by.get((m, a), {}).get("sigma2") for a in alphas])
        L += table(hdr, rows)
    elif key == "floor_range":
        L += md_floor_range(s)
    elif key == "train_paired":
        L += md_train_paired(s)
    elif key == "delta_trajectory":
        L.append("delta at the iterates of one SGD run per codec (T = 2^14, seed 1); "
                 "stochastic rounding: unbiased U-statistic over 32 keys with a jackknife 95% CI. "
                 "The last columns give |grad f|^2 where delta first falls below 0.9 and "
                 "below 0 along the run (\"-\": it does not).")
        L.append("")
        ts = sorted({r["t"] for r in s["rows"]})
        show = [t for t in ts if t in (0, 512, 1024, 2048)] + ts[-1:]
        by = {(r["method"], r["t"]): r for r in s["rows"]}
        cr = {r["method"]: r for r in s["crossings"]}

        def finite_or_dash(v):
            return v if isinstance(v, (int, float)) and v == v else "-"

        def with_ci(r):
            if r is None:
                return None
            if r["delta_lo"] == r["delta_hi"]:
                return fmt(r["delta"])
            return "%s [%s, %s]" % (fmt(r["delta"]), fmt(r["delta_lo"]), fmt(r["delta_hi"]))
        rows = []
        for m in [r["method"] for r in s["crossings"]]:
            c = cr[m]
            rows.append([m] + [with_ci(by.get((m, t))) for t in show] +
                        [c["grad2_end"], finite_or_dash(c["grad2_at_delta_0.9"]),
                         finite_or_dash(c["grad2_at_delta_0"])])
        L += table(["codec"] + ["delta t=%s" % fmt(t) for t in show] +
                   ["|grad f|^2 at the end", "|grad f|^2 at delta = 0.9", "at delta = 0"], rows)
    elif key == "throughput":
        if s.get("assumptions"):
            L.append("Model and assumptions (as `tahq-sim throughput` states them):")
            L.append("")
            L.append("```")
            L += s["assumptions"]
            L.append("```")
            L.append("")
        methods, bws = [], []
        by = {}
        for r in s["rows"]:
            if r["method"] not in methods:
                methods.append(r["method"])
            if r["bandwidth_bps"] not in bws:
                bws.append(r["bandwidth_bps"])
            by[(r["codec"], r["bandwidth_bps"], r["method"])] = r
        sizes = {r["method"]: (r["fwd_bytes"], r["bwd_bytes"]) for r in s["rows"]}
        L += table(["method", "forward bytes / micro-batch", "backward bytes / micro-batch"],
                   [[m, sizes[m][0], sizes[m][1]] for m in methods])
        for codec in ("free", "cpu"):
            L.append("")
            L.append("Tokens/s and speedup vs fp32, codec time %s:" %
                     ("0 (GPU kernels)" if codec == "free" else "measured (single-thread C reference)"))
            L.append("")
            rows = []
            for b in bws:
                row = ["%g Mb/s" % (b / 1e6)]
                for m in methods:
                    r = by.get((codec, b, m))
                    row.append("-" if r is None else "%.0f (%sx)" % (r["tokens_per_s"],
                                                                    fmt(r["speedup_vs_fp32"], 3)))
                rows.append(row)
            L += table(["link"] + methods, rows)
    elif key == "slow_links":
        L.append("The measurement needs root, a private network namespace and about 20 minutes, so "
                 "the report reads the committed results and reruns nothing.")
        L.append("")
        if s.get("meta"):
            L.append("```")
            L += s["meta"]
            L.append("```")
            L.append("")
        by = {(r["link_mbps"], r["method"]): r for r in s["rows"]}
        links = sorted({r["link_mbps"] for r in s["rows"]}, reverse=True)
        L.append("Measured speed-ups (ratios of the median steady step times over the repeats, "
                 "same sweep):")
        L.append("")
        rows = []
        for l in links:
            t = by.get((l, "tah"), {})
            rows.append(["%g Mb/s" % l, t.get("step_s_med"), t.get("speedup_vs_fp32"),
                         t.get("speedup_vs_aqsgd_steady"), t.get("speedup_vs_aqsgd_first"),
                         by.get((l, "tah-tile"), {}).get("speedup_vs_fp32"),
                         by.get((l, "fp32"), {}).get("step_s_med")])
        L += table(["link", "TAH step s", "TAH over fp32", "TAH over AQ-SGD (steady)",
                    "TAH over AQ-SGD (1st epoch)", "TAH-tile over fp32", "fp32 step s"], rows)
        L.append("")
        for mode in ("overlap", "blocking", "protocol"):
            r = [abs(p["resid_" + mode]) for p in s["points"] if isinstance(p.get("resid_" + mode), (int, float))]
            if r:
                L.append("- model residuals, %s sends: RMS %.1f%%, max |r| %.1f%% over %d points" %
                         (mode, 100 * (sum(x * x for x in r) / len(r)) ** 0.5, 100 * max(r), len(r)))
        if s.get("projection"):
            L.append("")
            L.append("Projection to the paper's setting (as `tahq-sim throughput --calibrate` states it):")
            L.append("")
            L.append("```")
            L += [ln for ln in s["projection"] if ln.strip()]
            L.append("```")
        nb = s.get("netbound")
        if nb:
            L.append("")
            L.append("Where the link is the bottleneck (issue 37; %s): links of 2 to 50 Mbit/s, MTU 1500, "
                     "waiting ranks sleep, K = 2 and K = 4 (one namespace per rank, a veth pair per "
                     "boundary). Each rate is mapped to the paper's setting by equal fp32 "
                     "transfer/compute ratio (the derivation is in the folder's README). Speed-ups are "
                     "ratios of median steady step times; min..max over the repeats paired by repeat."
                     % nb["source"])
            L.append("")
            rows = []
            for r in nb["rows"]:
                if r.get("method") != "tah" or r.get("phase") != "steady":
                    continue
                rows.append([r["config"], "%g" % r["link_mbps"], "%.0f" % r["paper_equiv_mbps"],
                             "%.2f" % r["rho_fp32"],
                             "%.2f (%.2f..%.2f)" % (r["speedup_vs_fp32"], r["speedup_vs_fp32_min"],
                                                    r["speedup_vs_fp32_max"])
                             if isinstance(r.get("speedup_vs_fp32_min"), (int, float)) else "-",
                             "%.2f" % r["speedup_vs_aqsgd_steady"]
                             if isinstance(r.get("speedup_vs_aqsgd_steady"), (int, float)) else "-",
                             "%.2f" % r["speedup_vs_aqsgd_first"]
                             if isinstance(r.get("speedup_vs_aqsgd_first"), (int, float)) else "-",
                             "%+.0f%%" % (100 * r["resid_" + r["model_best"]])
                             if r.get("model_best") else "-"])
            L += table(["sweep", "link Mbit/s", "paper-equivalent Mbit/s", "fp32 transfer/compute",
                        "TAH over fp32", "TAH over AQ-SGD steady", "TAH over AQ-SGD 1st epoch",
                        "model residual (best send kind)"], rows)
            if nb["verdicts"]:
                L.append("")
                L.append("```")
                L += nb["verdicts"]
                L.append("```")
    elif key == "loss_curves":
        L += table(["method", "step", "full-data loss (uncompressed forward)"],
                   [[r["method"], r["step"], r["eval_loss"]] for r in s["final_eval"]])
    elif key == "reliability":
        L.append("Fuzzing (libFuzzer with ASan and UBSan): %s executions in all." %
                 "{:,}".format(s["fuzz_executions"]))
        L.append("")
        L += table(["harness", "what it checks", "executions", "seconds", "findings", "open"],
                   [[r["harness"], r["what"], "{:,}".format(r["executions"]), r["seconds"],
                     r["findings"], r["open"]] for r in s["fuzz"]])
        L.append("")
        L.append("Hostile inputs by class (each a CTest test that failed on the binary before "
                 "its fix):")
        L.append("")
        L += table(["class", "inputs", "passed", "test"],
                   [[r["class"], r["inputs"], r["passed"], r["test"]] for r in s["hostile_inputs"]])
        for n in s.get("notes", []):
            L.append("")
            L.append(n)
    elif key == "proofs":
        L += md_proofs(s)
    elif key == "machine":
        for k in ("date_utc", "mode", "cpu_model", "logical_cpus", "cpus_usable",
                  "load_average_at_start", "os", "kernel", "machine", "compiler", "build_dir",
                  "build_type", "git_commit", "git_tracked_changes", "python"):
            L.append("- %s: %s" % (k.replace("_", " "), fmt(s.get(k))))
        L.append("")
        L.append("Steps (wall time is inflated when other work shares the CPUs):")
        L.append("")
        L += table(["step", "exit", "wall s", "CPU user+sys s"],
                   [[t["name"], t["exit_status"], t["wall_s"], t["cpu_user_sys_s"]]
                    for t in s.get("steps", [])])
    for img in s.get("images", []):
        L.append("")
        L.append("![%s](%s)" % (os.path.splitext(os.path.basename(img))[0], img))
    return L


# ---------------------------------------------------------------- check


def check_report(out_dir):
    """Problems found in a report directory (empty list: valid)."""
    problems = []
    idx = os.path.join(out_dir, "index.md")
    rj = os.path.join(out_dir, "report.json")
    for p in (idx, rj):
        if not os.path.isfile(p):
            problems.append("%s is missing" % p)
    if problems:
        return problems
    try:
        with open(rj, encoding="utf-8") as f:
            rep = json.load(f)
    except ValueError as e:
        return ["report.json does not parse: %s" % e]
    with open(idx, encoding="utf-8") as f:
        md = f.read()
    secs = rep.get("sections") if isinstance(rep, dict) else None
    if not isinstance(secs, dict):
        return ["report.json has no 'sections' object"]
    for key, title in SECTIONS:
        s = secs.get(key)
        if not isinstance(s, dict):
            problems.append("report.json: section '%s' missing" % key)
            continue
        if s.get("status") not in STATUSES:
            problems.append("report.json: section '%s' has status %r" % (key, s.get("status")))
        if s.get("status") in ("not available", "stale", "unknown") and not s.get("reason"):
            problems.append("report.json: section '%s' is %s without a reason"
                            % (key, s.get("status")))
        if "## " + title not in md:
            problems.append("index.md: heading '## %s' missing" % title)
        for img in s.get("images", []):
            if not os.path.isfile(os.path.join(out_dir, img)):
                problems.append("report.json: %s lists %s, which does not exist" % (key, img))
    for bang, ln in re.findall(r"(!?)\[[^\]]*\]\(([^)\s]+)\)", md):
        if re.match(r"[a-z]+://", ln):
            continue
        target = os.path.join(out_dir, ln)
        if os.path.isabs(ln):
            problems.append("index.md links %s by absolute path" % ln)
        elif bang and not (os.path.isfile(target) and os.path.getsize(target) > 0):
            problems.append("index.md shows image %s, which does not exist or is empty" % ln)
        elif not os.path.exists(target):
            problems.append("index.md links %s, which does not exist" % ln)
    if not isinstance(rep.get("ok"), bool):
        problems.append("report.json: 'ok' missing")
    return problems


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(
        prog="plots/report.py",
        description="Run the tahq tools and write a report directory (index.md, report.json, "
                    "data/ with every tool output and plot).",
        epilog="Extra arguments after -- go to `tahq report` (e.g. -- --input x.npy).")
    ap.add_argument("--out", default=os.path.join(REPO, "report"),
                    help="report directory (default: report/ at the repository root)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"),
                    help="CMake build directory holding cli/tahq and sgd_sim/tahq-sim (build/)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="default: quick bound sweep, convergence T=2^8..2^12 for fp32 and tah, "
                        "delta and throughput (about a minute of CPU)")
    g.add_argument("--full", action="store_true",
                   help="full bound sweep, convergence of all 5 methods for T=2^8..2^16, "
                        "loss curves")
    g.add_argument("--smoke", action="store_true",
                   help="the smallest run that still fills every section (CTest)")
    ap.add_argument("--jobs", type=int, default=2, help="worker threads for the sweeps (2)")
    ap.add_argument("--proofs-stats", default=os.path.join(REPO, "proofs", "stats.json"),
                    help="the proofs runner's summary (proofs/stats.json)")
    ap.add_argument("--check", metavar="DIR",
                    help="only validate an existing report directory")
    ap.add_argument("report_args", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.check:
        problems = check_report(a.check)
        for p in problems:
            print("report check: FAIL: " + p)
        if not problems:
            print("report check: %s is complete (%d sections, JSON parses, every linked file "
                  "exists)" % (a.check, len(SECTIONS)))
        return 1 if problems else 0

    mode = "full" if a.full else "smoke" if a.smoke else "quick"
    out = os.path.abspath(a.out)
    build = os.path.abspath(a.build)
    tahq = os.path.join(build, "cli", "tahq")
    sim = os.path.join(build, "sgd_sim", "tahq-sim")
    if not os.access(tahq, os.X_OK):
        print("report: %s not found; build first (scripts/setup.sh, or cmake --build %s)"
              % (tahq, a.build), file=sys.stderr)
        return 1
    sim_ok = os.access(sim, os.X_OK)
    data = os.path.join(out, "data")
    # Only the folders this script writes are replaced, so --out may point at
    # a directory holding other files.
    for p in (data, os.path.join(out, "index.md"), os.path.join(out, "report.json")):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    os.makedirs(os.path.join(data, "sim"))
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    try:
        load0 = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load0 = None
    t_start = time.monotonic()
    c_start = os.times()

    # verification (text, json), conformance, bounds, alloc-study and its
    # figure; then the simulator's runs (five in full mode, four otherwise)
    # and its plots
    nsteps = 6 + (0 if not sim_ok else (6 if mode == "full" else 5))
    R = Runner(data, nsteps)
    j = str(max(1, a.jobs))
    rc_text = R.run("verification", [tahq, "report"] + a.report_args, "verify.txt", echo=True)
    rc_json = R.run("verification (json)", [tahq, "report", "--json"] + a.report_args,
                    "verify.json")
    rc_conf = R.run("conformance", [tahq, "conform", "--vectors", os.path.join(REPO, "golden", "v1"),
                                    "--run", "sh %s %s" % (os.path.join(REPO, "golden",
                                                                        "tahq_adapter.sh"), tahq),
                                    "--json"], "conform.json")
    bounds_args = [tahq, "bounds", "--full" if mode == "full" else "--quick", "--jobs", j,
                   "--out-dir", os.path.join(data, "bounds"), "--plots",
                   "--plots-dir", os.path.join(REPO, "plots")]
    if mode == "smoke":
        bounds_args += ["--dist", "llm"]
    rc_bounds = R.run("bounds", bounds_args, "bounds.txt")
    # the allocation study in its quick form: about a second, plus the figure
    ad = os.path.join(data, "alloc_study")
    alloc_args = [tahq, "alloc-study", "--out-dir", ad]
    if mode == "smoke":
        alloc_args += ["--synth-shape", "2x16x512", "--ratios", "600,800"]
    rc_alloc = R.run("alloc-study", alloc_args, "alloc_study.txt")
    rc_alloc_fig = R.run("alloc-study figure", ["sh", os.path.join(REPO, "plots", "alloc_study.sh"),
                                               "--gap-png", ad], "alloc_study_plots.txt")
    rc_conv = rc_delta = rc_traj = rc_tp = rc_train = None
    simdir = os.path.join(data, "sim")
    if sim_ok:
        so = ["--out", simdir, "--jobs", j]
        if mode == "full":
            rc_conv = R.run("convergence", [sim, "converge"] + so, "converge.txt")
            rc_delta = R.run("delta", [sim, "delta"] + so, "delta.txt")
            rc_traj = R.run("delta along the trajectory", [sim, "delta", "--trajectory"] + so,
                            "delta_traj.txt")
            rc_tp = R.run("throughput", [sim, "throughput"] + so, "throughput.txt")
            rc_train = R.run("loss curves", [sim, "train"] + so, "train.txt")
        else:
            conv = [sim, "converge", "--quick"] + so
            delta = [sim, "delta"] + so  # the whole codec table takes seconds
            if mode == "smoke":
                conv += ["--seeds", "3"]
                delta += ["--methods", "fp32,tah,aqsgd"]
            rc_conv = R.run("convergence", conv, "converge.txt")
            rc_delta = R.run("delta", delta, "delta.txt")
            # one SGD run per codec (the default eight)
            traj = [sim, "delta", "--trajectory"] + so
            if mode == "smoke":
                traj += ["--methods", "tah,tah-sr"]
            rc_traj = R.run("delta along the trajectory", traj, "delta_traj.txt")
            rc_tp = R.run("throughput", [sim, "throughput"] + so, "throughput.txt")
        R.run("sim plots", ["sh", os.path.join(REPO, "plots", "sim.sh"), simdir], "sim_plots.txt")

    sections = {
        "verification": section_verification(out, rc_text, rc_json),
        "conformance": section_conformance(out, rc_conf),
        "bounds": section_bounds(out, rc_bounds),
        "alloc_study": section_alloc_study(out, rc_alloc, rc_alloc_fig),
        "convergence": section_convergence(out, rc_conv, sim_ok),
        "delta": section_delta(out, rc_delta, sim_ok),
        "delta_trajectory": section_delta_trajectory(out, rc_traj, sim_ok),
        "floor_range": section_floor_range(),
        "train_paired": section_train_paired(out),
        "throughput": section_throughput(out, rc_tp, sim_ok),
        "loss_curves": section_loss(out, rc_train, sim_ok, mode == "full"),
        "slow_links": section_slow_links(out),
        "reliability": section_reliability(),
        "proofs": section_proofs(os.path.abspath(a.proofs_stats)),
    }
    # the paper-claim table of the convergence section shows delta at the end
    # of each codec's trajectory beside the floor
    traj = sections["delta_trajectory"]
    if isinstance(traj, dict) and traj.get("rows") and isinstance(sections["convergence"], dict):
        last = {}
        for r in traj["rows"]:
            if r["method"] not in last or r["t"] > last[r["method"]]["t"]:
                last[r["method"]] = r
        sections["convergence"]["delta_end"] = last
    c_end = os.times()
    total = {"wall_s": round(time.monotonic() - t_start, 1),
             "cpu_user_sys_s": round((c_end.children_user - c_start.children_user) +
                                     (c_end.children_system - c_start.children_system), 1)}
    sections["machine"] = section_machine(build, mode, R.steps + [dict(name="total", exit_status=0,
                                                                      **total)],
                                          started, load0)
    gate_fail = [k for k in GATING if sections[k]["status"] != "ok"]
    other_fail = [k for k, _ in SECTIONS if sections[k]["status"] == "fail" and k not in GATING]
    ok = not gate_fail
    rep = {"schema": "tahq-report/1", "generated_utc": started, "mode": mode, "ok": ok,
           "failed_sections": gate_fail + other_fail, "sections": sections}
    with open(os.path.join(out, "report.json"), "w", encoding="utf-8") as f:
        json.dump(rep, f, indent=1)
        f.write("\n")

    md = ["# tahq report", "",
          "Generated %s, mode `%s`, on %s. Every number below is copied from the tools' own "
          "output files in [data/](data/); `report.json` holds the same numbers." %
          (started, mode, sections["machine"].get("cpu_model") or "an unknown CPU"),
          "", "Verdict: **%s**" % ("PASS" if ok else "FAIL (%s)" % ", ".join(gate_fail)), ""]
    md += table(["section", "status"],
                [[t, sections[k]["status"] + (": " + sections[k]["reason"]
                                              if sections[k].get("reason") else "")]
                 for k, t in SECTIONS])
    for k, t in SECTIONS:
        md += md_section(k, t, sections[k])
    with open(os.path.join(out, "index.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")

    problems = check_report(out)
    for p in problems:
        log("internal check: " + p)
    log("%s in %.0f s wall, %.0f s CPU (user+sys)" % ("PASS" if ok else "FAIL: " +
                                                      ", ".join(gate_fail),
                                                      total["wall_s"], total["cpu_user_sys_s"]))
    if other_fail:
        log("simulator checks failed (reported, not gating): " + ", ".join(other_fail))
    print("report: open %s (data and plots in %s/, numbers in %s)" %
          (os.path.join(out, "index.md"), os.path.join(out, "data"),
           os.path.join(out, "report.json")))
    return 0 if ok and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
