#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""v4_table.py - golden/v4's own cases and kill lists as data.

  v4_table.py --found found-v4.json [--kills-in FILE]... [--kills kills-v4.json]
              [--write golden/kit/mutation_cases_v4.inc] [--results RESULTS-v4.md]

--found: the inputs `distinguish.py --hits N` found (a list per mutant).
Inputs found for several mutants become one case; an input already held by
another case of the table is not repeated. Every case is named
bnd-<mutant>-<n> after the first mutant it was found for.

--kills-in: full kill records (`mutate.py --record --full`) of runs on
golden/v4 or on a part of it (`--case-prefix`): they are merged, per
mutant, into kills-v4.json (--kills), whose `killed_by` lists every
recorded killing case of the mutant in manifest order. A mutant recorded
in several runs keeps the union of its killing cases.

--write replaces the block between "BEGIN v4 cases" and "END v4 cases" of
golden/kit/mutation_cases_v4.inc: the input words, the table of encode cases, the
table of invalid messages, and v4_kills (per case, the mutants it kills),
which golden-gen --set v4 writes into the manifest.

--results writes RESULTS-v4.md: per mutant its number of killing cases in
golden/v4, the histogram of those numbers, and the mutants under 2.
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402
from c_table import c_str, kills_table, tau_bits, write_between_markers  # noqa: E402

ALLOC = {"none": "TAHQ_ALLOC_NONE", "token": "TAHQ_ALLOC_TOKEN", "tile": "TAHQ_ALLOC_TILE",
         "gain": "TAHQ_ALLOC_GAIN"}
META = {"fp16": "TAHQ_META_FP16", "bf16": "TAHQ_META_BF16", "fp32": "TAHQ_META_FP32"}
ROUND = {"nearest": "TAHQ_ROUND_NEAREST_EVEN", "stochastic": "TAHQ_ROUND_STOCHASTIC"}
CATALOGUES = ("catalogue.txt", "catalogue-gain.txt", "catalogue-v4.txt")


def cases_of(found):
    """[(id, first mutant, record)] without repeated inputs."""
    out, seen = [], {}
    for mid in sorted(found):
        recs = found[mid] if isinstance(found[mid], list) else [found[mid]]
        for rec in recs:
            key = json.dumps([rec.get("config"), rec.get("shape"), rec.get("input_hex32"),
                              rec.get("message_hex")], sort_keys=True)
            if key in seen:
                continue
            n = 1 + sum(1 for c in out if c[1] == mid)
            cid = f"bnd-{mid.replace('.', '-')}-{n}"
            seen[key] = cid
            out.append((cid, mid, rec))
    return out


def merge_kills(paths, mutants, manifest_ids):
    merged = {}
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        for mid, e in doc["mutants"].items():
            m = merged.setdefault(mid, {"rule": e["rule"], "equivalent": e["equivalent"], "set": set()})
            m["set"].update(e.get("all_killing", [k[0] for k in e.get("kills", [])]))
    out = {}
    for m in mutants:
        mid = m["id"]
        e = merged.get(mid, {"rule": m["meta"]["rule"], "equivalent": "equivalent" in m["meta"],
                             "set": set()})
        unknown = sorted(c for c in e["set"] if c not in manifest_ids)
        if unknown:
            raise SystemExit(f"v4_table: {mid}: killing cases not in golden/v4: {unknown[:5]}")
        ks = sorted(e["set"], key=manifest_ids.index)
        out[mid] = {"rule": e["rule"], "equivalent": e["equivalent"], "catalogue": m["catalogue"],
                    "n_killing": len(ks), "killed_by": ks}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--found", required=True)
    ap.add_argument("--kills-in", action="append", default=[])
    ap.add_argument("--kills", default=None)
    ap.add_argument("--vectors", default=os.path.join(HERE, "..", "v4"))
    ap.add_argument("--write", default=None)
    ap.add_argument("--results", default=None)
    a = ap.parse_args()
    with open(a.found) as f:
        found = json.load(f)
    cases = cases_of(found)

    mutants = []
    for cat in CATALOGUES:
        for m in mutate.parse_catalogue(os.path.join(HERE, cat)):
            m["catalogue"] = cat
            mutants.append(m)
    kills = None
    if a.kills_in:
        with open(os.path.join(a.vectors, "manifest.json")) as f:
            ids = [c["id"] for c in json.load(f)["cases"]]
        kills = merge_kills(a.kills_in, mutants, ids)
        if a.kills:
            with open(a.kills, "w") as f:
                json.dump({"schema": "tahq-mutation-kills/1", "vectors": "golden/v4",
                           "commit": mutate.git_head(os.path.join(HERE, "..", "..")),
                           "mode": "full (every mutant of both catalogues on every case)",
                           "mutants": kills}, f, indent=1)
                f.write("\n")
    elif a.kills and os.path.exists(a.kills):
        with open(a.kills) as f:
            kills = json.load(f)["mutants"]

    by_case = {}
    for mid, e in (kills or {}).items():
        for cid in e["killed_by"]:
            by_case.setdefault(cid, []).append(mid)

    L = ["/* BEGIN v4 cases (generated by golden/mutation/v4_table.py from the inputs",
         " * golden/mutation/distinguish.py --boundary found and the kill records of",
         " * golden/v4; do not edit by hand) */"]
    rows, msgs = [], []
    for i, (cid, mid, r) in enumerate(cases):
        desc = f"boundary search for {mid}: {r['label']}"
        if r["kind"] == "message":
            b = bytes.fromhex(r["message_hex"])
            L.append(f"static const uint8_t bndm_{i}[{len(b)}] = {{"
                     + ",".join(f"0x{v:02x}" for v in b) + "};")
            msgs.append(f"    {{{c_str(cid)}, {c_str(desc)}, bndm_{i}, {len(b)}u}},")
            continue
        ws = r["input_hex32"]
        L.append(f"static const uint32_t bndw_{i}[{len(ws)}] = {{"
                 + ",".join(f"0x{w}u" for w in ws) + "};")
        cfg = r["config"]
        B, S, C = r["shape"]
        if r["kind"] == "paper_v1":
            rows.append(f"    {{{c_str(cid)}, NULL, {c_str(desc)}, 1, {cfg['tile']}u, {cfg['hi_bits']}u, "
                        f"{cfg['lo_bits']}u, {cfg['hi_permille']}u, TAHQ_ALLOC_TOKEN, 0x40000000u, "
                        f"TAHQ_ROUND_NEAREST_EVEN, 0u, TAHQ_META_FP16, {B}u, {S}u, {C}u, bndw_{i}}},")
        else:
            rows.append(f"    {{{c_str(cid)}, NULL, {c_str(desc)}, 0, {cfg['tile']}u, {cfg['hi_bits']}u, "
                        f"{cfg['lo_bits']}u, {cfg['hi_permille']}u, {ALLOC[cfg['alloc']]}, "
                        f"{tau_bits(cfg['tau'])}, {ROUND[cfg['rounding']]}, UINT64_C({int(cfg['seed'])}), "
                        f"{META[cfg['meta']]}, {B}u, {S}u, {C}u, bndw_{i}}},")
    L.append("static const mut_case bnd_cases[] = {")
    L += rows or ["    {NULL, NULL, NULL, 0, 0u, 0u, 0u, 0u, TAHQ_ALLOC_NONE, 0u, "
                  "TAHQ_ROUND_NEAREST_EVEN, 0u, TAHQ_META_FP16, 0u, 0u, 0u, NULL},"]
    L.append("};")
    L.append("static const struct {")
    L.append("    const char *id, *desc;")
    L.append("    const uint8_t *bytes;")
    L.append("    uint32_t len;")
    L.append("} bnd_msgs[] = {")
    L += msgs or ["    {NULL, NULL, NULL, 0u},"]
    L.append("};")
    L += kills_table("v4_kills", by_case, sorted(by_case))
    L.append("/* END v4 cases */")
    text = "\n".join(L) + "\n"
    if a.write:
        if write_between_markers(a.write, "v4", text, "v4_table"):
            return 1
    print(f"v4_table: {len(rows)} encode cases, {len(msgs)} messages, "
          f"{len(by_case)} cases with kills")

    if a.results and kills:
        counted = [m for m in mutants if "equivalent" not in m["meta"]]
        hist = {}
        for m in counted:
            n = kills[m["id"]]["n_killing"]
            b = "0" if n == 0 else "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 \
                else "6-20" if n <= 20 else "21+"
            hist[b] = hist.get(b, 0) + 1
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        R = ["# Mutation results of golden/v4 (the three catalogues)", "",
             f"Written by `golden/mutation/v4_table.py` on {now} from the kill records merged "
             "into kills-v4.json (which runs, on which cases: golden/mutation/README.md, "
             "\"golden/v4\"; the unmutated control passes every case exactly). A mutant is "
             "killed by a case when the case fails exactly: message bytes, decoded values bit "
             "for bit, or the error status.", "",
             f"Catalogues: {len(mutants)} mutants, {len(mutants) - len(counted)} shown equivalent "
             f"(not counted), {len(counted)} counted.", "",
             "| killing cases in golden/v4 | mutants |", "|---|---|"]
        for b in ("0", "1", "2", "3-5", "6-20", "21+"):
            R.append(f"| {b} | {hist.get(b, 0)} |")
        under = [m["id"] for m in counted if kills[m["id"]]["n_killing"] < 2]
        R += ["", f"Killed by fewer than 2 cases: {len(under)}" +
              (": " + ", ".join(f"`{u}`" for u in under) if under else "."), "",
              "| mutant | catalogue | SPEC rule | killing cases | first killing cases |",
              "|---|---|---|---|---|"]
        for m in mutants:
            e = kills[m["id"]]
            if "equivalent" in m["meta"]:
                R.append(f"| `{m['id']}` | {m['catalogue']} | {m['meta']['rule']} | equivalent | |")
                continue
            R.append(f"| `{m['id']}` | {m['catalogue']} | {m['meta']['rule']} | {e['n_killing']} | "
                     + ", ".join(f"`{c}`" for c in e["killed_by"][:3]) + " |")
        with open(a.results, "w") as f:
            f.write("\n".join(R) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
