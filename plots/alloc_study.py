#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tables of `tahq alloc-study` CSVs (no numbers recomputed: every value is a
column of the CSV, or a ratio of two of them).

usage: plots/alloc_study.py merge OUT.csv IN.csv[=RENAME]...
       plots/alloc_study.py summary CSV [--ratio R] [--md FILE] [--json FILE]

merge   concatenates CSVs with the same header; each input name is shortened
        (a .npy path becomes its file name without act_/.npy, prefixed by its
        folder when that is not the same for all) and, for synthetic inputs
        whose name repeats at another shape, suffixed with the shape.
summary writes markdown tables: the gap to the oracle of every policy x unit x
        scope at the budget of share R (800), the relative MSE of the main
        policies (as the issue's table), the per-token and bound metrics, and,
        over every (input, budget) pair, how often each policy beats both SPEC
        policies, split into synthetic / LLM-like / real inputs.
Exit status 0, 1 on unreadable or inconsistent input, 2 on usage errors.
"""

import csv
import json
import os
import sys

POLICIES = ["entropy", "inv-entropy", "range", "bound", "gain", "random"]
COMBOS = [("tile", "token"), ("tile", "sequence"), ("tile", "micro-batch"),
          ("token", "sequence"), ("token", "micro-batch")]


def die(msg, code=1):
    print("alloc_study.py: " + msg, file=sys.stderr)
    sys.exit(code)


def read(path, need="gap_to_oracle"):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        die("%s: %s" % (path, e))
    if not rows or need not in rows[0]:
        die("%s: not a tahq alloc-study CSV" % path)
    return rows


def short_name(name, all_dirs):
    if not name.endswith(".npy"):
        return name
    base = os.path.basename(name)[:-4]
    if base.startswith("act_"):
        base = base[4:]
    base = base.replace("_", "-")
    d = os.path.basename(os.path.dirname(name))
    return ("%s/%s" % (d, base)) if len(all_dirs) > 1 else base


def merge(out, ins):
    rows, header = [], None
    for spec in ins:
        path, _, rename = spec.partition("=")
        part = read(path, "input")
        with open(path, newline="", encoding="utf-8") as f:
            h = next(csv.reader(f))
        if header is None:
            header = h
        elif h != header:
            die("%s: header differs from the first CSV's" % path)
        for r in part:
            if rename:
                r["input"] = rename
        rows += part
    dirs = {os.path.dirname(r["input"]) for r in rows if r["input"].endswith(".npy")}
    shapes = {}
    for r in rows:
        shapes.setdefault(r["input"], set()).add((r["batch"], r["seq_len"], r["channels"]))
    for r in rows:
        n = r["input"]
        s = short_name(n, dirs)
        if not n.endswith(".npy") and len(shapes[n]) > 1:
            s = "%s-%sx%sx%s" % (n, r["batch"], r["seq_len"], r["channels"])
        r["input"] = s
    tmp = out + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, out)


def kind(name):
    if name.startswith("llm"):
        return "LLM-like"
    if name.startswith(("gauss", "laplace", "student-t")):
        return "synthetic"
    return "real"


def f(v):
    return float(v) if v not in ("", None) else None


def fmt_e(v):
    return "—" if v is None else "%.3e" % v


def fmt_pct(v):
    return "—" if v is None else "%+.1f%%" % (100.0 * v)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def summary(path, ratio, md_path, json_path):
    try:
        text, j = summarize(read(path), ratio, path)
    except ValueError as e:
        die(str(e))
    if md_path:
        with open(md_path + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(md_path + ".tmp", md_path)
    else:
        sys.stdout.write(text)
    if json_path:
        with open(json_path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(j, fh, indent=1)
        os.replace(json_path + ".tmp", json_path)


def summarize(rows, ratio, path="the CSV", parts=("gapkind", "relmse", "wins", "token", "gap")):
    """(markdown text, dict) of the tables named in parts; raises ValueError
    when the CSV lacks the budget r = ratio."""
    inputs = []
    for r in rows:
        if r["input"] not in inputs:
            inputs.append(r["input"])
    by = {}
    for r in rows:
        key = (r["input"], int(r["budget_r"]), r["policy"], r["unit"], r["scope"])
        by[key] = r
    budgets = sorted({int(r["budget_r"]) for r in rows})
    if ratio not in budgets:
        raise ValueError("%s has no budget r = %d (budgets: %s)" % (path, ratio, budgets))

    def get(i, b, p, u, s, col):
        r = by.get((i, b, p, u, s))
        return f(r[col]) if r else None

    def oracle(i, b, col="rel_mse"):
        for u in ("tile", "token"):
            v = get(i, b, "oracle", u, "micro-batch", col)
            if v is not None:
                return v
        return None

    shapes = {r["input"]: "[%s, %s, %s]" % (r["batch"], r["seq_len"], r["channels"]) for r in rows}
    out = []
    cfg = rows[0]
    out.append("Configuration: G = %s, %s/%s bits, tau = %s, %s metadata; budget = the SPEC "
               "token message at share r (whole message, precision map included); every "
               "policy gets the fewest low units that fit it."
               % (cfg["G"], cfg["hi_bits"], cfg["lo_bits"], cfg["tau"], cfg["meta"]))
    out.append("")
    out.append("Inputs: " + ", ".join("%s %s (%s)" % (i, shapes[i], kind(i)) for i in inputs) + ".")
    out.append("")
    head, secs = out, {}
    # 1. gap to the oracle, every row, at the main budget
    out = secs["gap"] = []
    out.append("**Gap to the oracle at r = %d** (relative MSE / oracle's - 1; the oracle row "
               "gives its relative MSE):" % ratio)
    out.append("")
    hdr = ["policy", "unit", "scope"] + inputs
    trs = []
    for p in POLICIES:
        for u, s in COMBOS:
            name = p
            if p == "entropy" and (u, s) == ("tile", "token"):
                name = "entropy = **SPEC tile**"
            if p == "entropy" and (u, s) == ("token", "sequence"):
                name = "entropy = **SPEC token**"
            trs.append([name, u, s] + [fmt_pct(get(i, ratio, p, u, s, "gap_to_oracle"))
                                       for i in inputs])
    trs.append(["**oracle**", "best", "micro-batch"] + [fmt_e(oracle(i, ratio)) for i in inputs])
    out.append(table(hdr, trs))
    out.append("")
    # 1b. the same, summarized per kind of input
    out = secs["gapkind"] = []
    kinds_present = [k for k in ("synthetic", "LLM-like", "real") if any(kind(i) == k for i in inputs)]
    out.append("**Gap to the oracle at r = %d per kind of input** (median, and min .. max over "
               "the inputs of that kind):" % ratio)
    out.append("")
    hdr = ["policy", "unit", "scope"] + ["%s (%d)" % (k, sum(kind(i) == k for i in inputs))
                                         for k in kinds_present]
    trs = []
    for p in POLICIES:
        for u, s in COMBOS:
            name = p
            if p == "entropy" and (u, s) == ("tile", "token"):
                name = "entropy = **SPEC tile**"
            if p == "entropy" and (u, s) == ("token", "sequence"):
                name = "entropy = **SPEC token**"
            cells = []
            for k in kinds_present:
                v = sorted(g for g in (get(i, ratio, p, u, s, "gap_to_oracle")
                                       for i in inputs if kind(i) == k) if g is not None)
                if not v:
                    cells.append("—")
                    continue
                med = v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])
                cells.append("%s (%s .. %s)" % (fmt_pct(med), fmt_pct(v[0]), fmt_pct(v[-1])))
            trs.append([name, u, s] + cells)
    out.append(table(hdr, trs))
    out.append("")
    # 2. relative MSE of the main policies (the table)
    main = [("SPEC tile", "entropy", "tile", "token"),
            ("inverse entropy (per token)", "inv-entropy", "tile", "token"),
            ("inverse entropy (per sequence)", "inv-entropy", "tile", "sequence"),
            ("random tiles (per token)", "random", "tile", "token"),
            ("SPEC token", "entropy", "token", "sequence"),
            ("range (per sequence)", "range", "tile", "sequence"),
            ("bound (per sequence)", "bound", "tile", "sequence"),
            ("gain (per sequence)", "gain", "tile", "sequence"),
            ("gain, tokens (per sequence)", "gain", "token", "sequence")]
    out = secs["relmse"] = []
    out.append("**Relative MSE at r = %d, equal bytes:**" % ratio)
    out.append("")
    hdr = ["input", "bits/elem"] + [m[0] for m in main] + ["oracle"]
    trs = []
    for i in inputs:
        bpe = get(i, ratio, "entropy", "token", "sequence", "bits_per_elem")
        trs.append(["%s %s" % (i, shapes[i]), "%.4f" % bpe if bpe else "—"] +
                   [fmt_e(get(i, ratio, p, u, s, "rel_mse")) for _, p, u, s in main] +
                   [fmt_e(oracle(i, ratio))])
    out.append(table(hdr, trs))
    out.append("")
    # 3. per-token and bound metrics
    out = secs["token"] = []
    out.append("**Per-token relative MSE (mean / max over tokens) and max |error|/bound at "
               "r = %d:**" % ratio)
    out.append("")
    sel = [main[0], main[4], main[2], main[5], main[6]]
    hdr = ["input"] + [m[0] for m in sel] + ["oracle"]
    trs = []
    for i in inputs:
        cells = []
        for _, p, u, s in sel:
            a, b, c = (get(i, ratio, p, u, s, k) for k in
                       ("tok_rel_mse_mean", "tok_rel_mse_max", "max_err_over_bound"))
            cells.append("—" if a is None else "%.3e / %.3e / %.4f" % (a, b, c))
        a, b, c = (oracle(i, ratio, k) for k in
                   ("tok_rel_mse_mean", "tok_rel_mse_max", "max_err_over_bound"))
        cells.append("—" if a is None else "%.3e / %.3e / %.4f" % (a, b, c))
        trs.append([i] + cells)
    out.append(table(hdr, trs))
    out.append("")
    # 4. wins over both SPEC policies, every budget
    out = secs["wins"] = []
    kinds = ["synthetic", "LLM-like", "real"]
    present = [k for k in kinds if any(kind(i) == k for i in inputs)]
    wins = {}
    for p in POLICIES:
        for u, s in COMBOS:
            w = {k: [0, 0, 0.0, 0.0] for k in present}  # wins, pairs, worst, best ratio
            for i in inputs:
                for b in budgets:
                    v = get(i, b, p, u, s, "rel_mse")
                    t = get(i, b, "entropy", "tile", "token", "rel_mse")
                    k = get(i, b, "entropy", "token", "sequence", "rel_mse")
                    if v is None or t is None or k is None or b in (0, 1000):
                        continue
                    ref = min(t, k)
                    e = w[kind(i)]
                    if ref <= 0:
                        continue
                    q = v / ref
                    e[0] += v < t and v < k
                    e[1] += 1
                    e[2] = max(e[2], q)
                    e[3] = q if e[1] == 1 else min(e[3], q)
            wins[(p, u, s)] = w
    out.append("**Budgets where a policy beats both SPEC policies** (wins / (input, budget) "
               "pairs, r = %s; in brackets the worst and best relative MSE over the better "
               "SPEC policy's):" % ",".join(str(b) for b in budgets if b not in (0, 1000)))
    out.append("")
    hdr = ["policy", "unit", "scope"] + present
    trs = []
    for (p, u, s), w in wins.items():
        trs.append([p, u, s] + ["%d/%d (%.3f .. %.3f)" % (e[0], e[1], e[2], e[3]) if e[1] else "—"
                                for e in (w[k] for k in present)])
    out.append(table(hdr, trs))
    out.append("")
    text = "\n".join(head + [x for p in parts for x in secs[p]]) + "\n"
    j = {"ratio": ratio, "inputs": [{"name": i, "shape": shapes[i], "kind": kind(i)}
                                    for i in inputs],
         "rel_mse": {i: {m[0]: get(i, ratio, m[1], m[2], m[3], "rel_mse") for m in main}
                     for i in inputs},
         "oracle": {i: oracle(i, ratio) for i in inputs},
         "wins_over_both_spec": {"%s/%s/%s" % k: {kk: {"wins": e[0], "pairs": e[1],
                                                        "worst_ratio": e[2], "best_ratio": e[3]}
                                                   for kk, e in w.items()}
                                 for k, w in wins.items()}}
    return text, j


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "merge":
        if len(argv) < 4:
            die("merge needs OUT.csv and at least one IN.csv", 2)
        merge(argv[2], argv[3:])
        return 0
    if argv[1] == "summary":
        args = argv[2:]
        ratio, md, js, path = 800, None, None, None
        while args:
            a = args.pop(0)
            if a in ("--ratio", "--md", "--json"):
                if not args:
                    die("%s needs a value" % a, 2)
                v = args.pop(0)
                if a == "--ratio":
                    try:
                        ratio = int(v)
                    except ValueError:
                        die("--ratio %s: not an integer" % v, 2)
                elif a == "--md":
                    md = v
                else:
                    js = v
            elif path is None:
                path = a
            else:
                die("unexpected argument %s" % a, 2)
        if path is None:
            die("summary needs a CSV", 2)
        summary(path, ratio, md, js)
        return 0
    die("unknown command %s (merge, summary)" % argv[1], 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
