#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Python's tahq.encode / tahq.decode against the tahq program's parallel
codec on the same 64 MiB tensor, the same threads, in one run (a benchmark,
not a test: it fails only when the bytes or floats differ).

For each thread count T (--threads, default 1 and 2):
  cli bench    `tahq bench --threads T --json`: tahq_encode_parallel /
               tahq_decode_parallel in the program, buffers allocated
               beforehand (canonical nearest, parallel codec, T threads);
  python       tahq.encode(x, threads=T) -> bytes, and tahq.decode(msg,
               threads=T) into a new array, as a caller uses them;
  python out=  tahq.decode(msg, threads=T, out=y) into an array allocated
               beforehand (what `tahq bench` times);
  raw call     tahq_encode_parallel / tahq_decode_parallel called through
               ctypes with every buffer allocated beforehand, in this process
               (the binding's own cost is python out= against it);
  cli wall     `tahq encode --threads T x.npy m.tahq` and `tahq decode
               --threads T m.tahq y.npy`: whole commands (process start,
               file reading and writing).
The tensor is `tahq gen-llm` [8, 1024, 2048] (64 MiB), the data `tahq bench
--mib 64` encodes. GB/s = 10^9 float32 bytes per second, best of --reps
repetitions in each of --rounds rounds; each round runs every measurement
once more, in the same order, so that a busy moment of a shared machine
does not fall on one side only. Prints the ratios python / cli bench;
--results FILE appends the table with the date and machine.

Exit status: 0 ran (bytes and floats identical), 1 a difference, 77 numpy
missing.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    print("bench_vs_cli.py: SKIP: numpy is not available for %s" % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tahq  # noqa: E402

SHAPE = (8, 1024, 2048)  # tahq bench --mib 64


def best(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def cli_bench(cli, threads, reps):
    out = subprocess.run([cli, "bench", "--mib", "64", "--reps", str(reps), "--threads",
                          str(threads), "--json"], check=True, stdout=subprocess.PIPE).stdout
    d = json.loads(out)
    for r in d["results"]:
        if (r["profile"], r["rounding"], r["codec"], r["threads"]) == \
                ("canonical", "nearest", "parallel", threads):
            return r["encode_gbps"], r["decode_gbps"], r["message_bytes"]
    raise RuntimeError("tahq bench printed no canonical nearest parallel row for %d threads"
                       % threads)


def raw_calls(lib, x, msg, y, threads):
    """The bare library calls, buffers and arguments prepared beforehand."""
    ct = tahq.ctypes
    cfg, sh = lib.config(), tahq._Shape(*x.shape)
    par = tahq._Parallel(jobs=threads)
    cap, ws = ct.c_size_t(), ct.c_size_t()
    lib._check(lib._lib.tahq_encode_bound(ct.byref(cfg), ct.byref(sh), ct.byref(cap)), "bound")
    lib._check(lib._lib.tahq_encode_parallel_workspace_size(ct.byref(cfg), ct.byref(sh),
                                                            threads, ct.byref(ws)), "ws")
    out = np.zeros(cap.value, np.uint8)
    work = np.zeros(max(ws.value, 1), np.uint8)
    n = ct.c_size_t()
    m = np.frombuffer(msg, np.uint8)

    def encode():
        lib._check(lib._lib.tahq_encode_parallel(
            ct.byref(cfg), ct.byref(sh), x.ctypes.data, work.ctypes.data, ws.value,
            out.ctypes.data, cap.value, ct.byref(n), ct.byref(par)), "encode")

    def decode():
        lib._check(lib._lib.tahq_decode_parallel(m.ctypes.data, m.size, y.ctypes.data, y.size,
                                                 ct.byref(par)), "decode")
    return encode, decode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    ap.add_argument("--cli", required=True, help="the tahq program")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--results", help="append the table to this file (markdown)")
    args = ap.parse_args()
    lib = tahq.Library(args.lib)
    work = tempfile.mkdtemp(prefix="tahq-bench-")
    rc = 0
    rows = []
    try:
        npy, msg_path, y_path = (os.path.join(work, n) for n in ("x.npy", "m.tahq", "y.npy"))
        subprocess.run([args.cli, "gen-llm", npy, "--batch", str(SHAPE[0]), "--seq",
                        str(SHAPE[1]), "--channels", str(SHAPE[2])], check=True,
                       stdout=subprocess.DEVNULL)
        x = np.load(npy)
        gb = x.nbytes / 1e9
        fastest = {}  # (threads, measurement) -> best GB/s over the rounds

        def keep(t, what, gbps):
            fastest[t, what] = max(gbps, fastest.get((t, what), 0.0))

        for _ in range(args.rounds):
            for t in args.threads:
                enc_cli, dec_cli, cli_len = cli_bench(args.cli, t, args.reps)
                keep(t, "enc_cli", enc_cli)
                keep(t, "dec_cli", dec_cli)
                msg = lib.encode(x, threads=t)
                y = lib.decode(msg, threads=t)
                keep(t, "enc_py", gb / best(lambda: lib.encode(x, threads=t), args.reps))
                keep(t, "dec_py", gb / best(lambda: lib.decode(msg, threads=t), args.reps))
                keep(t, "dec_out", gb / best(lambda: lib.decode(msg, threads=t, out=y),
                                             args.reps))
                enc_raw, dec_raw = raw_calls(lib, x, msg, y, t)
                keep(t, "enc_raw", gb / best(enc_raw, args.reps))
                keep(t, "dec_raw", gb / best(dec_raw, args.reps))
                keep(t, "enc_wall", gb / best(lambda: subprocess.run(
                    [args.cli, "encode", "--threads", str(t), npy, msg_path], check=True,
                    stdout=subprocess.DEVNULL), args.reps))
                keep(t, "dec_wall", gb / best(lambda: subprocess.run(
                    [args.cli, "decode", "--threads", str(t), msg_path, y_path], check=True,
                    stdout=subprocess.DEVNULL), args.reps))
                with open(msg_path, "rb") as f:
                    same_msg = f.read() == msg and len(msg) == cli_len
                same_y = np.load(y_path).view(np.uint32).tobytes() == \
                    y.view(np.uint32).tobytes()
                if not (same_msg and same_y):
                    print("DIFFERENCE at %d threads: message %s, decoded floats %s"
                          % (t, "same" if same_msg else "differs",
                             "same" if same_y else "differ"))
                    rc = 1
        for t in args.threads:
            rows.append((t,) + tuple(fastest[t, k] for k in (
                "enc_cli", "enc_py", "enc_raw", "enc_wall", "dec_cli", "dec_py", "dec_out",
                "dec_raw", "dec_wall")))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    head = ("| threads | encode: cli bench | python | ratio | raw call | cli wall | "
            "decode: cli bench | python | ratio | python out= | ratio | raw call | cli wall |")
    lines = [head, "|" + "---|" * 13]
    for t, ec, ep, er, ew, dc, dp, do, dr, dw in rows:
        lines.append("| %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %.2f | %.3f | "
                     "%.2f | %.3f | %.3f |" % (t, ec, ep, ep / ec, er, ew, dc, dp, dp / dc, do,
                                               do / dc, dr, dw))
    table = "\n".join(lines)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    about = ("%s, %s, %d CPUs, load %s; tensor gen-llm %s float32 (64 MiB), GB/s best of %d x %d"
             % (when, platform.platform(), os.cpu_count() or 0, load, list(SHAPE), args.reps,
                args.rounds))
    print(about)
    print(table)
    if args.results:
        with open(args.results, "a") as f:
            f.write("\n%s\n\n%s\n" % (about, table))
    return rc


if __name__ == "__main__":
    sys.exit(main())
