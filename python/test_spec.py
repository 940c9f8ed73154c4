#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run the independent Python implementation (golden/oracles/tahq_spec.py) against a golden
vector set (golden/v1 layout, see golden/README.md).

Checks, per kind:
  decode        every `encode` case: decode(expected/ID.bin) is bit-identical
                to expected/ID.npy; every `decode` case (a crafted valid
                message): decode(inputs/ID.bin) likewise
  decode_error  decode(inputs/ID.bin) fails with the expected error name
  encode_error  encode(inputs/ID.npy, config) fails with the expected name
  encode        encode(inputs/ID.npy, config) == expected/ID.bin byte for byte
  gain          gain allocation (alloc 3, SPEC 4.3) on constructed inputs, no
                vectors needed (--no-gain skips it): header version rules,
                gains computed by hand and against decoded errors, ranking
                and its key ties, a control where it differs from token
                allocation, round trips, r = 1000 and err_range

Exit status: 0 all selected checks passed, 1 a failure, 77 numpy missing
(CTest SKIP_RETURN_CODE), 2 usage error.
"""

import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("test_spec.py", "numpy", "install python3-numpy")

# the independent implementation is an oracle of golden/oracles (its README)
fx.use_tree("golden/oracles")
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
    ap.add_argument("--no-gain", action="store_true",
                    help="skip the gain allocation checks (they need no "
                         "vectors)")
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
             ("decode", "decode_error", "encode_error", "encode", "gain")}
    times = {k: 0.0 for k in stats}
    failures = []

    # --- pass 0: gain allocation (alloc 3), constructed inputs ---
    if not args.no_gain:
        t0 = time.time()
        gp, gf, glist = gain_tests(args.verbose)
        stats["gain"][0] += gp
        stats["gain"][1] += gf
        failures.extend(("gain", "-", m) for m in glist)
        times["gain"] = time.time() - t0

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
        if k == "gain" and args.no_gain:
            print("  %-13s not run (--no-gain)" % k)
            continue
        print("  %-13s passed %4d  failed %3d  skipped %3d  (%.1f s)"
              % (k, p, f, s, times[k]))
    for k in sorted(unknown):
        print("  skipped %d cases of kind %s (not format 1)" % (unknown[k], k))
    skipped = sum(v[2] for v in stats.values())
    if skipped:
        print("  note: %d checks skipped by --max-elements %d"
              % (skipped, args.max_elements))
    return 1 if failures else 0


# ---------------------------------------------------------------------------
# Gain allocation (alloc 3, SPEC 4.3, 8.1, 8.4): checks that need no vectors
# ---------------------------------------------------------------------------
TAU2 = 0x40000000  # tau = 2


def _reseal(msg):
    """Recompute the CRC of a (modified) message."""
    crc = ts.crc32c(bytes(msg[0:68]) + bytes(msg[ts.HEADER_BYTES:]))
    return bytes(msg[0:68]) + crc.to_bytes(4, "little") + bytes(msg[72:])


def _with_header(msg, version=None, alloc=None):
    m = bytearray(msg)
    if version is not None:
        m[4:6] = version.to_bytes(2, "little")
    if alloc is not None:
        m[11] = alloc
    return _reseal(m)


def _decode_status(msg):
    try:
        ts.decode(msg)
        return "ok"
    except ts.TahqError as e:
        return e.name


def _encode_status(x, cfg):
    try:
        ts.encode(x, cfg)
        return "ok"
    except ts.TahqError as e:
        return e.name


def _row_map(msg):
    """The precision map of a token or gain message, shape [B, S]."""
    h = ts.parse_header(msg)
    sec = msg[ts.HEADER_BYTES:ts.HEADER_BYTES + ts.bits_ceil_bytes(h["rows"])]
    return ts.unpack_bits(sec, 1, h["rows"]).astype(bool).reshape(h["B"], h["S"])


def _gcfg(**kw):
    base = dict(tile=8, hi_bits=3, lo_bits=1, hi_permille=500,
                alloc=ts.ALLOC_GAIN, tau_bits=ts.TAU_INF_BITS,
                meta=ts.META_FP16)
    base.update(kw)
    return ts.Config(**base)


def _tsum64(v):
    """Independent SPEC 2.5 tree sum in binary64 over the last axis (loop
    over j, written out)."""
    v = np.array(v, dtype=np.float64)
    n = v.shape[-1]
    h = n // 2
    while h >= 1:
        for j in range(h):
            v[..., j] = v[..., j] + v[..., j + h]
        h //= 2
    return v[..., 0]


def _psum64(w):
    """Independent pairwise sum in binary64 (recursive, padding skipped)."""
    t = w.shape[-1]
    if t == 1:
        return w[..., 0]
    p = 1
    while p < t:
        p *= 2
    half = p // 2
    if half >= t:
        return _psum64(w)
    return _psum64(w[..., :half]) + _psum64(w[..., half:])


def _decoded_sq_error(x, cfg, bits):
    """Per-row decoded-domain squared error of alloc none at width `bits`,
    per tile: D = fl32(x^ - x)^2 in binary64, tile tree sums (SPEC 2.5),
    returned per tile [rows, T]."""
    c = ts.Config(**{**cfg.__dict__, "alloc": ts.ALLOC_NONE,
                     "hi_bits": bits, "lo_bits": bits})
    y = ts.decode(ts.encode(x, c))
    d = (y - x).astype(np.float32).astype(np.float64)
    B, S, C = x.shape
    G = cfg.tile
    return _tsum64((d * d).reshape(B * S, C // G, G))


def gain_tests(verbose=False):
    """Run the gain checks; an exception counts as one more failure.
    Returns (passed, failed, failure lines)."""
    res = {"pass": 0, "fail": []}
    try:
        _gain_checks(res, verbose)
    except Exception as e:  # noqa: BLE001 - report, do not abort the run
        res["fail"].append("exception: %r" % (e,))
        print("FAIL gain: exception %r" % (e,))
    return res["pass"], len(res["fail"]), res["fail"]


def _gain_checks(res, verbose):

    def check(cond, what):
        if cond:
            res["pass"] += 1
            if verbose:
                print("ok   gain: %s" % what)
        else:
            res["fail"].append(what)
            print("FAIL gain: %s" % what)

    rng = np.random.default_rng(20250917)

    # --- header: version 3 if and only if alloc 3 (SPEC 8.1, 8.4) ---
    x = (rng.standard_normal((2, 4, 32)) * 0.7).astype(np.float32)
    gmsg = ts.encode(x, _gcfg(tau_bits=TAU2))
    tmsg = ts.encode(x, _gcfg(tau_bits=TAU2, alloc=ts.ALLOC_TOKEN))
    check(gmsg[4:6] == b"\x03\x00" and gmsg[11] == 3,
          "gain message carries version 3 and alloc 3")
    for a in (ts.ALLOC_NONE, ts.ALLOC_TOKEN, ts.ALLOC_TILE):
        m = ts.encode(x, _gcfg(tau_bits=TAU2, alloc=a))
        check(m[4:6] == b"\x01\x00", "alloc %d message carries version 1" % a)
    check(_decode_status(gmsg) == "ok", "gain message decodes")
    check(_decode_status(_reseal(gmsg)) == "ok",
          "control: resealing an unchanged message keeps it valid")
    check(ts.parse_header(gmsg)["version"] == 3, "parse_header version 3")
    for what, m, want in (
            ("version 1 + alloc 3", _with_header(gmsg, version=1), "err_header"),
            ("version 3 + alloc 1", _with_header(tmsg, version=3), "err_header"),
            ("version 3 + alloc 0", _with_header(tmsg, version=3, alloc=0),
             "err_header"),
            ("version 3 + alloc 2", _with_header(tmsg, version=3, alloc=2),
             "err_header"),
            ("version 3 + alloc 4", _with_header(gmsg, alloc=4), "err_header"),
            ("version 1 + alloc 4", _with_header(tmsg, alloc=4), "err_header"),
            ("version 2 (gain message)", _with_header(gmsg, version=2),
             "err_version"),
            ("version 2 (token message)", _with_header(tmsg, version=2),
             "err_version"),
            ("version 4", _with_header(gmsg, version=4), "err_version"),
            ("version 2 before a bad alloc", _with_header(tmsg, version=2,
                                                          alloc=9),
             "err_version"),
            ("version 2, 8 bytes", _with_header(gmsg, version=2)[:8],
             "err_version"),
            ("version 3, 40 bytes", gmsg[:40], "err_truncated")):
        got = _decode_status(m)
        check(got == want, "%s: %s (expected %s)" % (what, got, want))
    check(_encode_status(x, _gcfg(alloc=4)) == "err_config",
          "encode alloc 4: err_config")
    check(ts.Config.from_manifest(dict(
        tile=8, hi_bits=3, lo_bits=1, hi_permille=500, alloc="gain",
        tau_bits="7f800000", rounding="nearest", seed=0, meta="fp16")).alloc
        == ts.ALLOC_GAIN, "manifest name 'gain' reads as alloc 3")
    # map counts of a gain message are checked per sequence (SPEC 8.4 step 5)
    mp = _row_map(gmsg)
    lows = np.flatnonzero(mp[0])
    highs = np.flatnonzero(~mp[0])
    m = bytearray(gmsg)
    m[72] ^= 1 << int(lows[0])
    check(_decode_status(_reseal(m)) == "err_payload",
          "one map bit cleared: err_payload")
    m[72] ^= 1 << int(highs[0])
    check(_decode_status(_reseal(m)) == "ok",
          "control: a map bit moved within the sequence decodes")

    # --- exact gains by hand (SPEC 4.3 steps 1-3) ---
    # A tile c*(0..7), G = 8, unflagged: at 3 bits s = c and every value is on
    # the grid (e_hi = 0); at 1 bit s = 7c, codes 0 for 0..3, 1 for 4..7, so
    # d/c = 0,-1,-2,-3,3,2,1,0 and e_lo = 28 c^2.
    cs = np.array([[1, 2], [4, 1], [0.5, 0.25], [1, 0]], dtype=np.float32)
    xh = (cs[:, :, None] * np.arange(8, dtype=np.float32)).reshape(1, 4, 16)
    sg = ts.gain_sigma(xh, _gcfg())
    want = 28.0 * (cs.astype(np.float64) ** 2).sum(axis=1)
    check(np.array_equal(sg[0], want),
          "sigma of c*(0..7) tiles = 28 sum c^2: %s vs %s" % (sg[0], want))
    # A flagged tile [8, 2, 1, 0, ...] (tau = 2): its transform has the four
    # values (8 +-2 +-1) / 2^ceil(k/2), each G/4 times; at 2 bits they lie on
    # the grid, at 1 bit two of them are off by w/3, which gives a decoded
    # error of exactly 2 for every G (for odd k, 1 in the transformed domain,
    # times 2).
    for G in (8, 16, 32, 64, 128, 256):
        xt = np.zeros((1, 1, G), dtype=np.float32)
        xt[0, 0, :3] = [8, 2, 1]
        c = _gcfg(tile=G, hi_bits=2, lo_bits=1, tau_bits=TAU2)
        s = ts.gain_sigma(xt, c)[0, 0]
        e1 = _decoded_sq_error(xt, c, 1)[0, 0]
        e2 = _decoded_sq_error(xt, c, 2)[0, 0]
        check(s == 2.0 and e1 == 2.0 and e2 == 0.0,
              "flagged [8,2,1] G=%d: sigma %r, decoded errors %r/%r"
              % (G, s, e1, e2))

    # --- sigma against decoded-domain errors on random input ---
    for G in (8, 16, 32, 64):
        for rounding in (0, 1):
            for hb, lb in ((4, 3), (3, 1), (8, 2), (5, 5)):
                xr = (rng.standard_normal((2, 3, 4 * G))
                      * rng.choice([1e-3, 1.0, 50.0], size=(2, 3, 1))
                      ).astype(np.float32)
                c = _gcfg(tile=G, hi_bits=hb, lo_bits=lb, rounding=rounding,
                          seed=int(rng.integers(2 ** 63)))
                # unflagged (tau = inf): decoded = v^, so sigma is exact
                e_lo = _decoded_sq_error(xr, c, lb)
                e_hi = _decoded_sq_error(xr, c, hb)
                want = _psum64(e_lo - e_hi).reshape(2, 3)
                got = ts.gain_sigma(xr, c)
                check(np.array_equal(got, want),
                      "tau=inf G=%d round=%d %d/%d: sigma equals the decoded"
                      " error difference" % (G, rounding, hb, lb))
                # flagged (tau = 0): equal up to the transform's rounding
                c0 = ts.Config(**{**c.__dict__, "tau_bits": 0})
                e_lo = _decoded_sq_error(xr, c0, lb)
                e_hi = _decoded_sq_error(xr, c0, hb)
                ref = _psum64(e_lo - e_hi).reshape(2, 3)
                tol = 1e-4 * _psum64(e_lo + e_hi).reshape(2, 3) + 1e-30
                got = ts.gain_sigma(xr, c0)
                check(bool(np.all(np.abs(got - ref) <= tol)),
                      "tau=0 G=%d round=%d %d/%d: sigma %s ~ decoded %s"
                      % (G, rounding, hb, lb, got.ravel()[:3],
                         ref.ravel()[:3]))
                if G in (8, 32) and hb != lb:
                    # control: without the factor 2 of odd log2 G it fails
                    check(not np.all(np.abs(got / 2 - ref) <= tol),
                          "control G=%d: sigma/2 is not the decoded error" % G)

    # --- keys (SPEC 4.3 step 4) ---
    vals = np.array([-np.inf, -1e300, -1.0, -5e-324, -0.0, 0.0, 5e-324,
                     1e-300, 1.0, 3.0, np.inf])
    k = ts.gain_key(vals).astype(np.int64)
    dk = np.diff(k)
    check(bool(np.all(dk[[0, 1, 2, 4, 6, 7, 8, 9]] > 0) and dk[3] == 0
               and dk[5] == 0),
          "keys order as the values, -0 below +0: %s" % k)
    check(k[5] == 0x80000000 and k[6] == 0x80000000 and k[4] == 0x7FFFFFFF
          and k[3] == 0x7FFFFFFF, "key = top 32 bits (denormals tie with 0)")

    # --- ranking (SPEC 4.3, last paragraph) ---
    def ranked(cs_rows, cfg):
        c2 = np.asarray(cs_rows, dtype=np.float32)
        xx = (c2[..., None] * np.arange(8, dtype=np.float32))
        xx = xx.reshape(c2.shape[0], c2.shape[1], -1)
        return xx, _row_map(ts.encode(xx, cfg)), ts.gain_sigma(xx, cfg)

    # sequence 0: sigma 140, 476, 8.75, 28 -> low(4) = 2 at r = 500: rows 2, 3
    # sequence 1: sigma 56, 28 + 28*2^-40, 28, 112: rows 1 and 2
    e = 2.0 ** -20
    cs2 = [[[1, 2], [4, 1], [0.5, 0.25], [1, 0]],
           [[1, 1], [1, e], [1, 0], [2, 0]]]
    _, mp, sg = ranked(cs2, _gcfg(meta=ts.META_FP32))
    check(mp.tolist() == [[False, False, True, True], [False, True, True, False]],
          "r=500: low tokens are the smallest gains: %s" % mp.tolist())
    # r = 750: one low token per sequence; in sequence 1 rows 1 and 2 have
    # keys that tie (sigma differs in the low 32 bits), so row 1 wins
    _, mp, sg = ranked(cs2, _gcfg(meta=ts.META_FP32, hi_permille=750))
    check(sg[1, 1] > sg[1, 2] and ts.gain_key(sg[1, 1]) == ts.gain_key(sg[1, 2]),
          "control: sigma 28(1+2^-40) > 28 with equal keys")
    check(mp.tolist() == [[False, False, True, False], [False, True, False, False]],
          "r=750: key tie goes to the lower row: %s" % mp.tolist())
    # the same rows swapped: the smaller sigma is now the lower row
    cs3 = [cs2[0], [[1, 1], [1, 0], [1, e], [2, 0]]]
    _, mp, _ = ranked(cs3, _gcfg(meta=ts.META_FP32, hi_permille=750))
    check(mp[1].tolist() == [False, True, False, False],
          "r=750 swapped: lower row again: %s" % mp[1].tolist())
    # lo == hi: every gain is +0, so the first low(S) rows of each sequence
    xr = (rng.standard_normal((3, 5, 16)) * 3).astype(np.float32)
    mp = _row_map(ts.encode(xr, _gcfg(hi_bits=4, lo_bits=4, hi_permille=600)))
    check(mp.tolist() == [[True, True, False, False, False]] * 3,
          "lo == hi: the first low(S) rows: %s" % mp.tolist())
    # a negative gain ranks below a zero one (the all-zero row 0)
    neg = np.array([-0.000945886189583689, -0.0007368704536929727,
                    0.00017119914991781116, 0.0003792624338530004,
                    0.002640115562826395, -0.0009913630783557892,
                    0.0002300710475537926, -0.0007514102617278695],
                   dtype=np.float32)
    xn = np.zeros((1, 2, 8), dtype=np.float32)
    xn[0, 1] = neg
    cn = _gcfg(hi_bits=3, lo_bits=2)
    sg = ts.gain_sigma(xn, cn)
    mp = _row_map(ts.encode(xn, cn))
    check(sg[0, 0] == 0.0 and sg[0, 1] < 0.0,
          "control: a token whose 2-bit error is below its 3-bit error: %r"
          % sg[0, 1])
    check(mp.tolist() == [[False, True]], "negative gain ranks first: %s"
          % mp.tolist())
    # gain differs from entropy: row 1 = row 0 * 2^-12 has the same entropy
    # (token: the tie goes to row 0) and a 2^-24 smaller gain (gain: row 1)
    base = (rng.standard_normal((4, 64)) * 5).astype(np.float32)
    xe = np.stack([base, base * np.float32(2.0 ** -12)], axis=1)  # [4, 2, 64]
    ce = _gcfg(tile=16, hi_bits=4, lo_bits=2, tau_bits=TAU2)
    H = ts._entropy_units(np.abs(xe).reshape(8, 4, 16)).reshape(4, 2)
    check(bool(np.all(H[:, 0].view(np.uint32) == H[:, 1].view(np.uint32))),
          "control: the scaled rows have the same entropy bits")
    mg = _row_map(ts.encode(xe, ce))
    mt = _row_map(ts.encode(xe, ts.Config(**{**ce.__dict__,
                                             "alloc": ts.ALLOC_TOKEN})))
    check(mg[:, 1].all() and not mg[:, 0].any(),
          "gain picks the small-range rows: %s" % mg.tolist())
    check(mt[:, 0].all() and not mt[:, 1].any(),
          "control: token picks row 0 (entropy tie): %s" % mt.tolist())
    # random input of very different token ranges: within each sequence
    # every low token's key is at most every high token's key
    for G, hb, lb, tau in ((8, 4, 3, TAU2), (32, 3, 1, 0), (64, 8, 4,
                                                             ts.TAU_INF_BITS)):
        xr = (rng.standard_normal((3, 12, 2 * G))
              * np.exp(rng.uniform(-8, 8, size=(3, 12, 1)))).astype(np.float32)
        c = _gcfg(tile=G, hi_bits=hb, lo_bits=lb, tau_bits=tau,
                  hi_permille=700)
        mp = _row_map(ts.encode(xr, c))
        key = ts.gain_key(ts.gain_sigma(xr, c)).astype(np.int64)
        ok = all(key[b][mp[b]].max() <= key[b][~mp[b]].min()
                 and mp[b].sum() == ts.low_count(12, 700) for b in range(3))
        tmap = _row_map(ts.encode(xr, ts.Config(**{**c.__dict__,
                                                   "alloc": ts.ALLOC_TOKEN})))
        check(ok, "G=%d: low tokens have the smallest keys" % G)
        check(not np.array_equal(mp, tmap),
              "control G=%d: gain map differs from token map" % G)

    # --- round trip: each row decodes as alloc none at its width ---
    for i in range(12):
        G = (8, 16, 32, 64)[i % 4]
        hb = int(rng.integers(1, 9))
        lb = int(rng.integers(1, hb + 1))
        B, S = int(rng.integers(1, 4)), int(rng.integers(1, 7))
        xr = (rng.standard_normal((B, S, G * int(rng.integers(1, 4))))
              * np.exp(rng.uniform(-4, 4, size=(B, S, 1)))).astype(np.float32)
        c = _gcfg(tile=G, hi_bits=hb, lo_bits=lb,
                  hi_permille=int(rng.integers(0, 1001)),
                  tau_bits=(0, TAU2, ts.TAU_INF_BITS)[i % 3],
                  rounding=i % 2, seed=int(rng.integers(2 ** 63)),
                  meta=i % 3)
        msg = ts.encode(xr, c)
        y = ts.decode(msg)
        mp = _row_map(msg)
        h = ts.parse_header(msg)
        parts = {}
        for b in {hb, lb}:
            parts[b] = ts.decode(ts.encode(xr, ts.Config(**{
                **c.__dict__, "alloc": ts.ALLOC_NONE, "hi_bits": b,
                "lo_bits": b})))
        want = np.where(mp[..., None], parts[lb], parts[hb])
        check(h["n_low"] == B * ts.low_count(S, c.hi_permille)
              and y.view(np.uint32).tobytes() == want.view(np.uint32).tobytes(),
              "round trip %d (G=%d %d/%d r=%d): rows decode as alloc none at"
              " their width" % (i, G, hb, lb, c.hi_permille))

    # --- r = 1000 and err_range ---
    # row 0: c*(0..7) with c = 14000: at 1 bit s = 98000 > 65504 (fp16), at
    # 8 bits s = 98000/255. Row 1: one spike, lower entropy, so token
    # allocation gives row 0 hi_bits.
    xo = np.zeros((1, 2, 8), dtype=np.float32)
    xo[0, 0] = np.arange(8, dtype=np.float32) * 14000
    xo[0, 1, 0] = 1.0
    co = _gcfg(hi_bits=8, lo_bits=1)
    got = _encode_status(xo, co)
    check(got == "err_range", "gain, 1-bit scale above fp16: %s" % got)
    got = _encode_status(xo, ts.Config(**{**co.__dict__,
                                         "alloc": ts.ALLOC_TOKEN}))
    check(got == "ok", "control: token allocation encodes it: %s" % got)
    got = _encode_status(xo, ts.Config(**{**co.__dict__,
                                         "meta": ts.META_BF16}))
    check(got == "ok", "control: gain with bf16 metadata encodes it: %s" % got)
    xo2 = xo.copy()
    xo2[0, 0] = np.arange(8, dtype=np.float32) * 9000  # 63000 fits fp16
    got = _encode_status(xo2, co)
    check(got == "ok", "control: gain with 1-bit scale 63000: %s" % got)
    co1000 = ts.Config(**{**co.__dict__, "hi_permille": 1000})
    got = _encode_status(xo, co1000)
    check(got == "ok", "r=1000: no key, no err_range: %s" % got)
    xo3 = xo.copy()
    xo3[0, 0, 7] = -80000.0   # zero-point below fp16 at every width
    got = _encode_status(xo3, co1000)
    check(got == "err_range", "r=1000: the tile loop still fails: %s" % got)
    # r = 1000: the payload is token's; the header differs in version, alloc
    # and CRC only
    xr = (rng.standard_normal((2, 3, 64))).astype(np.float32)
    for rnd in (0, 1):
        c = _gcfg(tile=16, hi_permille=1000, tau_bits=TAU2, rounding=rnd,
                  seed=99)
        g = ts.encode(xr, c)
        t = ts.encode(xr, ts.Config(**{**c.__dict__, "alloc": ts.ALLOC_TOKEN}))
        diff = [i for i in range(len(g)) if g[i] != t[i]]
        check(len(g) == len(t) and set(diff) <= {4, 11, 68, 69, 70, 71}
              and {4, 11} <= set(diff) and not _row_map(g).any(),
              "r=1000 rounding %d: token's payload, bytes %s differ"
              % (rnd, diff))

    # stochastic rounding: the gain depends on the seed (control)
    xr = (rng.standard_normal((1, 8, 32))).astype(np.float32)
    c = _gcfg(tile=32, hi_bits=3, lo_bits=2, rounding=1, seed=1)
    s1 = ts.gain_sigma(xr, c)
    s2 = ts.gain_sigma(xr, ts.Config(**{**c.__dict__, "seed": 2}))
    check(not np.array_equal(s1, s2), "stochastic: sigma depends on the seed")


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
        nb = ts.bits_ceil_bytes(h["rows"] if h["alloc"] in ts.ROW_MAP_ALLOCS else N)
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
