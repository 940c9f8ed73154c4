#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Gain allocation (alloc 3, ref/SPEC.md §4.3): the independent Python
implementation (golden/oracles/tahq_spec.py) against libtahq (through the ctypes binding)
on random small configurations.

For each case the two encoders must agree: either both write the same
message, byte for byte, or both fail with the same error name. Each message
is then decoded by both decoders (identical binary32 bits) and its header
read by the library (version 3, alloc "gain").

The inputs mix per-token scales over many orders of magnitude (the gain
ranks tokens by their added squared error), outlier tiles (the gate and the
factor 2 of odd log2 G), all-zero and constant tiles, repeated tokens (equal
gains, ties by row), integer grids, tiny values and values whose 1-bit scale
overflows fp16 (err_range while the keys are computed). Coverage counters
are printed and required to be non-zero, so a run that never reaches a
feature fails instead of passing vacuously.

Exit status: 0 passed, 1 a mismatch or missing coverage, 77 skipped (numpy
missing, or a libtahq that does not know alloc 3: it refuses it with
err_config; the run then checks nothing and says so).
"""

import argparse
import os
import struct
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("test_spec_vs_lib.py", "numpy", "install python3-numpy")

fx.use_tree("python", "golden/oracles")
import tahq  # noqa: E402
import tahq_spec as ts  # noqa: E402

TILES = (8, 16, 32, 64)
METAS = ("fp16", "bf16", "fp32")
ROUNDINGS = ("nearest", "stochastic")


def f32_bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def random_tau(rng):
    u = rng.integers(6)
    if u == 0:
        return 0.0
    if u == 1:
        return float("inf")
    if u == 2:
        return 2.0
    # a random binary32 >= 0 (exactly representable: the binding passes it
    # through a float32 field)
    return float(np.float32(rng.uniform(0.0, 6.0)))


def random_input(rng, B, S, C, G, kind):
    """float32 [B, S, C] with structure that matters to the gain."""
    x = rng.standard_normal((B, S, C))
    # per-token scales over many orders of magnitude
    x *= np.exp(rng.uniform(-10, 10, size=(B, S, 1)))
    if kind == 1:    # integer grid values (many exact reconstructions)
        x = np.round(rng.uniform(-8, 8, size=(B, S, C)))
    elif kind == 2:  # tiny values (subnormal metadata ranges)
        x = rng.standard_normal((B, S, C)) * 1e-36
    elif kind == 3:  # large values: 1-bit scales can overflow fp16
        x = rng.uniform(0, 1, size=(B, S, C)) * rng.choice([1e3, 4e4, 1e5])
    elif kind == 4:  # sparse tokens and one large one per sequence: fp16
        # scales of the large one overflow at a low width only, and entropy
        # ranks it high (so only the gain's extra width meets err_range)
        x = np.where(rng.random((B, S, C)) < 0.1, x, 0.0)
        x[:, rng.integers(S), :] = rng.uniform(0.5, 1, size=(B, C)) * 1e6
        return x.astype(np.float32)
    elif kind == 5:  # near ties: the tokens of a sequence are equal except
        # for one tile scaled by 2^-12, so their gains differ by about 2^-24
        # relative, below the key's resolution (ties then go by row)
        x[:] = x[:, :1, :]
        x[:, :, C - G:] = rng.standard_normal((B, S, G)) * 2.0 ** -12
        return x.astype(np.float32)
    x = x.astype(np.float32)
    flat = x.reshape(-1, G)
    n_tiles = flat.shape[0]
    # outliers: one dominant value in some tiles
    for t in rng.choice(n_tiles, size=rng.integers(0, n_tiles + 1), replace=True):
        flat[t, rng.integers(G)] *= np.float32(rng.choice([3.0, 30.0, -100.0]))
    # all-zero and constant tiles
    if rng.random() < 0.3:
        flat[rng.integers(n_tiles)] = 0.0
    if rng.random() < 0.3:
        flat[rng.integers(n_tiles)] = np.float32(rng.standard_normal())
    x = flat.reshape(B, S, C)
    # repeated tokens: equal gains, ties broken by the lower row
    if S > 1 and rng.random() < 0.4:
        for b in range(B):
            i, j = rng.choice(S, size=2, replace=False)
            x[b, j] = x[b, i]
    if rng.random() < 0.15:  # a whole sequence of equal tokens
        x[:] = x[:, :1, :]
    return np.ascontiguousarray(x, dtype=np.float32)


def random_case(rng, alloc):
    G = int(rng.choice(TILES))
    hb = int(rng.integers(1, 9))
    lb = int(rng.integers(1, hb + 1))
    if rng.random() < 0.5:  # the usual neighbouring widths more often
        hb = int(rng.integers(2, 9))
        lb = hb - 1
    u = rng.random()
    r = 1000 if u < 0.08 else 0 if u < 0.14 else int(rng.integers(0, 901))
    B = int(rng.integers(1, 4))
    S = int(rng.integers(1, 13))
    T = int(rng.integers(1, 5))
    cfg = dict(tile=G, hi_bits=hb, lo_bits=lb, hi_permille=r, alloc=alloc,
               tau=random_tau(rng), rounding=ROUNDINGS[rng.integers(2)],
               seed=int(rng.integers(0, 2 ** 63)) * 2 + int(rng.integers(2)),
               meta=METAS[rng.integers(3)])
    kind = int(rng.choice([0, 0, 0, 0, 1, 2, 3, 4, 4, 5, 5]))
    if kind == 5:
        S, T = max(S, 3), max(T, 2)
        cfg.update(hi_permille=int(rng.integers(100, 900)))
    if kind == 4:  # lo_bits <= 4 overflows fp16 at 1e6, hi_bits >= 5 fits
        S = max(S, 2)
        cfg.update(meta="fp16", lo_bits=int(rng.integers(1, 5)),
                   hi_bits=int(rng.integers(5, 9)), tau=float("inf"),
                   hi_permille=int(rng.choice([rng.integers(0, 500), 1000])))
    return cfg, random_input(rng, B, S, T * G, G, kind)


def spec_config(cfg):
    return ts.Config(tile=cfg["tile"], hi_bits=cfg["hi_bits"],
                     lo_bits=cfg["lo_bits"], hi_permille=cfg["hi_permille"],
                     alloc=ts.ALLOC_BY_NAME[cfg["alloc"]],
                     tau_bits=f32_bits(cfg["tau"]),
                     rounding=ts.ROUND_BY_NAME[cfg["rounding"]],
                     seed=cfg["seed"], meta=ts.META_BY_NAME[cfg["meta"]])


def outcome(fn):
    try:
        return "ok", fn()
    except (ts.TahqError, tahq.TahqError) as e:
        return e.name, None


def lib_knows_gain(lib):
    if "gain" not in tahq.ALLOC:
        return False, "the binding has no alloc name 'gain'"
    x = np.ones((1, 2, 8), dtype=np.float32)
    st, _ = outcome(lambda: lib.encode(x, tile=8, alloc="gain"))
    if st == "err_config":
        return False, "libtahq refuses alloc 3 (err_config)"
    if st != "ok":
        return False, "libtahq: encode with alloc 3 gives %s" % st
    return True, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=20250917)
    ap.add_argument("--alloc", default="gain", choices=sorted(ts.ALLOC_BY_NAME),
                    help="allocation to compare (default gain; the others "
                         "check the harness itself)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    lib = tahq.Library(args.lib)
    gain = args.alloc == "gain"
    if gain:
        ok, why = lib_knows_gain(lib)
        if not ok:
            fx.skip("test_spec_vs_lib.py", "%s; nothing was compared" % why)
    want_version = 3 if gain else 1

    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    fails = 0
    cov = dict.fromkeys(("identical", "err_range", "range_in_ranking", "r1000",
                         "r1000_no_keys", "no_low", "flagged",
                         "odd_k_flagged", "differs_from_token", "key_ties",
                         "tie_decides",
                         "negative_gain", "stochastic", "fp16", "bf16", "fp32"),
                        0)
    for i in range(args.cases):
        cfg, x = random_case(rng, args.alloc)
        scfg = spec_config(cfg)
        st_s, m_s = outcome(lambda: ts.encode(x, scfg))
        st_l, m_l = outcome(lambda: lib.encode(x, **cfg))
        what = "case %d %s shape %s" % (i, cfg, x.shape)
        if st_s != st_l:
            fails += 1
            print("FAIL %s: spec %s, library %s" % (what, st_s, st_l))
            continue
        if st_s != "ok":
            if st_s == "err_range":
                cov["err_range"] += 1
                # only the ranking's extra width fails (token encodes it)
                tcfg = ts.Config(**{**scfg.__dict__, "alloc": ts.ALLOC_TOKEN})
                if gain and outcome(lambda: ts.encode(x, tcfg))[0] == "ok":
                    cov["range_in_ranking"] += 1
            if args.verbose:
                print("ok   %s: both %s" % (what, st_s))
            continue
        if m_s != m_l:
            fails += 1
            n = min(len(m_s), len(m_l))
            first = next((j for j in range(n) if m_s[j] != m_l[j]), n)
            print("FAIL %s: messages differ (lengths %d/%d, first byte %d)"
                  % (what, len(m_s), len(m_l), first))
            continue
        cov["identical"] += 1
        # both decoders on the message; the library's header
        y_s = ts.decode(m_s)
        y_l = lib.decode(m_s)
        h = lib.parse_header(m_s)
        if y_s.view(np.uint32).tobytes() != y_l.view(np.uint32).tobytes():
            fails += 1
            print("FAIL %s: decoded values differ" % what)
            continue
        if h["version"] != want_version or h["alloc"] != args.alloc:
            fails += 1
            print("FAIL %s: header version %r alloc %r" % (what, h["version"],
                                                          h["alloc"]))
            continue
        if args.verbose:
            print("ok   %s: %d bytes" % (what, len(m_s)))
        # coverage
        B, S, C = x.shape
        k = cfg["tile"].bit_length() - 1
        cov[cfg["meta"]] += 1
        cov["stochastic"] += cfg["rounding"] == "stochastic"
        cov["r1000"] += cfg["hi_permille"] == 1000
        nl = ts.low_count(S, cfg["hi_permille"])
        cov["no_low"] += nl == 0
        if gain and nl == 0:  # keys at r = 500 would have failed
            c500 = ts.Config(**{**scfg.__dict__, "hi_permille": 500})
            cov["r1000_no_keys"] += S > 1 and \
                outcome(lambda: ts.encode(x, c500))[0] == "err_range"
        nf = ts.parse_header(m_s)["n_flagged"]
        cov["flagged"] += nf > 0
        cov["odd_k_flagged"] += nf > 0 and k % 2 == 1 and \
            cfg["lo_bits"] != cfg["hi_bits"]
        if gain and 0 < nl < S:
            tok = dict(cfg, alloc="token")
            st_t, m_t = outcome(lambda: lib.encode(x, **tok))
            if st_t == "ok" and m_t[72:] != m_s[72:]:
                cov["differs_from_token"] += 1
            sg = ts.gain_sigma(x, scfg)
            key = ts.gain_key(sg)
            cov["negative_gain"] += bool((sg < 0).any())
            cov["key_ties"] += any(len(set(key[b].tolist())) < S
                                   for b in range(B))
            # a token with the same key but a larger sigma got lo_bits while
            # one with a smaller sigma did not: only the 32-bit key explains
            # that map
            mp = ts.unpack_bits(m_s[72:72 + ts.bits_ceil_bytes(B * S)], 1,
                                B * S).astype(bool).reshape(B, S)
            cov["tie_decides"] += any(
                key[b, i] == key[b, j] and sg[b, i] > sg[b, j]
                for b in range(B) for i in np.flatnonzero(mp[b])
                for j in np.flatnonzero(~mp[b]))
    dt = time.time() - t0
    print("spec vs libtahq, alloc %s: %d random cases, %d identical "
          "messages, %d failures (%.1f s)" % (args.alloc, args.cases, cov["identical"],
                                              fails, dt))
    if not gain:  # gain-only features
        for k in ("differs_from_token", "key_ties", "negative_gain",
                  "range_in_ranking", "tie_decides", "r1000_no_keys"):
            cov.pop(k)
        if args.alloc == "none":
            for k in ("r1000", "no_low"):
                cov.pop(k)
    print("  coverage: " + ", ".join("%s %d" % kv for kv in cov.items()))
    missing = [k for k, v in cov.items() if v == 0]
    if missing:
        fails += 1
        print("FAIL: no case covered: %s" % ", ".join(missing))
    if fails:
        print("test_spec_vs_lib.py: %d failures" % fails)
        return 1
    print("test_spec_vs_lib.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
