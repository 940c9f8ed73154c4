# SPDX-License-Identifier: MIT
"""tahq_fixtures.py - what the Python tests run by CTest share: the exit
codes (0 passed, 1 failed, 77 skipped: CTest's SKIP_RETURN_CODE, 2 usage),
the skip when numpy or torch is missing, the failure counter (check,
verdict) and the source tree's folders on sys.path.

A test finds this file from its own folder:
    sys.dont_write_bytecode = True  # before it: no __pycache__ in the tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    import tahq_fixtures as fx
golden/oracles/ never imports it: the oracles stay independent of the
library (tests/check_layout.py)."""
import importlib
import os
import sys

PASS, FAIL, USAGE, SKIP = 0, 1, 2, 77
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def skip(name, why):
    """Stop: the test cannot run here (exit 77)."""
    print("SKIPPED (%s): %s" % (name, why))
    sys.exit(SKIP)


def fail(msg):
    """Stop: the test failed (exit 1)."""
    print("FAIL: " + msg)
    sys.exit(FAIL)


def require(name, module, hint=None):
    """Import MODULE or skip NAME, naming the interpreter and HINT (the
    Debian package that provides it, or who needs it)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        why = " (%s)" % hint if hint else ""
        skip(name, "%s is not available for %s%s: %s" % (module, sys.executable, why, e))


def use_tree(*folders):
    """Put source-tree folders (relative to the root) first on sys.path."""
    for f in reversed(folders):
        path = os.path.join(ROOT, f)
        if path not in sys.path:
            sys.path.insert(0, path)


# the failure counter: check() records a failed condition and goes on (one
# run reports every failure), verdict() prints the counts and gives the
# exit status
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what)
    return cond


def verdict(script):
    """0 when every check passed, else 1; prints the counts."""
    if failures:
        print("%s: %d of %d checks failed" % (script, failures, checks))
        return FAIL
    print("%s: all %d checks passed" % (script, checks))
    return PASS
