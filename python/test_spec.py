#!/usr/bin/python3
"""Run the independent Python implementation (tahq_spec.py) against a golden
vector set (golden/v1 layout, see golden/README.md).

Checks, per kind:
  decode        every `encode` case: decode(expected/ID.bin) is bit-identical
                to expected/ID.npy; every `decode` case (a crafted valid
                message): decode(inputs/ID.bin) likewise
  decode_error  decode(inputs/ID.bin) fails with the expected error name
  encode_error  encode(inputs/ID.npy, config) fails with the expected name
  encode        encode(inputs/ID.npy, config) == expected/ID.bin byte for byte

Exit status: 0 all selected checks passed, 1 a failure, 77 numpy missing
(CTest SKIP_RETURN_CODE), 2 usage error.
"""

import argparse
import json
import os
import sys
import time

try:
    import numpy as np
except ImportError:
    print("test_spec.py: SKIP: numpy is not available for %s "
          "(install python3-numpy)" % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tahq_spec as ts  # noqa: E402


def n_elements(case):
    s = case.get("shape")
    if not s:
        return 0
    return s[0] * s[1] * s[2]


def first_diff(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n if len(a) != len(b) else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vectors", required=True, help="golden set directory")
    ap.add_argument("--max-elements", type=int, default=0,
                    help="skip encode/decode cases with more elements "
                         "(0 = no limit)")
    ap.add_argument("--case", default="", help="only ids containing TEXT")
    ap.add_argument("--no-encode", action="store_true",
                    help="run decode and error cases only")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    t_start = time.time()
    ts.self_test()
    with open(os.path.join(args.vectors, "manifest.json")) as f:
        man = json.load(f)
    if man.get("format_version") != 1:
        print("unsupported format_version", man.get("format_version"))
        return 2
    cases = [c for c in man["cases"] if args.case in c["id"]]
    # Kinds of format 1 only; other kinds (paper_v1: the authors' headerless
    # format, ref/SPEC.md Appendix A) are not implemented here: skipped.
    known = ("encode", "encode_error", "decode_error", "decode")
    unknown = {}
    for c in cases:
        if c["kind"] not in known:
            unknown[c["kind"]] = unknown.get(c["kind"], 0) + 1
    cases = [c for c in cases if c["kind"] in known]
    vd = args.vectors

    stats = {k: [0, 0, 0] for k in
             ("decode", "decode_error", "encode_error", "encode")}
    times = {k: 0.0 for k in stats}
    failures = []

    def record(kind, cid, ok, msg=""):
        stats[kind][0 if ok else 1] += 1
        if not ok:
            failures.append((kind, cid, msg))
            print("FAIL %s (%s): %s" % (cid, kind, msg))
        elif args.verbose:
            print("ok   %s (%s)" % (cid, kind))

    def too_big(c):
        return args.max_elements and n_elements(c) > args.max_elements

    # --- pass 1: decoder (encode cases' expected messages, decode cases) ---
    for c in cases:
        if c["kind"] not in ("encode", "decode"):
            continue
        if too_big(c):
            stats["decode"][2] += 1
            continue
        t0 = time.time()
        src = c["message"] if c["kind"] == "encode" else c["input"]
        with open(os.path.join(vd, src["path"]), "rb") as f:
            msg = f.read()
        want = np.load(os.path.join(vd, c["decoded"]["path"]))
        try:
            got = ts.decode(msg)
        except ts.TahqError as e:
            record("decode", c["id"], False, "decoder rejected: %s" % e)
            continue
        finally:
            times["decode"] += time.time() - t0
        if got.shape != want.shape:
            record("decode", c["id"], False,
                   "shape %s != %s" % (got.shape, want.shape))
            continue
        gb = got.view(np.uint32).reshape(-1)
        wb = want.astype("<f4").view(np.uint32).reshape(-1)
        diff = np.nonzero(gb != wb)[0]
        if diff.size:
            i = int(diff[0])
            record("decode", c["id"], False,
                   "%d of %d values differ; first at %d: expected 0x%08x "
                   "got 0x%08x" % (diff.size, gb.size, i, wb[i], gb[i]))
        else:
            record("decode", c["id"], True)

    # --- pass 2: invalid messages ---
    for c in cases:
        if c["kind"] != "decode_error":
            continue
        t0 = time.time()
        with open(os.path.join(vd, c["input"]["path"]), "rb") as f:
            msg = f.read()
        try:
            ts.decode(msg)
            name = "ok"
        except ts.TahqError as e:
            name = e.name
        times["decode_error"] += time.time() - t0
        record("decode_error", c["id"], name == c["expected_status"],
               "expected %s, got %s" % (c["expected_status"], name))

    # --- pass 3: invalid inputs ---
    for c in cases:
        if c["kind"] != "encode_error" or args.no_encode:
            continue
        t0 = time.time()
        x = np.load(os.path.join(vd, c["input"]["path"]))
        try:
            ts.encode(x, ts.Config.from_manifest(c["config"]))
            name = "ok"
        except ts.TahqError as e:
            name = e.name
        times["encode_error"] += time.time() - t0
        record("encode_error", c["id"], name == c["expected_status"],
               "expected %s, got %s" % (c["expected_status"], name))

    # --- pass 4: encoder ---
    for c in cases:
        if c["kind"] != "encode" or args.no_encode:
            continue
        if too_big(c):
            stats["encode"][2] += 1
            continue
        t0 = time.time()
        x = np.load(os.path.join(vd, c["input"]["path"]))
        with open(os.path.join(vd, c["message"]["path"]), "rb") as f:
            want = f.read()
        try:
            got = ts.encode(x, ts.Config.from_manifest(c["config"]))
        except ts.TahqError as e:
            times["encode"] += time.time() - t0
            record("encode", c["id"], False, "encoder failed: %s" % e)
            continue
        times["encode"] += time.time() - t0
        i = first_diff(got, want)
        if i >= 0:
            ndiff = sum(1 for a, b in zip(got, want) if a != b)
            record("encode", c["id"], False,
                   "first difference at byte %d (%s); %d bytes differ; "
                   "lengths %d/%d" % (i, locate(want, i), ndiff, len(got),
                                      len(want)))
        else:
            record("encode", c["id"], True)

    total = time.time() - t_start
    print("python_spec: %d cases selected, %.1f s" % (len(cases), total))
    for k, (p, f, s) in stats.items():
        print("  %-13s passed %4d  failed %3d  skipped %3d  (%.1f s)"
              % (k, p, f, s, times[k]))
    for k in sorted(unknown):
        print("  skipped %d cases of kind %s (not format 1)" % (unknown[k], k))
    skipped = sum(v[2] for v in stats.values())
    if skipped:
        print("  note: %d checks skipped by --max-elements %d"
              % (skipped, args.max_elements))
    return 1 if failures else 0


def locate(msg, i):
    """Name the message field that holds byte i (best effort)."""
    if i < 72:
        return "header"
    try:
        h = ts.parse_header(msg)
    except ts.TahqError:
        return "payload"
    N = h["rows"] * h["T"]
    mb = ts.META_BYTES[h["meta"]]
    off = 72
    if h["alloc"] != ts.ALLOC_NONE:
        nb = ts.bits_ceil_bytes(h["rows"] if h["alloc"] == 1 else N)
        if i < off + nb:
            return "precision_map"
        off += nb
    nb = ts.bits_ceil_bytes(N)
    if i < off + nb:
        return "gate_flags"
    off += nb
    if i < off + N * mb:
        return "zero_points (tile %d)" % ((i - off) // mb)
    off += N * mb
    if i < off + N * mb:
        return "scales (tile %d)" % ((i - off) // mb)
    off += N * mb
    return "codes or pivots"


if __name__ == "__main__":
    sys.exit(main())
