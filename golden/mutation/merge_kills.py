#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""merge_kills.py - kills.json for golden/v2 and RESULTS.md from two searches:

  kills-v1.json    mutate.py --record --vectors golden/v1 (first 3 kills each)
  kills-new.json   mutate.py --record --full --vectors golden/v2
                       --case-prefix mut- --case-prefix decerr-v2-
                   (every mutant on every case v2 adds)

golden/v2 holds v1's cases unchanged (same ids, same bytes), so a v1 kill is a
v2 kill: kills.json keeps the v1 kill list of a mutant v1 kills and the new
cases' kills of one it does not. RESULTS.md gets one row per mutant.

  merge_kills.py [--v1 kills-v1.json] [--new kills-new.json] [--found found.json]
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--v1", default=os.path.join(HERE, "kills-v1.json"))
    ap.add_argument("--new", required=True)
    ap.add_argument("--found", default=os.path.join(HERE, "found.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "kills.json"))
    ap.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--v2-summary", default="", help="one line on golden/v2 (cases, bytes)")
    a = ap.parse_args()
    cat = mutate.parse_catalogue(os.path.join(HERE, "catalogue.txt"))
    with open(a.v1) as f:
        v1doc = json.load(f)
    v1 = v1doc["mutants"]
    with open(a.new) as f:
        new = json.load(f)["mutants"]
    found = {}
    if os.path.exists(a.found):
        with open(a.found) as f:
            found = json.load(f)
    out = {}
    rows = []
    n_eq = n_v1 = n_v2 = n_surv = 0
    for m in cat:
        mid = m["id"]
        eq = "equivalent" in m["meta"]
        k1 = v1.get(mid, {}).get("kills", [])
        kn = new.get(mid, {}).get("kills", [])
        if eq:
            n_eq += 1
            entry = {"rule": m["meta"]["rule"], "equivalent": True, "killed_by": [], "kills": []}
            if k1 or kn:
                print(f"merge: {mid} is marked equivalent but killed", file=sys.stderr)
                return 1
            res_v1 = "equivalent"
            res_v2 = "equivalent (argument in the catalogue)"
        elif k1:
            n_v1 += 1
            entry = {"rule": m["meta"]["rule"], "equivalent": False,
                     "killed_by": [k[0] for k in k1[:3]], "kills": k1[:3]}
            res_v1 = ", ".join(f"`{k[0]}`" for k in k1[:3]) + f" — {k1[0][1]}"
            res_v2 = "as v1" + (f"; also `{kn[0][0]}`" if kn else "")
        elif kn:
            n_v2 += 1
            entry = {"rule": m["meta"]["rule"], "equivalent": False,
                     "killed_by": [k[0] for k in kn[:3]], "kills": kn[:3]}
            res_v1 = "**SURVIVED**"
            res_v2 = ", ".join(f"`{k[0]}`" for k in kn[:3]) + f" — {kn[0][1]}"
        else:
            n_surv += 1
            entry = {"rule": m["meta"]["rule"], "equivalent": False, "killed_by": [], "kills": []}
            res_v1 = "**SURVIVED**"
            res_v2 = "**SURVIVED**"
        out[mid] = entry
        what = m["meta"]["what"].replace("|", "\\|")
        rows.append(f"| `{mid}` | {m['meta']['rule']} | {what} | {res_v1} | {res_v2} |")
    doc = {"schema": "tahq-mutation-kills/1", "vectors": "golden/v2",
           "commit": mutate.git_head(mutate.ROOT_DEFAULT),
           "mode": "v1 kills (first 3) where v1 kills, else the kills among the cases v2 adds",
           "mutants": out}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    n_counted = len(cat) - n_eq
    L = ["# Mutation results (golden/mutation)", ""]
    L.append(f"Generated {now} by `golden/mutation/merge_kills.py` from `mutate.py --record` "
             f"against golden/v1 (399 cases) and `mutate.py --record --full` on the cases golden/v2 "
             f"adds; ref/ sources at commit `{v1doc.get('commit', '?')}`. Each mutant was built "
             "from a patched copy of ref/ (-O1, -DTAHQ_SCALAR_ONLY, strict fp flags) and judged "
             "exactly (message bytes, decoded values bit for bit, error status; paper_v1 cases "
             "exact too); the unmutated control build passes every case.")
    L.append("")
    L.append(f"**Catalogue: {len(cat)} mutants.** {n_eq} are shown equivalent (listed, not "
             f"counted). Of the other {n_counted}: golden/v1 kills **{n_v1}**, "
             f"**{n_v2 + n_surv} survive v1**; golden/v2 kills {n_v1 + n_v2} "
             f"({n_surv} survive v2).")
    if a.v2_summary:
        L.append("")
        L.append(a.v2_summary)
    L.append("")
    L.append("\"killed by\": the first killing cases in manifest order (at most three) and why the "
             "first one fails.")
    L.append("")
    L.append("| mutant | SPEC rule | mistake | killed by (golden/v1) | golden/v2 |")
    L.append("|---|---|---|---|---|")
    L += rows
    L.append("")
    L.append("## Survivors of golden/v1 and the inputs that kill them")
    L.append("")
    L.append("Found by `distinguish.py` (smallest first within each search family); each is a "
             "case of golden/v2 (`mut-` + the mutant id with dots as dashes, or `decerr-v2-…`), "
             "whose manifest entry lists in `kills` every mutant it kills.")
    L.append("")
    for m in cat:
        mid = m["id"]
        if "equivalent" in m["meta"] or v1.get(mid, {}).get("kills"):
            continue
        r = found.get(mid)
        kn = new.get(mid, {}).get("kills", [])
        cases = ", ".join(f"`{k[0]}`" for k in kn[:3]) or "none"
        if r and r.get("kind") != "message":
            L.append(f"- `{mid}` ({m['meta']['rule']}): {r['label']}; config "
                     f"`{json.dumps(r['config'], separators=(',', ':'))}`, shape {r['shape']}; "
                     f"killed in v2 by {cases}.")
        elif r:
            L.append(f"- `{mid}` ({m['meta']['rule']}): invalid message: {r['label']}; killed in "
                     f"v2 by {cases}.")
        else:
            L.append(f"- `{mid}` ({m['meta']['rule']}): killed in v2 by {cases}.")
    L.append("")
    L.append("## Equivalent mutants")
    L.append("")
    for m in cat:
        if "equivalent" in m["meta"]:
            L.append(f"- `{m['id']}` ({m['meta']['rule']}): {m['meta']['equivalent']}")
    L.append("")
    with open(a.results, "w") as f:
        f.write("\n".join(L))
    print(f"merge: {len(cat)} mutants, {n_eq} equivalent, v1 kills {n_v1}, v2 kills {n_v1 + n_v2}, "
          f"{n_surv} survive")
    return 1 if n_surv else 0


if __name__ == "__main__":
    sys.exit(main())
