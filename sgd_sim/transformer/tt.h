/* SPDX-License-Identifier: MIT */
/*
 * tt.h - the decoder-only transformer of tahq-train, split into pipeline
 * stages.
 *
 * The model: token + position embeddings, L pre-LayerNorm blocks
 *   x1 = x  + proj(attn(LN1(x)))        causal multi-head self-attention
 *   x2 = x1 + fcproj(gelu(fc(LN2(x1))))  MLP, hidden 4C, tanh GELU
 * a final LayerNorm, a head tied to the token embedding (logits = h wte^T)
 * and the mean cross-entropy over all predicted positions. Vocabulary: the
 * 256 byte values.
 *
 * Every layer has a hand-derived backward. The layer and stage code lives in
 * tt_model.inc and is compiled twice: with REAL = float (names ending in _f,
 * the trainer) and REAL = double (names ending in _d, the gradient checks),
 * so the binary64 checks test the very source text the trainer runs.
 *
 * A stage holds a contiguous range of blocks; the first stage also the
 * embeddings, the last the final LayerNorm and the head. When the first and
 * the last stage differ, the last holds its own copy of wte (wte_head) and
 * the trainer keeps the two copies equal by summing their gradients.
 */
#ifndef TT_H
#define TT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt_config {
    int V;  /* vocabulary (256) */
    int C;  /* channels */
    int NH; /* heads (C % NH == 0) */
    int T;  /* context length */
    int L;  /* blocks */
} tt_config;

/* Test hook for the gradient checks' controls: each bit drops one term of
 * one backward. 0 in normal use; only the tests set it. */
enum {
    TT_FAULT_LN = 1,        /* LayerNorm: drop the mean(dxhat) term */
    TT_FAULT_SOFTMAX = 2,   /* attention: drop sum_k P_ik dP_ik in the softmax backward */
    TT_FAULT_GELU = 4,      /* GELU: drop the tanh' term of the derivative */
    TT_FAULT_BIAS = 8,      /* matmul: no bias gradient */
    TT_FAULT_CE = 16,       /* cross-entropy: drop the -1 at the target */
    TT_FAULT_RESIDUAL = 32, /* block: drop the skip path of the gradient */
    TT_FAULT_WPE = 64,      /* embedding: no position-embedding gradient */
    TT_FAULT_ATTN_V = 128   /* attention: no gradient into V */
};
extern int tt_fault;

/* Parameters of one block, counted in elements, in storage order. */
#define TT_BLOCK_PARAMS(C) (12 * (size_t)(C) * (C) + 13 * (size_t)(C))

/* Validate a configuration; returns NULL or a one-line reason. */
const char *tt_config_check(const tt_config *cfg);
/* Parameters of the whole model (the tied head counted once). */
size_t tt_model_params(const tt_config *cfg);

/* Both instantiations' declarations. */
#define REAL float
#define TT(name) tt_##name##_f
#include "tt_decl.inc"
#undef REAL
#undef TT
#define REAL double
#define TT(name) tt_##name##_d
#include "tt_decl.inc"
#undef REAL
#undef TT

#endif
