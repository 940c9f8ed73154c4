/* SPDX-License-Identifier: MIT */
/* test_grad.c - gradient checks of the transformer (CTest train_gradcheck).
 *
 * Every layer's backward, the whole model on a tiny configuration, and the
 * same model split into two stages (tied head), are checked against central
 * finite differences, all in binary64: the checks run the double
 * instantiation (_d) of tt_model.inc, the very source the float trainer is
 * compiled from. A last check compares the float instantiation's gradient
 * with the double one.
 *
 * Each check also runs with a deliberately wrong backward (tt_fault: one
 * term dropped) and must then FAIL; a control that passes fails the test.
 *
 * Tolerance of the finite-difference check. For a scalar loss f of a
 * coordinate x, fd = (f(x+h) - f(x-h)) / 2h differs from f'(x) by
 *   truncation  h^2 |f'''| / 6
 *   rounding    2 e_f / 2h = e_f / h,  e_f the rounding error of one evaluation of f.
 * Here h = 1e-5 (inputs and parameters are O(1) by construction). Rounding:
 * e_f <= n u F, with u = 2^-53 = 1.1e-16, n the longest chain of rounded
 * operations (sums of at most a few hundred terms through a few dozen
 * layers: n < 1e4) and F the size of the loss's terms, so e_f / h <= 1.1e-7 F.
 * Truncation: 1.7e-11 |f'''|. With the losses used here, F and |f'''| are of
 * the order of gmax (the largest |gradient| of the check) up to a factor 10,
 * which bounds the error by about 1e-6 gmax. The tolerance is
 *   |fd - g| <= 1e-6 (|g| + gmax),
 * and each check prints its largest error / tolerance: the measured errors
 * are 1e-5 .. 1e-3 of it, so the estimate is pessimistic. A dropped term
 * changes some gradient by a fraction of gmax (1e-3 .. 1), 3 to 6 orders
 * above the tolerance; the controls check that it is detected.
 */
#include "tt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#include "gradcheck.h"

/* ---------------- layers ---------------------------------------------------
 * Each layer's loss is sum(out * R) for a fixed random R, so d loss/d out = R. */

/* LayerNorm */
enum { LN_N = 5, LN_C = 8 };
typedef struct {
    double x[LN_N * LN_C], w[LN_C], b[LN_C], R[LN_N * LN_C];
    double dx[LN_N * LN_C], dw[LN_C], db[LN_C];
    double out[LN_N * LN_C], m[LN_N], r[LN_N];
} ln_ctx;
static double ln_loss(void *p)
{
    ln_ctx *c = p;
    tt_layernorm_forward_d(c->out, c->m, c->r, c->x, c->w, c->b, LN_N, LN_C);
    return dot(c->out, c->R, LN_N * LN_C);
}
static void ln_grad(void *p)
{
    ln_ctx *c = p;
    ln_loss(c);
    memset(c->dx, 0, sizeof c->dx);
    memset(c->dw, 0, sizeof c->dw);
    memset(c->db, 0, sizeof c->db);
    tt_layernorm_backward_d(c->dx, c->dw, c->db, c->R, c->x, c->w, c->m, c->r, LN_N, LN_C);
}

/* matmul */
enum { MM_N = 4, MM_I = 6, MM_O = 5 };
typedef struct {
    double x[MM_N * MM_I], w[MM_I * MM_O], b[MM_O], R[MM_N * MM_O], out[MM_N * MM_O];
    double dx[MM_N * MM_I], dw[MM_I * MM_O], db[MM_O];
} mm_ctx;
static double mm_loss(void *p)
{
    mm_ctx *c = p;
    tt_matmul_forward_d(c->out, c->x, c->w, c->b, MM_N, MM_I, MM_O);
    return dot(c->out, c->R, MM_N * MM_O);
}
static void mm_grad(void *p)
{
    mm_ctx *c = p;
    memset(c->dw, 0, sizeof c->dw);
    memset(c->db, 0, sizeof c->db);
    tt_matmul_backward_d(c->dx, c->dw, c->db, c->R, c->x, c->w, MM_N, MM_I, MM_O);
}

/* attention */
enum { AT_B = 2, AT_T = 5, AT_C = 8, AT_NH = 2 };
typedef struct {
    double qkv[AT_B * AT_T * 3 * AT_C], R[AT_B * AT_T * AT_C], out[AT_B * AT_T * AT_C];
    double att[AT_B * AT_NH * AT_T * AT_T], dqkv[AT_B * AT_T * 3 * AT_C], tt[AT_T * AT_T];
} at_ctx;
static double at_loss(void *p)
{
    at_ctx *c = p;
    tt_attention_forward_d(c->out, c->att, c->qkv, AT_B, AT_T, AT_C, AT_NH);
    return dot(c->out, c->R, AT_B * AT_T * AT_C);
}
static void at_grad(void *p)
{
    at_ctx *c = p;
    at_loss(c);
    tt_attention_backward_d(c->dqkv, c->tt, c->R, c->qkv, c->att, AT_B, AT_T, AT_C, AT_NH);
}

/* GELU */
enum { GE_N = 64 };
typedef struct {
    double x[GE_N], R[GE_N], out[GE_N], th[GE_N], dx[GE_N];
} ge_ctx;
static double ge_loss(void *p)
{
    ge_ctx *c = p;
    tt_gelu_forward_d(c->out, c->th, c->x, GE_N);
    return dot(c->out, c->R, GE_N);
}
static void ge_grad(void *p)
{
    ge_ctx *c = p;
    ge_loss(c);
    tt_gelu_backward_d(c->dx, c->x, c->th, c->R, GE_N);
}

/* embeddings */
enum { EN_B = 2, EN_T = 4, EN_C = 3, EN_V = 7 };
typedef struct {
    int tok[EN_B * EN_T];
    double wte[EN_V * EN_C], wpe[EN_T * EN_C], R[EN_B * EN_T * EN_C], out[EN_B * EN_T * EN_C];
    double dwte[EN_V * EN_C], dwpe[EN_T * EN_C];
} en_ctx;
static double en_loss(void *p)
{
    en_ctx *c = p;
    tt_encoder_forward_d(c->out, c->tok, c->wte, c->wpe, EN_B, EN_T, EN_C);
    return dot(c->out, c->R, EN_B * EN_T * EN_C);
}
static void en_grad(void *p)
{
    en_ctx *c = p;
    memset(c->dwte, 0, sizeof c->dwte);
    memset(c->dwpe, 0, sizeof c->dwpe);
    tt_encoder_backward_d(c->dwte, c->dwpe, c->R, c->tok, EN_B, EN_T, EN_C);
}

/* tied head + cross-entropy (loss = mean over rows) */
enum { HD_N = 6, HD_V = 11, HD_C = 4 };
typedef struct {
    int tgt[HD_N];
    double x[HD_N * HD_C], wte[HD_V * HD_C], probs[HD_N * HD_V], dl[HD_N * HD_V];
    double dx[HD_N * HD_C], dwte[HD_V * HD_C];
} hd_ctx;
static double hd_loss(void *p)
{
    hd_ctx *c = p;
    return tt_head_forward_d(c->probs, c->x, c->wte, c->tgt, HD_N, HD_V, HD_C) / HD_N;
}
static void hd_grad(void *p)
{
    hd_ctx *c = p;
    hd_loss(c);
    memset(c->dwte, 0, sizeof c->dwte);
    tt_head_backward_d(c->dx, c->dwte, c->dl, c->probs, c->x, c->wte, c->tgt, 1.0 / HD_N, HD_N,
                       HD_V, HD_C);
}

/* ---------------- whole model ------------------------------------------- */
enum { MB = 2 };
static const tt_config tiny = {256, 16, 2, 8, 2};

typedef struct {
    int nst; /* 1: one stage; 2: blocks split 1 + 1, tied head across stages */
    tt_stage_d st[2];
    int tok[MB * 8], tgt[MB * 8];
    double dbuf[MB * 8 * 16];
} md_ctx;

static double md_loss(void *p)
{
    md_ctx *c = p;
    const double *y = NULL;
    double l;
    if (c->nst == 1) {
        l = tt_stage_forward_d(&c->st[0], 0, MB, c->tok, c->tgt, NULL, NULL);
    } else {
        tt_stage_forward_d(&c->st[0], 0, MB, c->tok, NULL, NULL, &y);
        l = tt_stage_forward_d(&c->st[1], 0, MB, NULL, c->tgt, y, NULL);
    }
    return l / (MB * tiny.T);
}
static void md_grad(void *p)
{
    md_ctx *c = p;
    md_loss(c);
    double scale = 1.0 / (MB * tiny.T);
    for (int k = 0; k < c->nst; k++)
        tt_stage_zero_grad_d(&c->st[k]);
    if (c->nst == 1) {
        tt_stage_backward_d(&c->st[0], 0, NULL, NULL, scale);
    } else {
        tt_stage_backward_d(&c->st[1], 0, NULL, c->dbuf, scale);
        tt_stage_backward_d(&c->st[0], 0, c->dbuf, NULL, scale);
    }
}

/* randomise every parameter (well away from the initialisation's symmetric
 * point: LayerNorm weights 1 +- 0.3, everything else N(0, 0.3^2)) */
static void md_randomise(tt_stage_d *s)
{
    fill(s->params, s->n_params, 0, 0.3);
    for (int l = 0; l < s->nb; l++) {
        fill(s->pb[l].ln1w, (size_t)s->cfg.C, 1, 0.3);
        fill(s->pb[l].ln2w, (size_t)s->cfg.C, 1, 0.3);
    }
    if (s->last)
        fill(s->lnfw, (size_t)s->cfg.C, 1, 0.3);
}

static int md_vars(md_ctx *c, var *vars)
{
    /* one var per stage buffer; with two stages, wte (stage 0) is tied to
     * wte_head (stage 1) and the rest of stage 1 is its own var */
    if (c->nst == 1) {
        vars[0] = (var){"model", c->st[0].params, c->st[0].grads, c->st[0].n_params, NULL, NULL};
        return 1;
    }
    tt_stage_d *a = &c->st[0], *b = &c->st[1];
    size_t nwte = (size_t)tiny.V * tiny.C;
    vars[0] = (var){"wte (tied)", a->wte, a->gwte, nwte, b->wte_head, b->gwte_head};
    vars[1] =
        (var){"stage0 rest", a->params + nwte, a->grads + nwte, a->n_params - nwte, NULL, NULL};
    vars[2] = (var){"stage1 rest", b->params, b->grads, b->n_params - nwte, NULL, NULL};
    return 3;
}

/* the float instantiation against the double one, same parameters */
static double float_vs_double(md_ctx *c, int fault)
{
    tt_stage_f f;
    if (tt_stage_init_f(&f, &tiny, 0, tiny.L, 1, 1, MB, 1)) {
        printf("FAIL out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < f.n_params; i++)
        f.params[i] = (float)c->st[0].params[i];
    tt_fault = 0;
    md_grad(c);
    tt_stage_forward_f(&f, 0, MB, c->tok, c->tgt, NULL, NULL);
    tt_stage_zero_grad_f(&f);
    tt_fault = fault;
    tt_stage_backward_f(&f, 0, NULL, NULL, (float)(1.0 / (MB * tiny.T)));
    tt_fault = 0;
    double e = rel_l2_diff(f.grads, c->st[0].grads, f.n_params);
    tt_stage_free_f(&f);
    return e;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    sim_blas_init();
    printf("gradient checks (binary64, central differences, h = %g, tolerance %g (|g| + gmax)):\n",
           FD_H, FD_RTOL);

    static ln_ctx ln;
    fill(ln.x, LN_N * LN_C, 0.5, 2);
    fill(ln.w, LN_C, 1, 0.5);
    fill(ln.b, LN_C, 0, 1);
    fill(ln.R, LN_N * LN_C, 0, 1);
    var lnv[] = {{"x", ln.x, ln.dx, LN_N * LN_C, NULL, NULL},
                 {"w", ln.w, ln.dw, LN_C, NULL, NULL},
                 {"b", ln.b, ln.db, LN_C, NULL, NULL}};
    run_check("layernorm", ln_loss, ln_grad, &ln, lnv, 3, (int[]){TT_FAULT_LN}, 1);

    static mm_ctx mm;
    fill(mm.x, MM_N * MM_I, 0, 1);
    fill(mm.w, MM_I * MM_O, 0, 1);
    fill(mm.b, MM_O, 0, 1);
    fill(mm.R, MM_N * MM_O, 0, 1);
    var mmv[] = {{"x", mm.x, mm.dx, MM_N * MM_I, NULL, NULL},
                 {"w", mm.w, mm.dw, MM_I * MM_O, NULL, NULL},
                 {"b", mm.b, mm.db, MM_O, NULL, NULL}};
    run_check("matmul", mm_loss, mm_grad, &mm, mmv, 3, (int[]){TT_FAULT_BIAS}, 1);

    static at_ctx at;
    fill(at.qkv, AT_B * AT_T * 3 * AT_C, 0, 1.5); /* scores of a few units: peaked softmax rows */
    fill(at.R, AT_B * AT_T * AT_C, 0, 1);
    var atv[] = {{"qkv", at.qkv, at.dqkv, AT_B * AT_T * 3 * AT_C, NULL, NULL}};
    run_check("attention (causal, 2 heads)", at_loss, at_grad, &at, atv, 1,
              (int[]){TT_FAULT_SOFTMAX, TT_FAULT_ATTN_V}, 2);

    static ge_ctx ge;
    fill(ge.x, GE_N, 0, 2);
    fill(ge.R, GE_N, 0, 1);
    var gev[] = {{"x", ge.x, ge.dx, GE_N, NULL, NULL}};
    run_check("gelu", ge_loss, ge_grad, &ge, gev, 1, (int[]){TT_FAULT_GELU}, 1);

    static en_ctx en;
    for (int i = 0; i < EN_B * EN_T; i++)
        en.tok[i] = (int)(sim_mix64((uint64_t)i) % 4); /* repeated tokens: gradients add up */
    fill(en.wte, EN_V * EN_C, 0, 1);
    fill(en.wpe, EN_T * EN_C, 0, 1);
    fill(en.R, EN_B * EN_T * EN_C, 0, 1);
    var env[] = {{"wte", en.wte, en.dwte, EN_V * EN_C, NULL, NULL},
                 {"wpe", en.wpe, en.dwpe, EN_T * EN_C, NULL, NULL}};
    run_check("embeddings", en_loss, en_grad, &en, env, 2, (int[]){TT_FAULT_WPE}, 1);

    static hd_ctx hd;
    for (int i = 0; i < HD_N; i++)
        hd.tgt[i] = (int)(sim_mix64((uint64_t)i + 100) % HD_V);
    fill(hd.x, HD_N * HD_C, 0, 1);
    fill(hd.wte, HD_V * HD_C, 0, 1);
    var hdv[] = {{"x", hd.x, hd.dx, HD_N * HD_C, NULL, NULL},
                 {"wte", hd.wte, hd.dwte, HD_V * HD_C, NULL, NULL}};
    run_check("tied head + cross-entropy", hd_loss, hd_grad, &hd, hdv, 2, (int[]){TT_FAULT_CE}, 1);

    /* whole model: C=16, 2 blocks, 2 heads, T=8, V=256, 2 sequences */
    static const int all_faults[] = {TT_FAULT_LN,   TT_FAULT_SOFTMAX, TT_FAULT_GELU,
                                     TT_FAULT_BIAS, TT_FAULT_CE,      TT_FAULT_RESIDUAL,
                                     TT_FAULT_WPE,  TT_FAULT_ATTN_V};
    static md_ctx md1, md2;
    md1.nst = 1;
    if (tt_stage_init_d(&md1.st[0], &tiny, 0, tiny.L, 1, 1, MB, 1)) {
        printf("FAIL out of memory\n");
        return 1;
    }
    md_randomise(&md1.st[0]);
    for (int i = 0; i < MB * tiny.T; i++) {
        md1.tok[i] = (int)(sim_mix64((uint64_t)i + 7) % 256);
        md1.tgt[i] = (int)(sim_mix64((uint64_t)i + 1007) % 256);
    }
    var mv[3];
    int nmv = md_vars(&md1, mv);
    run_check("whole model (1 stage)", md_loss, md_grad, &md1, mv, nmv, all_faults,
              (int)(sizeof all_faults / sizeof all_faults[0]));

    /* the same model in two stages: block 0 + embeddings | block 1 + head,
     * wte and wte_head tied (moved together; gradient = the sum) */
    md2.nst = 2;
    if (tt_stage_init_d(&md2.st[0], &tiny, 0, 1, 1, 0, MB, 1) ||
        tt_stage_init_d(&md2.st[1], &tiny, 1, 1, 0, 1, MB, 1)) {
        printf("FAIL out of memory\n");
        return 1;
    }
    {
        /* copy md1's parameters tensor by tensor (same global layout order) */
        const tt_stage_d *w = &md1.st[0];
        size_t nwte = (size_t)tiny.V * tiny.C, nwpe = (size_t)tiny.T * tiny.C;
        size_t nblk = TT_BLOCK_PARAMS(tiny.C);
        memcpy(md2.st[0].params, w->params, sizeof(double) * (nwte + nwpe + nblk));
        memcpy(md2.st[1].params, w->params + nwte + nwpe + nblk, sizeof(double) * (nblk + 2 * 16));
        memcpy(md2.st[1].wte_head, w->wte, sizeof(double) * nwte);
    }
    memcpy(md2.tok, md1.tok, sizeof md1.tok);
    memcpy(md2.tgt, md1.tgt, sizeof md1.tgt);
    double l1 = md_loss(&md1), l2 = md_loss(&md2);
    printf("  one stage vs two stages: loss %.17g vs %.17g\n", l1, l2);
    if (fabs(l1 - l2) > 1e-12 * fabs(l1)) {
        /* the same operations in the same order: only the tied copies differ in storage */
        printf("FAIL two-stage loss differs from the one-stage loss\n");
        failures++;
    }
    nmv = md_vars(&md2, mv);
    fd_stride = 3; /* every third parameter: the one-stage check covered them all */
    run_check("whole model (2 stages, tied head)", md_loss, md_grad, &md2, mv, nmv,
              (int[]){TT_FAULT_RESIDUAL, TT_FAULT_CE}, 2);
    fd_stride = 1;

    /* float vs double. The float gradient's relative error: each rounded
     * operation contributes at most u = 2^-24 = 6e-8 relative, sums of up to
     * 256 terms at most 256 u = 1.5e-5 (worst case, first order), and the
     * gradient passes through about 30 such stages (2 blocks of 6 matmuls,
     * LayerNorms, softmaxes, the head): 30 * 1.5e-5 = 4.6e-4 worst case.
     * Tolerance: 1e-3 in the 2-norm. A dropped term (fault) gives an error of
     * the order of the term, far above it. */
    double e = float_vs_double(&md1, 0);
    double ef = float_vs_double(&md1, TT_FAULT_LN);
    float_verdict(e, ef, TT_FAULT_LN);

    tt_stage_free_d(&md1.st[0]);
    tt_stage_free_d(&md2.st[0]);
    tt_stage_free_d(&md2.st[1]);
    if (failures) {
        printf("gradient checks: %d FAILED\n", failures);
        return 1;
    }
    printf("gradient checks: all passed; every control failed as it must\n");
    return 0;
}
