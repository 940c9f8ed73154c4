/* SPDX-License-Identifier: MIT */
/* tt_train.c - the single-process pipeline engine of tahq-train (tt_train.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "tt_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the engine needs of a stage of either model: its parameter and
 * gradient buffers and the tied embedding's gradients. */
typedef struct stage_view {
    float *params, *grads, *gwte, *gwte_head;
    size_t n_params;
    int first, last;
} stage_view;

struct tt_run {
    tt_opts o;
    sim_method m;
    tt_data d;
    int K, k_lo, k_hi; /* this process holds stages k_lo..k_hi */
    tt_stage_f *st;    /* [K], only k_lo..k_hi initialised (byte decoder) */
    tb_stage_f *bst;   /* [K] the same for the BERT encoder (o.bert) */
    stage_view *sv;    /* [K] */
    int *typ, *klen;   /* bert: [M*B*T] token types (0), [M*B] sequence lengths (T) */
    int *mrows, *mtgt; /* bert: [M * B*mask_per_seq] masked rows of each micro-batch, their ids */
    double eval_acc;
    float **am, **av;   /* AdamW moments per stage */
    uint8_t **decay;    /* per parameter: weight decay applies */
    tt_codec codec;     /* one set of buffers: boundaries are handled one at a time */
    float *xbuf, *gbuf; /* [B*T, C] decoded tensors */
    float *tied;        /* [V*C] the other copy's gradient of the tied embedding */
    int *tok, *tgt;     /* [M*B*T] */
    int t;              /* steps done */
    uint64_t fwd_bytes, bwd_bytes;
    /* window set (o.train_windows > 0) */
    size_t *wpos;   /* [N] start of window i */
    uint32_t *perm; /* [N] the order of epoch perm_epoch */
    int64_t perm_epoch;
    uint32_t *wid; /* [M*B] the step's window ids */
    /* AQ-SGD: per boundary k, the sender's (stage k) and the receiver's (stage k+1) cache */
    tt_aq_cache *aq_tx, *aq_rx;
    uint64_t aq_new, aq_new_bytes;
    tt_probe_fn probe;
    void *probe_ctx;
    tt_times *tm; /* [K] the last step's times per stage */
    tt_transport tr;
    /* single-process transport: the one message in flight */
    const uint8_t *box;
    size_t box_len;
    int box_to, box_tag;
};

/* the single-process transport: a message is read by the next stage before
 * another is sent, so one mailbox is enough */
static int local_send(void *ctx, int to, int tag, const uint8_t *msg, size_t len)
{
    tt_run *r = ctx;
    if (r->box)
        return 1;
    r->box = msg, r->box_len = len, r->box_to = to, r->box_tag = tag;
    return 0;
}
static int local_recv(void *ctx, int from, int tag, const uint8_t **msg, size_t *len)
{
    tt_run *r = ctx;
    (void)from;
    if (!r->box || r->box_tag != tag)
        return 1;
    *msg = r->box, *len = r->box_len;
    r->box = NULL;
    return 0;
}

static double clk(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* blocks of stage k: as even as possible, the first stages take the extra ones */
static void split(int L, int K, int k, int *b0, int *nb)
{
    int base = L / K, extra = L % K;
    *nb = base + (k < extra);
    *b0 = k * base + (k < extra ? k : extra);
}

static void mark(uint8_t *decay, const float *base, const float *p, size_t n)
{
    memset(decay + (p - base), 1, n);
}

/* stage k of the BERT encoder: blocks b0..b0+nb-1, initialised from the
 * seed, then from the pretrained weights when given; AdamW state and the
 * weight-decay marks (matrices and embeddings). 0, or 1 (*err). */
static int bert_stage_new(tt_run *r, int k, int b0, int nb, const char **err)
{
    const tt_opts *o = &r->o;
    const int K = r->K, B = o->batch, M = o->micro;
    tb_stage_f *s = &r->bst[k];
    if (tb_stage_init_f(s, &o->bert_cfg, o->cfg.T, b0, nb, k == 0, k == K - 1, B,
                        B * o->mask_per_seq, M))
        return 1;
    tb_stage_init_params_f(s, o->seed);
    static char why[1100];
    if (o->bert_init && tb_pretrained_load_stage(o->bert_init, s, why, sizeof why)) {
        *err = why;
        return 1;
    }
    r->sv[k] =
        (stage_view){s->params, s->grads, s->gwte, s->gwte_head, s->n_params, s->first, s->last};
    r->am[k] = calloc(s->n_params, sizeof(float));
    r->av[k] = calloc(s->n_params, sizeof(float));
    r->decay[k] = calloc(s->n_params, 1);
    if (!r->am[k] || !r->av[k] || !r->decay[k])
        return 1;
    const size_t C = (size_t)o->bert_cfg.C, F = (size_t)o->bert_cfg.F, V = (size_t)o->bert_cfg.V;
    if (s->first) {
        mark(r->decay[k], s->params, s->wte, V * C);
        mark(r->decay[k], s->params, s->wpe, (size_t)s->Tmax * C);
        mark(r->decay[k], s->params, s->wtt, (size_t)o->bert_cfg.TV * C);
    }
    for (int l = 0; l < nb; l++) {
        mark(r->decay[k], s->params, s->pb[l].qkvw, 3 * C * C);
        mark(r->decay[k], s->params, s->pb[l].ow, C * C);
        mark(r->decay[k], s->params, s->pb[l].f1w, C * F);
        mark(r->decay[k], s->params, s->pb[l].f2w, F * C);
    }
    if (s->last) {
        mark(r->decay[k], s->params, s->hw, C * C);
        if (!s->first)
            mark(r->decay[k], s->params, s->wte_head, V * C);
    }
    return 0;
}

tt_run *tt_run_new(const tt_opts *o, const sim_method *m, const tt_data *d, int k_lo, int k_hi,
                   const tt_transport *tr, const char **err)
{
    *err = "out of memory";
    tt_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->o = *o, r->m = *m, r->d = *d, r->K = o->K;
    if (tr) {
        r->tr = *tr;
        r->k_lo = k_lo, r->k_hi = k_hi;
    } else {
        r->tr = (tt_transport){r, local_send, local_recv, NULL, NULL};
        r->k_lo = 0, r->k_hi = o->K - 1;
    }
    const tt_config *c = &o->cfg;
    const int K = o->K, B = o->batch, M = o->micro;
    const size_t NC = (size_t)B * c->T * c->C;
    r->st = calloc((size_t)K, sizeof *r->st);
    r->am = calloc((size_t)K, sizeof(float *));
    r->av = calloc((size_t)K, sizeof(float *));
    r->decay = calloc((size_t)K, sizeof(uint8_t *));
    r->xbuf = malloc(sizeof(float) * NC);
    r->gbuf = malloc(sizeof(float) * NC);
    r->tied = malloc(sizeof(float) * (size_t)c->V * c->C);
    r->tok = malloc(sizeof(int) * (size_t)M * B * c->T);
    r->tgt = malloc(sizeof(int) * (size_t)M * B * c->T);
    r->tm = calloc((size_t)K, sizeof *r->tm);
    r->bst = calloc((size_t)K, sizeof *r->bst);
    r->sv = calloc((size_t)K, sizeof *r->sv);
    r->eval_acc = NAN;
    if (o->bert) {
        const size_t nm = (size_t)M * B * (o->mask_per_seq > 0 ? o->mask_per_seq : 1);
        r->typ = calloc((size_t)M * B * c->T, sizeof(int));
        r->klen = malloc(sizeof(int) * (size_t)M * B);
        r->mrows = malloc(sizeof(int) * nm);
        r->mtgt = malloc(sizeof(int) * nm);
        if (!r->typ || !r->klen || !r->mrows || !r->mtgt) {
            tt_run_free(r);
            return NULL;
        }
        for (int i = 0; i < M * B; i++)
            r->klen[i] = c->T; /* windows of the corpus: no padding */
    }
    if (!r->bst || !r->sv || !r->tm || !r->st || !r->am || !r->av || !r->decay || !r->xbuf ||
        !r->gbuf || !r->tied || !r->tok || !r->tgt) {
        tt_run_free(r);
        return NULL;
    }
    for (int k = r->k_lo; k <= r->k_hi; k++) {
        int b0, nb;
        split(c->L, K, k, &b0, &nb);
        if (o->bert) {
            if (bert_stage_new(r, k, b0, nb, err)) {
                tt_run_free(r);
                return NULL;
            }
            continue;
        }
        tt_stage_f *s = &r->st[k];
        if (tt_stage_init_f(s, c, b0, nb, k == 0, k == K - 1, B, M)) {
            tt_run_free(r);
            return NULL;
        }
        tt_stage_init_params_f(s, o->seed);
        r->sv[k] = (stage_view){s->params,   s->grads, s->gwte, s->gwte_head,
                                s->n_params, s->first, s->last};
        r->am[k] = calloc(s->n_params, sizeof(float));
        r->av[k] = calloc(s->n_params, sizeof(float));
        r->decay[k] = calloc(s->n_params, 1);
        if (!r->am[k] || !r->av[k] || !r->decay[k]) {
            tt_run_free(r);
            return NULL;
        }
        const size_t C = (size_t)c->C, V = (size_t)c->V, T = (size_t)c->T;
        if (s->first) {
            mark(r->decay[k], s->params, s->wte, V * C);
            mark(r->decay[k], s->params, s->wpe, T * C);
        }
        for (int l = 0; l < nb; l++) {
            mark(r->decay[k], s->params, s->pb[l].qkvw, 3 * C * C);
            mark(r->decay[k], s->params, s->pb[l].projw, C * C);
            mark(r->decay[k], s->params, s->pb[l].fcw, 4 * C * C);
            mark(r->decay[k], s->params, s->pb[l].fcpw, 4 * C * C);
        }
        if (s->last && !s->first)
            mark(r->decay[k], s->params, s->wte_head, V * C);
    }
    if (tt_codec_init(&r->codec, m, (uint32_t)B, (uint32_t)c->T, (uint32_t)c->C,
                      (uint32_t)(o->codec_threads > 1 ? o->codec_threads : 1))) {
        *err = "the method's codec rejects this shape (channels must be a multiple of its tile)";
        tt_run_free(r);
        return NULL;
    }
    const int N = o->train_windows;
    if (m->fwd == SIM_FWD_AQSGD && N <= 0) {
        *err = "aqsgd needs a fixed window set (--train-windows N)";
        tt_run_free(r);
        return NULL;
    }
    r->wid = calloc((size_t)M * B, sizeof(uint32_t));
    if (!r->wid) {
        tt_run_free(r);
        return NULL;
    }
    if (N > 0) {
        r->wpos = malloc(sizeof(size_t) * (size_t)N);
        r->perm = malloc(sizeof(uint32_t) * (size_t)N);
        if (!r->wpos || !r->perm) {
            tt_run_free(r);
            return NULL;
        }
        const uint64_t span = o->bert ? (uint64_t)(d->n_train_ids - (size_t)c->T + 2)
                                      : (uint64_t)(d->n_train - (size_t)c->T - 1);
        for (int i = 0; i < N; i++)
            r->wpos[i] = (size_t)(sim_mix64(sim_mix64(o->seed ^ UINT64_C(0x77696E646F7773)) +
                                            sim_mix64((uint64_t)i)) %
                                  span);
        r->perm_epoch = -1;
    }
    if (m->fwd == SIM_FWD_AQSGD) {
        r->aq_tx = calloc((size_t)K, sizeof *r->aq_tx);
        r->aq_rx = calloc((size_t)K, sizeof *r->aq_rx);
        if (!r->aq_tx || !r->aq_rx) {
            tt_run_free(r);
            return NULL;
        }
        for (int k = 0; k + 1 < K; k++) {
            if ((k >= r->k_lo && k <= r->k_hi &&
                 tt_aq_init(&r->aq_tx[k], (uint32_t)N, (uint32_t)c->T, (uint32_t)c->C)) ||
                (k + 1 >= r->k_lo && k + 1 <= r->k_hi &&
                 tt_aq_init(&r->aq_rx[k], (uint32_t)N, (uint32_t)c->T, (uint32_t)c->C))) {
                tt_run_free(r);
                return NULL;
            }
        }
    }
    *err = NULL;
    return r;
}

void tt_run_free(tt_run *r)
{
    if (!r)
        return;
    for (int k = r->k_lo; r->st && k <= r->k_hi; k++) {
        tt_stage_free_f(&r->st[k]);
        if (r->bst)
            tb_stage_free_f(&r->bst[k]);
        if (r->am)
            free(r->am[k]);
        if (r->av)
            free(r->av[k]);
        if (r->decay)
            free(r->decay[k]);
    }
    free(r->st);
    free(r->bst);
    free(r->sv);
    free(r->typ);
    free(r->klen);
    free(r->mrows);
    free(r->mtgt);
    free(r->am);
    free(r->av);
    free(r->decay);
    tt_codec_free(&r->codec);
    for (int k = 0; k < r->K; k++) {
        if (r->aq_tx)
            tt_aq_free(&r->aq_tx[k]);
        if (r->aq_rx)
            tt_aq_free(&r->aq_rx[k]);
    }
    free(r->aq_tx);
    free(r->aq_rx);
    free(r->wpos);
    free(r->perm);
    free(r->wid);
    free(r->xbuf);
    free(r->gbuf);
    free(r->tied);
    free(r->tok);
    free(r->tgt);
    free(r->tm);
    free(r);
}

double tt_lr(const tt_opts *o, int t)
{
    if (t < o->warmup)
        return o->lr * (double)(t + 1) / (double)o->warmup;
    if (o->schedule == TT_SCHED_CONST || o->steps <= o->warmup + 1)
        return o->lr;
    double p = (double)(t - o->warmup) / (double)(o->steps - 1 - o->warmup); /* 0 .. 1 */
    double f = o->schedule == TT_SCHED_LINEAR ? 1.0 - p : 0.5 * (1.0 + cos(3.141592653589793 * p));
    return o->lr * (0.1 + 0.9 * f);
}

/* window start for sample i of step t, in 0 .. span-1: a function of
 * (seed, t, i) only */
static size_t window(uint64_t seed, uint64_t t, uint64_t i, size_t span)
{
    uint64_t h = sim_mix64(sim_mix64(seed ^ UINT64_C(0x747261696E)) + sim_mix64(t * 1000003u + i));
    return (size_t)(h % (uint64_t)span);
}

/* stochastic-rounding key of one message: seed, step, boundary, micro-batch, direction */
static uint64_t msg_key(uint64_t seed, int t, int k, int m, int dir)
{
    return sim_mix64(sim_mix64(seed) ^ sim_mix64(((uint64_t)t << 24) ^ ((uint64_t)k << 12) ^
                                                 ((uint64_t)m << 1) ^ (uint64_t)dir));
}

static double sumsq(const float *g, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    return s;
}

static void scale_to(float *g, size_t n, double norm2, double clip)
{
    double nrm = sqrt(norm2);
    if (clip > 0 && nrm > clip) {
        float f = (float)(clip / nrm);
        for (size_t i = 0; i < n; i++)
            g[i] *= f;
    }
}

static void adamw(tt_run *r, int k, double lr)
{
    const stage_view *s = &r->sv[k];
    const double b1 = r->o.beta1, b2 = r->o.beta2, eps = r->o.eps, wd = r->o.weight_decay;
    const double c1 = 1.0 - pow(b1, (double)(r->t + 1)), c2 = 1.0 - pow(b2, (double)(r->t + 1));
    float *w = s->params, *m1 = r->am[k], *m2 = r->av[k];
    const float *g = s->grads;
    const uint8_t *dec = r->decay[k];
    for (size_t i = 0; i < s->n_params; i++) {
        double gi = g[i];
        m1[i] = (float)(b1 * m1[i] + (1 - b1) * gi);
        m2[i] = (float)(b2 * m2[i] + (1 - b2) * gi * gi);
        double upd = (m1[i] / c1) / (sqrt(m2[i] / c2) + eps);
        w[i] = (float)(w[i] - lr * (upd + (dec[i] ? wd * w[i] : 0.0)));
    }
}

/* forward of micro-batch m on stage k: receive and decode its input (k > 0),
 * compute, encode and send its output (k < K-1). Returns 0 or 1 (*err). */
static int fwd_work(tt_run *r, int k, int m, double *loss, const char **err)
{
    const int K = r->K, B = r->o.batch;
    const size_t BT = (size_t)B * r->o.cfg.T;
    const float *x = NULL, *y = NULL;
    tt_times *tm = &r->tm[k];
    double c0 = clk(), c1;
    if (k > 0) {
        const uint8_t *msg;
        size_t len;
        if (r->tr.recv(r->tr.ctx, k - 1, 0, &msg, &len)) {
            *err = "receiving a forward message failed";
            return 1;
        }
        c1 = clk(), tm->recv += c1 - c0, c0 = c1;
        if (r->aq_rx) {
            tt_aq_cache *rx = &r->aq_rx[k - 1];
            const uint32_t *ids = r->wid + (size_t)m * B;
            if (tt_aq_decode(&r->codec, rx, ids, (uint32_t)B, msg, len, r->xbuf, err))
                return 1;
            c1 = clk(), tm->decode += c1 - c0, c0 = c1;
            /* one process holds both sides: their caches must agree */
            const tt_aq_cache *tx = &r->aq_tx[k - 1];
            for (int s = 0; tx->val && s < B; s++)
                if (memcmp(tx->val + ids[s] * tx->per, rx->val + ids[s] * rx->per,
                           sizeof(uint16_t) * tx->per)) {
                    *err = "aqsgd: the sender's and the receiver's caches differ";
                    return 1;
                }
        } else {
            if (tt_decode(&r->codec, 0, (uint32_t)B, msg, len, r->xbuf, err))
                return 1;
            c1 = clk(), tm->decode += c1 - c0;
        }
        x = r->xbuf;
        c0 = clk(); /* the single process's cache comparison is not timed */
    }
    double l;
    if (r->o.bert) {
        const int nm = B * r->o.mask_per_seq;
        l = tb_stage_forward_f(&r->bst[k], m, B, r->o.cfg.T, r->klen + m * B, r->tok + m * BT,
                               r->typ + m * BT, x, nm, r->mrows + (size_t)m * nm,
                               r->mtgt + (size_t)m * nm, &y);
    } else {
        l = tt_stage_forward_f(&r->st[k], m, B, r->tok + m * BT, r->tgt + m * BT, x, &y);
    }
    c1 = clk(), tm->compute_fwd += c1 - c0;
    if (k == K - 1) {
        *loss += l;
        return 0;
    }
    if (r->probe && m == 0 &&
        r->probe(r->probe_ctx, k, r->t + 1, y, B, r->o.cfg.T, r->o.cfg.C, err))
        return 1;
    size_t len;
    c0 = clk();
    if (r->aq_tx) {
        uint32_t n_new = 0;
        len = tt_aq_encode(&r->codec, &r->aq_tx[k], r->wid + (size_t)m * B, (uint32_t)B, y, &n_new,
                           err);
        r->aq_new += n_new;
        r->aq_new_bytes += (uint64_t)n_new * r->aq_tx[k].per * 4;
    } else {
        len = tt_encode(&r->codec, 0, (uint32_t)B, y, msg_key(r->o.seed, r->t, k, m, 0), err);
    }
    if (!len)
        return 1;
    c1 = clk(), tm->encode += c1 - c0, c0 = c1;
    r->fwd_bytes += len;
    if (r->tr.send(r->tr.ctx, k + 1, 0, r->codec.msg, len)) {
        *err = "sending a forward message failed";
        return 1;
    }
    tm->send += clk() - c0;
    return 0;
}

/* backward of micro-batch m on stage k: receive and decode the gradient of
 * its output (k < K-1), differentiate, encode and send the gradient of its
 * input (k > 0) */
static int bwd_work(tt_run *r, int k, int m, float scale, const char **err)
{
    const int K = r->K, B = r->o.batch;
    const float *dy = NULL;
    tt_times *tm = &r->tm[k];
    double c0 = clk(), c1;
    if (k < K - 1) {
        const uint8_t *msg;
        size_t len;
        if (r->tr.recv(r->tr.ctx, k + 1, 1, &msg, &len)) {
            *err = "receiving a backward message failed";
            return 1;
        }
        c1 = clk(), tm->recv += c1 - c0, c0 = c1;
        if (tt_decode(&r->codec, 1, (uint32_t)B, msg, len, r->gbuf, err))
            return 1;
        c1 = clk(), tm->decode += c1 - c0, c0 = c1;
        dy = r->gbuf;
    }
    if (r->o.bert)
        tb_stage_backward_f(&r->bst[k], m, dy, k > 0 ? r->gbuf : NULL, scale);
    else
        tt_stage_backward_f(&r->st[k], m, dy, k > 0 ? r->gbuf : NULL, scale);
    c1 = clk(), tm->compute_bwd += c1 - c0, c0 = c1;
    if (k == 0)
        return 0;
    size_t len =
        tt_encode(&r->codec, 1, (uint32_t)B, r->gbuf, msg_key(r->o.seed, r->t, k - 1, m, 1), err);
    if (!len)
        return 1;
    c1 = clk(), tm->encode += c1 - c0, c0 = c1;
    r->bwd_bytes += len;
    if (r->tr.send(r->tr.ctx, k - 1, 1, r->codec.msg, len)) {
        *err = "sending a backward message failed";
        return 1;
    }
    tm->send += clk() - c0;
    return 0;
}

/* the order of epoch e of the window set: Fisher-Yates with a counter-based
 * generator keyed by the seed and e */
static void epoch_order(tt_run *r, int64_t e)
{
    const uint32_t N = (uint32_t)r->o.train_windows;
    const uint64_t key = sim_mix64(sim_mix64(r->o.seed ^ UINT64_C(0x65706F6368)) + (uint64_t)e);
    for (uint32_t i = 0; i < N; i++)
        r->perm[i] = i;
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(sim_mix64(key + i) % (uint64_t)(i + 1));
        uint32_t t = r->perm[i];
        r->perm[i] = r->perm[j], r->perm[j] = t;
    }
    r->perm_epoch = e;
}

/* bert: sample i of a batch of B as [CLS] ids[p .. p+T-3] [SEP] at tok,
 * with mask_per_seq of its inner positions masked (80/10/10), drawn from
 * key; the masked rows (b*T + position) and their ids go to rows / tgt */
static void bert_sample(const tt_opts *o, const int *ids, size_t p, uint64_t key, int b, int *tok,
                        int *rows, int *tgt)
{
    const int T = o->cfg.T, inner = T - 2, nm = o->mask_per_seq;
    tok[0] = o->tok_cls;
    for (int j = 0; j < inner; j++)
        tok[1 + j] = ids[p + (size_t)j];
    tok[T - 1] = o->tok_sep;
    /* nm distinct positions: the first nm of a Fisher-Yates shuffle of 1..T-2 */
    int pos[8192];
    for (int j = 0; j < inner; j++)
        pos[j] = 1 + j;
    for (int j = 0; j < nm; j++) {
        int pick = j + (int)(sim_mix64(key + 2 * (uint64_t)j) % (uint64_t)(inner - j));
        int t = pos[j];
        pos[j] = pos[pick], pos[pick] = t;
        const int at = pos[j];
        rows[j] = b * T + at;
        tgt[j] = tok[at];
        const uint64_t u = sim_mix64(key + 2 * (uint64_t)j + 1);
        const uint64_t what = u % 10; /* 0..7 [MASK], 8 random id, 9 kept */
        if (what < 8)
            tok[at] = o->tok_mask;
        else if (what == 8)
            tok[at] = (int)((u / 10) % (uint64_t)o->bert_cfg.V);
    }
}

/* the start of sample i (of n) of step t: the next of the window set, or a
 * fresh position in 0 .. span-1 from (seed, t, i) */
static size_t sample_start(tt_run *r, int i, int n, size_t span)
{
    const int64_t N = r->o.train_windows;
    if (N > 0) {
        int64_t g = (int64_t)r->t * n + i;
        if (g / N != r->perm_epoch)
            epoch_order(r, g / N);
        r->wid[i] = r->perm[g % N];
        return r->wpos[r->wid[i]];
    }
    return window(r->o.seed, (uint64_t)r->t, (uint64_t)i, span);
}

/* the windows of step t (every process draws all of them: they are cheap) */
static void draw(tt_run *r)
{
    const int T = r->o.cfg.T, n = r->o.micro * r->o.batch;
    if (r->o.bert) {
        const int B = r->o.batch, nm = r->o.mask_per_seq;
        for (int i = 0; i < n; i++) {
            size_t p = sample_start(r, i, n, r->d.n_train_ids - (size_t)T + 2);
            /* masks: a function of (seed, step, sample) only, the same for every method */
            const uint64_t key = sim_mix64(sim_mix64(r->o.seed ^ UINT64_C(0x6D61736B)) +
                                           sim_mix64((uint64_t)r->t * 1000003u + (uint64_t)i));
            bert_sample(&r->o, r->d.train_ids, p, key, i % B, r->tok + (size_t)i * T,
                        r->mrows + (size_t)i * nm, r->mtgt + (size_t)i * nm);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        size_t p = sample_start(r, i, n, r->d.n_train - (size_t)T - 1);
        for (int j = 0; j < T; j++) {
            r->tok[(size_t)i * T + j] = r->d.train[p + j];
            r->tgt[(size_t)i * T + j] = r->d.train[p + j + 1];
        }
    }
}

double tt_run_step(tt_run *r, const char **err)
{
    const tt_config *c = &r->o.cfg;
    const int K = r->K, M = r->o.micro, B = r->o.batch;
    const size_t BT = (size_t)B * c->T, nwte = (size_t)c->V * c->C;
    *err = NULL;
    draw(r);
    for (int k = r->k_lo; k <= r->k_hi; k++)
        memset(r->sv[k].grads, 0, sizeof(float) * r->sv[k].n_params);
    r->fwd_bytes = r->bwd_bytes = 0;
    r->aq_new = r->aq_new_bytes = 0;
    memset(r->tm, 0, sizeof(tt_times) * (size_t)K);
    double loss = 0;
    /* GPipe: all forwards, then all backwards in the same order */
    for (int m = 0; m < M; m++)
        for (int k = r->k_lo; k <= r->k_hi; k++)
            if (fwd_work(r, k, m, &loss, err))
                return NAN;
    r->probe = NULL;
    /* the mean over the predicted positions: every byte, or the masked ones */
    const double n_pred = r->o.bert ? (double)M * B * r->o.mask_per_seq : (double)M * BT;
    const float scale = (float)(1.0 / n_pred);
    for (int m = 0; m < M; m++)
        for (int k = r->k_hi; k >= r->k_lo; k--)
            if (bwd_work(r, k, m, scale, err))
                return NAN;
    /* tied embedding: both copies get g_wte + g_head, added in that order on
     * both sides; untied: each copy keeps its own gradient */
    double c0 = clk();
    if (K > 1 && !r->o.untied_head) {
        stage_view *s0 = r->k_lo == 0 ? &r->sv[0] : NULL;
        stage_view *sl = r->k_hi == K - 1 ? &r->sv[K - 1] : NULL;
        if (s0 && sl) {
            for (size_t i = 0; i < nwte; i++)
                s0->gwte[i] = sl->gwte_head[i] = s0->gwte[i] + sl->gwte_head[i];
        } else if (s0 || sl) {
            float *g = s0 ? s0->gwte : sl->gwte_head;
            if (r->tr.swap(r->tr.ctx, s0 ? K - 1 : 0, g, r->tied, nwte)) {
                *err = "exchanging the tied embedding's gradient failed";
                return NAN;
            }
            for (size_t i = 0; i < nwte; i++)
                g[i] = s0 ? g[i] + r->tied[i] : r->tied[i] + g[i];
        }
    }
    {
        double c1 = clk();
        for (int k = r->k_lo; k <= r->k_hi; k++)
            if (r->sv[k].first || r->sv[k].last)
                r->tm[k].swap += c1 - c0;
    }
    /* clipping: each stage's own tensors, and the tied embedding as one group */
    double lr = tt_lr(&r->o, r->t);
    for (int k = r->k_lo; k <= r->k_hi; k++) {
        stage_view *s = &r->sv[k];
        c0 = clk();
        size_t lo = s->first ? nwte : 0, hi = s->n_params - (s->last && !s->first ? nwte : 0);
        scale_to(s->grads + lo, hi - lo, sumsq(s->grads + lo, hi - lo), r->o.clip);
        if (s->first)
            scale_to(s->gwte, nwte, sumsq(s->gwte, nwte), r->o.clip);
        if (s->last && !s->first)
            scale_to(s->gwte_head, nwte, sumsq(s->gwte_head, nwte), r->o.clip);
        adamw(r, k, lr);
        r->tm[k].update += clk() - c0;
    }
    r->t++;
    loss /= n_pred;
    c0 = clk();
    if (r->tr.bcast && r->tr.bcast(r->tr.ctx, K - 1, &loss, 1)) {
        *err = "broadcasting the loss failed";
        return NAN;
    }
    if (r->tr.bcast)
        r->tm[r->k_lo].sync += clk() - c0;
    return loss;
}

/* evaluation: the input of stage k > 0, the binary32 values of stage k-1's
 * output as they are (uncompressed); NULL on the first stage. 0, or 1 when
 * the message is missing or of another size. */
static int eval_input(tt_run *r, int k, size_t nbytes, const float **x)
{
    *x = NULL;
    if (k == 0)
        return 0;
    const uint8_t *msg;
    size_t len;
    if (r->tr.recv(r->tr.ctx, k - 1, 2, &msg, &len) || len != nbytes)
        return 1;
    memcpy(r->xbuf, msg, nbytes);
    *x = r->xbuf;
    return 0;
}

/* bert: masked-token loss and accuracy on n_windows windows of the
 * validation ids, spread evenly over them, masks fixed by the window index */
static double bert_eval(tt_run *r, int n_windows)
{
    const tt_config *c = &r->o.cfg;
    const int K = r->K, B = r->o.batch, T = c->T, nm = r->o.mask_per_seq, V = c->V;
    const size_t span = r->d.n_val_ids - (size_t)T + 2;
    double v[2] = {0, 0}; /* summed loss, correct predictions */
    int done = 0;
    while (done < n_windows) {
        int b = n_windows - done < B ? n_windows - done : B;
        for (int i = 0; i < b; i++) {
            size_t p = (size_t)((double)span * (done + i) / (double)n_windows);
            bert_sample(
                &r->o, r->d.val_ids, p, sim_mix64(UINT64_C(0x6576616C) + (uint64_t)(done + i)), i,
                r->tok + (size_t)i * T, r->mrows + (size_t)i * nm, r->mtgt + (size_t)i * nm);
        }
        const size_t nbytes = sizeof(float) * (size_t)b * T * c->C;
        for (int k = r->k_lo; k <= r->k_hi; k++) {
            const float *x, *y = NULL;
            if (eval_input(r, k, nbytes, &x))
                return NAN;
            v[0] += tb_stage_forward_f(&r->bst[k], 0, b, T, r->klen, r->tok, r->typ, x, b * nm,
                                       r->mrows, r->mtgt, &y);
            if (k < K - 1 && r->tr.send(r->tr.ctx, k + 1, 2, (const uint8_t *)y, nbytes))
                return NAN;
            if (k == K - 1) {
                const float *pr = r->bst[k].slots[0].probs;
                for (int j = 0; j < b * nm; j++) {
                    const float *row = pr + (size_t)j * V;
                    int best = 0;
                    for (int u = 1; u < V; u++)
                        if (row[u] > row[best])
                            best = u;
                    v[1] += best == r->mtgt[j];
                }
            }
        }
        done += b;
    }
    v[0] /= (double)n_windows * nm;
    v[1] /= (double)n_windows * nm;
    if (r->tr.bcast && r->tr.bcast(r->tr.ctx, K - 1, v, 2))
        return NAN;
    r->eval_acc = v[1];
    return v[0];
}

double tt_run_eval_accuracy(const tt_run *r)
{
    return r->eval_acc;
}

double tt_run_eval(tt_run *r, int n_windows)
{
    if (r->o.bert)
        return bert_eval(r, n_windows);
    const tt_config *c = &r->o.cfg;
    const int K = r->K, B = r->o.batch, T = c->T;
    const size_t span = r->d.n_val - (size_t)T - 1;
    double sum = 0;
    int done = 0;
    while (done < n_windows) {
        int b = n_windows - done < B ? n_windows - done : B;
        for (int i = 0; i < b; i++) {
            size_t p = (size_t)((double)span * (done + i) / (double)n_windows);
            for (int j = 0; j < T; j++) {
                r->tok[(size_t)i * T + j] = r->d.val[p + j];
                r->tgt[(size_t)i * T + j] = r->d.val[p + j + 1];
            }
        }
        /* uncompressed: the binary32 values themselves travel */
        const size_t nbytes = sizeof(float) * (size_t)b * T * c->C;
        for (int k = r->k_lo; k <= r->k_hi; k++) {
            const float *x, *y = NULL;
            if (eval_input(r, k, nbytes, &x))
                return NAN;
            sum += tt_stage_forward_f(&r->st[k], 0, b, r->tok, r->tgt, x, &y);
            if (k < K - 1 && r->tr.send(r->tr.ctx, k + 1, 2, (const uint8_t *)y, nbytes))
                return NAN;
        }
        done += b;
    }
    double v = sum / ((double)n_windows * T);
    if (r->tr.bcast && r->tr.bcast(r->tr.ctx, K - 1, &v, 1))
        return NAN;
    return v;
}

void tt_run_bytes(const tt_run *r, uint64_t *fwd, uint64_t *bwd)
{
    *fwd = r->fwd_bytes;
    *bwd = r->bwd_bytes;
}

void tt_run_aq_counts(const tt_run *r, uint64_t *new_samples, uint64_t *new_bytes)
{
    *new_samples = r->aq_new;
    *new_bytes = r->aq_new_bytes;
}

void tt_run_probe_next(tt_run *r, tt_probe_fn fn, void *ctx)
{
    r->probe = fn;
    r->probe_ctx = ctx;
}

void tt_run_times(const tt_run *r, int k, tt_times *t)
{
    *t = r->tm[k];
}
