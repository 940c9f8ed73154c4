#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check the ctypes binding (python/tahq.py) over libtahq.

  1. round trip of a tensor through the binding, format 1 and paper-v1; the
     message bytes and the decoded tensor equal the tahq program's output;
  2. golden cases (encode and paper_v1 kinds) encode to the expected bytes
     and decode to the expected tensor;
  3. library errors arrive as TahqError with the status name and message.

Exit status: 0 passed, 1 failed, 77 numpy missing (CTest skip).
"""

import argparse
import json
import os
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("test_binding.py", "numpy", "install python3-numpy")

fx.use_tree("python")
import tahq  # noqa: E402
from tahq_fixtures import check, verdict  # noqa: E402


def same_f32(a, b):
    return a.shape == b.shape and a.astype(np.float32).view(np.uint32).tobytes() == \
        b.astype(np.float32).view(np.uint32).tobytes()


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                r.stderr.decode(errors="replace")))


def test_roundtrip(lib, cli, work):
    rng = np.random.default_rng(20250601)
    x = (rng.standard_normal((2, 16, 128)) * 0.5).astype(np.float32)
    x[0, 3, 17] = 40.0  # an outlier tile
    x[1, 5, :64] = 0.0  # an all-zero tile
    inp = os.path.join(work, "x.npy")
    np.save(inp, x)

    msg = lib.encode(x)
    run([cli, "encode", inp, os.path.join(work, "x.tahq")])
    with open(os.path.join(work, "x.tahq"), "rb") as f:
        check(f.read() == msg, "format 1: binding bytes differ from tahq encode")
    y = lib.decode(msg)
    run([cli, "decode", os.path.join(work, "x.tahq"), os.path.join(work, "x.dec.npy")])
    check(same_f32(y, np.load(os.path.join(work, "x.dec.npy"))),
          "format 1: binding decode differs from tahq decode")
    err = np.abs(y.astype(np.float64) - x).max()
    check(err < 0.5, "format 1: max error %g" % err)
    h = lib.parse_header(msg)
    check(h["shape"] == (2, 16, 128) and h["tile"] == 64, "header %r" % (h,))

    p = lib.encode_paper_v1(x, tile=32, hi_bits=4, lo_bits=3, hi_permille=750)
    run([cli, "encode", "--profile", "paper-v1", "--tile", "32", "--ratio", "750", inp,
         os.path.join(work, "x.pv1")])
    with open(os.path.join(work, "x.pv1"), "rb") as f:
        check(f.read() == p, "paper-v1: binding bytes differ from tahq encode")
    yp = lib.decode_paper_v1(p, x.shape, tile=32, hi_permille=750)
    run([cli, "decode", "--profile", "paper-v1", "--shape", "2x16x128", "--tile", "32",
         "--ratio", "750", os.path.join(work, "x.pv1"), os.path.join(work, "x.pv1.npy")])
    check(same_f32(yp, np.load(os.path.join(work, "x.pv1.npy"))),
          "paper-v1: binding decode differs from tahq decode")
    rel = ((yp.astype(np.float64) - x) ** 2).sum() / (x.astype(np.float64) ** 2).sum()
    check(rel < 0.05, "paper-v1: relative MSE %g" % rel)
    print("round trip: format 1 %d bytes, paper-v1 %d bytes (rel MSE %.3g)"
          % (len(msg), len(p), rel))


def golden_config(lib, c):
    tau = struct.unpack("<f", struct.pack("<I", int(c["tau_bits"], 16)))[0]
    return lib.config(tile=c["tile"], hi_bits=c["hi_bits"], lo_bits=c["lo_bits"],
                      hi_permille=c["hi_permille"], alloc=c["alloc"], tau=tau,
                      rounding=c["rounding"], seed=int(c["seed"]), meta=c["meta"])


def test_golden(lib, vectors, max_cases):
    with open(os.path.join(vectors, "manifest.json")) as f:
        man = json.load(f)
    done = {"encode": 0, "paper_v1": 0}
    for case in man["cases"]:
        kind = case["kind"]
        if kind not in done or done[kind] >= max_cases:
            continue
        n = case["shape"][0] * case["shape"][1] * case["shape"][2]
        if n > 1 << 18:
            continue
        x = np.load(os.path.join(vectors, case["input"]["path"]))
        with open(os.path.join(vectors, case["message"]["path"]), "rb") as f:
            want = f.read()
        dec = np.load(os.path.join(vectors, case["decoded"]["path"]))
        if kind == "encode":
            cfg = golden_config(lib, case["config"])
            got = lib.encode(x, cfg)
            y = lib.decode(want)
        else:
            c = case["config"]
            cfg = lib.paper_v1_config(tile=c["tile"], hi_bits=c["hi_bits"],
                                      lo_bits=c["lo_bits"], hi_permille=c["hi_permille"])
            got = lib.encode_paper_v1(x, cfg)
            y = lib.decode_paper_v1(want, case["shape"], cfg)
        check(got == want, "golden %s: encoded bytes differ" % case["id"])
        check(same_f32(y, dec), "golden %s: decoded tensor differs" % case["id"])
        done[kind] += 1
    print("golden: %d encode cases, %d paper_v1 cases" % (done["encode"], done["paper_v1"]))
    check(done["encode"] > 0, "no golden encode case ran")


def expect_error(fn, name, what):
    try:
        fn()
    except tahq.TahqError as e:
        check(e.name == name, "%s: got %s, expected %s" % (what, e.name, name))
        check(name in str(e) and e.message and e.message in str(e),
              "%s: message %r" % (what, str(e)))
        return
    check(False, "%s: no TahqError" % what)


def test_errors(lib):
    expect_error(lambda: lib.decode(b"TAH"), "err_truncated", "short message")
    expect_error(lambda: lib.decode(b"XXXX" + bytes(100)), "err_magic", "bad magic")
    x = np.zeros((1, 2, 64), dtype=np.float32)
    x[0, 1, 3] = np.nan
    expect_error(lambda: lib.encode(x), "err_nonfinite", "NaN input")
    expect_error(lambda: lib.encode(np.zeros((1, 2, 48), np.float32)), "err_shape", "C = 48")
    expect_error(lambda: lib.encode(np.zeros((1, 1, 64), np.float32), tile=48), "err_config",
                 "tile 48")
    p = lib.encode_paper_v1(np.ones((1, 4, 64), np.float32))
    expect_error(lambda: lib.decode_paper_v1(p[:-1], (1, 4, 64)), "err_truncated",
                 "paper-v1 short")
    expect_error(lambda: lib.decode_paper_v1(p + b"\0", (1, 4, 64)), "err_size",
                 "paper-v1 long")
    try:
        lib.encode(np.zeros((1, 1, 64)))
        check(False, "float64 input accepted")
    except TypeError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    ap.add_argument("--cli", required=True, help="the tahq program")
    ap.add_argument("--vectors", required=True, help="golden set directory")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--max-cases", type=int, default=40)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    lib = tahq.Library(args.lib)
    test_roundtrip(lib, args.cli, args.workdir)
    test_golden(lib, args.vectors, args.max_cases)
    test_errors(lib)
    return verdict("test_binding.py")


if __name__ == "__main__":
    sys.exit(main())
