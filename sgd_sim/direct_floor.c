/* SPDX-License-Identifier: MIT */
/* direct_floor.c - the floor by full-batch gradient descent with the codec
 * (direct_floor.h). */
#include "direct_floor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_shared.h"

/* As eta -> 0 the SGD iterates settle where the expected compressed gradient
 * vanishes, w_b, and the average of |grad f(w_t)|^2 tends to the floor
 * b = |grad f(w_b)|^2. Full-batch descent on the expected compressed
 * gradient (the mean over the whole data set, 32 mini-batches of 2
 * sequences: every codec here acts per sequence, so this is the exact
 * expectation over the sampling; stochastic rounding: a fresh key per
 * iteration) finds w_b without the sampling noise. Two phases from w*:
 * eta = 1/L, then eta = 1/(2L) from the first phase's Polyak average; in
 * each, the Polyak average w_bar and the mean of |grad f(w_t)|^2 over the
 * second half. b_GD = |grad f(w_bar)|^2 of the second phase (the smaller
 * step), and the interval spans all four numbers: what the measurement
 * depends on (step, averaging) is its uncertainty. Iterations: the slowest
 * mode contracts by (1 - mu/L) = 0.978 per step at 1/L, 0.978^GD_ITERS =
 * 1.6e-6 for 600 (and by 0.989^600 = 1.3e-3 more in the second phase), so
 * the start (w*) is forgotten to 1e-8 relative. With a rounding codec the
 * expected gradient is piecewise smooth and descent can cycle; the spread
 * of the four numbers shows how much. */

int full_batch_grad_sum(sim_run *r, const sim_problem *p, const float *w, uint64_t it_all,
                        float *gs, double *gm)
{
    const size_t np = p->n_params;
    uint32_t ids[2];
    memcpy(sim_run_params(r), w, sizeof(float) * np);
    memset(gm, 0, sizeof(double) * np);
    for (uint32_t q = 0; q < p->n_seq / 2; q++) {
        ids[0] = 2 * q;
        ids[1] = 2 * q + 1;
        if (sim_run_grad(r, ids, sim_mix64(it_all * 7919 + q), gs, NULL))
            return 1;
        for (size_t i = 0; i < np; i++)
            gm[i] += gs[i];
    }
    return 0;
}

/* task `task` of the array ctx, as the job pool runs it */
static void gd_run(void *ctx, size_t task)
{
    gd_task *t = (gd_task *)ctx + task;
    const sim_problem *p = t->p;
    size_t np = p->n_params;
    sim_opts so = {.micro = 2, .batch = 1, .eta = 0, .seed = 9};
    sim_run *r = sim_run_new(p, t->m, &so);
    float *w = malloc(sizeof(float) * np), *gs = malloc(sizeof(float) * np);
    double *gm = malloc(sizeof(double) * np), *wb = malloc(sizeof(double) * np);
    double *gf = malloc(sizeof(double) * np);
    float *wbf = malloc(sizeof(float) * np);
    t->failed = 1;
    if (!r || !w || !gs || !gm || !wb || !gf || !wbf)
        goto done;
    for (size_t i = 0; i < np; i++)
        w[i] = (float)p->Wstar[i];
    uint32_t nsteps = p->n_seq / 2;
    uint64_t it_all = 0;
    const int iters = t->iters > 0 ? t->iters : GD_ITERS;
    for (int phase = 0; phase < 2; phase++) {
        float eta = (float)(phase == 0 ? 1.0 / p->L : 0.5 / p->L);
        double mean_g2 = 0;
        int navg = 0;
        memset(wb, 0, sizeof(double) * np);
        for (int it = 0; it < iters; it++, it_all++) {
            if (full_batch_grad_sum(r, p, w, it_all, gs, gm))
                goto done;
            if (it >= iters / 2) {
                mean_g2 += sim_smooth_grad(p, w, gf);
                navg++;
                for (size_t i = 0; i < np; i++)
                    wb[i] += w[i];
            }
            for (size_t i = 0; i < np; i++)
                w[i] -= eta * (float)(gm[i] / nsteps);
        }
        for (size_t i = 0; i < np; i++)
            wbf[i] = (float)(wb[i] / navg);
        double pol = sim_smooth_grad(p, wbf, gf);
        if (phase == 0) {
            t->p1 = pol;
            t->a1 = mean_g2 / navg;
            memcpy(w, wbf, sizeof(float) * np);
        } else {
            t->p2 = pol;
            t->a2 = mean_g2 / navg;
        }
    }
    t->b = t->p2;
    t->lo = fmin(fmin(t->p1, t->p2), fmin(t->a1, t->a2));
    t->hi = fmax(fmax(t->p1, t->p2), fmax(t->a1, t->a2));
    t->failed = !(isfinite(t->lo) && isfinite(t->hi));
done:
    free(w);
    free(gs);
    free(gm);
    free(wb);
    free(gf);
    free(wbf);
    sim_run_free(r);
}

void gd_all(gd_task *t, int n, int jobs)
{
    sim_jobs_run(jobs, (size_t)n, gd_run, t, NULL);
}
