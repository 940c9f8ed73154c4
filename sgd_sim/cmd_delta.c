/* SPDX-License-Identifier: MIT */
/* cmd_delta.c - tahq-sim delta: the relative bias (delta) and variance of
 * the compressed gradient per codec (delta.csv), and with --trajectory
 * delta along SGD's trajectory (delta_traj.csv, delta_cross.csv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "cmd_shared.h"
#include "sim.h"

/* ======================================================================== */
/* delta along SGD's trajectory                                             */
/* ======================================================================== */
/* The assumption |E g_hat - grad f|^2 <= (1 - delta) |grad f|^2 where the
 * iterates actually go: one SGD run per codec (eta = c/sqrt(T) with the
 * tuned c = 4/L, T = 2^14, seed 1, as in converge), and at t = 0, 2^6, 2^7,
 * ..., 2^14 the expectation over the sampling (the mean over the data set of
 * the mini-batch gradients, exact: every codec acts per sequence).
 * Stochastic rounding adds an expectation over keys: with K keys and
 * e_k = (mean over the data set with key k) - grad f, the U-statistic
 *     B = (|sum_k e_k|^2 - sum_k |e_k|^2) / (K (K - 1))
 * is unbiased for |E g_hat - grad f|^2 (the plug-in |mean_k e_k|^2 adds
 * the Monte-Carlo variance of the mean, sum_k |e_k - e_bar|^2 / K^2); its
 * 95% CI from the leave-one-key-out jackknife with t_{K-1} quantiles.
 * Nearest rounding is deterministic given the sequence: K = 1, exact. The
 * crossings of delta = 0.9 and delta = 0 are located by linear
 * interpolation in ln |grad f|^2 between checkpoints. */
typedef struct dtraj_task {
    const sim_problem *p;
    sim_method m;
    char name[48];
    int npts;
    double t[16], g2[16], delta[16], lo[16], hi[16], plugin[16];
    int failed;
} dtraj_task;

enum { DTRAJ_T = 16384, DTRAJ_KEYS = 32 };

/* task `task` of the array ctx, as the job pool runs it */
static void dtraj_run(void *ctx, size_t task)
{
    dtraj_task *d = (dtraj_task *)ctx + task;
    const sim_problem *p = d->p;
    size_t np = p->n_params;
    int sr = (d->m.fwd == SIM_FWD_TAH || d->m.fwd == SIM_FWD_PLAIN) &&
             d->m.fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC;
    int K = sr ? DTRAJ_KEYS : 1;
    sim_opts so = {.micro = 2, .batch = 1, .eta = 4.0 / p->L / sqrt((double)DTRAJ_T), .seed = 1};
    sim_opts mo = {.micro = 2, .batch = 1, .eta = 0, .seed = 5};
    sim_run *r = sim_run_new(p, &d->m, &so), *meas = sim_run_new(p, &d->m, &mo);
    double *gf = malloc(sizeof(double) * np), *e = malloc(sizeof(double) * np * K),
           *sum = malloc(sizeof(double) * np);
    float *gs = malloc(sizeof(float) * np);
    d->failed = 1;
    if (!r || !meas || !gf || !e || !sum || !gs)
        goto done;
    uint32_t nsteps = p->n_seq / 2, ids[2];
    int next = 0;
    for (uint32_t t = 0; t <= DTRAJ_T; t++) {
        int at = t == 0 || ((t & (t - 1)) == 0 && t >= 64);
        if (at) {
            const float *w = sim_run_params(r);
            double gn = sim_smooth_grad(p, w, gf);
            memcpy(sim_run_params(meas), w, sizeof(float) * np);
            memset(e, 0, sizeof(double) * np * K);
            for (int k = 0; k < K; k++) {
                double *ek = e + (size_t)k * np;
                for (uint32_t q = 0; q < nsteps; q++) {
                    ids[0] = 2 * q;
                    ids[1] = 2 * q + 1;
                    if (sim_run_grad(meas, ids,
                                     sim_mix64(((uint64_t)t << 20) ^ ((uint64_t)k * 7919 + q)), gs,
                                     NULL))
                        goto done;
                    for (size_t i = 0; i < np; i++)
                        ek[i] += gs[i];
                }
                for (size_t i = 0; i < np; i++)
                    ek[i] = ek[i] / nsteps - gf[i];
            }
            /* U-statistic and its jackknife */
            double s2 = 0, tot2 = 0, nrm[DTRAJ_KEYS];
            memset(sum, 0, sizeof(double) * np);
            for (int k = 0; k < K; k++) {
                nrm[k] = 0;
                for (size_t i = 0; i < np; i++) {
                    sum[i] += e[(size_t)k * np + i];
                    nrm[k] += e[(size_t)k * np + i] * e[(size_t)k * np + i];
                }
                s2 += nrm[k];
            }
            for (size_t i = 0; i < np; i++)
                tot2 += sum[i] * sum[i];
            double B, lo, hi;
            if (K == 1) {
                B = lo = hi = tot2;
            } else {
                B = (tot2 - s2) / ((double)K * (K - 1));
                double jk[DTRAJ_KEYS], jm = 0;
                for (int k = 0; k < K; k++) {
                    double t2 = 0; /* |sum - e_k|^2 */
                    for (size_t i = 0; i < np; i++) {
                        double v = sum[i] - e[(size_t)k * np + i];
                        t2 += v * v;
                    }
                    jk[k] = (t2 - (s2 - nrm[k])) / ((double)(K - 1) * (K - 2));
                    jm += jk[k] / K;
                }
                double var = 0;
                for (int k = 0; k < K; k++)
                    var += (jk[k] - jm) * (jk[k] - jm);
                double se = sqrt(var * (K - 1) / K);
                double q = gsl_cdf_tdist_Qinv(0.025, K - 1);
                lo = B - q * se;
                hi = B + q * se;
            }
            int j = next++;
            d->t[j] = t;
            d->g2[j] = gn;
            d->delta[j] = 1 - B / gn;
            d->lo[j] = 1 - hi / gn; /* delta falls as the bias grows */
            d->hi[j] = 1 - lo / gn;
            d->plugin[j] = 1 - tot2 / ((double)K * K) / gn;
        }
        if (t < DTRAJ_T && !isfinite(sim_run_step(r)))
            goto done;
    }
    d->npts = next;
    d->failed = 0;
done:
    free(gf);
    free(e);
    free(sum);
    free(gs);
    sim_run_free(r);
    sim_run_free(meas);
}

/* ln |grad f|^2 where delta crosses level, between consecutive checkpoints
 * (the first crossing along the run); NAN when it does not cross */
static double dtraj_cross(const dtraj_task *d, double level)
{
    for (int j = 0; j + 1 < d->npts; j++) {
        double a = d->delta[j] - level, b = d->delta[j + 1] - level;
        if (a >= 0 && b < 0) {
            double f = a / (a - b);
            return exp(log(d->g2[j]) + f * (log(d->g2[j + 1]) - log(d->g2[j])));
        }
    }
    return NAN;
}

static int cmd_delta_traj(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1))
        return 1;
    char names[16][48];
    int nm = sim_split_methods(
        o->methods,
        "tah,tah-gain,tah-sr,tah3/2,tah3/2-gain,tah3/2-sr,tah-tile-g16,plain4,fp32+bwd-fix6,fp16",
        names, 16);
    dtraj_task *d = calloc(nm, sizeof *d);
    if (!d)
        return 1;
    for (int i = 0; i < nm; i++) {
        if (sim_method_parse(names[i], &d[i].m) || d[i].m.fwd == SIM_FWD_AQSGD) {
            fprintf(stderr,
                    "tahq-sim: %s: unknown method (AQ-SGD is stateful: not measured here)\n",
                    names[i]);
            free(d);
            return 2;
        }
        d[i].p = &p;
        memcpy(d[i].name, names[i], sizeof d[i].name);
    }
    printf("delta along SGD's trajectory: smooth problem, eta = (4/L)/sqrt(T), T = %d, seed 1; at "
           "t = 0, 2^6..2^14 "
           "the expectation over the data set (x %d keys, unbiased U-statistic, for stochastic "
           "rounding)\n",
           DTRAJ_T, DTRAJ_KEYS);
    sim_jobs_run(o->jobs, (size_t)nm, dtraj_run, d, "delta trajectory");
    FILE *f =
        sim_open_csv(o, "delta_traj.csv", "method,t,grad2,delta,delta_lo,delta_hi,delta_plugin");
    printf("%-14s %6s %11s %9s %21s %9s\n", "method", "t", "|grad f|^2", "delta", "95% CI",
           "plug-in");
    for (int i = 0; i < nm; i++) {
        if (d[i].failed) {
            printf("%-14s codec error\n", d[i].name);
            continue;
        }
        for (int j = 0; j < d[i].npts; j++) {
            printf("%-14s %6.0f %11.4g %9.4f [%9.4f, %9.4f] %9.4f\n", d[i].name, d[i].t[j],
                   d[i].g2[j], d[i].delta[j], d[i].lo[j], d[i].hi[j], d[i].plugin[j]);
            if (f)
                fprintf(f, "%s,%.0f,%.8g,%.8g,%.8g,%.8g,%.8g\n", d[i].name, d[i].t[j], d[i].g2[j],
                        d[i].delta[j], d[i].lo[j], d[i].hi[j], d[i].plugin[j]);
        }
    }
    printf("\n|grad f|^2 at which delta first falls below 0.9 and below 0 along the run "
           "(interpolated):\n");
    FILE *fc =
        sim_open_csv(o, "delta_cross.csv", "method,grad2_at_delta_0.9,grad2_at_delta_0,grad2_end");
    for (int i = 0; i < nm; i++) {
        if (d[i].failed)
            continue;
        double c9 = dtraj_cross(&d[i], 0.9), c0 = dtraj_cross(&d[i], 0.0);
        printf(
            "  %-14s delta = 0.9 at %-10.4g delta = 0 at %-10.4g (|grad f|^2 at the end: %.4g)\n",
            d[i].name, c9, c0, d[i].g2[d[i].npts - 1]);
        if (fc)
            fprintf(fc, "%s,%.6g,%.6g,%.6g\n", d[i].name, c9, c0, d[i].g2[d[i].npts - 1]);
    }
    sim_close_out(f);
    sim_close_out(fc);
    free(d);
    sim_problem_free(&p);
    return 0;
}

/* ======================================================================== */
/* delta: relative bias and variance of the compressed gradient             */
/* ======================================================================== */
int cmd_delta(const sim_cli *o)
{
    if (o->trajectory)
        return cmd_delta_traj(o);
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1))
        return 1;
    const char *def =
        "fp32,fp16+bwd-none,tah2/1+bwd-none,tah3/2+bwd-none,tah4/3+bwd-none,tah5/4+bwd-none,"
        "tah6/5+bwd-none,tah8/7+bwd-none,tah2/1-sr+bwd-none,tah3/2-sr+bwd-none,tah4/3-sr+bwd-none,"
        "tah6/5-sr+bwd-none,tah4/"
        "3-tile-g16+bwd-none,plain2+bwd-none,plain3+bwd-none,plain4+bwd-none,"
        "plain6+bwd-none,plain8+bwd-none,tah,tah-gain,tah-sr,tah3/"
        "2-gain,plain4,fp32+bwd-fix6,fp32+bwd-fix4,aqsgd";
    char names[32][48];
    int nm = sim_split_methods(o->methods, def, names, 32);
    static const double alphas[] = {1.0, 0.1, 0.01};
    const int na = 3;
    const int reps_sr = o->quick ? 4 : 16;
    size_t np = p.n_params;
    uint32_t per_step = 2; /* micro 2 x batch 1 */
    uint32_t nsteps = p.n_seq / per_step;
    FILE *f = sim_open_csv(
        o, "delta.csv",
        "method,fwd_bits_per_elem,bwd_bits_per_elem,alpha,grad2,rel_bias2,delta,sigma2,sigma2_rel,"
        "low_units_per_msg");
    printf(
        "delta: smooth problem, w = (1 - alpha) w*, E[g_hat] over the data set (%u mini-batches) "
        "x %d stochastic-rounding keys\n",
        nsteps, reps_sr);
    printf("%-20s %7s %7s %6s %11s %10s %10s %10s\n", "method", "fwd_b/e", "bwd_b/e", "alpha",
           "|grad|^2", "delta", "sigma^2", "sig2/|g|^2");
    double *gf = malloc(sizeof(double) * np), *gm = malloc(sizeof(double) * np);
    double *g2 = malloc(sizeof(double) * np);
    float *gs = malloc(sizeof(float) * np), *w = malloc(sizeof(float) * np);
    uint32_t ids[2];
    for (int mi = 0; mi < nm; mi++) {
        sim_method m;
        if (sim_method_parse(names[mi], &m)) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[mi]);
            return 2;
        }
        uint64_t units = 0, low_units = sim_method_low_units(&m, 1, p.S, p.C, &units);
        sim_note_no_low_units("delta", names[mi], &m, 1, p.S, p.C);
        int sr = (m.fwd == SIM_FWD_TAH || m.fwd == SIM_FWD_PLAIN) &&
                 m.fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC;
        int reps = sr ? reps_sr : 1;
        for (int ai = 0; ai < na; ai++) {
            sim_opts so = {.micro = 2, .batch = 1, .eta = 0, .seed = 5};
            sim_run *r = sim_run_new(&p, &m, &so);
            for (size_t i = 0; i < np; i++)
                w[i] = (float)((1.0 - alphas[ai]) * p.Wstar[i]);
            memcpy(sim_run_params(r), w, sizeof(float) * np);
            double gn = sim_smooth_grad(&p, w, gf);
            if (m.fwd == SIM_FWD_AQSGD) {
                /* warm the cache (first epoch full precision), then measure */
                for (uint32_t q = 0; q < nsteps; q++) {
                    ids[0] = 2 * q;
                    ids[1] = 2 * q + 1;
                    sim_run_grad(r, ids, 0, gs, NULL);
                }
            }
            sim_traffic t0;
            sim_run_traffic(r, &t0);
            memset(gm, 0, sizeof(double) * np);
            memset(g2, 0, sizeof(double) * np);
            double sumsq = 0;
            uint64_t cnt = 0;
            for (int rep = 0; rep < reps; rep++)
                for (uint32_t q = 0; q < nsteps; q++) {
                    ids[0] = 2 * q;
                    ids[1] = 2 * q + 1;
                    if (sim_run_grad(r, ids, sim_mix64((uint64_t)rep * 7919 + q), gs, NULL)) {
                        fprintf(stderr, "tahq-sim: codec error in %s\n", names[mi]);
                        return 1;
                    }
                    for (size_t i = 0; i < np; i++) {
                        gm[i] += gs[i];
                        sumsq += (double)gs[i] * gs[i];
                    }
                    cnt++;
                }
            double bias = 0, gmn2 = 0;
            for (size_t i = 0; i < np; i++) {
                gm[i] /= (double)cnt;
                bias += (gm[i] - gf[i]) * (gm[i] - gf[i]);
                gmn2 += gm[i] * gm[i];
            }
            double sigma2 = sumsq / (double)cnt - gmn2; /* E|g - Eg|^2 */
            sim_traffic t1;
            sim_run_traffic(r, &t1);
            double fb =
                8.0 * (double)(t1.fwd_bytes - t0.fwd_bytes) / (double)(t1.fwd_elems - t0.fwd_elems);
            double bb =
                8.0 * (double)(t1.bwd_bytes - t0.bwd_bytes) / (double)(t1.bwd_elems - t0.bwd_elems);
            double delta = 1.0 - bias / gn;
            printf("%-20s %7.3f %7.3f %6.2f %11.4g %10.6f %10.4g %10.4g\n", names[mi], fb, bb,
                   alphas[ai], gn, delta, sigma2, sigma2 / gn);
            if (f)
                fprintf(f, "%s,%.4f,%.4f,%g,%.8g,%.8g,%.8g,%.8g,%.8g,%llu\n", names[mi], fb, bb,
                        alphas[ai], gn, bias / gn, delta, sigma2, sigma2 / gn,
                        (unsigned long long)low_units);
            sim_run_free(r);
        }
        fprintf(stderr, "delta: %d/%d methods\n", mi + 1, nm);
    }
    sim_close_out(f);
    free(gf);
    free(gm);
    free(g2);
    free(gs);
    free(w);
    sim_problem_free(&p);
    return 0;
}

const sim_command sim_cmd_delta = {
    "delta",
    "relative bias (delta) and variance of the compressed gradient per codec",
    "usage: tahq-sim delta [--trajectory] [--methods LIST] [--stages K] [--quick] [--out DIR]\n"
    "Relative bias 1 - delta = |E g_hat - grad f|^2 / |grad f|^2 and variance of the compressed\n"
    "gradient at w = (1 - alpha) w*, alpha = 1, 0.1, 0.01, per codec. Writes delta.csv.\n"
    "--trajectory: delta along one SGD run per codec (T = 2^14), unbiased for stochastic rounding\n"
    "(U-statistic over 32 keys, jackknife CI), and the |grad f|^2 where delta crosses 0.9 and 0.\n"
    "Writes delta_traj.csv and delta_cross.csv.\n",
    cmd_delta,
};
