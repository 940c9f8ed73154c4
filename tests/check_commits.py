#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_commits.py - the commit-message rule of ARCHITECTURE.md ("Habits"):
a subject of at most 72 characters, then, if there is a body, one blank line
before it.

Usage: check_commits.py ROOT          check the commits of ROOT after RULE_SINCE
       check_commits.py --self-test   check that each kind of bad message is
                                      reported and a good one is not

The rule holds from RULE_SINCE on (the commit that wrote it down); older
history keeps its messages. Exit 0 ok, 1 a message breaks the rule, 77 no
git history to check (e.g. a source tarball, or a shallow clone without
RULE_SINCE).
"""
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
import tahq_fixtures as fx  # noqa: E402 (beside this file)

RULE_SINCE = "6fcfa18"  # "Add ARCHITECTURE.md and a test of the include rules"
MAX_SUBJECT = 72


def problems(message):
    """What is wrong with one commit message (empty list: nothing)."""
    lines = message.rstrip("\n").split("\n")
    out = []
    subject = lines[0]
    if not subject.strip():
        out.append("empty subject")
    if len(subject) > MAX_SUBJECT:
        out.append(f"subject of {len(subject)} characters (at most {MAX_SUBJECT})")
    if len(lines) > 1 and lines[1].strip():
        out.append("no blank line between the subject and the body")
    return out


def self_test():
    cases = [
        ("Add a test\n", []),
        ("Add a test\n\nWhy, with numbers.\n", []),
        ("x" * 72 + "\n", []),
        ("x" * 73 + "\n", ["subject of 73"]),
        ("Add a test\nbody right below\n", ["no blank line"]),
        ("\n\nbody only\n", ["empty subject"]),
    ]
    bad = 0
    for msg, want in cases:
        got = problems(msg)
        ok = len(got) == len(want) and all(w in g for w, g in zip(want, got))
        if not ok:
            print(f"self-test: {msg[:40]!r}: got {got}, want {want}", file=sys.stderr)
            bad += 1
    print(f"check_commits self-test: {len(cases) - bad}/{len(cases)} cases as expected")
    return 1 if bad else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]

    def git(*args):
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)

    if git("rev-parse", "--git-dir").returncode != 0:
        fx.skip("check_commits", "not a git checkout")
    if git("cat-file", "-e", RULE_SINCE + "^{commit}").returncode != 0:
        fx.skip("check_commits", f"{RULE_SINCE} is not in this history (shallow clone?)")
    log = git("log", "--format=%H%x00%B%x01", f"{RULE_SINCE}..HEAD")
    if log.returncode != 0:
        print(f"check_commits: git log failed: {log.stderr.strip()}", file=sys.stderr)
        return 1
    n = bad = 0
    for rec in log.stdout.split("\x01"):
        rec = rec.lstrip("\n")
        if not rec:
            continue
        sha, msg = rec.split("\x00", 1)
        n += 1
        for p in problems(msg):
            bad += 1
            print(f"{sha[:10]} {msg.splitlines()[0][:60]!r}: {p}", file=sys.stderr)
    print(f"check_commits: {n} commits since {RULE_SINCE}, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
