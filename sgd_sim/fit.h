/* SPDX-License-Identifier: MIT */
/*
 * fit.h - the convergence model fits of tahq-sim (GSL): E(T) = a T^-beta + b
 * on the seed means of a quantity measured at horizons T_1 < ... < T_n, with
 * beta fixed (the theory's 1/2) or free, percentile-bootstrap CIs over
 * seeds, and local slopes per octave. Deterministic given the seed.
 */
#ifndef TAHQ_SIM_FIT_H
#define TAHQ_SIM_FIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The free exponent is searched on [SIM_FIT_BETA_MIN, SIM_FIT_BETA_MAX]. */
#define SIM_FIT_BETA_MIN 0.02
#define SIM_FIT_BETA_MAX 0.9 /* below 1, where T^-beta and T^-1 coincide */

/* Weighted least squares of y_i = a T_i^-beta + a2 T_i^-1 + a3 T_i^-3/2 + b
 * (order 1: a2 = a3 = 0; order 2: a3 = 0; order 3: all) with weights 1/y_i^2 (relative residuals: every horizon counts
 * alike, as on a log plot), through gsl_multifit_wlinear. beta > 0: fixed;
 * beta <= 0: free, by a grid over [BETA_MIN, BETA_MAX] then Brent's method
 * on the profile residual (gsl_min). Needs more points than parameters.
 * coef = {a, a2, b, beta, a3}. Returns 0 on success. */
int sim_fit_power_floor(const double *T, const double *y, int n, double beta, int order,
                        double *coef, double *rss);

typedef struct sim_fit_ci {
    double est, lo, hi; /* estimate on the seed means, 95% percentile-bootstrap CI */
} sim_fit_ci;

typedef struct sim_fit_result {
    sim_fit_ci a, a2, b, beta; /* beta fixed: lo = hi = est = the value; a2 = 0 for order 1 */
    sim_fit_ci a3;             /* 0 below order 3 */
    double rss;                /* weighted RSS of the estimate */
    int dof;                   /* points - parameters */
    int at_bound;              /* free beta: the estimate is at an end of the search interval */
} sim_fit_result;

/* vals[i*ns + s]: the quantity at horizon i, seed s. The bootstrap resamples
 * the ns seeds with replacement, independently at each horizon, refits, and
 * takes the 2.5% and 97.5% quantiles (nboot resamples, gsl_rng mt19937
 * seeded by seed). beta, order as in sim_fit_power_floor. */
int sim_fit_bootstrap(const double *T, const double *vals, int n, int ns, double beta, int order,
                      int nboot, uint64_t seed, sim_fit_result *out);

/* Local slopes per octave: slope[i] = ln(m_{i+1}/m_i) / ln(T_{i+1}/T_i) of the
 * seed means m, with the same bootstrap (n - 1 values each). */
int sim_local_slopes(const double *T, const double *vals, int n, int ns, int nboot, uint64_t seed,
                     sim_fit_ci *slope);

#ifdef __cplusplus
}
#endif
#endif
