#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check_v4.py - CTest golden_v4 (seconds): golden/v4 and its kill records
agree, and the set is what the generator writes.

  1. every mutant of catalogue.txt and catalogue-gain.txt has a record in
     kills-v4.json with its equivalence mark; every counted mutant is
     recorded as killed by at least MIN_KILLS (2) cases of golden/v4, and
     no equivalent one by any;
  2. every recorded killing case is a case of golden/v4, and each case's
     manifest "kills" list is exactly the mutants recorded as killed by it;
  3. `tahq golden-gen --set v4` writes golden/v4 again byte for byte (so
     v2's and v3's cases in it are theirs, and its own cases and kill
     lists match the sources).
The mutants themselves are not built here: CTest golden_mutation_v4 (label
mutation, registered with -DTAHQ_LONG_TESTS=ON) reruns each on its first
two recorded cases. The control: the same checks on a copy of the records
with one kill removed from a mutant killed by exactly MIN_KILLS cases, and
with one manifest kill list altered, must fail.

usage: check_v4.py SOURCE_DIR TAHQ_PROGRAM WORK_DIR
"""
import copy
import filecmp
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

MIN_KILLS = 2


def problems(mutants, kills, cases):
    out = []
    ids = {c["id"] for c in cases}
    for m in mutants:
        e = kills.get(m["id"])
        eq = "equivalent" in m["meta"]
        if e is None:
            out.append(f"{m['id']}: no record in kills-v4.json")
            continue
        if e["equivalent"] != eq:
            out.append(f"{m['id']}: equivalence mark differs from the catalogue")
        n = len(e["killed_by"])
        if eq and n:
            out.append(f"{m['id']}: marked equivalent but recorded as killed")
        if not eq and n < MIN_KILLS:
            out.append(f"{m['id']}: killed by {n} case(s) of golden/v4, fewer than {MIN_KILLS}")
        for c in e["killed_by"]:
            if c not in ids:
                out.append(f"{m['id']}: recorded killing case {c} is not in golden/v4")
    inverse = {}
    for mid, e in kills.items():
        for c in e["killed_by"]:
            inverse.setdefault(c, set()).add(mid)
    for c in cases:
        got = set(c.get("kills", []))
        if got != inverse.get(c["id"], set()):
            out.append(f"case {c['id']}: manifest kills {sorted(got)[:3]}... differ from the "
                       f"records {sorted(inverse.get(c['id'], set()))[:3]}...")
    return out


def main():
    src, tahq, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    v4 = os.path.join(src, "golden", "v4")
    mutants = []
    for cat in ("catalogue.txt", "catalogue-gain.txt", "catalogue-v4.txt"):
        mutants += mutate.parse_catalogue(os.path.join(HERE, cat))
    with open(os.path.join(HERE, "kills-v4.json")) as f:
        kills = json.load(f)["mutants"]
    with open(os.path.join(v4, "manifest.json")) as f:
        cases = json.load(f)["cases"]

    bad = problems(mutants, kills, cases)
    for b in bad:
        print("FAIL: " + b)
    counted = [m for m in mutants if "equivalent" not in m["meta"]]
    ns = sorted(len(kills[m["id"]]["killed_by"]) for m in counted if m["id"] in kills)
    print(f"check_v4: {len(mutants)} mutants ({len(mutants) - len(counted)} equivalent), "
          f"{len(cases)} cases; fewest killing cases of a counted mutant: {ns[0] if ns else 0}")

    # the control: records that break each rule must be caught
    two = next((m["id"] for m in counted if len(kills[m["id"]]["killed_by"]) == MIN_KILLS), None)
    if two:
        k2 = copy.deepcopy(kills)
        k2[two]["killed_by"] = k2[two]["killed_by"][:-1]
        if not any(two in p and "fewer than" in p for p in problems(mutants, k2, cases)):
            print(f"FAIL: control: a record of {two} with one kill removed is not caught")
            bad.append("control")
    c2 = copy.deepcopy(cases)
    c2[0]["kills"] = list(c2[0].get("kills", [])) + ["no-such-mutant"]
    if not any(c2[0]["id"] in p for p in problems(mutants, kills, c2)):
        print("FAIL: control: an altered manifest kill list is not caught")
        bad.append("control")

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    regen = os.path.join(work, "v4")
    r = subprocess.run([tahq, "golden-gen", regen, "--set", "v4"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: golden-gen --set v4: {r.stderr.strip()}")
        return 1
    diff, n = [], 0
    for dp, _, fs in os.walk(v4):
        for fn in fs:
            n += 1
            p = os.path.join(dp, fn)
            q = os.path.join(regen, os.path.relpath(p, v4))
            if not os.path.exists(q) or not filecmp.cmp(p, q, shallow=False):
                diff.append(os.path.relpath(p, v4))
    n_regen = sum(len(fs) for _, _, fs in os.walk(regen))
    if diff or n != n_regen:
        print(f"FAIL: golden/v4 differs from golden-gen --set v4: {len(diff)} files "
              f"({', '.join(diff[:5])}), {n} vs {n_regen} files")
        bad.append("regen")
    else:
        print(f"check_v4: golden/v4 regenerated byte for byte ({n} files)")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
