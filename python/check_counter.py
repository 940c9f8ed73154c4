# SPDX-License-Identifier: MIT
"""The check counter of the python/ test scripts: check() records a failed
condition and goes on (one run reports every failure), verdict() prints the
count and gives the exit status."""

failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what)


def verdict(script):
    """0 when every check passed, else 1; prints the counts."""
    if failures:
        print("%s: %d of %d checks failed" % (script, failures, checks))
        return 1
    print("%s: all %d checks passed" % (script, checks))
    return 0
