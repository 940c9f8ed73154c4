#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write results/fuzz/reliability.json, the record plots/report.py shows in
its reliability section: the executions of the long fuzz runs, summed per
harness from the stats.tsv files fuzz/run.sh appends to (one per
FUZZ_BUILD_DIR given), and the hostile-input tests of issue 41 with their
CTest results (ctest's LastTest log is not needed: pass --passed NAME for
each test that passed, or --all-passed).

usage: fuzz/record.py [--all-passed] STATS.tsv...
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

WHAT = {
    "diff_decode": "format 1: cpu/ parallel decode and encode against ref/, 1..256 jobs, "
                   "every alloc mode",
    "diff_pv1": "paper-v1: cpu/ parallel decode and encode against ref/, 1..256 jobs",
}

# (class, hostile inputs tried, CTest test): each test failed on the binary
# before its fix
HOSTILE = [
    ("conform: right err_* word, then SIGSEGV (exit 139 through /bin/sh)", 1,
     "conform_attack_crash_after_output"),
    ("conform: candidate that never ends, no --timeout", 1, "conform_attack_hang_default_timeout"),
    ("conform: output is a FIFO (and SIGINT meanwhile)", 2, "conform_attack_fifo_output"),
    ("conform: outputs linked to /dev/zero", 2, "conform_attack_devzero_output"),
    ("conform: 64 MiB output for a 260-byte case", 1, "conform_attack_huge_output"),
    ("conform: FIFO inside the vector set (--check)", 1, "conform_attack_set_fifo"),
    ("conform: --workdir inside the set (3 paths)", 3, "conform_attack_workdir_in_set"),
    ("conform: links planted where later input copies and status files go", 12,
     "conform_attack_planted_symlink"),
    ("conform: 64 MiB on stderr", 1, "conform_attack_huge_stderr"),
    ("conform: subfolders (one mode 000) in the temporary folder", 2, "conform_attack_subfolders"),
    ("conform: setsid child", 1, "conform_attack_setsid_child"),
    ("conform: conform killed by SIGKILL (folder, JUnit temporary file)", 1,
     "conform_attack_killed_conform"),
    ("conform: U+FFFE / U+FFFF on stderr (JUnit)", 1, "conform_attack_noncharacters"),
    ("conform: interpreter that cannot find its script (6 command forms)", 6,
     "conform_attack_wrappers"),
    ("conform: unwritable --junit, unknown --flag / --exclude-flag", 3,
     "conform_attack_usage_errors"),
    ("conform: report wording (paper-v1 exact/TAP, TIMEOUT, summary.cases, progress)", 5,
     "conform_attack_report_wording"),
    ("CLI: /dev/zero, endless and over-long pipes as messages and paper-v1 streams", 4,
     "cli_files_pipe_bounded"),
    ("CLI: replaced outputs of mode 0600 / 0640", 2, "cli_files_mode_kept"),
    ("CLI: temporary file of a writer killed by SIGKILL", 1, "cli_files_stale_tmp"),
    ("CLI: SIGINT / SIGTERM during a 128 MiB write (6 tries)", 6, "cli_files_signal_tmp"),
    ("CLI: inspect --tiles --json of 1 M tiles under a 400 MB cap", 1,
     "cli_files_tiles_stream"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--all-passed", action="store_true")
    ap.add_argument("--passed", action="append", default=[])
    ap.add_argument("--note", action="append", default=[], help="a line for the report")
    ap.add_argument("stats", nargs="+")
    a = ap.parse_args()
    runs = {}
    for path in a.stats:
        with open(path, encoding="utf-8") as f:
            for line in f:
                p = line.split()
                if len(p) != 4 or p[0] not in WHAT:
                    continue
                r = runs.setdefault(p[0], {"executions": 0, "seconds": 0.0, "runs": 0,
                                           "findings": 0})
                r["executions"] += int(p[1])
                r["seconds"] += float(p[2])
                r["runs"] += 1
                r["findings"] += int(p[3]) != 0
    fuzz = [{"harness": h, "what": WHAT[h], "executions": r["executions"],
             "seconds": r["seconds"], "runs": r["runs"], "findings": r["findings"],
             "open": r["findings"]} for h, r in sorted(runs.items())]
    hostile = [{"class": c, "inputs": n, "test": t,
                "passed": n if a.all_passed or t in a.passed else 0} for c, n, t in HOSTILE]
    doc = {"fuzz": fuzz, "hostile_inputs": hostile,
           "notes": ["Fuzzing: clang 14, -fsanitize=fuzzer,address,undefined, 2 shared cores; "
                     "fuzz/run.sh, the corpus kept in fuzz/corpus/NAME."] + a.note}
    with open(os.path.join(HERE, "..", "results", "fuzz", "reliability.json"), "w",
              encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
