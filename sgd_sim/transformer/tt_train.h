/* SPDX-License-Identifier: MIT */
/* tt_train.h - one training run of tahq-train: K pipeline stages of the
 * transformer (tt.h), GPipe schedule, boundary messages (tt_codec.h), AdamW.
 *
 * A step: M micro-batches of B windows of T+1 bytes are drawn from the
 * training bytes (positions a function of seed, step and index only); all M
 * forwards run through stages 0..K-1, then all M backwards in the same
 * order, K-1..0. At boundary k (between stages k and k+1) the forward
 * activation is encoded, and stage k+1 computes with the DECODED tensor;
 * the gradient it returns is encoded with the method's backward codec and
 * stage k differentiates with the decoded gradient. The loss is the mean
 * over the M*B*T predicted bytes. Gradients are summed over micro-batches;
 * the tied embedding's two copies (stage 0's wte, the last stage's head)
 * get the sum of both gradients. Clipping: K+1 groups, each stage's own
 * tensors and the tied embedding, each scaled to norm <= clip. AdamW as in
 * sim.h (m and v in binary32, bias-corrected, decoupled weight decay on the
 * matrices and embeddings only), step size warm-up then linear or cosine
 * decay to lr/10. AQ-SGD (tt_codec.h) keeps a cache per sample of the
 * window set on both sides of every boundary.
 */
#ifndef TT_TRAIN_H
#define TT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "tt.h"
#include "tt_bert.h"
#include "tt_codec.h"

typedef enum { TT_SCHED_LINEAR = 0, TT_SCHED_COSINE = 1, TT_SCHED_CONST = 2 } tt_schedule;

typedef struct tt_opts {
    tt_config cfg;
    int K;            /* stages, 1..L */
    int micro, batch; /* M micro-batches of B sequences */
    int steps, warmup;
    tt_schedule schedule;
    double lr, beta1, beta2, eps, weight_decay, clip;
    uint64_t seed;
    /* > 0: a fixed set of train_windows windows (positions a function of the
     * seed and the index), visited in epochs: each epoch a permutation of
     * the set (a function of the seed and the epoch), the step's M*B samples
     * the next ones in that order. 0: every sample a fresh random window.
     * AQ-SGD needs a set (its cache is per sample). */
    int train_windows;
    int codec_threads; /* threads per tahq encode / decode (>= 1; same bytes for every value) */
    /* 1: the output head is untied from the input embedding: it starts as
     * the same matrix but each copy learns from its own gradient, so the
     * first and last stage exchange nothing after the backward (a pipeline
     * whose embedding and head are separate parameters). 0: tied, the two
     * copies' gradients are exchanged in binary32 and summed every step. */
    int untied_head;
    /* bert = 1: the BERT encoder of tt_bert.h (bert_cfg; cfg mirrors its V,
     * C, NH, L with T the sequence length) fine-tuned as a masked language
     * model on WordPiece ids (tt_data.train_ids / val_ids). A sample is
     * [CLS] + T-2 consecutive ids + [SEP]; mask_per_seq of its T-2 inner
     * positions (a function of seed, step and sample) are predicted: 80%
     * replaced by [MASK], 10% by a uniformly random id, 10% kept. The loss
     * is the mean cross-entropy over the step's masked positions. */
    int bert;
    tb_config bert_cfg;
    const tb_pretrained *bert_init; /* weights to start from; NULL: random initialisation */
    int mask_per_seq;
    int tok_cls, tok_sep, tok_mask;
} tt_opts;

typedef struct tt_data {
    const uint8_t *train, *val;
    size_t n_train, n_val;
    const int *train_ids, *val_ids; /* bert: the corpus as WordPiece ids */
    size_t n_train_ids, n_val_ids;
} tt_data;

/* How stages talk. The single-process engine (tr = NULL in tt_run_new)
 * hands each message to the next stage in memory; the MPI engine
 * (tt_mpi.c) sends the same bytes between ranks. Every function returns 0
 * on success. */
typedef struct tt_transport {
    void *ctx;
    /* send a message to stage `to` (tag: 0 forward, 1 backward, 2 evaluation) */
    int (*send)(void *ctx, int to, int tag, const uint8_t *msg, size_t len);
    /* receive the next message from stage `from`; *msg stays valid until the next recv */
    int (*recv)(void *ctx, int from, int tag, const uint8_t **msg, size_t *len);
    /* stage 0 and stage K-1: swap n floats (the tied embedding's gradients) */
    int (*swap)(void *ctx, int peer, const float *mine, float *theirs, size_t n);
    /* v[0..n) of stage `root` to every stage */
    int (*bcast)(void *ctx, int root, double *v, int n);
} tt_transport;

typedef struct tt_run tt_run;

/* A run holding stages k_lo..k_hi of o->K (all of them when tr is NULL: the
 * single-process engine). NULL on out-of-memory or an unusable codec
 * (reason in *err). */
tt_run *tt_run_new(const tt_opts *o, const sim_method *m, const tt_data *d, int k_lo, int k_hi,
                   const tt_transport *tr, const char **err);
void tt_run_free(tt_run *r);
/* One step; returns the mean training loss (on every stage), NAN on a
 * codec or transport error (*err). */
double tt_run_step(tt_run *r, const char **err);
/* Mean loss on n_windows fixed windows of the validation bytes, spread
 * evenly over it, uncompressed forward. */
double tt_run_eval(tt_run *r, int n_windows);
/* bert: the masked-token accuracy of the last tt_run_eval (its masks fixed
 * by the window, the same for every seed and method); NAN otherwise */
double tt_run_eval_accuracy(const tt_run *r);
/* learning rate of step t (0-based) */
double tt_lr(const tt_opts *o, int t);
/* bytes of the last step's messages sent by this process's stages (summed
 * over boundaries and micro-batches) */
void tt_run_bytes(const tt_run *r, uint64_t *fwd, uint64_t *bwd);
/* AQ-SGD: the last step's first visits (samples sent in binary32, summed
 * over boundaries) and the bytes of those binary32 parts; the rest of the
 * forward bytes are delta messages. Zero for other methods. */
void tt_run_aq_counts(const tt_run *r, uint64_t *new_samples, uint64_t *new_bytes);

/* Where one stage's time went in the last step (seconds, CLOCK_MONOTONIC):
 * the forward and backward compute of its micro-batches, encoding and
 * decoding boundary messages (AQ-SGD: with the cache reads and updates),
 * sending and receiving them (the transport's calls, including the time
 * spent waiting for the peer), the tied-embedding exchange, clipping with
 * AdamW, and the loss broadcast. Timing never touches the numerics. */
typedef struct tt_times {
    double compute_fwd, compute_bwd, encode, decode, send, recv, swap, update, sync;
} tt_times;
#define TT_TIMES_N 9
/* the last step's times of stage k (held by this process) */
void tt_run_times(const tt_run *r, int k, tt_times *t);

/* A probe sees the forward activation of micro-batch 0 at every boundary k
 * this process sends from, before it is encoded: y is [B, T, C]. Called
 * during the next tt_run_step only (NULL: none). Returns 0, or 1 to fail
 * the step with *err. */
typedef int (*tt_probe_fn)(void *ctx, int k, int step, const float *y, int B, int T, int C,
                           const char **err);
void tt_run_probe_next(tt_run *r, tt_probe_fn fn, void *ctx);

#endif
