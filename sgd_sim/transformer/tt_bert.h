/* SPDX-License-Identifier: MIT */
/*
 * tt_bert.h - a BERT encoder beside tahq-train's decoder (tt.h), to train the
 * pretrained MiniLM (scripts/fetch_model.sh) through the same pipeline.
 *
 * The model, as BERT defines it:
 *   x0 = LN_e(wte[token] + wpe[position] + wtt[token type])
 * then L post-LayerNorm blocks
 *   h1 = LN1(x + proj(attn(x)))          bidirectional multi-head
 *                                        self-attention, padding keys masked
 *   y  = LN2(h1 + fc2(gelu(fc1(h1))))    hidden F, GELU in its erf form
 * LayerNorm eps from config.json (1e-12). The masked-language-model head on
 * the masked rows only:
 *   logits = LN_h(gelu(h Wt + bt)) wte^T, mean cross-entropy
 * with the decoder tied to the word embeddings and no output bias. The
 * head's transform (Wt, bt, LN_h) is not in the MiniLM checkpoint: it is
 * initialised as the identity (Wt = I, bt = 0, LN_h weight 1 and bias 0),
 * so the head starts from what the last layer says about the token.
 *
 * The layers come from tt_model.inc where they are the same (matmul,
 * LayerNorm with its eps, attention with a key mask, the tied head); the
 * BERT-only ones (erf GELU, three embeddings, post-LN blocks, the MLM head)
 * live in tt_bert.inc, compiled for float (_f) and double (_d) like
 * tt_model.inc. Weight matrices are [in, out] (the checkpoint's PyTorch
 * [out, in] matrices are transposed on loading); q, k, v are one [C, 3C]
 * matrix as in tt.h.
 *
 * A stage holds blocks [b0, b0 + nb); the first also the embeddings, the
 * last also the MLM head and its own copy of wte (wte_head) unless it is
 * also the first.
 */
#ifndef TT_BERT_H
#define TT_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "st_safetensors.h"
#include "tt.h"

typedef struct tb_config {
    int V;      /* vocabulary */
    int C;      /* hidden size */
    int NH;     /* heads */
    int F;      /* intermediate (FFN) size */
    int L;      /* blocks */
    int P;      /* positions */
    int TV;     /* token types */
    double eps; /* LayerNorm */
} tb_config;

/* Controls of the gradient checks (tt_fault bits above tt.h's). */
enum {
    TB_FAULT_GELU_ERF = 1 << 10,    /* GELU: drop the x phi(x) term */
    TB_FAULT_TYPE_EMB = 1 << 11,    /* embeddings: no token-type gradient */
    TB_FAULT_POSTLN_SKIP = 1 << 12, /* block: drop the skip paths of the gradient */
    TB_FAULT_HEAD_GATHER = 1 << 13  /* MLM head: gradient scattered to row 0 */
};

const char *tb_config_check(const tb_config *cfg);
/* Read the architecture from a BERT config.json (model_type "bert",
 * hidden_act "gelu", absolute positions). 0, or 1 with a reason. */
int tb_config_read(tb_config *cfg, const char *path, char *err, size_t errlen);
/* parameters of the whole model, the head's transform included */
size_t tb_model_params(const tb_config *cfg);

#define REAL float
#define TB(name) tb_##name##_f
#include "tt_bert_decl.inc"
#undef REAL
#undef TB
#define REAL double
#define TB(name) tb_##name##_d
#include "tt_bert_decl.inc"
#undef REAL
#undef TB

/* A pretrained checkpoint: config.json and model.safetensors of one folder,
 * every tensor checked (name, F32, shape from config.json, offsets) before
 * anything is used. */
typedef struct tb_pretrained {
    tb_config cfg;
    st_file st;
} tb_pretrained;

/* 0, or 1 with one reason in err and nothing to close. */
int tb_pretrained_open(tb_pretrained *m, const char *dir, char *err, size_t errlen);
void tb_pretrained_close(tb_pretrained *m);
/* Copy the checkpoint into a stage of the same architecture (its blocks,
 * embeddings, wte_head); the head's transform is left as initialised.
 * 0, or 1 with a reason (architecture or length mismatch; the stage is not
 * touched then). */
int tb_pretrained_load_stage(const tb_pretrained *m, tb_stage_f *s, char *err, size_t errlen);

#endif
