#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""distinguish.py - search for the smallest input that tells a mutant of
catalogue.txt apart from the reference (golden/mutation/README.md).

For each mutant named, the mutant `tahq` and the unmutated control are built
as mutate.py builds them, and candidate inputs are tried in order of size:
both encode the input (format 1 or paper-v1); the candidate distinguishes
the mutant when the messages differ, or when the mutant decodes the
control's message to other values, or (invalid messages) when the two
report different statuses. The first distinguishing candidate of each
mutant is printed and written to --out (JSON: mutant, config, shape, the
input as hex binary32 words, or the message as hex).

Candidate families (all deterministic):
  pair      token allocation, S = 2, r = 500 (one low token): row A random,
            row B = A with one element moved by j ulps (j = ±1..±48), G = 8,
            16, 64, T = 1, 3, 7 tiles per row: the ranking of two nearly tied
            entropies, which every change of the entropy's arithmetic moves.
  perm      token allocation, S rows that are permutations of one row
            (equal entropies in real arithmetic; only the rounding of the
            sums ranks them).
  crafted   inputs written for one rule (listed in CRAFTED below).
  boundary  (--boundary) the boundary search of golden/v4: gain allocation
            (SPEC §4.3), S = 2, one low token, row B = row A with one element
            moved by j ulps (j = ±1, ±2, ±3, …), so that the two keys are
            equal or adjacent and the ranking sits on its boundary: a
            deviation of one ulp in any step before the key (the decoded
            value, the difference, a square, a sum, the ×2, the key's
            truncation or comparison) flips it. The configurations cycle
            through every axis in combination: G, tiles per row, widths,
            metadata type, rounding, τ (never, always, the gate at 2), and
            the candidates are tried smallest first.

With --hits N the search keeps going until N distinguishing inputs are
found for a mutant, each from a different group (a family and its random
row: two moves of the same row count once), so that a mutant is caught by
independent inputs; --exclude-found FILE skips the inputs FILE already
holds for it (the first search's findings), so that the new ones add to
them. --catalogue picks the catalogue (default catalogue.txt).
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402


# ---------------------------------------------------------------------------
# Philox4x32-10 and word(seed, i) (SPEC §2.4), for the crafted stochastic case
# ---------------------------------------------------------------------------

def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & 0xFFFFFFFF, p1 & 0xFFFFFFFF, \
            ((p0 >> 32) ^ c3 ^ k1) & 0xFFFFFFFF, p0 & 0xFFFFFFFF
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return [c0, c1, c2, c3]


assert philox([0, 0, 0, 0], [0, 0]) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]


def word(seed, i):
    b = i >> 2
    return philox([b & 0xFFFFFFFF, b >> 32, 0, 0], [seed & 0xFFFFFFFF, seed >> 32])[i & 3]


# ---------------------------------------------------------------------------
# candidates: (label, kind, config dict, shape, float32 array or message bytes)
# kind: "format1", "paper_v1", "message"
# ---------------------------------------------------------------------------

def f32(x):
    return np.asarray(x, dtype=np.float32)


def ulp_move(v, j):
    u = np.array([v], dtype=np.float32).view(np.uint32)[0]
    if v >= 0:
        u = np.uint32(int(u) + j)
    else:
        u = np.uint32(int(u) - j)
    return np.array([u], dtype=np.uint32).view(np.float32)[0]


def cfg1(tile, hi=4, lo=3, r=500, alloc="token", tau="inf", rounding="nearest", seed=0, meta="fp16"):
    return {"tile": tile, "hi_bits": hi, "lo_bits": lo, "hi_permille": r, "alloc": alloc,
            "tau": tau, "rounding": rounding, "seed": str(seed), "meta": meta}


def row_values(rng, n, spread):
    mag = rng.uniform(0.05, 1.0, n) * np.exp2(rng.integers(-spread, spread + 1, n))
    sgn = rng.choice([-1.0, 1.0], n)
    return f32(mag * sgn)


def fam_pair(max_T=7):
    for G in (8, 16, 64):
        for T in (1, 3, 7):
            if T > max_T:
                continue
            C = G * T
            for s in range(3):
                rng = np.random.default_rng(1000 * G + 10 * T + s)
                A = row_values(rng, C, 3 + 3 * s)
                for j in [d for k in range(1, 49) for d in (k, -k)]:
                    for e in (0, C - 1):
                        B = A.copy()
                        B[e] = ulp_move(A[e], j)
                        x = np.stack([B, A]).reshape(1, 2, C)
                        yield (f"pair G={G} T={T} seed={s} elem={e} j={j}", "format1",
                               cfg1(G), [1, 2, C], x)


BOUNDARY_CONFIGS = [
    # (G, T, hi, lo, meta, rounding, seed, tau)
    (8, 1, 4, 3, "fp16", "nearest", 0, "inf"),
    (8, 1, 4, 3, "fp32", "nearest", 0, "0"),
    (16, 1, 3, 2, "bf16", "nearest", 0, "2"),
    (8, 3, 2, 1, "fp16", "stochastic", 7, "0"),
    (32, 1, 4, 3, "fp32", "stochastic", 2 ** 64 - 1, "inf"),
    (8, 2, 8, 1, "bf16", "nearest", 0, "2"),
    (64, 1, 4, 3, "fp16", "nearest", 0, "0"),
    (16, 3, 5, 4, "fp32", "nearest", 0, "2"),
    (8, 7, 4, 3, "fp16", "stochastic", 1, "2"),
    (128, 1, 3, 3, "bf16", "nearest", 0, "0"),
    (256, 1, 4, 2, "fp16", "nearest", 0, "inf"),
]


def fam_gain_boundary(max_j=24, seeds=4):
    """Two tokens on the ranking boundary of §4.3 under every configuration
    of BOUNDARY_CONFIGS; seeds outer, so that every configuration is tried
    before a second row of any."""
    for s in range(seeds):
        for ci, (G, T, hi, lo, meta, rnd, seed, tau) in enumerate(BOUNDARY_CONFIGS):
            C = G * T
            rng = np.random.default_rng(4300 + 97 * ci + s)
            A = row_values(rng, C, 2 + 2 * s)
            cfg = cfg1(G, hi, lo, 500, "gain", tau, rnd, seed, meta)
            for j in [d for k in range(1, max_j + 1) for d in (k, -k)]:
                for e in (0, C - 1):
                    B = A.copy()
                    B[e] = ulp_move(A[e], j)
                    for order in ((A, B), (B, A)):
                        x = np.stack(order).reshape(1, 2, C)
                        yield (f"boundary G={G} T={T} {hi}/{lo} {meta} {rnd} tau={tau} row={s} "
                               f"elem={e} first={'A' if order[0] is A else 'B'} j={j}",
                               "format1", cfg, [1, 2, C], x)


def group_of(label):
    """Moves of one random row (the label up to ' elem=' or ' j=') are one
    group; every crafted input is a group of its own."""
    for cut in (" elem=", " j="):
        if cut in label:
            return label.split(cut)[0]
    return label


def fam_tilepair():
    for G in (8, 16, 64):
        for s in range(3):
            rng = np.random.default_rng(77 + 100 * G + s)
            A = row_values(rng, G, 3 + 3 * s)
            for j in [d for k in range(1, 49) for d in (k, -k)]:
                B = A.copy()
                B[0] = ulp_move(A[0], j)
                x = np.concatenate([B, A]).reshape(1, 1, 2 * G)
                yield (f"tilepair G={G} seed={s} j={j}", "format1",
                       cfg1(G, alloc="tile"), [1, 1, 2 * G], x)


def fam_perm():
    for G in (8, 64):
        for T in (1, 3, 7):
            C = G * T
            for S in (4, 16, 64):
                for s in range(2):
                    rng = np.random.default_rng(5000 + 100 * G + 10 * T + s)
                    A = row_values(rng, C, 4)
                    rows = [A] + [A[rng.permutation(C)] for _ in range(S - 1)]
                    x = np.stack(rows).reshape(1, S, C)
                    yield (f"perm G={G} T={T} S={S} seed={s}", "format1", cfg1(G), [1, S, C], x)


def pv1cfg(tile=8, hi=4, lo=3, r=500):
    return {"profile": "paper-v1", "tile": tile, "hi_bits": hi, "lo_bits": lo, "hi_permille": r}


def fam_pv1_pair():
    for G in (8, 64):
        for T in (1, 3):
            C = G * T
            for s in range(3):
                rng = np.random.default_rng(9000 + 100 * G + 10 * T + s)
                A = row_values(rng, C, 3 + 3 * s)
                for j in [d for k in range(1, 49) for d in (k, -k)]:
                    B = A.copy()
                    B[0] = ulp_move(A[0], j)
                    x = np.stack([B, A]).reshape(1, 2, C)
                    yield (f"pv1 pair G={G} T={T} seed={s} j={j}", "paper_v1", pv1cfg(G), [1, 2, C], x)


def crafted(mid):
    """Inputs written for one rule each; only those aimed at mutant mid."""
    out = []
    allc = []

    def aim(prefixes):
        return any(mid.startswith(p) for p in prefixes)
    # §5.3 stochastic ρ < φ: an element whose t equals its own ρ exactly.
    # Tile [0, 1, ρ2, ..., ρ7] with b = 1: z = 0, s = 1, t_n = v_n.
    vals = [0.0, 1.0] + [(word(0, n) >> 8) * 2.0 ** -24 for n in range(2, 8)]
    if aim(["s5.3-stochastic", "s2.4", "s5.3-rho"]):
      out.append(("stochastic: t = ρ exactly (seed 0, G = 8, 1 bit)", "format1",
                cfg1(8, 1, 1, 1000, "none", "inf", "stochastic", 0), [1, 1, 8], f32(vals).reshape(1, 1, 8)))
    # golden/v4: second inputs for rules that one crafted input caught so far
    if aim(["s5.3-stochastic", "s2.4", "s5.3-rho"]):
        for sd in (1, 2 ** 64 - 1):
            v = [0.0, 1.0] + [(word(sd, n) >> 8) * 2.0 ** -24 for n in range(2, 8)]
            out.append((f"stochastic: t = ρ exactly (seed {sd}, G = 8, 1 bit)", "format1",
                        cfg1(8, 1, 1, 1000, "none", "inf", "stochastic", sd), [1, 1, 8],
                        f32(v).reshape(1, 1, 8)))
    if aim(["s4.1-zero-sum"]):
        out.append(("entropy of an all-zero row vs two equal values, G = 16", "format1", cfg1(16),
                    [1, 2, 16], f32([[0] * 16, [0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 3] + [0] * 5])
                    .reshape(1, 2, 16)))
    if aim(["s2.2-f16-ties"]):
        out.append(("paper-v1: zero-point 2 + 2^-10 (an fp16 tie)", "paper_v1", pv1cfg(8, 4, 3, 1000),
                    [1, 1, 8], f32([2 + 2.0 ** -10, 3, 4, 5, 6, 7, 8, 9]).reshape(1, 1, 8)))
    if aim(["s2.2-f16-overflow"]):
        out.append(("paper-v1: zero-point -65519 (fp16 rounds to -65504, below 65520), G = 16, "
                    "not flagged", "paper_v1", pv1cfg(16, 4, 3, 1000), [1, 1, 16],
                    f32([-65519.0] + [-65000.0 + 500 * k for k in range(15)]).reshape(1, 1, 16)))
    if aim(["s3.2"]):
        out.append(("input -2^64 exactly, fp32 metadata, G = 16", "format1",
                    cfg1(16, 4, 4, 1000, "none", "inf", "nearest", 0, "fp32"), [1, 1, 16],
                    f32([0] * 5 + [-(2.0 ** 64)] + [1] * 10).reshape(1, 1, 16)))
    if aim(["a2-eps"]):
        out.append(("paper-v1: range 3e-32 (s below ε), G = 16", "paper_v1", pv1cfg(16, 4, 3, 1000),
                    [1, 1, 16], f32([k * 2e-33 for k in range(16)]).reshape(1, 1, 16)))
    if aim(["s9"]):
        out.append(("-2^70 at element 3, +inf at element 5", "format1", cfg1(8), [1, 1, 8],
                    f32([1, 2, 3, -(2.0 ** 70), 0, np.inf, 0, 0]).reshape(1, 1, 8)))
    if aim(["a2-gate", "a2-pivot"]):
        out.append(("paper-v1: an all-zero token before a spread one (gate and pivot of a zero tile)",
                    "paper_v1", pv1cfg(8, 4, 3, 1000), [1, 2, 8],
                    f32([[0] * 8, [1, -2, 3, 0.5, 4, 1, 2, 1]]).reshape(1, 2, 8)))
    if aim(["a2-den"]):
        out.append(("paper-v1: an all-zero token between two spread ones", "paper_v1",
                    pv1cfg(8, 4, 3, 500), [1, 3, 8],
                    f32([[1, 2, 3, 1, 2, 3, 1, 2], [0] * 8, [4, 1, 1, 1, 1, 1, 1, 0.5]]).reshape(1, 3, 8)))
    if aim(["a2-n-low"]):
        rng2 = np.random.default_rng(10)
        out.append(("paper-v1: S = 10 at r = 800 (binary64 10·(1 − 0.8) = 1.9999999999999996)",
                    "paper_v1", pv1cfg(8, 4, 3, 800), [1, 10, 8],
                    row_values(rng2, 80, 2).reshape(1, 10, 8)))
    if aim(["g4.3-range"]):
        out.append(("gain: a tile whose 1-bit scale overflows fp16 (range 10^5) beside a small row",
                    "format1", cfg1(8, 8, 1, 500, "gain"), [1, 2, 8],
                    f32([[0, 1e5, 3, 0, 0, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8]]).reshape(1, 2, 8)))
    # §2.3 step 3: p with mantissa 0x3504F3 (Σa = 2 exactly, so p = a/2 exactly),
    # against a row whose entropy is j ulps away
    a0 = np.array([0x3FB504F3], dtype=np.uint32).view(np.float32)[0]
    for j in range(0, 200 if aim(["s2.3-x"]) else 0):
        b0 = ulp_move(a0, j) if j % 2 == 0 else ulp_move(a0, -(j // 2 + 1))
        A = f32([a0, 2.0 - a0, 0, 0, 0, 0, 0, 0])
        B = f32([b0, np.float32(2.0) - b0, 0, 0, 0, 0, 0, 0])
        for order in ((A, B), (B, A)):
            x = np.stack(order).reshape(1, 2, 8)
            out.append((f"log2 threshold: p = 0x1.6a09e6p-1 vs {j}", "format1", cfg1(8), [1, 2, 8], x))
    # §2.3 step 2 at p = 0x1.6a09e6p-1: Σa = 1 exactly (every value a multiple
    # of 2^-24, so every partial sum is exact and p = a), the rest of the mass
    # split in two; rows with adjacent splits have (nearly) tied entropies
    R = (1 << 24) - 11863283
    a0h = np.array([0x3F3504F3], dtype=np.uint32).view(np.float32)[0]  # 11863283 * 2^-24
    assert float(a0h) == 11863283 * 2.0 ** -24
    for m in range(1, 400 if aim(["s2.3"]) else 0):
        a1 = (R // 3 + 7 * m) * 2.0 ** -24
        rows = []
        for d in (0, 1):
            b1 = (R // 3 + 7 * m + d) * 2.0 ** -24
            rows.append(f32([a0h, b1, (R * 2.0 ** -24) - b1, 0, 0, 0, 0, 0]))
        out.append((f"log2 threshold: p0 = 0x1.6a09e6p-1, splits {m}", "format1", cfg1(8), [1, 2, 8],
                    np.stack(rows).reshape(1, 2, 8)))
    # §2.3 step 5 (Horner with FMA): the same split family with p0 at values
    # where a fused Horner step changes p·log2(p) (from a scan of [0.5, 1])
    if aim(["s2.3-horner"]):
        for xb in (0x3f008842, 0x3f173ba8, 0x3f1ca1b1, 0x3f2087c0, 0x3f240261, 0x3f2745ab,
                   0x3f2a3654, 0x3f2ce0ae, 0x3f2f6e30, 0x3f31dc6f, 0x3f3431b2, 0x3f35cf05,
                   0x3f371175, 0x3f3861bd, 0x3f3a9dfe, 0x3f3cdcba, 0x3f3f1e83, 0x3f4170d8,
                   0x3f43d3be, 0x3f464c14, 0x3f48fa43, 0x3f4bd492, 0x3f4eab10, 0x3f5124a2):
            x0 = np.array([xb], dtype=np.uint32).view(np.float32)[0]
            units = int(round(float(x0) * 2 ** 24))
            Rx = (1 << 24) - units
            for m in range(1, 40):
                rows = []
                for d in (0, 1):
                    b1 = (Rx // 3 + 7 * m + d) * 2.0 ** -24
                    rows.append(f32([x0, b1, (Rx * 2.0 ** -24) - b1, 0, 0, 0, 0, 0]))
                out.append((f"horner: p0 = {float(x0)!r}, splits {m}", "format1", cfg1(8), [1, 2, 8],
                            np.stack(rows).reshape(1, 2, 8)))
    # §2.3 step 1: subnormal p. Row A = [1, x]: p = x; row B = [1, y, y] with
    # 2y·log2(1/y) just above x·log2(1/x): a log2 that is wrong by a factor
    # depending on the exponent ranks them the other way
    for k in ((130, 135, 140) if aim(["s2.3"]) else ()):
        x = 2.0 ** -k
        for q in range(440, 560):
            y = float(np.float32(x * q / 1000.0))
            A = f32([1.0, x, 0, 0, 0, 0, 0, 0])
            B = f32([1.0, y, y, 0, 0, 0, 0, 0])
            out.append((f"log2 subnormal p: [1, 2^-{k}] vs [1, y, y], y = {q}/1000·2^-{k}", "format1",
                        cfg1(8), [1, 2, 8], np.stack([A, B]).reshape(1, 2, 8)))
    # §4.1 H = 0 − Σh: a single non-zero value (H = +0) beside an all-equal row
    out.append(("entropy of a single spike (+0) vs a spread row", "format1", cfg1(8), [1, 2, 8],
                f32([[0, 0, 0, 5, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]]).reshape(1, 2, 8)))
    out.append(("entropy of an all-zero row vs a single spike", "format1", cfg1(8), [1, 2, 8],
                f32([[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 5, 0, 0, 0, 0]]).reshape(1, 2, 8)))
    # §4.1 step 4: Σa ≤ 2^-128 (reciprocal overflows): two tiny rows
    for k in (130, 135, 140, 145):
        A = f32([2.0 ** -k, 3 * 2.0 ** -k, 0, 0, 0, 0, 2.0 ** -k, 0])
        B = f32([2.0 ** -k, 2.0 ** -k, 2.0 ** -k, 0, 0, 0, 0, 0])
        out.append((f"tiny rows 2^-{k}", "format1", cfg1(8), [1, 2, 8], np.stack([A, B]).reshape(1, 2, 8)))
    # paper-v1 A.2 step 6: zero-point of a minimum that is both −0 and +0
    out.append(("paper-v1: minimum +0 then −0", "paper_v1", pv1cfg(8, 4, 3, 1000), [1, 1, 8],
                f32([0.0, -0.0, 1, 2, 3, 2, 1, 0.5]).reshape(1, 1, 8)))
    out.append(("paper-v1: minimum −0 then +0", "paper_v1", pv1cfg(8, 4, 3, 1000), [1, 1, 8],
                f32([-0.0, 0.0, 1, 2, 3, 2, 1, 0.5]).reshape(1, 1, 8)))
    # paper-v1: an fp16 value just above 65504 (rounds to 65504, not inf)
    out.append(("paper-v1: zero-point -65510 (fp16 rounds to -65504)", "paper_v1",
                pv1cfg(8, 4, 3, 1000), [1, 1, 8], f32([-65510.0, 1, 2, 3, 4, 5, 6, 7]).reshape(1, 1, 8)))
    # paper-v1: an all-zero token next to a non-zero one (den = ε)
    out.append(("paper-v1: all-zero token beside a spread token", "paper_v1", pv1cfg(8, 4, 3, 500),
                [1, 2, 8], f32([[0] * 8, [1, 2, 3, 4, 5, 6, 7, 8]]).reshape(1, 2, 8)))
    # paper-v1: fp16 tie in the zero-point (1 + 2^-11 is halfway between
    # 1 and 1 + 2^-10), tile not flagged
    out.append(("paper-v1: zero-point 1 + 2^-11 (an fp16 tie)", "paper_v1", pv1cfg(8, 4, 3, 1000),
                [1, 1, 8], f32([1 + 2.0 ** -11, 2, 3, 4, 5, 6, 7, 8]).reshape(1, 1, 8)))
    # paper-v1: zero-point -65510 in a tile that is not flagged
    out.append(("paper-v1: zero-point -65510, not flagged", "paper_v1", pv1cfg(8, 4, 3, 1000),
                [1, 1, 8], f32([-65510.0, -65000, -64000, -63000, -62000, -61000, -60000, -59000])
                .reshape(1, 1, 8)))
    # paper-v1 A.2 step 6: a range below ε·L, so s < ε (the floor applies)
    out.append(("paper-v1: range 7e-31 (s below ε)", "paper_v1", pv1cfg(8, 4, 3, 1000), [1, 1, 8],
                f32([k * 1e-31 for k in range(8)]).reshape(1, 1, 8)))
    # §3.2: |x| = 2^64 exactly (ERR_RANGE), with fp32 metadata so that nothing
    # else overflows
    out.append(("input 2^64 exactly, fp32 metadata", "format1",
                cfg1(8, 4, 4, 1000, "none", "inf", "nearest", 0, "fp32"), [1, 1, 8],
                f32([2.0 ** 64, 1, 0, 0, 0, 0, 0, 0]).reshape(1, 1, 8)))
    # §4.1 step 4 with the order reversed: a tiny row with the larger H first
    for k in (130, 140):
        A = f32([2.0 ** -k, 3 * 2.0 ** -k, 0, 0, 0, 0, 2.0 ** -k, 0])
        B = f32([2.0 ** -k, 2.0 ** -k, 2.0 ** -k, 0, 0, 0, 0, 0])
        out.append((f"tiny rows 2^-{k}, larger entropy first", "format1", cfg1(8), [1, 2, 8],
                    np.stack([B, A]).reshape(1, 2, 8)))
    # §5.3 step 3, fp32 metadata: ranges whose w/L is subnormal (absolute rounding)
    if aim(["s5.3-scale"]):
        for b in (1, 2, 3, 4, 8):
            for e in range(138, 150):
                for m in (1.0, 1.25, 1.5, 1.75, 1.125, 1.375, 1.625, 1.875):
                    w = float(np.float32(m * 2.0 ** -e))
                    out.append((f"fp32 scale: range {m}*2^-{e}, {b} bits", "format1",
                                cfg1(8, b, b, 1000, "none", "inf", "nearest", 0, "fp32"), [1, 1, 8],
                                f32([0, w, w / 2, 0, 0, 0, 0, 0]).reshape(1, 1, 8)))
    # §5.1: m1 = fl(τ·m2) where fl(m1 ÷ m2) < τ (the ratio test disagrees)
    if aim(["s5.1"]):
        rng = np.random.default_rng(51)
        for tau in (3.0, 1.5, 0.75, 5.0, 7.0):
            t32 = np.float32(tau)
            m2s = f32(rng.uniform(1.0, 2.0, 20000))
            m1s = (t32 * m2s).astype(np.float32)
            for d in (0, -1):
                m1d = m1s.view(np.uint32) + np.uint32(0) if d == 0 else (m1s.view(np.uint32) - 1).view(np.float32)
                m1d = m1s if d == 0 else m1d
                ratio = (m1d / m2s).astype(np.float32)
                spec = m1d >= (t32 * m2s).astype(np.float32)
                mut = ratio >= t32
                idx = np.nonzero(spec != mut)[0]
                for i in idx[:3]:
                    tile = f32([m1d[i], m2s[i], 0.5, 0.25, 0.125, 0.5, 0.25, 0.125])
                    if tau < 1:
                        tile = f32([m1d[i], m2s[i], 0, 0, 0, 0, 0, 0])
                    out.append((f"gate: tau {tau}, m1 {float(m1d[i])!r}, m2 {float(m2s[i])!r}", "format1",
                                cfg1(8, 4, 4, 1000, "none", repr(tau) if tau != int(tau) else str(int(tau))),
                                [1, 1, 8], tile.reshape(1, 1, 8)))
    return out


def header_msgs(ctl, tmp):
    """Invalid messages that fail two checks of §8.4 at once."""
    out = []
    base_cfg = cfg1(8, alloc="token", r=500, tau="2")
    rng = np.random.default_rng(3)
    x = row_values(rng, 2 * 2 * 16, 2).reshape(2, 2, 16)
    msg = encode(ctl, "format1", base_cfg, [2, 2, 16], x, tmp)
    if msg is None:
        return out

    m = bytearray(msg)
    # magic and version both wrong (MAGIC first)
    mm = bytearray(m)
    mm[0] = ord("X")
    mm[4] = 2
    out.append(("bad magic and bad version", "message", None, None, bytes(mm)))
    mm = bytearray(b"XAHQ\x02\x00")
    out.append(("6 bytes, bad magic", "message", None, None, bytes(mm)))
    # a header field wrong and the CRC stale (HEADER first)
    mm = bytearray(m)
    mm[64] = 1
    out.append(("reserved != 0 and stale CRC", "message", None, None, bytes(mm)))
    # payload_bytes + 1 and the message one byte short (SIZE first)
    mm = bytearray(m)
    pb = int.from_bytes(mm[56:64], "little") + 1
    mm[56:64] = pb.to_bytes(8, "little")
    out.append(("payload_bytes + 1 and one byte short", "message", None, None, bytes(mm[:-1])))
    # golden/v4: a header field out of range and the CRC stale (HEADER first)
    mm = bytearray(m)
    mm[14:16] = (1001).to_bytes(2, "little")
    out.append(("hi_permille 1001 and stale CRC", "message", None, None, bytes(mm)))
    # a padding bit of the gate flags and of the pivots set, CRC fixed: a
    # message of N = 3 tiles, every tile flagged (tau 0), 3 pivots of 3 bits
    x3 = row_values(np.random.default_rng(8), 24, 2).reshape(1, 3, 8)
    m3 = encode(ctl, "format1", cfg1(8, alloc="token", r=500, tau="0"), [1, 3, 8], x3, tmp)
    if isinstance(m3, bytes):
        for label, off, bit in (("a padding bit of the gate flags set (3 tiles), CRC fixed", 73, 7),
                                ("the last padding bit of the pivots set (3 pivots), CRC fixed",
                                 len(m3) - 1, 7)):
            mm = bytearray(m3)
            mm[off] |= 1 << bit
            mm[68:72] = crc32c(bytes(mm[:68]) + bytes(mm[72:])).to_bytes(4, "little")
            out.append((label, "message", None, None, bytes(mm)))
    # the map count of sequence 0 one more, of sequence 1 one less (CRC fixed)
    mm = bytearray(m)
    mp = mm[72]
    bits = [(mp >> i) & 1 for i in range(4)]  # rows 0..3: seq 0 = rows 0,1; seq 1 = rows 2,3
    if bits[0] + bits[1] == 1 and bits[2] + bits[3] == 1:
        nb = [1, 1, 0, 0]
        nm = (mp & 0xF0) | sum(b << i for i, b in enumerate(nb))
        mm[72] = nm
        mm[68:72] = crc32c(bytes(mm[:68]) + bytes(mm[72:])).to_bytes(4, "little")
        out.append(("map counts moved between sequences (total kept), CRC fixed", "message",
                    None, None, bytes(mm)))
    # the same on another base (G = 16, bf16 metadata)
    x2 = row_values(np.random.default_rng(12), 2 * 2 * 32, 3).reshape(2, 2, 32)
    m2 = encode(ctl, "format1", cfg1(16, alloc="token", r=500, tau="2", meta="bf16"), [2, 2, 32], x2, tmp)
    if isinstance(m2, bytes):
        mm = bytearray(m2)
        mp = mm[72]
        bits = [(mp >> i) & 1 for i in range(4)]
        if bits[0] + bits[1] == 1 and bits[2] + bits[3] == 1:
            mm[72] = (mp & 0xF0) | 0b0011
            mm[68:72] = crc32c(bytes(mm[:68]) + bytes(mm[72:])).to_bytes(4, "little")
            out.append(("map counts moved between sequences (total kept), G = 16 bf16, CRC fixed",
                        "message", None, None, bytes(mm)))
    return out


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------

def write_npy(path, x):
    np.save(path, np.ascontiguousarray(x, dtype="<f4"))


def args_of(kind, cfg, shape):
    if kind == "paper_v1":
        return ["--profile", "paper-v1", "--tile", str(cfg["tile"]),
                "--bits", f"{cfg['hi_bits']}/{cfg['lo_bits']}", "--ratio", str(cfg["hi_permille"])]
    return ["--tile", str(cfg["tile"]), "--bits", f"{cfg['hi_bits']}/{cfg['lo_bits']}",
            "--ratio", str(cfg["hi_permille"]), "--alloc", cfg["alloc"], "--tau", cfg["tau"],
            "--rounding", cfg["rounding"], "--seed", cfg["seed"], "--meta", cfg["meta"]]


def encode(exe, kind, cfg, shape, x, tmp):
    inp = os.path.join(tmp, "in.npy")
    out = os.path.join(tmp, "out.bin")
    write_npy(inp, x)
    if os.path.exists(out):
        os.unlink(out)
    if kind == "paper_v1":
        cmd = [exe, "encode", "--profile", "paper-v1", inp, out] + args_of(kind, cfg, shape)[2:]
    else:
        cmd = [exe, "encode", inp, out] + args_of(kind, cfg, shape)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return ("error", mutate.first_err(r.stderr.decode()) or str(r.returncode))
    with open(out, "rb") as f:
        return f.read()


def decode(exe, kind, cfg, shape, msg, tmp):
    inp = os.path.join(tmp, "m.bin")
    out = os.path.join(tmp, "d.npy")
    with open(inp, "wb") as f:
        f.write(msg)
    if os.path.exists(out):
        os.unlink(out)
    cmd = [exe, "decode"]
    if kind == "paper_v1":
        cmd += ["--profile", "paper-v1", inp, out, "--shape", "x".join(map(str, shape))] + \
            args_of(kind, cfg, shape)[2:]
    else:
        cmd += [inp, out]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return ("error", mutate.first_err(r.stderr.decode()) or "unknown")
    return mutate.npy_data(out)


def differs(ctl, mut, cand, tmp):
    label, kind, cfg, shape, x = cand
    if kind == "message":
        a = decode(ctl, "format1", None, None, x, tmp)
        b = decode(mut, "format1", None, None, x, tmp)
        return (a != b), f"control {a if isinstance(a, tuple) else 'ok'}, " \
                         f"mutant {b if isinstance(b, tuple) else 'ok'}"
    a = encode(ctl, kind, cfg, shape, x, tmp)
    b = encode(mut, kind, cfg, shape, x, tmp)
    if a != b:
        return True, "messages differ" if not isinstance(b, tuple) else f"mutant: {b}"
    if isinstance(a, tuple):
        return False, ""
    da = decode(ctl, kind, cfg, shape, a, tmp)
    db = decode(mut, kind, cfg, shape, a, tmp)
    return (da != db), "decoded values differ"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mutants", nargs="+")
    ap.add_argument("--root", default=mutate.ROOT_DEFAULT)
    ap.add_argument("--work", default=None)
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--families", default="crafted,messages,pair,tilepair,pv1pair,perm")
    ap.add_argument("--out", default=None, help="append the findings to this JSON file")
    ap.add_argument("--catalogue", default=os.path.join(HERE, "catalogue.txt"))
    ap.add_argument("--boundary", action="store_true",
                    help="try the boundary family first (gain allocation, golden/v4)")
    ap.add_argument("--hits", type=int, default=0,
                    help="find this many inputs per mutant, from different groups; the "
                         "--out file then holds a list per mutant")
    ap.add_argument("--exclude-found", default=None,
                    help="a findings file whose inputs are skipped (and count as groups found)")
    ap.add_argument("--max-candidates", type=int, default=20000)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    work = os.path.abspath(a.work or os.path.join(root, "build-mut", "mutation"))
    cat = {m["id"]: m for m in mutate.parse_catalogue(a.catalogue)}
    excluded = {}
    if a.exclude_found:
        with open(a.exclude_found) as f:
            for mid, rec in json.load(f).items():
                excluded[mid] = {r["label"] for r in (rec if isinstance(rec, list) else [rec])}
    b = mutate.Builder(root, work, a.cc, 2)
    b.base_objects()
    ctl = b.control()
    found = {}
    if a.out and os.path.exists(a.out):
        with open(a.out) as f:
            found = json.load(f)
    fams = a.families.split(",")
    with tempfile.TemporaryDirectory(prefix="tahq-dist-") as tmp:
        for mid in a.mutants:
            mut = b.mutant(cat[mid])
            hit = None
            n = 0
            gens = []
            if a.boundary:
                gens.append(fam_gain_boundary())
            if "crafted" in fams:
                gens.append(crafted(mid))
            if "messages" in fams:
                gens.append(header_msgs(ctl, tmp))
            if "pair" in fams:
                gens.append(fam_pair())
            if "tilepair" in fams:
                gens.append(fam_tilepair())
            if "pv1pair" in fams:
                gens.append(fam_pv1_pair())
            if "perm" in fams:
                gens.append(fam_perm())
            want = max(a.hits, 1)
            skip = excluded.get(mid, set())
            groups = {group_of(lb) for lb in skip}
            hits = []
            for g in gens:
                for cand in g:
                    if cand[0] in skip or group_of(cand[0]) in groups:
                        continue
                    n += 1
                    if n > a.max_candidates:
                        break
                    d, why = differs(ctl, mut, cand, tmp)
                    if d:
                        hits.append((cand, why, n))
                        groups.add(group_of(cand[0]))
                        if len(hits) >= want:
                            break
                if len(hits) >= want or n > a.max_candidates:
                    break
            if not hits:
                print(f"{mid}: no distinguishing input among {n} candidates", flush=True)
                continue
            recs = []
            for (label, kind, cfg, shape, x), why, n_at in hits:
                print(f"{mid}: distinguished by [{label}] after {n_at} candidates: {why}", flush=True)
                rec = {"label": label, "kind": kind, "why": why, "candidates_tried": n_at}
                if kind == "message":
                    rec["message_hex"] = x.hex()
                else:
                    rec["config"] = cfg
                    rec["shape"] = shape
                    rec["input_hex32"] = [f"{v:08x}" for v in
                                          np.asarray(x, dtype="<f4").view("<u4").ravel()]
                recs.append(rec)
            if len(recs) < want:
                print(f"{mid}: only {len(recs)} of {want} inputs among {n} candidates", flush=True)
            found[mid] = recs if a.hits else recs[0]
    if a.out:
        with open(a.out, "w") as f:
            json.dump(found, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
