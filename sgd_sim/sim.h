/* SPDX-License-Identifier: MIT */
/*
 * sim.h - pipeline-parallel SGD simulator with compressed stage boundaries
 * (libtahq_sim). See sgd_sim/README.md for the model and its assumptions.
 *
 * A run holds K stages, a finite data set of sequences and one parameter
 * vector. One training step draws M micro-batches of B sequences of S tokens,
 * runs all forwards (GPipe), then all backwards in the same order, sums the
 * parameter gradients and applies SGD (or AdamW). Each of the K-1 stage
 * boundaries passes the forward activation through a forward codec and the
 * backward gradient through a backward codec; the receiving stage
 * differentiates with respect to the decoded input (straight-through).
 */
#ifndef TAHQ_SIM_H
#define TAHQ_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- dense kernels (sim_blas.c, OpenBLAS, 1 thread) -------- */
void sim_blas_init(void);
/* C[m,n] = alpha * op(A) op(B) + beta * C, row-major, with leading dims. */
void sim_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc);
void sim_dgemm(int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a,
               int lda, const double *b, int ldb, double beta, double *c, int ldc);

/* ---------------- codecs ------------------------------------------------- */
typedef enum sim_fwd_kind {
    SIM_FWD_NONE = 0, /* fp32 */
    SIM_FWD_FP16,
    SIM_FWD_TAH,       /* tahq_encode / tahq_decode with cfg */
    SIM_FWD_PLAIN,     /* tahq_config_plain(tile, bits) */
    SIM_FWD_AQSGD,     /* delta vs per-sample fp16 cache, fixpoint aq_bits */
    SIM_FWD_SCALE_BIAS /* control (biasP): y = bias_scale * x in binary32, a deliberately
                        * biased codec; not TAH-Quant's gain allocation (tah-gain) */
} sim_fwd_kind;

typedef enum sim_bwd_kind {
    SIM_BWD_NONE = 0,
    SIM_BWD_FIXPOINT, /* tahq_fixpoint_encode, per channel, bwd_bits */
    SIM_BWD_TAH       /* tahq_encode with bwd_cfg */
} sim_bwd_kind;

typedef struct sim_method {
    char name[48];
    sim_fwd_kind fwd;
    tahq_config fwd_cfg; /* TAH / PLAIN (seed is replaced per message when stochastic) */
    uint32_t aq_bits;    /* AQ-SGD delta bits (4 in its scripts) */
    sim_bwd_kind bwd;
    uint32_t bwd_bits;   /* fixpoint bits (6 in the authors' runs) */
    tahq_config bwd_cfg; /* TAH backward */
    float bias_scale;    /* SIM_FWD_SCALE_BIAS: the factor (1 + P/100 for biasP) */
} sim_method;

/* Parse a method name: fp32, fp16, tah, tah-tile, tah-sr, tah-tile-sr,
 * tahH/L (e.g. tah3/2), tah-gain (gain allocation, SPEC §4.3: per sequence
 * the tokens whose low width adds the least squared error; combines with
 * H/L, -sr and -gN like token allocation), tile size -gN (N = 8..256, e.g. tah-tile-g16),
 * the outlier gate's threshold -tauX (X >= 0, or inf: never transform; e.g.
 * tah4/3-tauinf, tah-tau0; default 2),
 * plainB (e.g. plain4), aqsgd, biasP (control: every forward boundary
 * multiplies by 1 + P/100, P = 1..50; backward none), with optional suffixes
 * +bwd-none, +bwd-fixB, +bwd-tah. Default backward: none for fp32 and biasP,
 * fixpoint 6-bit for every compressed method. Returns 0 on success. */
int sim_method_parse(const char *spec, sim_method *m);

/* Low-precision units per message of [B, S, C] under m's forward codec:
 * tahq_low_count of the allocation group (tokens per sequence, or tiles per
 * token) times the number of groups; 0 for codecs without an allocation
 * (and for a TAH configuration whose allocation has none, e.g. tile
 * allocation with C/G = 2 tiles per token at r = 0.8). *units gets the
 * number of allocation units per message (0 without an allocation). */
uint64_t sim_method_low_units(const sim_method *m, uint32_t B, uint32_t S, uint32_t C,
                              uint64_t *units);

/* ---------------- problems ----------------------------------------------- */
typedef enum sim_kind { SIM_SMOOTH = 0, SIM_MLP = 1 } sim_kind;

typedef struct sim_problem {
    sim_kind kind;
    uint32_t K;     /* stages */
    uint32_t S;     /* tokens per sequence */
    uint32_t C;     /* activation channels (multiple of 64) */
    uint32_t n_seq; /* data set size in sequences */
    uint32_t n_out; /* target width */
    uint32_t d;     /* smooth: feature channels (C = d + n_out); mlp: hidden width */
    float *X;       /* [n_seq*S, C] stage-0 input */
    float *Y;       /* [n_seq*S, n_out] targets */
    uint8_t *mask;  /* [n_seq*S] 1 = row in the loss */
    size_t n_params;
    /* smooth problem: f(W) = 1/(2N) sum ||x W - t||^2 over the N rows */
    double *Sxx, *Sxt; /* [d*d], [d*n_out] */
    double Stt, L, mu, fstar;
    double *Wstar; /* [d*n_out] */
} sim_problem;

/* Smooth problem: deep pipeline of K linear stages on [x | y]; stage k adds
 * x[block k] W_k to y. Known L = lambda_max(X^T X / N) and f*. */
int sim_problem_smooth(sim_problem *p, uint32_t K, uint64_t data_seed);
/* The same with n_seq sequences (even, >= 2; sim_problem_smooth: 64). The
 * first 64 sequences are those of sim_problem_smooth (one generator, drawn in
 * order), so a larger data set extends the default one. */
int sim_problem_smooth_n(sim_problem *p, uint32_t K, uint64_t data_seed, uint32_t n_seq);
/* LLM-like problem: K residual MLP blocks a + relu(a W1) W2 on [B*S, C],
 * a linear head on the last stage; inputs with outlier channels and
 * massive-activation tokens (masked from the loss), targets from a teacher. */
int sim_problem_mlp(sim_problem *p, uint32_t K, uint64_t data_seed);
void sim_problem_free(sim_problem *p);
/* exact full-batch objective and gradient (smooth problem), in double */
double sim_smooth_f(const sim_problem *p, const float *w);
double sim_smooth_grad(const sim_problem *p, const float *w, double *g); /* returns ||g||^2 */

/* ---------------- runs ---------------------------------------------------- */
/* AdamW defaults (Loshchilov & Hutter; PyTorch's torch.optim.AdamW). */
#define SIM_ADAMW_BETA1 0.9
#define SIM_ADAMW_BETA2 0.999
#define SIM_ADAMW_EPS 1e-8
#define SIM_ADAMW_WEIGHT_DECAY 0.01

typedef struct sim_opts {
    uint32_t micro; /* M micro-batches per step */
    uint32_t batch; /* B sequences per micro-batch */
    double eta;     /* step size */
    int adamw;      /* 0 = SGD: w -= eta g */
    /* AdamW (adamw = 1), with decoupled weight decay:
     *   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2   (stored as float)
     *   w -= eta ((m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps) + weight_decay w)
     * beta1, beta2 in [0, 1), eps > 0; sim_run_new rejects anything else. */
    double beta1, beta2, eps, weight_decay;
    double clip; /* per-stage gradient-norm clip, <= 0: none */
    uint64_t seed;
} sim_opts;

typedef struct sim_run sim_run;

sim_run *sim_run_new(const sim_problem *p, const sim_method *m, const sim_opts *o);
void sim_run_free(sim_run *r);
float *sim_run_params(sim_run *r);
/* One training step (sample, forward, backward, update). Returns the
 * mini-batch loss (on the decoded activations), or NAN on a codec error. */
double sim_run_step(sim_run *r);
/* The update half of a step with a given gradient (clipping, then SGD or
 * AdamW): what sim_run_step does after the backward pass. */
void sim_run_apply_grad(sim_run *r, const float *grad);
/* Mini-batch gradient at the current parameters for the given sequence ids
 * (count = micro*batch), without an update; key selects stochastic rounding. */
int sim_run_grad(sim_run *r, const uint32_t *ids, uint64_t key, float *grad, double *loss);
/* Mean full-data loss with no compression (MLP problem evaluation). */
double sim_run_eval_loss(sim_run *r);

typedef struct sim_traffic {
    uint64_t fwd_bytes, bwd_bytes; /* summed over boundaries and messages */
    uint64_t fwd_msgs, bwd_msgs;
    uint64_t fwd_elems, bwd_elems;
    uint64_t cache_bytes; /* AQ-SGD: sender + receiver caches, all boundaries */
    uint64_t full_sends;  /* AQ-SGD first-time full-precision sends */
} sim_traffic;
void sim_run_traffic(const sim_run *r, sim_traffic *t);

/* ---------------- one boundary codec, stand-alone (throughput) ---------- */
/* Encode and decode x[B,S,C] with the forward codec of m, no cache (AQ-SGD:
 * the steady-state delta message against cache = previous tensor prev).
 * Returns the message bytes, or 0 on error. */
size_t sim_fwd_roundtrip(const sim_method *m, uint32_t B, uint32_t S, uint32_t C, const float *x,
                         const float *prev, float *y, uint64_t key);
size_t sim_bwd_roundtrip(const sim_method *m, uint32_t B, uint32_t S, uint32_t C, const float *g,
                         float *y, uint64_t key);

uint64_t sim_mix64(uint64_t x);

#ifdef __cplusplus
}
#endif
#endif
