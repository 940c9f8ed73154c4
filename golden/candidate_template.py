#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""candidate_template.py - adapter template for an interpreted implementation
of tahq format 1 (Python here; the same shape works for any language whose
start-up is slow): the batch route of `tahq conform --candidate DIR`
(golden/README.md, "Files" and "Interpreted candidates").

One run of this script writes the outputs of every case of a golden set into
DIR; conform then judges the folder. Starting an interpreter per case, as
`--run` does (one process per encode and per decode), costs far more than
the work itself on a set of hundreds of cases.

To use it, copy this file and replace the bodies of `my_encode` and
`my_decode` (and, if you implement the paper-v1 profile, set
PAPER_V1 = True and fill in the two paper-v1 functions). As shipped it calls
golden/oracles/tahq_spec.py, the project's independent Python implementation, so
that it passes every format-1 case and shows what a passing run looks like.

usage: candidate_template.py VECTORS OUT_DIR [--only TEXT]...
  then: tahq conform --vectors VECTORS --candidate OUT_DIR --profile format1

Per case kind (manifest.json):
  encode           OUT_DIR/ID.bin: my_encode(input, config); a failure writes
                   OUT_DIR/ID.err instead. OUT_DIR/ID.npy: my_decode(the
                   expected message).
  decode           OUT_DIR/ID.npy: my_decode(inputs/ID.bin)
  encode_error     OUT_DIR/ID.err: the status name my_encode failed with, "ok"
  decode_error     OUT_DIR/ID.err: the status name my_decode failed with, "ok"
  paper_v1, paper_v1_decode   only with PAPER_V1 = True (else left out, and
                   --profile format1 makes conform skip them)

A case that raises anything other than CandidateError is reported on
stderr and its outputs are left out (conform then fails that case with "no
output"); the other cases still run. Exit status 0 when every selected case
was written, 1 when some raised, 2 for a usage error.
"""
import json
import os
import sys
import time

import numpy as np

# ---------------------------------------------------------------------------
# Your implementation. Replace the bodies below.
# ---------------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracles"))
import tahq_spec  # noqa: E402  (the stand-in implementation; drop with your own)

PAPER_V1 = False


class CandidateError(Exception):
    """Raise with the SPEC §9 status name ("err_crc", "err_range", ...) when
    the input or message is refused."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name


def my_encode(x, config):
    """x: float32 array [B, S, C]; config: the manifest's config dict
    (tile, hi_bits, lo_bits, hi_permille (integers), alloc, tau, tau_bits,
    rounding, seed (a decimal string), meta). Return the message (bytes)."""
    try:
        return tahq_spec.encode(x, tahq_spec.Config.from_manifest(config))
    except tahq_spec.TahqError as e:
        raise CandidateError(e.name)


def my_decode(message):
    """message: bytes. Return the decoded float32 array [B, S, C]."""
    try:
        return tahq_spec.decode(message)
    except tahq_spec.TahqError as e:
        raise CandidateError(e.name)


def my_paper_v1_encode(x, config):
    """Only with PAPER_V1 = True: config has profile, tile, hi_bits, lo_bits,
    hi_permille. Return the headerless message (bytes)."""
    raise NotImplementedError


def my_paper_v1_decode(message, config, shape):
    """Only with PAPER_V1 = True: shape is [B, S, C]."""
    raise NotImplementedError


# ---------------------------------------------------------------------------
# The batch route; nothing below needs to change.
# ---------------------------------------------------------------------------

def status_of(fn, *args):
    try:
        fn(*args)
        return "ok"
    except CandidateError as e:
        return e.name


def run_case(c, vectors, out):
    cid, kind = c["id"], c["kind"]

    def path(rel):
        return os.path.join(vectors, rel)

    def read(rel):
        with open(path(rel), "rb") as f:
            return f.read()

    def write(name, data):
        with open(os.path.join(out, cid + name), "wb") as f:
            f.write(data)

    def save(y):
        y = np.ascontiguousarray(y, dtype="<f4")
        if list(y.shape) != list(c["shape"]):
            raise ValueError(f"decoded shape {list(y.shape)}, expected {c['shape']}")
        np.save(os.path.join(out, cid + ".npy"), y)

    if kind in ("paper_v1", "paper_v1_decode") and not PAPER_V1:
        return False
    if kind == "encode" or kind == "paper_v1":
        x = np.load(path(c["input"]["path"]))
        enc = my_encode if kind == "encode" else my_paper_v1_encode
        try:
            write(".bin", enc(x, c["config"]))
        except CandidateError as e:
            write(".err", e.name.encode() + b"\n")
        msg = read(c["message"]["path"])
        save(my_decode(msg) if kind == "encode" else my_paper_v1_decode(msg, c["config"], c["shape"]))
    elif kind == "decode":
        save(my_decode(read(c["input"]["path"])))
    elif kind == "paper_v1_decode":
        save(my_paper_v1_decode(read(c["input"]["path"]), c["config"], c["shape"]))
    elif kind == "encode_error":
        x = np.load(path(c["input"]["path"]))
        write(".err", status_of(my_encode, x, c["config"]).encode() + b"\n")
    elif kind == "decode_error":
        write(".err", status_of(my_decode, read(c["input"]["path"])).encode() + b"\n")
    else:
        raise ValueError(f"unknown case kind {kind!r}")
    return True


def main(argv):
    args, only = [], []
    it = iter(argv[1:])
    for a in it:
        if a == "--only":
            only.append(next(it, ""))
        else:
            args.append(a)
    if len(args) != 2:
        print("usage: candidate_template.py VECTORS OUT_DIR [--only TEXT]...", file=sys.stderr)
        return 2
    vectors, out = args
    with open(os.path.join(vectors, "manifest.json")) as f:
        cases = json.load(f)["cases"]
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    written, left_out, raised = 0, 0, 0
    for c in cases:
        if only and not any(t in c["id"] for t in only):
            continue
        # stale outputs of an earlier run must not be judged as this run's
        for ext in (".bin", ".npy", ".err"):
            p = os.path.join(out, c["id"] + ext)
            if os.path.lexists(p):
                os.unlink(p)
        try:
            if run_case(c, vectors, out):
                written += 1
            else:
                left_out += 1
        except Exception as e:  # noqa: BLE001 - one broken case must not stop the set
            raised += 1
            print(f"candidate_template: case {c['id']}: {type(e).__name__}: {e}", file=sys.stderr)
    print(f"candidate_template: {written} cases written to {out}, {left_out} left out "
          f"(paper-v1), {raised} raised, {time.monotonic() - t0:.1f} s")
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
