#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""spec_candidate.py - write a `tahq conform --candidate DIR` folder for a
golden set with golden/oracles/tahq_spec.py, the independent Python implementation
of format 1: the batch route for an interpreted candidate (golden/README.md,
"Files"). One interpreter runs every case, where `--run` would start one
process per encode and decode.

usage: spec_candidate.py VECTORS OUT_DIR
  then: tahq conform --vectors VECTORS --candidate OUT_DIR --profile format1

Per case (manifest.json): encode -> ID.bin (the encoding of inputs/ID.npy)
and ID.npy (the decoding of the expected message); decode -> ID.npy;
encode_error, decode_error -> ID.err (the status name, or "ok"). A failed
encode writes ID.err, as the README asks. paper_v1 kinds are not format 1
and are left out (--profile format1 skips them)."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracles"))
import tahq_spec as ts  # noqa: E402


def status_of(fn, *args):
    try:
        fn(*args)
        return "ok"
    except ts.TahqError as e:
        return e.name


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    vectors, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(vectors, "manifest.json")) as f:
        cases = json.load(f)["cases"]
    os.makedirs(out, exist_ok=True)

    def read(path):
        with open(os.path.join(vectors, path), "rb") as f:
            return f.read()

    def write(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    written = 0
    for c in cases:
        cid, kind = c["id"], c["kind"]
        if kind == "encode":
            x = np.load(os.path.join(vectors, c["input"]["path"]))
            try:
                write(cid + ".bin", ts.encode(x, ts.Config.from_manifest(c["config"])))
            except ts.TahqError as e:
                write(cid + ".err", e.name.encode() + b"\n")
            np.save(os.path.join(out, cid + ".npy"), ts.decode(read(c["message"]["path"])))
        elif kind == "decode":
            np.save(os.path.join(out, cid + ".npy"), ts.decode(read(c["input"]["path"])))
        elif kind == "encode_error":
            x = np.load(os.path.join(vectors, c["input"]["path"]))
            write(cid + ".err", status_of(ts.encode, x, ts.Config.from_manifest(c["config"])).encode() + b"\n")
        elif kind == "decode_error":
            write(cid + ".err", status_of(ts.decode, read(c["input"]["path"])).encode() + b"\n")
        else:
            continue
        written += 1
    print("spec_candidate: %d of %d cases written to %s" % (written, len(cases), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
