/* SPDX-License-Identifier: MIT */
/* test_adamw.c - the AdamW update of libtahq_sim against the formula of
 * sim.h, computed here by hand in binary64 for two steps on chosen
 * gradients (sim_run_apply_grad), on parameters of the smooth problem.
 *
 * Tolerance: the simulator keeps m, v and w in binary32, each rounded once
 * per step (relative error 2^-24 each). Over two steps the error of m/(1-b1^t)
 * stays below 2 x 2^-24 relative, that of sqrt(v/(1-b2^t)) below 2^-24, so
 * the update below 3 x 2^-24, and w collects one more rounding per step:
 * |w - w_exact| <= 2^-22 (|w_exact| + eta (|u1| + |u2|) + eta wd |w0|) with
 * a margin of at least 4/3 on every term. The same comparison against two
 * wrong variants (no bias correction; weight decay coupled into the
 * gradient) must fail, so the check can tell them apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

typedef enum variant { RIGHT, NO_BIAS_CORRECTION, COUPLED_DECAY } variant;

/* two AdamW steps from w0 with gradients g1, g2, in double */
static double expected(variant v, double w0, double g1, double g2, const sim_opts *o, double *umag)
{
    double m = 0, s = 0, w = w0;
    const double g[2] = {g1, g2};
    *umag = 0;
    for (int t = 1; t <= 2; t++) {
        double gi = g[t - 1] + (v == COUPLED_DECAY ? o->weight_decay * w : 0.0);
        m = o->beta1 * m + (1 - o->beta1) * gi;
        s = o->beta2 * s + (1 - o->beta2) * gi * gi;
        double c1 = v == NO_BIAS_CORRECTION ? 1.0 : 1.0 - pow(o->beta1, t);
        double c2 = v == NO_BIAS_CORRECTION ? 1.0 : 1.0 - pow(o->beta2, t);
        double u = (m / c1) / (sqrt(s / c2) + o->eps);
        *umag += fabs(u);
        w -= o->eta * (u + (v == COUPLED_DECAY ? 0.0 : o->weight_decay * w));
    }
    return w;
}

int main(void)
{
    sim_blas_init();
    sim_problem p;
    if (sim_problem_smooth(&p, 4, 1)) {
        fprintf(stderr, "FAIL: smooth problem setup\n");
        return 1;
    }
    sim_method m;
    sim_method_parse("fp32", &m);
    sim_opts o = {.micro = 2,
                  .batch = 1,
                  .eta = 0.05,
                  .adamw = 1,
                  .beta1 = SIM_ADAMW_BETA1,
                  .beta2 = SIM_ADAMW_BETA2,
                  .eps = SIM_ADAMW_EPS,
                  .weight_decay = SIM_ADAMW_WEIGHT_DECAY,
                  .clip = 0,
                  .seed = 1};
    size_t n = p.n_params;
    float *w0 = malloc(sizeof(float) * n), *g1 = malloc(sizeof(float) * n);
    float *g2 = malloc(sizeof(float) * n);
    /* parameters and gradients of many magnitudes and both signs, zeros,
     * and gradients near eps so that eps matters */
    for (size_t i = 0; i < n; i++) {
        w0[i] = (float)ldexp((double)((int)(i % 13) - 6), -(int)(i % 9));
        g1[i] = (float)ldexp((double)((int)((i * 37) % 11) - 5), -(int)(i % 31));
        g2[i] = (float)ldexp((double)((int)((i * 53) % 7) - 3), -(int)((i * 5) % 29));
    }
    /* a rejected configuration must not make a run */
    sim_opts bad = o;
    bad.beta2 = 1.0;
    if (sim_run_new(&p, &m, &bad) != NULL) {
        fprintf(stderr, "FAIL: beta2 = 1 accepted\n");
        return 1;
    }
    sim_run *r = sim_run_new(&p, &m, &o);
    if (!r) {
        fprintf(stderr, "FAIL: sim_run_new\n");
        return 1;
    }
    float *w = sim_run_params(r);
    for (size_t i = 0; i < n; i++)
        w[i] = w0[i];
    sim_run_apply_grad(r, g1);
    sim_run_apply_grad(r, g2);

    const double tol_rel = ldexp(1.0, -22);
    int fails = 0;
    size_t wrong_caught[3] = {0, 0, 0};
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        for (int v = RIGHT; v <= COUPLED_DECAY; v++) {
            double umag;
            double e = expected((variant)v, w0[i], g1[i], g2[i], &o, &umag);
            double tol = tol_rel * (fabs(e) + o.eta * umag + o.eta * o.weight_decay * fabs(w0[i]));
            double err = fabs((double)w[i] - e);
            if (v == RIGHT) {
                if (err / tol > worst)
                    worst = err / tol;
                if (err > tol && fails++ < 5)
                    fprintf(stderr, "FAIL: w[%zu] = %.9g, expected %.9g (tolerance %.3g)\n", i,
                            (double)w[i], e, tol);
            } else if (err > tol) {
                wrong_caught[v]++;
            }
        }
    }
    printf("adamw: %zu parameters, two steps, largest |w - w_exact| / tolerance = %.3f\n", n,
           worst);
    printf("adamw: the wrong variants differ beyond the tolerance at %zu (no bias correction) and "
           "%zu (coupled decay) of %zu parameters\n",
           wrong_caught[NO_BIAS_CORRECTION], wrong_caught[COUPLED_DECAY], n);
    if (wrong_caught[NO_BIAS_CORRECTION] == 0 || wrong_caught[COUPLED_DECAY] == 0) {
        fprintf(stderr, "FAIL: the check cannot tell a wrong AdamW from the right one\n");
        fails++;
    }
    sim_run_free(r);
    sim_problem_free(&p);
    free(w0);
    free(g1);
    free(g2);
    if (fails) {
        fprintf(stderr, "FAIL: %d mismatches\n", fails);
        return 1;
    }
    printf("adamw: update matches the formula of sim.h\n");
    return 0;
}
