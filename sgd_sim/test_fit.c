/* SPDX-License-Identifier: MIT */
/* sim_fit: the convergence model fits (fit.h) recover known parameters.
 * Exact data: a T^-1/2 + a2/T + b and a T^-1/4 + b on T = 2^8..2^14, fitted
 * with beta fixed and free; noisy seeds: the bootstrap CI covers the truth.
 * Tolerances: exact data leave only the solver's error; the weighted normal
 * equations of 7 points with condition number below 1e8 lose at most ~1e-8
 * relative in binary64, Brent stops at |beta interval| < 1e-9 and the
 * profile is quadratic near its minimum, so 1e-6 in beta and 1e-5 relative
 * in a, a2, b are 10x or more above both. */
#include <math.h>
#include <stdio.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "fit.h"

static int fails;

static void expect(int ok, const char *what, double got, double want)
{
    printf("%s %s: got %.9g, want %.9g\n", ok ? "ok  " : "FAIL", what, got, want);
    if (!ok)
        fails++;
}

static int close_rel(double x, double y, double tol)
{
    return fabs(x - y) <= tol * fmax(fabs(y), 1e-12);
}

int main(void)
{
    enum { N = 7, NS = 10 };
    double T[N], y[N], c[5], rss;
    for (int i = 0; i < N; i++)
        T[i] = ldexp(1.0, 8 + i);
    /* second-order model, exact */
    for (int i = 0; i < N; i++)
        y[i] = 80.0 / sqrt(T[i]) + 300.0 / T[i] + 0.2;
    sim_fit_power_floor(T, y, N, 0.5, 2, c, &rss);
    expect(close_rel(c[0], 80, 1e-5), "fixed beta: a", c[0], 80);
    expect(close_rel(c[1], 300, 1e-5), "fixed beta: a2", c[1], 300);
    expect(close_rel(c[2], 0.2, 1e-5), "fixed beta: b", c[2], 0.2);
    sim_fit_power_floor(T, y, N, 0.0, 2, c, &rss);
    expect(fabs(c[3] - 0.5) < 1e-6, "free beta: beta", c[3], 0.5);
    expect(close_rel(c[2], 0.2, 1e-5), "free beta: b", c[2], 0.2);
    /* third order, exact: the floor fit of converge */
    for (int i = 0; i < N; i++)
        y[i] = 80.0 / sqrt(T[i]) + 300.0 / T[i] - 900.0 * pow(T[i], -1.5) + 0.2;
    sim_fit_power_floor(T, y, N, 0.5, 3, c, &rss);
    expect(close_rel(c[4], -900, 1e-5), "third order: a3", c[4], -900);
    expect(close_rel(c[2], 0.2, 1e-5), "third order: b", c[2], 0.2);
    /* the second-order free fit misses the third-order term: beta moves,
     * by less than converge's RATE_TOL = 1/8 here */
    sim_fit_power_floor(T, y, N, 0.0, 2, c, &rss);
    expect(fabs(c[3] - 0.5) < 0.125,
           "second-order free fit of third-order data: |beta - 1/2| < 1/8", c[3], 0.5);
    /* a slower rate without a floor */
    for (int i = 0; i < N; i++)
        y[i] = 5.0 * pow(T[i], -0.25);
    sim_fit_power_floor(T, y, N, 0.0, 2, c, &rss);
    expect(fabs(c[3] - 0.25) < 1e-6, "rate 1/4: beta", c[3], 0.25);
    expect(fabs(c[2]) < 1e-5, "rate 1/4: b", c[2], 0);
    /* noisy seeds: multiplicative 2% noise; the 95% CIs must cover the truth
     * (for this fixed seed; a CI misses with probability about 5% each, and
     * the seed was not chosen by looking at the result: it is 1) */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 1);
    double vals[N * NS];
    for (int i = 0; i < N; i++)
        for (int s = 0; s < NS; s++)
            vals[i * NS + s] =
                (80.0 / sqrt(T[i]) + 300.0 / T[i] + 0.2) * (1 + gsl_ran_gaussian(rng, 0.02));
    gsl_rng_free(rng);
    sim_fit_result r;
    sim_fit_bootstrap(T, vals, N, NS, 0.5, 2, 1000, 3, &r);
    expect(r.b.lo <= 0.2 && 0.2 <= r.b.hi, "bootstrap CI of b covers 0.2 (lo)", r.b.lo, 0.2);
    printf("     b = %.4g [%.4g, %.4g]\n", r.b.est, r.b.lo, r.b.hi);
    sim_fit_bootstrap(T, vals, N, NS, 0.0, 2, 1000, 4, &r);
    expect(r.beta.lo <= 0.5 && 0.5 <= r.beta.hi, "bootstrap CI of beta covers 0.5 (lo)", r.beta.lo,
           0.5);
    printf("     beta = %.4g [%.4g, %.4g]\n", r.beta.est, r.beta.lo, r.beta.hi);
    sim_fit_ci loc[N - 1];
    for (int i = 0; i < N; i++)
        for (int s = 0; s < NS; s++)
            vals[i * NS + s] = pow(T[i], -0.5);
    sim_local_slopes(T, vals, N, NS, 100, 5, loc);
    expect(fabs(loc[0].est + 0.5) < 1e-12, "local slope of T^-1/2", loc[0].est, -0.5);
    printf("test_fit: %s\n", fails ? "FAIL" : "all checks passed");
    return fails ? 1 : 0;
}
