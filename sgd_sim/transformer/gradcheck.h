/* SPDX-License-Identifier: MIT */
/* gradcheck.h - the central-difference gradient check shared by the
 * decoder's (test_grad.c) and the BERT encoder's (test_bert_grad.c) tests.
 * The tolerance and its derivation are in test_grad.c's opening comment.
 * Included once per test program: its functions and state are static. */
#ifndef GRADCHECK_H
#define GRADCHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "tt.h"

static int failures = 0;
/* check every fd_stride-th element (1: all) */
static size_t fd_stride = 1;

/* deterministic N(0,1) stream */
static uint64_t rng_state = 12345;
static double randn(void)
{
    uint64_t a = sim_mix64(rng_state++), b = sim_mix64(rng_state++);
    double u1 = ((double)(a >> 11) + 1.0) * 0x1p-53, u2 = ((double)(b >> 11) + 1.0) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void fill(double *p, size_t n, double mean, double sd)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mean + sd * randn();
}

/* One variable tensor of a check: its values, its analytic gradient, and
 * optionally a tied copy that must move with it (wte and wte_head). */
typedef struct var {
    const char *name;
    double *x, *g;
    size_t n;
    double *tied, *tied_g; /* or NULL */
} var;

typedef double (*loss_fn)(void *ctx);

#define FD_H 1e-5
#define FD_RTOL 1e-6

/* Returns the largest |fd - g| / tolerance; stop_on_fail ends at the first
 * element above the tolerance (for the controls). */
static double fd_check(const char *what, loss_fn f, void *ctx, var *vars, int nvars,
                       int stop_on_fail)
{
    double gmax = 0;
    for (int v = 0; v < nvars; v++)
        for (size_t i = 0; i < vars[v].n; i++) {
            double g = vars[v].g[i] + (vars[v].tied_g ? vars[v].tied_g[i] : 0);
            if (fabs(g) > gmax)
                gmax = fabs(g);
        }
    double worst = 0;
    const char *wname = "";
    size_t wi = 0;
    for (int v = 0; v < nvars; v++) {
        for (size_t i = 0; i < vars[v].n; i += fd_stride) {
            double *x = &vars[v].x[i], *t = vars[v].tied ? &vars[v].tied[i] : NULL;
            double x0 = *x;
            *x = x0 + FD_H;
            if (t)
                *t = *x;
            double fp = f(ctx);
            *x = x0 - FD_H;
            if (t)
                *t = *x;
            double fm = f(ctx);
            *x = x0;
            if (t)
                *t = x0;
            double fd = (fp - fm) / (2 * FD_H);
            double g = vars[v].g[i] + (vars[v].tied_g ? vars[v].tied_g[i] : 0);
            double tol = FD_RTOL * (fabs(g) + gmax);
            double r = fabs(fd - g) / (tol > 0 ? tol : 1e-300);
            if (r > worst) {
                worst = r;
                wname = vars[v].name;
                wi = i;
            }
            if (stop_on_fail && r > 1)
                goto done;
        }
    }
done:
    printf("  %-34s gmax %.3e  max err/tol %.3g (at %s[%zu])\n", what, gmax, worst, wname, wi);
    return worst;
}

/* a check passes without a fault and fails with each listed fault */
typedef void (*grad_fn)(void *ctx); /* recompute analytic gradients into the vars */

static void run_check(const char *name, loss_fn f, grad_fn g, void *ctx, var *vars, int nvars,
                      const int *faults, int nfaults)
{
    char what[80];
    tt_fault = 0;
    g(ctx);
    snprintf(what, sizeof what, "%s", name);
    double r = fd_check(what, f, ctx, vars, nvars, 0);
    if (!(r <= 1)) {
        printf("FAIL %s: gradient off by %.3g x the tolerance\n", name, r);
        failures++;
    }
    for (int k = 0; k < nfaults; k++) {
        tt_fault = faults[k];
        g(ctx);       /* wrong backward */
        tt_fault = 0; /* the loss itself is always right */
        snprintf(what, sizeof what, "%s, control fault %d", name, faults[k]);
        double rc = fd_check(what, f, ctx, vars, nvars, 1);
        if (!(rc > 1)) {
            printf("FAIL %s: control with fault %d passed the check (the check cannot fail)\n",
                   name, faults[k]);
            failures++;
        }
    }
    tt_fault = 0;
}

/* sum of a[i] b[i]: a layer check's loss, sum(out * R) for a fixed random R,
 * so that d loss / d out = R */
static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* ||f - d|| / ||d|| in the 2-norm: a float gradient against the double one */
static double rel_l2_diff(const float *f, const double *d, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)f[i] - d[i];
        num += e * e;
        den += d[i] * d[i];
    }
    return sqrt(num / den);
}

/* the float gradient's relative error e must be within 1e-3 (derived in
 * test_grad.c), the error ef of a float backward with `fault` above it */
static void float_verdict(double e, double ef, int fault)
{
    printf("  float vs double gradient, relative 2-norm error %.3g (tolerance 1e-3);"
           " control (fault %d) %.3g\n",
           e, fault, ef);
    if (!(e <= 1e-3)) {
        printf("FAIL float gradient differs from the double one by %.3g\n", e);
        failures++;
    }
    if (!(ef > 1e-3)) {
        printf("FAIL control: a wrong float backward matched the double one\n");
        failures++;
    }
}

#endif
