/* SPDX-License-Identifier: MIT */
/* test_bert_grad.c - gradient checks of the BERT encoder (CTest
 * bert_gradcheck), in binary64 against central differences, with the
 * tolerance derived in test_grad.c (gradcheck.h): the erf GELU, the three
 * embeddings, bidirectional attention with padded keys, and the whole
 * model (embeddings + LayerNorm, post-LN blocks, MLM head tied to the word
 * embeddings, loss on the masked rows) in one stage and split into two
 * and three stages (wte tied across the first and last). Each check runs
 * with deliberately wrong backwards (tt_fault) that must fail it; last, the
 * float instantiation's gradient against the double one.
 * Needs no pretrained model: a tiny random configuration.
 */
#include "tt_bert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#include "gradcheck.h"

/* erf GELU */
enum { GE_N = 64 };
typedef struct {
    double x[GE_N], R[GE_N], out[GE_N], dx[GE_N];
} ge_ctx;
static double ge_loss(void *p)
{
    ge_ctx *c = p;
    tb_gelu_forward_d(c->out, c->x, GE_N);
    return dot(c->out, c->R, GE_N);
}
static void ge_grad(void *p)
{
    ge_ctx *c = p;
    tb_gelu_backward_d(c->dx, c->x, c->R, GE_N);
}

/* word + position + type embeddings */
enum { EM_B = 2, EM_T = 4, EM_C = 3, EM_V = 7, EM_TV = 2 };
typedef struct {
    int tok[EM_B * EM_T], typ[EM_B * EM_T];
    double wte[EM_V * EM_C], wpe[EM_T * EM_C], wtt[EM_TV * EM_C];
    double R[EM_B * EM_T * EM_C], out[EM_B * EM_T * EM_C];
    double dwte[EM_V * EM_C], dwpe[EM_T * EM_C], dwtt[EM_TV * EM_C];
} em_ctx;
static double em_loss(void *p)
{
    em_ctx *c = p;
    tb_embed_forward_d(c->out, c->tok, c->typ, c->wte, c->wpe, c->wtt, EM_B, EM_T, EM_C);
    return dot(c->out, c->R, EM_B * EM_T * EM_C);
}
static void em_grad(void *p)
{
    em_ctx *c = p;
    memset(c->dwte, 0, sizeof c->dwte);
    memset(c->dwpe, 0, sizeof c->dwpe);
    memset(c->dwtt, 0, sizeof c->dwtt);
    tb_embed_backward_d(c->dwte, c->dwpe, c->dwtt, c->R, c->tok, c->typ, EM_B, EM_T, EM_C);
}

/* bidirectional attention, sequence 1 padded after 3 of 5 tokens */
enum { AT_B = 2, AT_T = 5, AT_C = 8, AT_NH = 2 };
typedef struct {
    int klen[AT_B];
    double qkv[AT_B * AT_T * 3 * AT_C], R[AT_B * AT_T * AT_C], out[AT_B * AT_T * AT_C];
    double att[AT_B * AT_NH * AT_T * AT_T], dqkv[AT_B * AT_T * 3 * AT_C], tt[AT_T * AT_T];
} at_ctx;
static double at_loss(void *p)
{
    at_ctx *c = p;
    tt_attention_masked_forward_d(c->out, c->att, c->qkv, c->klen, AT_B, AT_T, AT_C, AT_NH);
    return dot(c->out, c->R, AT_B * AT_T * AT_C);
}
static void at_grad(void *p)
{
    at_ctx *c = p;
    at_loss(c);
    tt_attention_masked_backward_d(c->dqkv, c->tt, c->R, c->qkv, c->att, c->klen, AT_B, AT_T, AT_C,
                                   AT_NH);
}

/* ---------------- whole model ------------------------------------------- */
/* V 23, C 8, 2 heads, FFN 16, 3 blocks, 8 positions, 2 types */
static const tb_config tiny = {23, 8, 2, 16, 3, 8, 2, 1e-12};
enum { MB = 2, MT = 6, MM = 5, MAXST = 3 };

typedef struct {
    int nst;
    tb_stage_d st[MAXST];
    int tok[MB * MT], typ[MB * MT], klen[MB], rows[MM], tgt[MM];
    double dbuf[MB * MT * 8];
} md_ctx;

static double md_loss(void *p)
{
    md_ctx *c = p;
    const double *y = NULL;
    double l = 0;
    for (int k = 0; k < c->nst; k++)
        l = tb_stage_forward_d(&c->st[k], 0, MB, MT, c->klen, c->tok, c->typ, y, MM, c->rows,
                               c->tgt, &y);
    return l / MM;
}
static void md_grad(void *p)
{
    md_ctx *c = p;
    md_loss(c);
    for (int k = 0; k < c->nst; k++)
        tb_stage_zero_grad_d(&c->st[k]);
    for (int k = c->nst - 1; k >= 0; k--)
        tb_stage_backward_d(&c->st[k], 0, c->dbuf, k ? c->dbuf : NULL, 1.0 / MM);
}

/* every parameter away from the initialisation's symmetric point:
 * LayerNorm weights 1 +- 0.3, the rest N(0, 0.3^2) */
static void md_randomise(tb_stage_d *s)
{
    fill(s->params, s->n_params, 0, 0.3);
    const size_t C = (size_t)s->cfg.C;
    for (int l = 0; l < s->nb; l++) {
        fill(s->pb[l].ln1w, C, 1, 0.3);
        fill(s->pb[l].ln2w, C, 1, 0.3);
    }
    if (s->first)
        fill(s->lnew, C, 1, 0.3);
    if (s->last)
        fill(s->lnhw, C, 1, 0.3);
}

/* split md1's single stage into c's stages, tensor by tensor: the global
 * layouts agree except for the tied copy of wte at the end of the last */
static void md_split(md_ctx *c, const md_ctx *one, const int *nb)
{
    const tb_stage_d *w = &one->st[0];
    int b0 = 0;
    const double *src = w->params;
    for (int k = 0; k < c->nst; k++) {
        tb_stage_d *s = &c->st[k];
        if (tb_stage_init_d(s, &tiny, MT, b0, nb[k], k == 0, k == c->nst - 1, MB, MM, 1)) {
            printf("FAIL out of memory\n");
            exit(1);
        }
        size_t n = s->n_params - (s->last && !s->first ? (size_t)tiny.V * tiny.C : 0);
        memcpy(s->params, src, sizeof(double) * n);
        src += n;
        if (s->last && !s->first)
            memcpy(s->wte_head, w->wte, sizeof(double) * (size_t)tiny.V * tiny.C);
        b0 += nb[k];
    }
}

static int md_vars(md_ctx *c, var *vars)
{
    if (c->nst == 1) {
        vars[0] = (var){"model", c->st[0].params, c->st[0].grads, c->st[0].n_params, NULL, NULL};
        return 1;
    }
    const size_t nwte = (size_t)tiny.V * tiny.C;
    tb_stage_d *a = &c->st[0], *z = &c->st[c->nst - 1];
    int n = 0;
    vars[n++] = (var){"wte (tied)", a->wte, a->gwte, nwte, z->wte_head, z->gwte_head};
    vars[n++] =
        (var){"stage0 rest", a->params + nwte, a->grads + nwte, a->n_params - nwte, NULL, NULL};
    for (int k = 1; k < c->nst; k++) {
        static const char *names[] = {"", "stage1 rest", "stage2 rest"};
        tb_stage_d *s = &c->st[k];
        vars[n++] =
            (var){names[k], s->params, s->grads, s->n_params - (s->last ? nwte : 0), NULL, NULL};
    }
    return n;
}

static double float_vs_double(md_ctx *c, int fault)
{
    tb_stage_f f;
    if (tb_stage_init_f(&f, &tiny, MT, 0, tiny.L, 1, 1, MB, MM, 1)) {
        printf("FAIL out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < f.n_params; i++)
        f.params[i] = (float)c->st[0].params[i];
    tt_fault = 0;
    md_grad(c);
    tb_stage_forward_f(&f, 0, MB, MT, c->klen, c->tok, c->typ, NULL, MM, c->rows, c->tgt, NULL);
    tb_stage_zero_grad_f(&f);
    tt_fault = fault;
    tb_stage_backward_f(&f, 0, NULL, NULL, (float)(1.0 / MM));
    tt_fault = 0;
    double e = rel_l2_diff(f.grads, c->st[0].grads, f.n_params);
    tb_stage_free_f(&f);
    return e;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    sim_blas_init();
    printf("BERT gradient checks (binary64, central differences, h = %g, tolerance %g (|g| + "
           "gmax)):\n",
           FD_H, FD_RTOL);

    static ge_ctx ge;
    fill(ge.x, GE_N, 0, 2);
    fill(ge.R, GE_N, 0, 1);
    var gev[] = {{"x", ge.x, ge.dx, GE_N, NULL, NULL}};
    run_check("gelu (erf)", ge_loss, ge_grad, &ge, gev, 1, (int[]){TB_FAULT_GELU_ERF}, 1);

    static em_ctx em;
    for (int i = 0; i < EM_B * EM_T; i++) {
        em.tok[i] = (int)(sim_mix64((uint64_t)i) % 4); /* repeated tokens: gradients add up */
        em.typ[i] = (int)(sim_mix64((uint64_t)i + 50) % EM_TV);
    }
    fill(em.wte, EM_V * EM_C, 0, 1);
    fill(em.wpe, EM_T * EM_C, 0, 1);
    fill(em.wtt, EM_TV * EM_C, 0, 1);
    fill(em.R, EM_B * EM_T * EM_C, 0, 1);
    var emv[] = {{"wte", em.wte, em.dwte, EM_V * EM_C, NULL, NULL},
                 {"wpe", em.wpe, em.dwpe, EM_T * EM_C, NULL, NULL},
                 {"wtt", em.wtt, em.dwtt, EM_TV * EM_C, NULL, NULL}};
    run_check("embeddings (word, position, type)", em_loss, em_grad, &em, emv, 3,
              (int[]){TB_FAULT_TYPE_EMB}, 1);

    static at_ctx at;
    at.klen[0] = AT_T;
    at.klen[1] = 3;
    fill(at.qkv, AT_B * AT_T * 3 * AT_C, 0, 1.5);
    fill(at.R, AT_B * AT_T * AT_C, 0, 1);
    var atv[] = {{"qkv", at.qkv, at.dqkv, AT_B * AT_T * 3 * AT_C, NULL, NULL}};
    run_check("attention (bidirectional, padded)", at_loss, at_grad, &at, atv, 1,
              (int[]){TT_FAULT_SOFTMAX, TT_FAULT_ATTN_V}, 2);
    {
        /* the padded keys of sequence 1 (k and v of rows 3, 4) must not
         * reach any output: their gradient is exactly 0 */
        double mx = 0;
        for (int t = 3; t < AT_T; t++)
            for (int c = AT_C; c < 3 * AT_C; c++)
                mx = fmax(mx, fabs(at.dqkv[((size_t)AT_T + t) * 3 * AT_C + c]));
        printf("  padded keys and values: max |gradient| %g (must be 0)\n", mx);
        if (mx != 0) {
            printf("FAIL padded keys influence the output\n");
            failures++;
        }
    }

    static const int all_faults[] = {TT_FAULT_LN,       TT_FAULT_SOFTMAX, TB_FAULT_GELU_ERF,
                                     TT_FAULT_BIAS,     TT_FAULT_CE,      TB_FAULT_POSTLN_SKIP,
                                     TB_FAULT_TYPE_EMB, TT_FAULT_ATTN_V,  TB_FAULT_HEAD_GATHER};
    static md_ctx md1, md2, md3;
    md1.nst = 1;
    if (tb_stage_init_d(&md1.st[0], &tiny, MT, 0, tiny.L, 1, 1, MB, MM, 1)) {
        printf("FAIL out of memory\n");
        return 1;
    }
    md_randomise(&md1.st[0]);
    md1.klen[0] = MT;
    md1.klen[1] = 4; /* two padding rows */
    for (int i = 0; i < MB * MT; i++) {
        md1.tok[i] = (int)(sim_mix64((uint64_t)i + 7) % tiny.V);
        md1.typ[i] = (int)(sim_mix64((uint64_t)i + 77) % tiny.TV);
    }
    /* masked rows among the real tokens of both sequences, targets anywhere */
    static const int rows[MM] = {0, 3, 5, 7, 9};
    for (int m = 0; m < MM; m++) {
        md1.rows[m] = rows[m];
        md1.tgt[m] = (int)(sim_mix64((uint64_t)m + 1007) % tiny.V);
    }
    var mv[MAXST + 1];
    int nmv = md_vars(&md1, mv);
    run_check("whole model (1 stage)", md_loss, md_grad, &md1, mv, nmv, all_faults,
              (int)(sizeof all_faults / sizeof all_faults[0]));

    /* two and three stages: the same loss, gradients through the stage
     * boundaries and the tied word embeddings */
    const int nb2[] = {1, 2}, nb3[] = {1, 1, 1};
    md2.nst = 2;
    md3.nst = 3;
    md_split(&md2, &md1, nb2);
    md_split(&md3, &md1, nb3);
    md_ctx *split[] = {&md2, &md3};
    for (int k = 0; k < 2; k++) {
        md_ctx *c = split[k];
        memcpy(c->tok, md1.tok, sizeof md1.tok);
        memcpy(c->typ, md1.typ, sizeof md1.typ);
        memcpy(c->klen, md1.klen, sizeof md1.klen);
        memcpy(c->rows, md1.rows, sizeof md1.rows);
        memcpy(c->tgt, md1.tgt, sizeof md1.tgt);
        double l1 = md_loss(&md1), l2 = md_loss(c);
        printf("  one stage vs %d stages: loss %.17g vs %.17g\n", c->nst, l1, l2);
        if (fabs(l1 - l2) > 1e-12 * fabs(l1)) {
            printf("FAIL the %d-stage loss differs from the one-stage loss\n", c->nst);
            failures++;
        }
        nmv = md_vars(c, mv);
        char name[64];
        snprintf(name, sizeof name, "whole model (%d stages, tied wte)", c->nst);
        run_check(name, md_loss, md_grad, c, mv, nmv, (int[]){TB_FAULT_POSTLN_SKIP, TT_FAULT_CE},
                  2);
    }

    /* float vs double, as in test_grad.c: tolerance 1e-3 in the 2-norm */
    double e = float_vs_double(&md1, 0);
    double ef = float_vs_double(&md1, TB_FAULT_GELU_ERF);
    float_verdict(e, ef, TB_FAULT_GELU_ERF);

    for (int k = 0; k < MAXST; k++) {
        tb_stage_free_d(&md1.st[k]);
        tb_stage_free_d(&md2.st[k]);
        tb_stage_free_d(&md3.st[k]);
    }
    if (failures) {
        printf("BERT gradient checks: %d FAILED\n", failures);
        return 1;
    }
    printf("BERT gradient checks: all passed; every control failed as it must\n");
    return 0;
}
