/* SPDX-License-Identifier: MIT */
/* cmd_floor.c - tahq-sim floor: the bias floor b = |grad f(w_b)|^2 by
 * full-batch descent with the codec, per configuration (floor.csv), and
 * with --range its dependence on the step and the update precision. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_shared.h"
#include "direct_floor.h"
#include "sim.h"

/* ======================================================================== */
/* floor: the bias floor b = |grad f(w_b)|^2 by full-batch descent, per codec */
/* ======================================================================== */
/* Studies (floor.csv, one row per configuration): bits (TAH hi/lo 2/1..8/7,
 * nearest and stochastic rounding), codec (TAH token, TAH tile at G = 16,
 * plain 4-bit, fp16, AQ-SGD), backward codec (none, fixpoint 4/6/8, TAH),
 * data-set size (64..1024 sequences, TAH 4/3 nearest and stochastic) and
 * stages (K = 2, 4, 8). Each is a full-batch descent (direct_floor.h): no
 * seeds, deterministic. */
/* 300 iterations per phase: from w* the start is forgotten to
 * 0.978^300 = 1.3e-3 of |w* - w_b| (w_b is within 5% of w* for the codecs
 * here), a 0.3% effect on b, below the spread over the two phases. */
enum { FLOOR_ITERS = 300 };

typedef struct floor_cfg {
    const char *study, *method;
    uint32_t n_seq, K;
} floor_cfg;

int cmd_floor(const sim_cli *o)
{
    static const floor_cfg all[] = {
        {"bits", "tah2/1", 64, 4},
        {"bits", "tah3/2", 64, 4},
        {"bits", "tah4/3", 64, 4},
        {"bits", "tah5/4", 64, 4},
        {"bits", "tah6/5", 64, 4},
        {"bits", "tah8/7", 64, 4},
        {"bits", "tah2/1-sr", 64, 4},
        {"bits", "tah3/2-sr", 64, 4},
        {"bits", "tah4/3-sr", 64, 4},
        {"bits", "tah5/4-sr", 64, 4},
        {"bits", "tah6/5-sr", 64, 4},
        {"bits", "tah8/7-sr", 64, 4},
        {"codec", "fp32", 64, 4},
        {"codec", "fp16", 64, 4},
        {"codec", "tah", 64, 4},
        {"codec", "tah-tile-g16", 64, 4},
        {"codec", "tah-tile", 64, 4},
        {"codec", "plain4", 64, 4},
        {"codec", "aqsgd", 64, 4},
        {"backward", "tah+bwd-none", 64, 4},
        {"backward", "fp32+bwd-fix4", 64, 4},
        {"backward", "fp32+bwd-fix6", 64, 4},
        {"backward", "fp32+bwd-fix8", 64, 4},
        {"backward", "tah+bwd-tah", 64, 4},
        {"stages", "tah", 64, 2},
        {"stages", "tah", 64, 8},
        {"dataset", "tah", 256, 4},
        {"dataset", "tah-sr", 256, 4},
        {"dataset", "tah", 1024, 4},
        {"dataset", "tah-sr", 1024, 4},
    };
    const size_t nall = sizeof all / sizeof all[0];
    /* --quick: the bits study alone at 64 sequences */
    size_t n = o->quick ? 12 : nall;
    sim_problem probs[8];
    struct {
        uint32_t n_seq, K;
    } pk[8];
    int np = 0;
    gd_task *t = calloc(n, sizeof *t);
    sim_method *ms = calloc(n, sizeof *ms);
    int *pi = calloc(n, sizeof(int));
    if (!t || !ms || !pi)
        return 1;
    for (size_t i = 0; i < n; i++) {
        int k;
        for (k = 0; k < np; k++)
            if (pk[k].n_seq == all[i].n_seq && pk[k].K == all[i].K)
                break;
        if (k == np) {
            if (np == 8 || sim_problem_smooth_n(&probs[np], all[i].K, 1, all[i].n_seq)) {
                fprintf(stderr, "tahq-sim: floor: problem setup failed\n");
                return 1;
            }
            pk[np].n_seq = all[i].n_seq;
            pk[np].K = all[i].K;
            np++;
        }
        pi[i] = k;
        if (sim_method_parse(all[i].method, &ms[i]))
            return 2;
        t[i].p = &probs[k];
        t[i].m = &ms[i];
        t[i].iters = FLOOR_ITERS;
    }
    printf("floor: smooth problem, full-batch gradient descent with the codec from w* (eta = 1/L "
           "then 1/(2L),\n"
           "       %d iterations each); b = |grad f(w_bar)|^2 at the second phase's Polyak average "
           "w_bar,\n"
           "       range over both phases of |grad f(w_bar)|^2 and the mean of |grad f(w_t)|^2 "
           "(second halves)\n",
           FLOOR_ITERS);
    double t0 = sim_now();
    int last = 0;
    int jobs = o->jobs < 1 ? 1 : o->jobs;
    /* rows are written as their batch finishes (the large data sets last) */
    FILE *f = sim_open_csv(
        o, "floor.csv",
        "study,method,n_seq,K,hi_bits,lo_bits,rounding,b_gd,b_lo,b_hi,grad0_2,low_units_per_msg");
    printf("%-9s %-16s %6s %2s %11s %24s %s\n", "study", "method", "n_seq", "K", "b (GD)", "range",
           "note");
    for (size_t i0 = 0; i0 < n; i0 += (size_t)jobs) {
        size_t k = n - i0 < (size_t)jobs ? n - i0 : (size_t)jobs;
        gd_all(t + i0, (int)k, jobs);
        sim_progress("floor", i0 + k, n, sim_now() - t0, &last);
        for (size_t i = i0; i < i0 + k; i++) {
            const sim_problem *p = &probs[pi[i]];
            double *g = malloc(sizeof(double) * p->n_params);
            float *w0 = calloc(p->n_params, sizeof(float));
            double g0 = g && w0 ? sim_smooth_grad(p, w0, g) : NAN;
            free(g);
            free(w0);
            uint64_t units = 0, low = sim_method_low_units(&ms[i], 1, p->S, p->C, &units);
            int hb = ms[i].fwd == SIM_FWD_TAH || ms[i].fwd == SIM_FWD_PLAIN;
            const char *note = units > 0 && low == 0 ? "0 low units: not an allocation result" : "";
            if (t[i].failed)
                printf("%-9s %-16s %6u %2u  codec error\n", all[i].study, all[i].method, p->n_seq,
                       p->K);
            else
                printf("%-9s %-16s %6u %2u %11.4g   [%10.4g, %10.4g] %s\n", all[i].study,
                       all[i].method, p->n_seq, p->K, t[i].b, t[i].lo, t[i].hi, note);
            if (f)
                fprintf(f, "%s,%s,%u,%u,%u,%u,%s,%.6g,%.6g,%.6g,%.6g,%llu\n", all[i].study,
                        all[i].method, p->n_seq, p->K, hb ? ms[i].fwd_cfg.hi_bits : 0,
                        hb ? ms[i].fwd_cfg.lo_bits : 0,
                        hb && ms[i].fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC ? "stochastic"
                                                                              : "nearest",
                        t[i].failed ? NAN : t[i].b, t[i].failed ? NAN : t[i].lo,
                        t[i].failed ? NAN : t[i].hi, g0, (unsigned long long)low);
        }
        if (f)
            fflush(f);
        fflush(stdout);
    }
    sim_close_out(f);
    for (int k = 0; k < np; k++)
        sim_problem_free(&probs[k]);
    free(t);
    free(ms);
    free(pi);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* floor --range: the floor's dependence on what the measurement chooses    */
/* ------------------------------------------------------------------------ */
/* The floor of a rounding codec is not one number: the point full-batch
 * descent settles at depends on the step (the expected compressed gradient
 * is piecewise smooth, and descent cycles among pieces whose size scales
 * with the step) and on the precision of the update. SGD itself runs near
 * eta = c/sqrt(T) with gamma = c L = 4 at T_tune = 1024..4096 up to 2^16:
 * eta L = 4/256 .. 4/64, i.e. 1/64 .. 1/16 of 1/L; 1/(32L) stands for it.
 * Each (method, precision) runs the steps 1/L, 1/(4L), 1/(32L) in that
 * order, each starting at the previous Polyak average (a continuation: the
 * start is the neighbouring step's floor point, not w*). Iterations: at
 * step eta/L the slowest mode contracts by 1 - mu eta per step (mu/L =
 * 0.022); RANGE_ITERS0 = 600 at 1/L forgets the start to 1.6e-6, and each
 * smaller step gets as many iterations as leave the same residual of the
 * distance between neighbouring floor points: 600 x 4 = 2400 at 1/(4L),
 * 600 x 32 = 19200 at 1/(32L) would; the budget allows 4800, which leaves
 * exp(-0.022/32 x 4800) = 3.7% of the distance between the 1/(4L) and the
 * 1/(32L) floor points (themselves within about 10%, so well under 1% of
 * b); stated, not hidden.
 *
 * The estimate: b = |grad f(w_bar)|^2 at the Polyak average w_bar over the
 * second half of each phase. With stochastic rounding the iterates jitter
 * and w_bar carries noise, which inflates |grad f(w_bar)|^2 by
 * |H (w_bar - E w_bar)|^2 on this quadratic (grad f is affine in w). Batch
 * means estimate it: the averaging window in RANGE_BATCHES consecutive
 * batches with averages w_j, inflation ~ sum_j |grad f(w_j) - grad f(w_bar)|^2
 * / (B (B - 1)) (the variance of a mean of B batch means; batches longer
 * than the mixing time 1/(mu eta) are nearly independent). The reported
 * b is the raw value minus that estimate, and its relative error is the
 * estimate over b, which must be below 5% (else the row says so). */
enum { RANGE_ITERS0 = 600, RANGE_ITERS_QUICK = 40, RANGE_BATCHES = 8 };

typedef struct range_task {
    const sim_problem *p;
    const sim_method *m;
    int f64;              /* 1: the update w -= eta g in binary64 */
    int base_iters;       /* iterations at 1/L (x2 at 1/(4L), x8 at 1/(32L)) */
    double b[3], infl[3]; /* per step: debiased floor, inflation estimate */
    int iters[3];
    int failed;
} range_task;

static const double range_steps[3] = {1.0, 0.25, 1.0 / 32};

/* task `task` of the array ctx, as the job pool runs it */
static void range_run(void *ctx, size_t task)
{
    range_task *t = (range_task *)ctx + task;
    const sim_problem *p = t->p;
    const size_t np = p->n_params;
    sim_opts so = {.micro = 2, .batch = 1, .eta = 0, .seed = 9};
    sim_run *r = sim_run_new(p, t->m, &so);
    float *wf = malloc(sizeof(float) * np), *gs = malloc(sizeof(float) * np);
    double *w = malloc(sizeof(double) * np), *gm = malloc(sizeof(double) * np);
    double *wb = malloc(sizeof(double) * np), *wj = malloc(sizeof(double) * RANGE_BATCHES * np);
    double *gbar = malloc(sizeof(double) * np), *gj = malloc(sizeof(double) * np);
    t->failed = 1;
    if (!r || !wf || !gs || !w || !gm || !wb || !wj || !gbar || !gj)
        goto done;
    for (size_t i = 0; i < np; i++)
        w[i] = (double)(float)p->Wstar[i];
    const uint32_t nsteps = p->n_seq / 2;
    uint64_t it_all = 0;
    const int base = t->base_iters;
    for (int ph = 0; ph < 3; ph++) {
        const int mult[3] = {1, 2, 8}; /* 600, 1200, 4800 at the base: see above */
        const int iters = base * mult[ph];
        const double eta = range_steps[ph] / p->L;
        const int half = iters / 2, per = half / RANGE_BATCHES;
        t->iters[ph] = iters;
        memset(wj, 0, sizeof(double) * RANGE_BATCHES * np);
        for (int it = 0; it < iters; it++, it_all++) {
            for (size_t i = 0; i < np; i++)
                wf[i] = (float)w[i];
            if (full_batch_grad_sum(r, p, wf, it_all, gs, gm))
                goto done;
            const int k = it - (iters - per * RANGE_BATCHES);
            if (k >= 0)
                for (size_t i = 0; i < np; i++)
                    wj[(size_t)(k / per) * np + i] += wf[i];
            if (t->f64) {
                for (size_t i = 0; i < np; i++)
                    w[i] -= eta * (gm[i] / nsteps);
            } else {
                const float ef = (float)eta;
                for (size_t i = 0; i < np; i++)
                    w[i] = (double)(wf[i] - ef * (float)(gm[i] / nsteps));
            }
        }
        memset(wb, 0, sizeof(double) * np);
        for (int j = 0; j < RANGE_BATCHES; j++)
            for (size_t i = 0; i < np; i++) {
                wj[(size_t)j * np + i] /= per;
                wb[i] += wj[(size_t)j * np + i] / RANGE_BATCHES;
            }
        for (size_t i = 0; i < np; i++)
            wf[i] = (float)wb[i];
        const double raw = sim_smooth_grad(p, wf, gbar);
        double ss = 0;
        for (int j = 0; j < RANGE_BATCHES; j++) {
            for (size_t i = 0; i < np; i++)
                wf[i] = (float)wj[(size_t)j * np + i];
            sim_smooth_grad(p, wf, gj);
            for (size_t i = 0; i < np; i++)
                ss += (gj[i] - gbar[i]) * (gj[i] - gbar[i]);
        }
        t->infl[ph] = ss / (RANGE_BATCHES * (RANGE_BATCHES - 1.0));
        t->b[ph] = raw - t->infl[ph];
        for (size_t i = 0; i < np; i++)
            w[i] = wb[i]; /* the next, smaller step starts here */
    }
    t->failed = 0;
done:
    free(wf);
    free(gs);
    free(w);
    free(gm);
    free(wb);
    free(wj);
    free(gbar);
    free(gj);
    sim_run_free(r);
}

/* One method's rows of floor_range.csv and floor_range_summary.csv and its
 * lines on stdout, from its binary32 and binary64 runs x[0], x[1]; 1 when
 * a run failed or (not --quick) the estimate's own error is not below 5%. */
static int range_report(const sim_cli *o, const sim_problem *p, const char *name,
                        const sim_method *m, const range_task *x, FILE *f, FILE *fs)
{
    int fail = 0;
    double lo = INFINITY, hi = -INFINITY, emax = 0;
    for (int prec = 0; prec < 2; prec++) {
        const range_task *t = &x[prec];
        if (t->failed) {
            printf("%-14s %-8s codec error\n", name, prec ? "binary64" : "binary32");
            fail = 1;
            continue;
        }
        double e = 0;
        for (int ph = 0; ph < 3; ph++) {
            double rel = t->infl[ph] / t->b[ph];
            e = fmax(e, rel);
            lo = fmin(lo, t->b[ph]);
            hi = fmax(hi, t->b[ph]);
            if (f)
                fprintf(f, "%s,%s,%.6g,%d,%.6g,%.4g,%.4g\n", name, prec ? "binary64" : "binary32",
                        range_steps[ph], t->iters[ph], t->b[ph], t->infl[ph], rel);
        }
        emax = fmax(emax, e);
        printf("%-14s %-8s %10s %12.4g %12.4g %12.4g %11.2g%%\n", name,
               prec ? "binary64" : "binary32", "1..1/32", t->b[0], t->b[1], t->b[2], 100 * e);
    }
    /* bytes per element of a [1, S, C] message: the floor beside its cost */
    const size_t n = (size_t)p->S * p->C;
    float *xx = calloc(n, sizeof(float)), *yy = calloc(n, sizeof(float));
    for (size_t i = 0; xx && i < n; i++)
        xx[i] = p->X[i];
    size_t bytes = xx && yy ? sim_fwd_roundtrip(m, 1, p->S, p->C, xx, xx, yy, 1) : 0;
    free(xx);
    free(yy);
    printf("%-14s range %.4g .. %.4g (%.0f%% of the low end), estimate error <= %.2g%%, %.3f "
           "bytes/element\n",
           name, lo, hi, 100 * (hi - lo) / lo, 100 * emax, (double)bytes / ((double)p->S * p->C));
    if (fs)
        fprintf(fs, "%s,%.6g,%.6g,%.4g,%.5f\n", name, lo, hi, emax,
                (double)bytes / ((double)p->S * p->C));
    if (!o->quick && !(emax < 0.05)) {
        printf("FAIL: %s: the floor estimate's own error %.2g%% is not below 5%%\n", name,
               100 * emax);
        fail = 1;
    }
    return fail;
}

int cmd_floor_range(const sim_cli *o)
{
    char names[16][48];
    int nm = sim_split_methods(o->methods,
                               o->quick ? "tah3/2"
                                        : "tah3/2,tah3/2-gain,tah,tah-gain,tah5/4,tah6/"
                                          "5,tah-sr,tah-gain-sr,tah5/4-sr,tah6/5-sr",
                               names, 16);
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1))
        return 1;
    sim_method ms[16];
    for (int i = 0; i < nm; i++)
        if (sim_method_parse(names[i], &ms[i])) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
    const size_t n = 2 * (size_t)(unsigned)nm;
    /* the stochastic-rounding runs get more iterations at every step: their
     * own error must come out below 5%. That error (the batch-means estimate
     * of the Polyak average's noise over b) scales as sigma^2 / (N b): the
     * rounding noise's variance sigma^2 falls 4x per bit, the floor b 16x
     * (measured: 0.726, 0.0444, 0.00276 for 3/2, 4/3, 5/4), so at a fixed N
     * the error grows 4x per bit. 4/3 at 4x the iterations (2400 at 1/L)
     * measured 0.8-1.1% at 1/L, its worst step (the noise of a mean of N
     * iterates is nearly independent of the step, and 1/L has the fewest);
     * so hi bits h >= 4 get 4 x 2^(h-4) times the iterations, which predicts
     * 1.6-2.2% for 5/4 (8x) and 3.2-4.4% for 6/5 (16x), and the check below
     * verifies it. --quick is a
     * regression check of the binary, not a floor estimate: tah3/2 with
     * RANGE_ITERS_QUICK iterations at 1/L (deterministic, so its output is
     * compared digit for digit with a committed run by the CTest
     * sim_tables). */
    /* task 2 mi + f64: method mi with binary32 (f64 = 0) or binary64 updates */
    range_task *x = calloc(n, sizeof *x);
    if (!x)
        return 1;
    for (size_t i = 0; i < n; i++) {
        x[i].p = &p;
        x[i].m = &ms[i / 2];
        x[i].f64 = i % 2;
        const int sr =
            ms[i / 2].fwd == SIM_FWD_TAH && ms[i / 2].fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC;
        const int hi = (int)ms[i / 2].fwd_cfg.hi_bits;
        x[i].base_iters = o->quick ? RANGE_ITERS_QUICK
                          : sr     ? (4 << (hi > 4 ? hi - 4 : 0)) * RANGE_ITERS0
                                   : RANGE_ITERS0;
    }
    printf("floor --range: smooth problem K=%u, full-batch descent with the codec, steps 1/L, "
           "1/(4L), 1/(32L)\n"
           "  (continuation), binary32 and binary64 updates; b = |grad f(w_bar)|^2 at the Polyak "
           "average,\n"
           "  minus the batch-means estimate of its noise (stochastic rounding); err = that "
           "estimate / b\n",
           p.K);
    double t0 = sim_now();
    sim_jobs_run(o->jobs, n, range_run, x, NULL);
    sim_progress_line("floor --range", n, n, sim_now() - t0, 1);
    FILE *f = sim_open_csv(o, "floor_range.csv",
                           "method,update,step_over_1_over_L,iters,b,noise_estimate,rel_error");
    FILE *fs = sim_open_csv(o, "floor_range_summary.csv",
                            "method,b_min,b_max,max_rel_error,bytes_per_elem");
    printf("%-14s %-8s %10s %12s %12s %12s %12s\n", "method", "update", "step L", "b (1/L)",
           "b (1/4L)", "b (1/32L)", "max err");
    int fail = 0;
    for (int mi = 0; mi < nm; mi++)
        fail |= range_report(o, &p, names[mi], &ms[mi], &x[2 * mi], f, fs);
    sim_close_out(f);
    sim_close_out(fs);
    free(x);
    sim_problem_free(&p);
    return fail;
}

static int floor_main(const sim_cli *o)
{
    return o->range ? cmd_floor_range(o) : cmd_floor(o);
}

const sim_command sim_cmd_floor = {
    "floor",
    "the bias floor |grad f(w_b)|^2 by full-batch descent: bits, rounding, codec,\n"
    "backward codec, data-set size, stages",
    "usage: tahq-sim floor [--quick] [--range [--methods LIST]] [--jobs N] [--out DIR]\n"
    "The floor b = |grad f(w_b)|^2 that SGD's average tends to, measured by full-batch gradient "
    "descent\n"
    "with the codec (no sampling noise), per configuration: TAH hi/lo bits 2/1..8/7 with nearest "
    "and\n"
    "stochastic rounding, codec, backward codec, data-set size (64, 256, 1024 sequences), stages\n"
    "(2, 4, 8). --quick: the bits study only. Writes floor.csv.\n"
    "--range: per method the floor over the steps 1/L, 1/(4L), 1/(32L) (SGD's effective step) and\n"
    "binary32 and binary64 updates, with the stochastic-rounding estimate's own error (must be < "
    "5%;\n"
    "stochastic rounding runs 4 x 2^(hi-4) times the iterations); default methods tah3/2 "
    "tah3/2-gain\n"
    "tah tah-gain tah5/4 tah6/5 tah-sr tah-gain-sr tah5/4-sr tah6/5-sr\n"
    "(--quick: tah3/2 with 40 iterations at 1/L, a regression check, not an estimate). Writes "
    "floor_range.csv, "
    "floor_range_summary.csv.\n",
    floor_main,
};
