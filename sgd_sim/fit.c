/* SPDX-License-Identifier: MIT */
/* Convergence model fits (fit.h): weighted least squares through
 * gsl_fit_wlinear, the free exponent by gsl_min (Brent) on the profile
 * residual, percentile bootstrap over seeds with gsl_rng. */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim.h"

/* the grid brackets the profile's minimum for Brent (step 0.022 in beta) */
enum { FIT_MAXN = 32, FIT_GRID = 80 };

typedef struct fit_data {
    const double *T, *y;
    int n, order; /* 1: a T^-beta + b; 2: + a2 T^-1; 3: + a3 T^-3/2 */
    double a, a2, a3, b;
    /* GSL workspace for this n and order, allocated once per fit */
    gsl_matrix *X, *cov;
    gsl_vector *w, *c;
    gsl_multifit_linear_workspace *ws;
} fit_data;

/* weighted RSS of the best (a, a2, a3, b) for this beta; the coefficients
 * are left in d */
static double profile_rss(double beta, void *arg)
{
    fit_data *d = arg;
    size_t n = (size_t)d->n, p = (size_t)d->order + 1;
    double chisq = INFINITY;
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(d->X, i, 0, pow(d->T[i], -beta));
        gsl_matrix_set(d->X, i, 1, 1.0);
        if (p >= 3)
            gsl_matrix_set(d->X, i, 2, 1.0 / d->T[i]);
        if (p >= 4)
            gsl_matrix_set(d->X, i, 3, pow(d->T[i], -1.5));
        gsl_vector_set(d->w, i, 1.0 / (d->y[i] * d->y[i]));
    }
    gsl_vector_const_view yv = gsl_vector_const_view_array(d->y, n);
    if (gsl_multifit_wlinear(d->X, d->w, &yv.vector, d->c, d->cov, &chisq, d->ws) == GSL_SUCCESS) {
        d->a = gsl_vector_get(d->c, 0);
        d->b = gsl_vector_get(d->c, 1);
        d->a2 = p >= 3 ? gsl_vector_get(d->c, 2) : 0.0;
        d->a3 = p >= 4 ? gsl_vector_get(d->c, 3) : 0.0;
    } else {
        chisq = INFINITY;
    }
    return chisq;
}

static int fit_alloc(fit_data *d)
{
    size_t n = (size_t)d->n, p = (size_t)d->order + 1;
    d->X = gsl_matrix_alloc(n, p);
    d->cov = gsl_matrix_alloc(p, p);
    d->w = gsl_vector_alloc(n);
    d->c = gsl_vector_alloc(p);
    d->ws = gsl_multifit_linear_alloc(n, p);
    return d->X && d->cov && d->w && d->c && d->ws ? 0 : 1;
}

static void fit_release(fit_data *d)
{
    if (d->ws)
        gsl_multifit_linear_free(d->ws);
    if (d->X)
        gsl_matrix_free(d->X);
    if (d->cov)
        gsl_matrix_free(d->cov);
    if (d->w)
        gsl_vector_free(d->w);
    if (d->c)
        gsl_vector_free(d->c);
}

static int fit_one(const double *T, const double *y, int n, double beta, int order, double *coef,
                   double *rss, int *at_bound)
{
    if (order < 1 || order > 3)
        return 1;
    int np = order + 1 + (beta <= 0);
    if (n < np + 1 || n > FIT_MAXN)
        return 1;
    for (int i = 0; i < n; i++)
        if (!(y[i] > 0) || !isfinite(y[i]))
            return 1;
    fit_data d = {.T = T, .y = y, .n = n, .order = order};
    if (fit_alloc(&d)) {
        fit_release(&d);
        return 1;
    }
    if (at_bound)
        *at_bound = 0;
    double bopt = beta;
    if (beta <= 0) {
        /* grid, then Brent inside the bracket around the grid minimum */
        const double h = (SIM_FIT_BETA_MAX - SIM_FIT_BETA_MIN) / FIT_GRID;
        double best = INFINITY;
        int kb = 0;
        for (int k = 0; k <= FIT_GRID; k++) {
            double r = profile_rss(SIM_FIT_BETA_MIN + k * h, &d);
            if (r < best) {
                best = r;
                kb = k;
            }
        }
        bopt = SIM_FIT_BETA_MIN + kb * h;
        if (kb == 0 || kb == FIT_GRID) {
            if (at_bound)
                *at_bound = 1;
        } else {
            double flo = profile_rss(bopt - h, &d), fhi = profile_rss(bopt + h, &d);
            if (best < flo && best < fhi) {
                gsl_function F = {.function = profile_rss, .params = &d};
                gsl_min_fminimizer *mz = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
                if (mz && gsl_min_fminimizer_set_with_values(mz, &F, bopt, best, bopt - h, flo,
                                                             bopt + h, fhi) == GSL_SUCCESS) {
                    for (int it = 0; it < 100; it++) {
                        if (gsl_min_fminimizer_iterate(mz) != GSL_SUCCESS)
                            break;
                        double lo = gsl_min_fminimizer_x_lower(mz),
                               hi = gsl_min_fminimizer_x_upper(mz);
                        if (gsl_min_test_interval(lo, hi, 1e-9, 0.0) == GSL_SUCCESS)
                            break;
                    }
                    bopt = gsl_min_fminimizer_x_minimum(mz);
                }
                if (mz)
                    gsl_min_fminimizer_free(mz);
            }
        }
    }
    *rss = profile_rss(bopt, &d);
    coef[0] = d.a;
    coef[1] = d.a2;
    coef[2] = d.b;
    coef[3] = bopt;
    coef[4] = d.a3;
    fit_release(&d);
    return isfinite(*rss) ? 0 : 1;
}

int sim_fit_power_floor(const double *T, const double *y, int n, double beta, int order,
                        double *coef, double *rss)
{
    return fit_one(T, y, n, beta, order, coef, rss, NULL);
}

static void quantiles(double *v, int nb, sim_fit_ci *c)
{
    gsl_sort(v, 1, (size_t)nb);
    c->lo = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)nb, 0.025);
    c->hi = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)nb, 0.975);
}

/* y[i] = mean over a resample (or all seeds when rng is NULL) at horizon i */
static void resample_means(const double *vals, int n, int ns, gsl_rng *rng, double *y)
{
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < ns; j++)
            s += vals[(size_t)i * ns +
                      (rng ? gsl_rng_uniform_int(rng, (unsigned long)ns) : (unsigned long)j)];
        y[i] = s / ns;
    }
}

int sim_fit_bootstrap(const double *T, const double *vals, int n, int ns, double beta, int order,
                      int nboot, uint64_t seed, sim_fit_result *out)
{
    double y[FIT_MAXN], coef[5], rss;
    if (n > FIT_MAXN || ns < 2 || nboot < 40)
        return 1;
    resample_means(vals, n, ns, NULL, y);
    int atb = 0;
    if (fit_one(T, y, n, beta, order, coef, &rss, &atb))
        return 1;
    out->a.est = coef[0];
    out->a2.est = coef[1];
    out->b.est = coef[2];
    out->beta.est = coef[3];
    out->rss = rss;
    out->at_bound = atb;
    out->a3.est = coef[4];
    out->dof = n - (order + 1) - (beta <= 0);
    double *bs = malloc(sizeof(double) * 5 * (size_t)nboot);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!bs || !rng) {
        free(bs);
        if (rng)
            gsl_rng_free(rng);
        return 1;
    }
    gsl_rng_set(rng, (unsigned long)sim_mix64(seed ^ 0xf17b007));
    int fails = 0;
    for (int k = 0; k < nboot; k++) {
        resample_means(vals, n, ns, rng, y);
        double c[5];
        if (fit_one(T, y, n, beta, order, c, &rss, NULL)) {
            fails++;
            memcpy(c, coef, sizeof c);
        }
        for (int q = 0; q < 5; q++)
            bs[(size_t)q * nboot + k] = c[q];
    }
    quantiles(bs, nboot, &out->a);
    quantiles(bs + nboot, nboot, &out->a2);
    quantiles(bs + 2 * (size_t)nboot, nboot, &out->b);
    quantiles(bs + 3 * (size_t)nboot, nboot, &out->beta);
    quantiles(bs + 4 * (size_t)nboot, nboot, &out->a3);
    gsl_rng_free(rng);
    free(bs);
    return fails ? 1 : 0;
}

int sim_local_slopes(const double *T, const double *vals, int n, int ns, int nboot, uint64_t seed,
                     sim_fit_ci *slope)
{
    double y[FIT_MAXN];
    if (n < 2 || n > FIT_MAXN || ns < 2 || nboot < 40)
        return 1;
    resample_means(vals, n, ns, NULL, y);
    for (int i = 0; i + 1 < n; i++)
        slope[i].est = log(y[i + 1] / y[i]) / log(T[i + 1] / T[i]);
    double *bs = malloc(sizeof(double) * (size_t)nboot * (n - 1));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!bs || !rng) {
        free(bs);
        if (rng)
            gsl_rng_free(rng);
        return 1;
    }
    gsl_rng_set(rng, (unsigned long)sim_mix64(seed ^ 0x510be5));
    for (int k = 0; k < nboot; k++) {
        resample_means(vals, n, ns, rng, y);
        for (int i = 0; i + 1 < n; i++)
            bs[(size_t)i * nboot + k] = log(y[i + 1] / y[i]) / log(T[i + 1] / T[i]);
    }
    for (int i = 0; i + 1 < n; i++)
        quantiles(bs + (size_t)i * nboot, nboot, &slope[i]);
    gsl_rng_free(rng);
    free(bs);
    return 0;
}
