#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest golden_candidate_template: golden/candidate_template.py, the adapter
template for interpreted candidates, passes golden/v4 on the batch route
(`tahq conform --candidate DIR --profile format1`) as shipped (backed by
golden/oracles/tahq_spec.py). The controls: one flipped message byte and one
refused-input status changed to "ok" in the written folder must fail exactly
those two cases; and a template run whose encoder raises on every case
(--only limits it to three cases) exits 1 and leaves those cases without
output, which conform fails. Exit 77 (skipped) without numpy.

usage: candidate_template_test.py SOURCE_DIR TAHQ_PROGRAM WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402
from tahq_fixtures import fail  # noqa: E402


def conform(tahq, vectors, folder, *extra):
    r = subprocess.run([tahq, "conform", "--vectors", vectors, "--candidate", folder,
                        "--profile", "format1", *extra], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    src, tahq, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    fx.require("candidate_template_test.py", "numpy", "the template's stand-in implementation needs it")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    vectors = os.path.join(src, "golden", "v4")
    template = os.path.join(src, "golden", "candidate_template.py")
    out = os.path.join(work, "out")
    r = subprocess.run([sys.executable, template, vectors, out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"the template exits {r.returncode}: {r.stderr[-2000:]}")
    print(r.stdout.strip())
    with open(os.path.join(vectors, "manifest.json")) as f:
        cases = json.load(f)["cases"]
    n_format1 = sum(c["kind"] in ("encode", "encode_error", "decode_error", "decode") for c in cases)
    rc, text = conform(tahq, vectors, out)
    if rc != 0:
        fail(f"conform fails the template's folder (exit {rc}):\n{text[-3000:]}")
    want = f"{n_format1} passed, 0 failed"
    if want not in text:
        fail(f"expected '{want}' in the summary: {text.strip().splitlines()[-1]}")
    print(text.strip().splitlines()[-1])

    # control 1: the judge sees a damaged message and a wrong status
    enc = next(c for c in cases if c["kind"] == "encode")
    err = next(c for c in cases if c["kind"] == "decode_error")
    bad = os.path.join(work, "bad")
    shutil.copytree(out, bad)
    p = os.path.join(bad, enc["id"] + ".bin")
    with open(p, "r+b") as f:
        b = bytearray(f.read())
        b[-1] ^= 0x01
        f.seek(0)
        f.write(b)
    with open(os.path.join(bad, err["id"] + ".err"), "w") as f:
        f.write("ok\n")
    rc, text = conform(tahq, vectors, bad)
    failed = sorted(line.split()[1] for line in text.splitlines() if line.startswith("FAIL "))
    if rc != 1 or failed != sorted([enc["id"], err["id"]]):
        fail(f"control: expected exit 1 failing {enc['id']} and {err['id']}, got exit {rc}, "
             f"failed {failed}")
    print(f"control: a flipped byte of {enc['id']} and 'ok' for {err['id']} fail exactly those")

    # control 2: an implementation that raises is reported, its cases fail
    broken = os.path.join(work, "broken.py")
    with open(template) as f:
        t = f.read()
    marker = '    try:\n        return tahq_spec.encode('
    if t.count(marker) != 1:
        fail("the template's my_encode is not where this test expects it")
    t = t.replace(marker, '    raise RuntimeError("broken on purpose")\n' + marker)
    t = t.replace('os.path.dirname(os.path.abspath(__file__)), "oracles"',
                  repr(os.path.join(src, "golden", "oracles")))
    with open(broken, "w") as f:
        f.write(t)
    ids = [c["id"] for c in cases if c["kind"] == "encode"][:3]
    out3 = os.path.join(work, "out3")
    r = subprocess.run([sys.executable, broken, vectors, out3] + sum((["--only", i] for i in ids), []),
                       capture_output=True, text=True)
    if r.returncode != 1 or "broken on purpose" not in r.stderr:
        fail(f"control: a raising encoder should exit 1 and say why, got {r.returncode}: {r.stderr}")
    rc, text = conform(tahq, vectors, out3, *sum((["--case", i] for i in ids), []))
    if rc != 1 or text.count("FAIL ") < 1:
        fail(f"control: conform should fail the cases a raising encoder left out (exit {rc})")
    print(f"control: a raising encoder exits 1 and conform fails its cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
