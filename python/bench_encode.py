#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Encode time of 64 MiB through the binding against the tahq program, in
one run on the same tensor.

  cli      wall time of `tahq encode x.npy x.tahq` (process start, reading
           the .npy, encoding, writing the message): the baseline;
  binding  tahq.Library.encode(x) of the array in memory, returning bytes;
  raw      the bare tahq_encode call through ctypes with buffers allocated
           beforehand (the library's own time, for the binding's overhead).

Each is timed --reps times, interleaved; the best time counts. The test
fails if the messages differ or binding / cli exceeds --max-ratio (1.2).

Exit status: 0 passed, 1 failed, 77 numpy missing (CTest skip).
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("bench_encode.py", "numpy", "install python3-numpy")
fx.use_tree("python")
import tahq  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    ap.add_argument("--json", help="write the timings here")
    args = ap.parse_args()
    lib = tahq.Library(args.lib)
    C, S = 4096, 1024
    B = max(1, args.mib * (1 << 20) // (4 * S * C))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, S, C), dtype=np.float32)
    x *= np.float32(0.5)
    os.makedirs(args.workdir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.workdir)
    inp, out = os.path.join(work, "x.npy"), os.path.join(work, "x.tahq")
    np.save(inp, x)

    cfg = lib.config()
    sh = tahq._Shape(B, S, C)
    cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
    lib._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(sh), ctypes.byref(cap))
    lib._lib.tahq_encode_workspace_size(ctypes.byref(cfg), ctypes.byref(sh), ctypes.byref(ws))
    rbuf = np.zeros(cap.value, np.uint8)
    rwork = np.zeros(max(ws.value, 1), np.uint8)
    n = ctypes.c_size_t()

    t_cli, t_bind, t_raw = [], [], []
    msg = None
    try:
        for _ in range(args.reps):
            t0 = time.perf_counter()
            subprocess.run([args.cli, "encode", inp, out], check=True,
                           stdout=subprocess.DEVNULL)
            t_cli.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            msg = lib.encode(x)
            t_bind.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            st = lib._lib.tahq_encode(ctypes.byref(cfg), ctypes.byref(sh), x.ctypes.data,
                                      rwork.ctypes.data, ws.value, rbuf.ctypes.data,
                                      cap.value, ctypes.byref(n))
            t_raw.append(time.perf_counter() - t0)
            if st:
                raise RuntimeError("tahq_encode: %s" % lib.status_name(st))
        with open(out, "rb") as f:
            same = f.read() == msg and rbuf[:n.value].tobytes() == msg
    finally:
        for p in (inp, out):
            if os.path.exists(p):
                os.remove(p)
        os.rmdir(work)
    cli, bind, raw = min(t_cli), min(t_bind), min(t_raw)
    ratio = bind / cli
    print("encode %d MiB [%d, %d, %d] -> %d bytes, best of %d:"
          % (x.nbytes >> 20, B, S, C, len(msg), args.reps))
    print("  tahq encode (cli) %8.3f s   %s" % (cli, " ".join("%.3f" % t for t in t_cli)))
    print("  binding encode    %8.3f s   %s" % (bind, " ".join("%.3f" % t for t in t_bind)))
    print("  raw tahq_encode   %8.3f s   %s" % (raw, " ".join("%.3f" % t for t in t_raw)))
    print("  binding / cli = %.3f (limit %.2f); binding overhead over raw %.1f ms"
          % (ratio, args.max_ratio, (bind - raw) * 1e3))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mib": x.nbytes >> 20, "shape": [B, S, C], "bytes": len(msg),
                       "cli_s": t_cli, "binding_s": t_bind, "raw_s": t_raw,
                       "ratio": ratio}, f, indent=1)
    rc = 0
    if not same:
        print("FAIL: the binding's message differs from the tahq program's")
        rc = 1
    if ratio > args.max_ratio:
        print("FAIL: binding / cli = %.3f > %.2f" % (ratio, args.max_ratio))
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
