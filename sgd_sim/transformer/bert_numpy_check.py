#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent forward pass of the BERT encoder in numpy (binary64), for
the test bert_forward: reads model.safetensors with its own header parser
(not the C reader), runs the token ids that test_bert_forward wrote, and
compares the mean-pooled, normalised embeddings and the cosine.

    bert_numpy_check.py MODEL_DIR C_OUTPUT

Checks: numpy's cos(s1, s2) within 0.0005 of 0.755 (the reference's three
decimals); the C (float32) embeddings within 1e-5 of numpy's in every
component. Why 1e-5: float32 rounding (u = 6e-8) through dot products of up
to 1536 terms grows like sqrt(n) u ~ 2.4e-6 relative per product in
expectation, over six post-LN blocks whose LayerNorms keep the scale at
O(1); the pooled, unit-norm embedding has components ~0.05, so 1e-5 is
several times the expected error and far below a wrong layer (0.01 or
more). Exit 77 when numpy is missing.
"""
import json
import os
import struct
import sys
from math import erf, sqrt

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("bert_numpy_check.py", "numpy", "install python3-numpy")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(raw[base + b:base + e], dtype="<f4").reshape(t["shape"]).astype(np.float64)
    return out


def layernorm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


verf = np.vectorize(erf)


def forward(W, cfg, ids):
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    eps = cfg["layer_norm_eps"]
    T = len(ids)
    x = (W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:T]
         + W["embeddings.token_type_embeddings.weight"][0])
    x = layernorm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    hs = C // H
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."

        def lin(name, v):
            return v @ W[p + name + ".weight"].T + W[p + name + ".bias"]

        q = lin("attention.self.query", x).reshape(T, H, hs).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(T, H, hs).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(T, H, hs).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / sqrt(hs)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(T, C)
        x = layernorm(x + lin("attention.output.dense", a), W[p + "attention.output.LayerNorm.weight"],
                      W[p + "attention.output.LayerNorm.bias"], eps)
        h = lin("intermediate.dense", x)
        h = 0.5 * h * (1 + verf(h / sqrt(2)))
        x = layernorm(x + lin("output.dense", h), W[p + "output.LayerNorm.weight"],
                      W[p + "output.LayerNorm.bias"], eps)
    e = x.mean(0)
    return e / np.linalg.norm(e)


def main():
    mdir, cout = sys.argv[1], sys.argv[2]
    cfg = json.load(open(f"{mdir}/config.json"))
    W = load(f"{mdir}/model.safetensors")
    ids, embs = [], []
    for line in open(cout):
        key, _, rest = line.partition(":")
        if key == "ids":
            ids.append([int(v) for v in rest.split()])
        elif key == "emb":
            embs.append(np.array([float(v) for v in rest.split()]))
        elif key == "cos":
            c_cos = float(rest)
    mine = [forward(W, cfg, i) for i in ids]
    cos = float(mine[0] @ mine[1])
    diff = max(float(np.abs(a - b).max()) for a, b in zip(mine, embs))
    print(f"numpy (binary64): cos(s1, s2) = {cos:.6f}; C float32: {c_cos:.6f}; "
          f"|difference| {abs(cos - c_cos):.2e}; embeddings max |difference| {diff:.2e} (tolerance 1e-5)")
    bad = 0
    if not abs(cos - 0.755) <= 0.0005:
        print(f"FAIL numpy cosine {cos:.6f} is not 0.755")
        bad += 1
    if not diff <= 1e-5:
        print("FAIL the C embeddings differ from numpy's")
        bad += 1
    # control: a sentence's embedding against another's must exceed the tolerance
    ctrl = float(np.abs(mine[0] - embs[1]).max())
    print(f"control, s1 (numpy) against s2 (C): max |difference| {ctrl:.3g}")
    if not ctrl > 1e-5:
        print("FAIL control: the comparison cannot tell sentences apart")
        bad += 1
    print("numpy check: " + ("FAILED" if bad else "passed"))
    sys.exit(1 if bad else 0)


main()
