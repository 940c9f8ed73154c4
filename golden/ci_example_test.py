#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest golden_ci_example: golden/ci-example.yml does what it says.

Reads the workflow's steps (a small reader for its own layout: "- name:"
items with a "run: |" block) and checks that it installs what the tahq
program needs (jansson, pkg-config), checks golden/v4 and not v1,
and offers both routes (--run and --candidate). Then runs its two conform
steps, as written, in a workspace laid out like the workflow's (tahq/ with
golden/ and this build's program, a candidate/ folder), on the batch route
with golden/spec_candidate.py as the candidate: every set must pass. The
control: the same steps with a candidate that writes nothing must fail.
Exit 77 (skipped) without numpy, which the candidate needs.

usage: ci_example_test.py SOURCE_DIR TAHQ_PROGRAM WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402
from tahq_fixtures import fail  # noqa: E402


def steps_of(text):
    """{step name: its run block (dedented)} for the steps with a run block."""
    steps, name, block, indent = {}, None, None, None
    for line in text.splitlines():
        m = re.match(r"^\s*- name: (.*)$", line)
        if m:
            if name and block is not None:
                steps[name] = "\n".join(block) + "\n"
            name, block, indent = m.group(1).strip(), None, None
            continue
        if block is None:
            m = re.match(r"^(\s*)run: \|\s*$", line)
            if m and name:
                block, indent = [], len(m.group(1)) + 2
            continue
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            steps[name] = "\n".join(block) + "\n"
            name, block = None, None
            continue
        block.append(line[indent:])
    if name and block is not None:
        steps[name] = "\n".join(block) + "\n"
    return steps


def main():
    src, tahq, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    fx.require("ci_example_test.py", "numpy", "golden/spec_candidate.py needs it")
    text = open(os.path.join(src, "golden", "ci-example.yml")).read()
    steps = steps_of(text)
    install = next((b for n, b in steps.items() if n.startswith("Install")), "")
    for pkg in ("libjansson-dev", "pkg-config", "cmake"):
        if pkg not in install.split():
            fail("the workflow does not install %s: %r" % (pkg, install))
    if "GOLDEN_SETS: ${{ vars.GOLDEN_SETS || 'v4' }}" not in text:
        fail("the workflow does not check golden/v4 by default")
    if "golden/v1" in text:
        fail("the workflow still names golden/v1")
    check, run = steps.get("Check the golden sets (manifests and file hashes)"), steps.get("Run tahq conform")
    if not check or not run:
        fail("steps 'Check the golden sets' or 'Run tahq conform' missing: %s" % sorted(steps))
    for route in ("--candidate", "--run"):
        if route not in run:
            fail("the conform step lacks the %s route" % route)

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "tahq", "build", "cli"))
    os.makedirs(os.path.join(work, "candidate"))
    os.symlink(os.path.join(os.path.abspath(src), "golden"), os.path.join(work, "tahq", "golden"))
    os.symlink(tahq, os.path.join(work, "tahq", "build", "cli", "tahq"))
    # a candidate that writes nothing, for the control
    with open(os.path.join(work, "candidate", "nothing.sh"), "w") as f:
        f.write('mkdir -p "$2"\n')

    def steps_run(batch):
        env = dict(os.environ, GOLDEN_SETS="v4", CONFORM_ARGS="--profile format1",
                   CANDIDATE_BATCH=batch, CANDIDATE_RUN="unused")
        out = []
        for body in (check, run):
            p = subprocess.run(["bash", "-e", "-c", body], cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out.append(p.stdout)
            if p.returncode:
                return p.returncode, "".join(out)
        return 0, "".join(out)

    py = sys.executable
    rc, out = steps_run("%s tahq/golden/spec_candidate.py" % py)
    if rc != 0:
        fail("the workflow's steps failed on the batch route:\n" + out[-3000:])
    checked = re.findall(r"^conform: tahq/golden/(v\d) .*every file matches its sha256$", out, re.M)
    if checked != ["v4"]:
        fail("expected the check of v4, got %s" % checked)
    summaries = re.findall(r"^conform: \d+ cases selected.*$", out, re.M)
    if len(summaries) != 1 or not all(" 0 failed" in s for s in summaries):
        fail("expected one passing conform summary (v4), got %s" % summaries)
    for name in os.listdir(work):  # the control starts from a clean workspace
        if name.startswith(("outputs-", "conform-")):
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)
            if os.path.exists(os.path.join(work, name)):
                os.remove(os.path.join(work, name))
    rc, out = steps_run("sh candidate/nothing.sh")
    if rc == 0:
        fail("control: a candidate that writes nothing passed the workflow's steps")
    print("golden_ci_example: installs jansson, checks v4; batch route passes:")
    for s in summaries:
        print("  " + s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
