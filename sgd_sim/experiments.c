/* SPDX-License-Identifier: MIT */
/* tahq-sim experiments: converge, delta, train, throughput. Statistics and
 * the bootstrap through GSL. */
#include "experiments.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "fit.h"
#include "links_model.h"
#include "sim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress on stderr. On a terminal: a bar with the elapsed time and an ETA
 * (from the mean time per finished unit), rewritten in place. Otherwise
 * (a log file, CTest): whole lines, one per tenth of the work and one at the
 * end, so a log never holds a partial line. *last: the tenths printed so far
 * (start at 0). */
static void progress(const char *label, size_t done, size_t n, double elapsed, int *last)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(fileno(stderr));
    if (n == 0)
        return;
    if (tty) {
        char bar[31];
        size_t k = done * 30 / n;
        for (size_t i = 0; i < 30; i++)
            bar[i] = i < k ? '#' : '.';
        bar[30] = '\0';
        double eta = done > 0 ? elapsed * (double)(n - done) / (double)done : 0;
        fprintf(stderr, "\r%s [%s] %zu/%zu, %.0f s, ETA %.0f s ", label, bar, done, n, elapsed, eta);
        if (done == n)
            fputc('\n', stderr);
    } else {
        int tenth = (int)(done * 10 / n);
        if (tenth > *last || done == n) {
            if (done == n && *last >= 10)
                return;
            *last = done == n ? 10 : tenth;
            fprintf(stderr, "%s: %zu/%zu (%d%%), %.0f s\n", label, done, n, (int)(done * 100 / n), elapsed);
        }
    }
    fflush(stderr);
}

static void progress_line(const char *label, size_t done, size_t n, double elapsed, int final)
{
    int last = final ? 9 : 0;
    progress(label, done, n, elapsed, &last);
}

static FILE *open_out(const sim_cli *o, const char *name)
{
    char path[1024];
    mkdir(o->out, 0755);
    snprintf(path, sizeof path, "%s/%s", o->out, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tahq-sim: cannot write %s\n", path);
    return f;
}

static int split_methods(const char *list, const char *def, char names[][48], int max)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list ? list : def);
    int n = 0;
    for (char *t = strtok(buf, ","); t && n < max; t = strtok(NULL, ","))
        snprintf(names[n++], 48, "%s", t);
    return n;
}

/* A TAH configuration whose allocation has no low units at this shape (tile
 * allocation with C/G tiles per token, floor(C/G (1 - r)) = 0: C = 128,
 * G = 64 gives 2 tiles and none low) is a uniform hi-bit quantizer, not an
 * allocation result: say so. Returns 1 when that is the case. */
static int note_no_low_units(const char *cmd, const char *name, const sim_method *m, uint32_t B, uint32_t S,
                             uint32_t C)
{
    uint64_t units = 0, low = sim_method_low_units(m, B, S, C, &units);
    if (units == 0 || low > 0)
        return 0;
    printf("%s: %s: its %s allocation gives 0 low units per message of [%u, %u, %u] (%llu %s, all at %u "
           "bits): NOT a %s-allocation result (use -g16 or smaller tiles, or C >= 5 G)\n",
           cmd, name, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tile" : "token", B, S, C,
           (unsigned long long)units, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tiles" : "tokens",
           m->fwd_cfg.hi_bits, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tile" : "token");
    return 1;
}

/* ======================================================================== */
/* converge                                                                 */
/* ======================================================================== */
typedef struct conv_task {
    const sim_problem *p;
    const sim_method *m;
    const sim_opts *base; /* optimizer settings; eta and seed are the task's */
    uint32_t T;
    uint64_t seed;
    double eta;
    double avg, min, gap; /* outputs */
} conv_task;

typedef struct pool {
    conv_task *tasks;
    size_t *order; /* task indices, longest run first (load balance) */
    size_t n, next, done;
    pthread_mutex_t mu;
    const char *label;
    double t0;
    int last; /* progress() state */
} pool;

static void run_conv(conv_task *t)
{
    sim_opts o = *t->base;
    o.eta = t->eta;
    o.seed = t->seed;
    sim_run *r = sim_run_new(t->p, t->m, &o);
    double *g = malloc(sizeof(double) * t->p->n_params);
    if (!r || !g) {
        t->avg = t->min = t->gap = NAN;
        free(g);
        sim_run_free(r);
        return;
    }
    double sum = 0, mn = INFINITY;
    for (uint32_t s = 0; s < t->T; s++) {
        double gn = sim_smooth_grad(t->p, sim_run_params(r), g);
        sum += gn;
        if (gn < mn)
            mn = gn;
        double l = sim_run_step(r);
        if (!isfinite(l) || !isfinite(gn) || gn > 1e12) {
            sum = INFINITY;
            mn = INFINITY;
            break;
        }
    }
    t->avg = sum / t->T;
    t->min = mn;
    t->gap = sim_smooth_f(t->p, sim_run_params(r)) - t->p->fstar;
    free(g);
    sim_run_free(r);
}

static void *pool_worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        size_t i = pl->next++;
        pthread_mutex_unlock(&pl->mu);
        if (i >= pl->n)
            break;
        run_conv(&pl->tasks[pl->order[i]]);
        pthread_mutex_lock(&pl->mu);
        pl->done++;
        progress(pl->label, pl->done, pl->n, now_s() - pl->t0, &pl->last);
        pthread_mutex_unlock(&pl->mu);
    }
    return NULL;
}

static void run_pool(conv_task *tasks, size_t n, int jobs, const char *label)
{
    pool pl = {.tasks = tasks, .n = n, .label = label, .t0 = now_s()};
    /* longest runs first, so that no worker is left with a long one at the end */
    pl.order = malloc(sizeof(size_t) * n);
    size_t k = 0;
    for (int b = 31; b >= 0; b--)
        for (size_t i = 0; i < n; i++)
            if (tasks[i].T >= (1u << b) && tasks[i].T < (2u << b))
                pl.order[k++] = i;
    pthread_mutex_init(&pl.mu, NULL);
    if (jobs < 1)
        jobs = 1;
    pthread_t th[16];
    int nt = jobs > 16 ? 16 : jobs;
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, pool_worker, &pl);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&pl.mu);
    free(pl.order);
}

/* OLS slope of ln(mean over seeds) vs ln T, with a percentile bootstrap over
 * seeds (resampled independently at each T). */
static void fit_slope(const double *vals, int nT, int ns, const uint32_t *Ts, uint64_t seed,
                      double *slope, double *icpt, double *lo, double *hi)
{
    double *x = malloc(sizeof(double) * nT), *y = malloc(sizeof(double) * nT);
    double c0, c1, cov00, cov01, cov11, ss;
    for (int i = 0; i < nT; i++) {
        x[i] = log((double)Ts[i]);
        y[i] = log(gsl_stats_mean(vals + (size_t)i * ns, 1, ns));
    }
    gsl_fit_linear(x, 1, y, 1, nT, &c0, &c1, &cov00, &cov01, &cov11, &ss);
    *slope = c1;
    *icpt = c0;
    const int NB = 2000;
    double *bs = malloc(sizeof(double) * NB);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)sim_mix64(seed ^ 0xb0075));
    for (int b = 0; b < NB; b++) {
        for (int i = 0; i < nT; i++) {
            double s = 0;
            for (int j = 0; j < ns; j++)
                s += vals[(size_t)i * ns + gsl_rng_uniform_int(rng, (unsigned long)ns)];
            y[i] = log(s / ns);
        }
        gsl_fit_linear(x, 1, y, 1, nT, &c0, &c1, &cov00, &cov01, &cov11, &ss);
        bs[b] = c1;
    }
    gsl_sort(bs, 1, NB);
    *lo = gsl_stats_quantile_from_sorted_data(bs, 1, NB, 0.025);
    *hi = gsl_stats_quantile_from_sorted_data(bs, 1, NB, 0.975);
    gsl_rng_free(rng);
    free(bs);
    free(x);
    free(y);
}

/* ------------------------------------------------------------------------ */
/* The direct floor: full-batch gradient descent with the codec             */
/* ------------------------------------------------------------------------ */
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
enum { GD_ITERS = 600 };

typedef struct gd_task {
    const sim_problem *p;
    const sim_method *m;
    int iters;             /* per phase; 0: GD_ITERS */
    double b, lo, hi;  /* b_GD and its interval */
    double p1, a1, p2, a2; /* Polyak and mean-of-|grad|^2, phases 1 and 2 */
    int failed;
} gd_task;

/* The expected compressed gradient at w, summed (not averaged) over the
 * data set's n_seq/2 mini-batches of 2 sequences, into gm; stochastic
 * rounding keyed by the iteration it_all. 0 on success. */
static int full_batch_grad_sum(sim_run *r, const sim_problem *p, const float *w, uint64_t it_all, float *gs,
                               double *gm)
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

static void gd_run(gd_task *t)
{
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

static void *gd_worker(void *arg)
{
    gd_task *t = arg;
    gd_run(t);
    return NULL;
}

static void gd_all(gd_task *t, int n, int jobs)
{
    if (jobs < 1)
        jobs = 1;
    for (int i = 0; i < n; i += jobs) {
        pthread_t th[16];
        int k = 0;
        for (int j = i; j < n && j < i + jobs && k < 16; j++, k++)
            pthread_create(&th[k], NULL, gd_worker, &t[j]);
        for (int j = 0; j < k; j++)
            pthread_join(th[j], NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* The verdict: rate and floor from the model fits                          */
/* ------------------------------------------------------------------------ */
/* The model. With eta = c/sqrt(T), the mean over t < T of E|grad f(w_t)|^2
 * of SGD on the quadratic is, from the exact second-moment recursion per
 * eigen-direction lambda of the Hessian (sgd_sim/README.md, "The model"),
 * a series in eta lambda / 2 = gamma lambda / (2 L sqrt(T)):
 *     E(T) = a T^-1/2 + a2 T^-1 + a3 T^-3/2 + ... + b,
 * a from the transient (f(w0) - f*)/(eta T) and the noise L eta sigma^2, the
 * next terms from their corrections, b the floor |grad f(w_b)|^2 that the
 * codec's bias sets. How many terms: the k-th correction is at most
 * (gamma / (2 sqrt(T)))^k of the leading term (lambda <= L); with the tuned
 * gamma = c L = 4 and T_min = 256 that is 12.5%, 1.6%, 0.2% for k = 1, 2, 3,
 * against a relative standard error of the seed means of 0.6% at T = 256
 * (10 seeds; 0.2% at 2^14). So the terms up to T^-3/2 are kept and the
 * T^-2 term is below the noise: the floor is fitted with
 * a T^-1/2 + a2/T + a3 T^-3/2 + b. The first-order form a T^-1/2 + b is
 * also fitted and written out, but its missing terms are taken up by b:
 * fp32 gets a spurious floor from it (b = 0.26 with beta free on
 * 2^8..2^12) although its direct floor is 1e-13.
 * The rate is the free exponent of a T^-beta + a2/T + b (one correction
 * term: with a third the five-parameter fit is not determined by 7 horizons;
 * the fp32 control below checks that the omitted term does not move beta
 * out of the band).
 *
 * The CIs. Each fit's 95% percentile-bootstrap CI over seeds, and the same
 * fit without the smallest horizon; the reported interval is the union of
 * the two, so that it covers what the choice of window moves (the issue's
 * nested windows gave non-overlapping seed-only CIs).
 *
 * Rate verdict, worded by its resolution. The alternatives the schedule
 * controls far from 1/2 produce are rate 1/4 (eta = c/T^3/4: transient
 * 1/(eta T) = T^-1/4; eta = c/T^1/4: noise eta = T^-1/4). A decision between
 * 1/2 and that alternative puts the boundary half-way, RATE_TOL = 1/8 from
 * 1/2: a different rate when the whole beta interval lies outside
 * [3/8, 5/8]. Inside that band the horizons do not pin the exponent down:
 * the schedule controls fp32@0.35, fp32@0.4 and fp32@0.6 (plain SGD, no
 * floor, exponents 0.35..0.6) give free-beta intervals [0.407, 0.555],
 * [0.409, 0.545] and [0.335, 0.441] over 2^8..2^14 (the model's correction
 * terms absorb the difference; their local slopes all run from about -0.60
 * to -0.47), so a beta interval inside [3/8, 5/8] says only "decay exponent
 * not resolved from any in [RES_LO, RES_HI] = [0.35, 0.65] over these
 * horizons", never "T^-1/2". The controls check exactly that wording: every
 * fp32@s with s in [RES_LO, RES_HI] must come out in the band or not
 * resolved, never as a different rate, and with a floor verdict the direct
 * floor does not contradict.
 *
 * Floor verdict. Since the exponent is known only to the band, b is fitted
 * with beta fixed at 1/2 (a T^-1/2 + a2/T + a3 T^-3/2 + b), at RES_LO and at
 * RES_HI (a T^-beta + a2/T + b each), and with beta free; the interval of b
 * is the union of all of them (each also without the smallest horizon).
 * With beta at 1/2 alone, a slower true decay is taken up by b: fp32@0.35
 * got b = 0.053 [0.012, 0.068] with a direct floor of 7e-14. A rate shown
 * different uses the free-beta fit alone. A floor when the union lies above
 * 0, none shown when it contains 0. The direct floor (full-batch descent)
 * must lie in the union: a fitted floor that it contradicts fails the run. */
#define RATE_TOL 0.125
#define RES_LO 0.35
#define RES_HI 0.65
#define CLAIM_FLOOR_FRAC 0.05

typedef struct conv_verdict {
    sim_fit_result fix1, free1;      /* first order: a T^-1/2 + b, a T^-beta + b */
    sim_fit_result fix2, free2;      /* the floor fit a T^-1/2 + a2/T + a3 T^-3/2 + b, the
                                        rate fit a T^-beta + a2/T + b */
    sim_fit_result fix2d, free2d;    /* the same without the smallest horizon */
    sim_fit_result slow, fast;       /* a T^-beta + a2/T + b, beta = RES_LO and RES_HI */
    sim_fit_result slowd, fastd;     /* the same without the smallest horizon */
    double beta_lo, beta_hi;         /* union of the free2 and free2d intervals */
    double b, b_lo, b_hi;            /* the floor: estimate at beta = 1/2, union interval */
    int rate;                        /* 1 in the band [3/8, 5/8] (exponent not resolved
                                        from [RES_LO, RES_HI]), 0 not resolved, -1 different */
    int floor;                       /* 1 floor above 0, 0 consistent with 0, -1 below 0 */
    int floor_direct;                /* floor = 1 from the direct floor, the fit alone not */
    int fit_ok;
} conv_verdict;

static void conv_analyse(const double *Td, const double *vals, int nT, int ns, uint64_t seed,
                         conv_verdict *v)
{
    /* below 5 seeds no verdict is drawn (cmd_converge), and the CIs are
     * only indicative: 40 resamples then, 1000 otherwise */
    const int NB = ns >= 5 ? 1000 : 40;
    memset(v, 0, sizeof *v);
    int bad = 0;
    /* the first-order forms are written out only (they may fail to fit) */
    sim_fit_bootstrap(Td, vals, nT, ns, 0.5, 1, NB, seed + 1, &v->fix1);
    sim_fit_bootstrap(Td, vals, nT, ns, 0.0, 1, NB, seed + 2, &v->free1);
    bad |= sim_fit_bootstrap(Td, vals, nT, ns, 0.5, 3, NB, seed + 3, &v->fix2);
    bad |= sim_fit_bootstrap(Td, vals, nT, ns, 0.0, 2, NB, seed + 4, &v->free2);
    bad |= sim_fit_bootstrap(Td + 1, vals + ns, nT - 1, ns, 0.5, 3, NB, seed + 5, &v->fix2d);
    bad |= sim_fit_bootstrap(Td + 1, vals + ns, nT - 1, ns, 0.0, 2, NB, seed + 6, &v->free2d);
    bad |= sim_fit_bootstrap(Td, vals, nT, ns, RES_LO, 2, NB, seed + 7, &v->slow);
    bad |= sim_fit_bootstrap(Td, vals, nT, ns, RES_HI, 2, NB, seed + 8, &v->fast);
    bad |= sim_fit_bootstrap(Td + 1, vals + ns, nT - 1, ns, RES_LO, 2, NB, seed + 9, &v->slowd);
    bad |= sim_fit_bootstrap(Td + 1, vals + ns, nT - 1, ns, RES_HI, 2, NB, seed + 10, &v->fastd);
    v->fit_ok = !bad;
    v->beta_lo = fmin(v->free2.beta.lo, v->free2d.beta.lo);
    v->beta_hi = fmax(v->free2.beta.hi, v->free2d.beta.hi);
    if (v->beta_lo >= 0.5 - RATE_TOL && v->beta_hi <= 0.5 + RATE_TOL)
        v->rate = 1;
    else if (v->beta_hi < 0.5 - RATE_TOL || v->beta_lo > 0.5 + RATE_TOL)
        v->rate = -1;
    else
        v->rate = 0;
    if (v->rate >= 0) {
        const sim_fit_result *all[] = {&v->fix2, &v->fix2d, &v->slow, &v->slowd,
                                       &v->fast, &v->fastd, &v->free2, &v->free2d};
        v->b = v->fix2.b.est;
        v->b_lo = INFINITY;
        v->b_hi = -INFINITY;
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
            v->b_lo = fmin(v->b_lo, all[k]->b.lo);
            v->b_hi = fmax(v->b_hi, all[k]->b.hi);
        }
    } else {
        v->b = v->free2.b.est;
        v->b_lo = fmin(v->free2.b.lo, v->free2d.b.lo);
        v->b_hi = fmax(v->free2.b.hi, v->free2d.b.hi);
    }
    v->floor = v->b_lo > 0 ? 1 : v->b_hi < 0 ? -1 : 0;
    if (!v->fit_ok) {
        v->rate = 0;
        v->floor = 0;
    }
}

static void verdict_text(const conv_verdict *v, uint32_t Tmin, uint32_t Tmax, char *buf, size_t n)
{
    char rate[220], flo[200];
    if (v->rate == 1)
        snprintf(rate, sizeof rate,
                 "decay exponent not resolved from any in [%.2f, %.2f] over T = %u..%u (beta = %.3f [%.3f, %.3f])",
                 RES_LO, RES_HI, Tmin, Tmax, v->free2.beta.est, v->beta_lo, v->beta_hi);
    else if (v->rate == -1)
        snprintf(rate, sizeof rate, "rate T^(-%.3f) [%.3f, %.3f] over T = %u..%u: NOT T^(-1/2)", v->free2.beta.est,
                 v->beta_lo, v->beta_hi, Tmin, Tmax);
    else
        snprintf(rate, sizeof rate, "rate not resolved (beta = %.3f [%.3f, %.3f] crosses %.3f or %.3f)",
                 v->free2.beta.est, v->beta_lo, v->beta_hi, 0.5 - RATE_TOL, 0.5 + RATE_TOL);
    if (v->floor == 1)
        snprintf(flo, sizeof flo,
                 v->floor_direct ? "with a floor (measured directly, inside the fitted b = %.4g [%.4g, %.4g], "
                                   "which alone does not exclude 0)"
                                 : "with a floor b = %.4g [%.4g, %.4g]",
                 v->b, v->b_lo, v->b_hi);
    else if (v->floor == 0)
        snprintf(flo, sizeof flo, "no floor shown (b = %.3g [%.3g, %.3g] contains 0)", v->b, v->b_lo, v->b_hi);
    else
        snprintf(flo, sizeof flo, "b = %.3g [%.3g, %.3g] below 0: the model does not fit a floor", v->b, v->b_lo,
                 v->b_hi);
    snprintf(buf, n, "%s, %s", rate, flo);
}

/* converge methods: a codec name, optionally @BETA for the schedule
 * eta = c (T/T_tune)^-BETA / sqrt(T_tune) (equal to c/sqrt(T) at T_tune, so
 * c is tuned as for the 1/sqrt(T) schedule); default BETA = 1/2. */
typedef struct conv_method {
    char name[48];
    sim_method m;
    double sched;
} conv_method;

static double conv_eta(const conv_method *cm, double c, uint32_t T, uint32_t Ttune)
{
    return c * pow((double)T / Ttune, -cm->sched) / sqrt((double)Ttune);
}

int cmd_converge(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1)) {
        fprintf(stderr, "tahq-sim: problem setup failed\n");
        return 1;
    }
    /* --runs FILE: the runs of an earlier sweep (its converge_runs.csv),
     * analysed again without running them (same horizons, seeds, eta) */
    typedef struct run_rec {
        char name[48];
        uint32_t T;
        int seed;
        double eta, avg, min, gap;
    } run_rec;
    run_rec *recs = NULL;
    size_t nrec = 0;
    char file_methods[1024] = "";
    if (o->runs) {
        FILE *fin = fopen(o->runs, "r");
        char line[512];
        if (!fin || !fgets(line, sizeof line, fin)) {
            fprintf(stderr, "tahq-sim: cannot read %s\n", o->runs);
            if (fin)
                fclose(fin);
            return 1;
        }
        size_t cap = 0;
        while (fgets(line, sizeof line, fin)) {
            if (nrec == cap) {
                cap = cap ? 2 * cap : 1024;
                run_rec *nr = realloc(recs, cap * sizeof *recs);
                if (!nr) {
                    fclose(fin);
                    free(recs);
                    return 1;
                }
                recs = nr;
            }
            run_rec *r = &recs[nrec];
            char *comma = strchr(line, ',');
            unsigned long long sd = 0;
            if (!comma || (size_t)(comma - line) >= sizeof r->name)
                continue;
            memcpy(r->name, line, (size_t)(comma - line));
            r->name[comma - line] = '\0';
            if (sscanf(comma + 1, "%u,%llu,%lf,%lf,%lf,%lf", &r->T, &sd, &r->eta, &r->avg, &r->min, &r->gap) != 6 ||
                sd < 1 || sd > 1000)
                continue;
            r->seed = (int)sd;
            char key[52];
            snprintf(key, sizeof key, ",%s,", r->name);
            char padded[1030];
            snprintf(padded, sizeof padded, ",%s,", file_methods);
            if (!strstr(padded, key) && strlen(file_methods) + strlen(r->name) + 2 < sizeof file_methods) {
                if (file_methods[0])
                    strcat(file_methods, ",");
                strcat(file_methods, r->name);
            }
            nrec++;
        }
        fclose(fin);
    }
    char names[16][48];
    int nm = split_methods(o->methods ? o->methods : o->runs ? file_methods : NULL,
                           o->quick ? "fp32,tah,tah3/2,bias2,fp32@0.75,fp32@0.4,fp32@0.35,fp32@0.6"
                                    : "fp32,fp16,tah,tah-gain,plain4,aqsgd,tah3/2,tah3/2-gain,bias2,fp32@0.75,"
                                      "fp32@0.4,fp32@0.35,fp32@0.6",
                           names, 16);
    conv_method cms[16];
    for (int i = 0; i < nm; i++) {
        char codec[48];
        memcpy(codec, names[i], sizeof codec);
        codec[sizeof codec - 1] = '\0';
        memset(&cms[i], 0, sizeof cms[i]);
        memcpy(cms[i].name, codec, sizeof cms[i].name);
        cms[i].sched = 0.5;
        char *at = strchr(codec, '@');
        if (at) {
            *at = '\0';
            char *end = NULL;
            cms[i].sched = strtod(at + 1, &end);
            if (!end || *end || !(cms[i].sched > 0 && cms[i].sched < 1)) {
                fprintf(stderr, "tahq-sim: %s: the schedule exponent after @ must be in (0, 1)\n", names[i]);
                return 2;
            }
        }
        if (sim_method_parse(codec, &cms[i].m)) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
    }
    int lo2 = 8, hi2 = o->quick ? 14 : 16, nT = hi2 - lo2 + 1;
    int ns = o->seeds > 0 ? o->seeds : 10;
    if (o->runs) { /* horizons (powers of 2) and seeds of the file */
        uint32_t tmin = UINT32_MAX, tmax = 0;
        int smax = 0;
        for (size_t k = 0; k < nrec; k++) {
            tmin = recs[k].T < tmin ? recs[k].T : tmin;
            tmax = recs[k].T > tmax ? recs[k].T : tmax;
            smax = recs[k].seed > smax ? recs[k].seed : smax;
        }
        if (nrec == 0 || (tmin & (tmin - 1)) || (tmax & (tmax - 1))) {
            fprintf(stderr, "tahq-sim: %s: no runs, or horizons that are not powers of 2\n", o->runs);
            free(recs);
            return 1;
        }
        for (lo2 = 0; (1u << lo2) < tmin; lo2++)
            ;
        for (hi2 = lo2; (1u << hi2) < tmax; hi2++)
            ;
        nT = hi2 - lo2 + 1;
        ns = smax;
    }
    uint32_t Ts[16];
    double Td[16];
    for (int i = 0; i < nT; i++) {
        Ts[i] = 1u << (lo2 + i);
        Td[i] = Ts[i];
    }
    /* c in eta = c/sqrt(T) on a log grid: SGD c = gamma/L (gamma = 0.25..16,
     * the step relative to the smoothness); AdamW's step is per coordinate
     * and scale-free, so c itself, 2^-7..2^-1 */
    static const double grid_sgd[] = {0.25, 0.5, 1, 2, 4, 8, 16};
    static const double grid_adamw[] = {1.0 / 128, 1.0 / 64, 1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5};
    const int ng = 7;
    double grid[7];
    for (int i = 0; i < ng; i++)
        grid[i] = o->adamw ? grid_adamw[i] * p.L : grid_sgd[i]; /* as gamma = c L */
    const sim_opts base = {.micro = 2, .batch = 1, .adamw = o->adamw, .beta1 = o->beta1,
                           .beta2 = o->beta2, .eps = o->eps,
                           .weight_decay = o->weight_decay >= 0 ? o->weight_decay : 0.0};
    const uint32_t Ttune = o->quick ? 1024 : 4096;
    const int ntune = 3;
    printf("converge: smooth problem K=%u stages, C=%u (x: %u, y: %u), S=%u, %u sequences, "
           "2 micro-batches x 1 sequence per step\n",
           p.K, p.C, p.d, p.n_out, p.S, p.n_seq);
    printf("converge: L = %.6g, mu = %.6g, f* = %.6g, f(w0) - f* = %.6g\n", p.L, p.mu, p.fstar,
           p.Stt / 2 - p.fstar);
    if (o->adamw)
        printf("converge: AdamW beta1=%g beta2=%g eps=%g weight_decay=%g (decoupled)\n", base.beta1,
               base.beta2, base.eps, base.weight_decay);
    else
        printf("converge: SGD, eta = c (T/T_tune)^-s / sqrt(T_tune) (s = 1/2: c/sqrt(T); METHOD@s "
               "for another s), T = 2^%d..2^%d, %d seeds\n",
               lo2, hi2, ns);
    for (int mi = 0; mi < nm; mi++)
        note_no_low_units("converge", names[mi], &cms[mi].m, 1, p.S, p.C);
    /* tuning: c = gamma/L, gamma on a log grid, at Ttune (where every
     * schedule has eta = c/sqrt(Ttune)) */
    FILE *ft = o->runs ? NULL : open_out(o, "converge_tuning.csv");
    if (ft)
        fprintf(ft, "method,gamma,c,T,mean_avg_grad2,optimizer\n");
    double cbest[16];
    for (int mi = 0; mi < nm; mi++) {
        /* a schedule variant (METHOD@s) of a codec tuned already: every
         * schedule has the same eta at T_tune, so the same tuning */
        int same = -1;
        for (int mj = 0; mj < mi && same < 0; mj++) {
            size_t li = strcspn(names[mi], "@"), lj = strcspn(names[mj], "@");
            if (li == lj && strncmp(names[mi], names[mj], li) == 0)
                same = mj;
        }
        if (o->runs) { /* c from the file's eta: eta = c (T/T_tune)^-s / sqrt(T_tune) */
            cbest[mi] = NAN;
            for (size_t k = 0; k < nrec; k++)
                if (strcmp(recs[k].name, names[mi]) == 0) {
                    cbest[mi] = recs[k].eta * sqrt((double)Ttune) * pow((double)recs[k].T / Ttune, cms[mi].sched);
                    break;
                }
            printf("converge: %-10s c = %.4g (from %s)\n", names[mi], cbest[mi], o->runs);
            continue;
        }
        if (same >= 0) {
            cbest[mi] = cbest[same];
            printf("converge: %-10s tuned c = %.4g (as %s: the schedules have the same eta at T=%u)\n",
                   names[mi], cbest[mi], names[same], Ttune);
            continue;
        }
        conv_task tk[7 * 3];
        for (int gi = 0; gi < ng; gi++)
            for (int s = 0; s < ntune; s++) {
                conv_task *t = &tk[gi * ntune + s];
                memset(t, 0, sizeof *t);
                t->p = &p;
                t->m = &cms[mi].m;
                t->base = &base;
                t->T = Ttune;
                t->seed = 1000 + (uint64_t)s;
                t->eta = grid[gi] / p.L / sqrt((double)Ttune);
            }
        char label[96];
        snprintf(label, sizeof label, "tune %s", names[mi]);
        run_pool(tk, (size_t)ng * ntune, o->jobs, label);
        double best = INFINITY;
        int bi = 0;
        for (int gi = 0; gi < ng; gi++) {
            double s = 0;
            for (int j = 0; j < ntune; j++)
                s += tk[gi * ntune + j].avg;
            s /= ntune;
            if (ft)
                fprintf(ft, "%s,%.6g,%.6g,%u,%.6g,%s\n", names[mi], grid[gi], grid[gi] / p.L, Ttune, s,
                        o->adamw ? "adamw" : "sgd");
            if (s < best) {
                best = s;
                bi = gi;
            }
        }
        cbest[mi] = grid[bi] / p.L;
        printf("converge: %-10s tuned c = %.4g (gamma = c L = %.4g; grid %s, T=%u, %d seeds)\n",
               names[mi], cbest[mi], grid[bi], o->adamw ? "c = 2^-7..2^-1" : "gamma = 0.25..16 x2",
               Ttune, ntune);
    }
    if (ft)
        fclose(ft);
    /* main sweep */
    size_t ntask = (size_t)nm * nT * ns;
    conv_task *tasks = calloc(ntask, sizeof *tasks);
    for (int mi = 0; mi < nm; mi++)
        for (int i = 0; i < nT; i++)
            for (int s = 0; s < ns; s++) {
                conv_task *t = &tasks[((size_t)mi * nT + i) * ns + s];
                t->p = &p;
                t->m = &cms[mi].m;
                t->base = &base;
                t->T = Ts[i];
                t->seed = (uint64_t)s + 1;
                t->eta = conv_eta(&cms[mi], cbest[mi], Ts[i], Ttune);
            }
    if (o->runs) {
        for (size_t k = 0; k < ntask; k++)
            tasks[k].avg = tasks[k].min = tasks[k].gap = NAN;
        for (size_t k = 0; k < nrec; k++) {
            int mi = 0, i = 0;
            while (mi < nm && strcmp(names[mi], recs[k].name) != 0)
                mi++;
            while (i < nT && Ts[i] != recs[k].T)
                i++;
            if (mi == nm || i == nT || recs[k].seed > ns)
                continue;
            conv_task *t = &tasks[((size_t)mi * nT + i) * ns + recs[k].seed - 1];
            t->eta = recs[k].eta;
            t->avg = recs[k].avg;
            t->min = recs[k].min;
            t->gap = recs[k].gap;
        }
        free(recs);
        recs = NULL;
    } else {
        run_pool(tasks, ntask, o->jobs, "converge");
    }
    /* the direct floors (SGD only: the floor is SGD's limit point) */
    gd_task gd[16];
    memset(gd, 0, sizeof gd);
    if (!o->adamw) {
        for (int mi = 0; mi < nm; mi++) {
            gd[mi].p = &p;
            gd[mi].m = &cms[mi].m;
        }
        double t0 = now_s();
        gd_all(gd, nm, o->jobs);
        progress_line("floor (full-batch GD)", (size_t)nm, (size_t)nm, now_s() - t0, 1);
    }
    FILE *fr = open_out(o, "converge_runs.csv");
    FILE *fs = open_out(o, "converge_summary.csv");
    FILE *ff = open_out(o, "converge_fit.csv");
    FILE *fmod = open_out(o, "converge_model.csv");
    FILE *floc = open_out(o, "converge_local.csv");
    FILE *fv = open_out(o, "converge_verdict.csv");
    if (fr)
        fprintf(fr, "method,T,seed,eta,avg_grad2,min_grad2,final_gap\n");
    if (fs)
        fprintf(fs, "method,T,eta,mean_avg,sd_avg,mean_min,sd_min,mean_gap,ratio_avg_vs_fp32,ratio_min_vs_fp32,"
                    "ci_lo_avg,ci_hi_avg\n");
    if (ff)
        fprintf(ff, "method,quantity,slope,ci_lo,ci_hi,c,gamma,ln_intercept,optimizer\n");
    if (fmod)
        fprintf(fmod, "method,model,T_min,T_max,beta,beta_lo,beta_hi,a,a_lo,a_hi,a2,a2_lo,a2_hi,a3,a3_lo,a3_hi,"
                      "b,b_lo,b_hi,wrss,dof,beta_at_bound\n");
    if (floc)
        fprintf(floc, "method,T_lo,T_hi,slope,ci_lo,ci_hi\n");
    if (fv)
        fprintf(fv, "method,schedule,rate,beta,beta_lo,beta_hi,floor,b,b_lo,b_hi,b_gd,b_gd_lo,b_gd_hi,"
                    "gd_agrees,verdict,paper_claim,E_Tmax\n");
    double *avg = malloc(sizeof(double) * nT * ns), *mn = malloc(sizeof(double) * nT * ns);
    double *fp_avg = calloc(nT, sizeof(double)), *fp_min = calloc(nT, sizeof(double));
    double e_last_m[16]; /* E at the largest horizon, the seed mean, per method */
    int fail = 0;
    /* the verdict checks are about SGD, the theory's setting */
    const int checks = !o->adamw;
    conv_verdict *vs = calloc(nm, sizeof *vs);
    printf("\n%-10s %6s %11s %11s %11s %9s %9s\n", "method", "T", "eta", "avg|g|^2", "min|g|^2",
           "ratio_avg", "ratio_min");
    for (int mi = 0; mi < nm; mi++) {
        for (int i = 0; i < nT; i++)
            for (int s = 0; s < ns; s++) {
                conv_task *t = &tasks[((size_t)mi * nT + i) * ns + s];
                avg[i * ns + s] = t->avg;
                mn[i * ns + s] = t->min;
                if (fr)
                    fprintf(fr, "%s,%u,%llu,%.6g,%.8g,%.8g,%.8g\n", names[mi], t->T,
                            (unsigned long long)t->seed, t->eta, t->avg, t->min, t->gap);
            }
        for (int i = 0; i < nT; i++) {
            double ma = gsl_stats_mean(avg + i * ns, 1, ns), sa = gsl_stats_sd(avg + i * ns, 1, ns);
            double mm = gsl_stats_mean(mn + i * ns, 1, ns), sm = gsl_stats_sd(mn + i * ns, 1, ns);
            double gap = 0;
            for (int s = 0; s < ns; s++)
                gap += tasks[((size_t)mi * nT + i) * ns + s].gap / ns;
            if (i == nT - 1)
                e_last_m[mi] = ma;
            if (strcmp(names[mi], "fp32") == 0) {
                fp_avg[i] = ma;
                fp_min[i] = mm;
            }
            double ra = fp_avg[i] > 0 ? ma / fp_avg[i] : NAN, rm = fp_min[i] > 0 ? mm / fp_min[i] : NAN;
            /* 95% CI of the seed mean: Student t with ns - 1 degrees of freedom */
            double hw = gsl_cdf_tdist_Qinv(0.025, ns - 1) * sa / sqrt((double)ns);
            printf("%-10s %6u %11.4g %11.4g %11.4g %9.3f %9.3f\n", names[mi], Ts[i],
                   conv_eta(&cms[mi], cbest[mi], Ts[i], Ttune), ma, mm, ra, rm);
            if (fs)
                fprintf(fs, "%s,%u,%.6g,%.8g,%.6g,%.8g,%.6g,%.6g,%.6g,%.6g,%.8g,%.8g\n", names[mi], Ts[i],
                        conv_eta(&cms[mi], cbest[mi], Ts[i], Ttune), ma, sa, mm, sm, gap, ra, rm, ma - hw,
                        ma + hw);
        }
        for (int q = 0; q < 2; q++) {
            double sl, ic, clo, chi;
            fit_slope(q ? mn : avg, nT, ns, Ts, 77 + (uint64_t)mi, &sl, &ic, &clo, &chi);
            printf("%-10s slope of %s |grad f|^2 vs T (one power law over 2^%d..2^%d): %.3f, 95%% bootstrap CI "
                   "[%.3f, %.3f]\n",
                   names[mi], q ? "min" : "avg", lo2, hi2, sl, clo, chi);
            if (ff)
                fprintf(ff, "%s,%s,%.5f,%.5f,%.5f,%.6g,%.4g,%.6g,%s\n", names[mi], q ? "min" : "avg", sl,
                        clo, chi, cbest[mi], cbest[mi] * p.L, ic, o->adamw ? "adamw" : "sgd");
        }
        /* local slopes per octave */
        sim_fit_ci loc[16];
        if (sim_local_slopes(Td, avg, nT, ns, 1000, 500 + (uint64_t)mi, loc) == 0) {
            printf("%-10s local slopes per octave:", names[mi]);
            for (int i = 0; i + 1 < nT; i++) {
                printf(" %.3f", loc[i].est);
                if (floc)
                    fprintf(floc, "%s,%u,%u,%.5f,%.5f,%.5f\n", names[mi], Ts[i], Ts[i + 1], loc[i].est, loc[i].lo,
                            loc[i].hi);
            }
            printf("\n");
        }
        conv_verdict *v = &vs[mi];
        conv_analyse(Td, avg, nT, ns, 900 + 10 * (uint64_t)mi, v);
        const struct {
            const char *name;
            const sim_fit_result *r;
            int first;
        } mods[] = {{"a*T^-1/2+b", &v->fix1, 0},
                    {"a*T^-beta+b", &v->free1, 0},
                    {"a*T^-1/2+a2/T+a3*T^-3/2+b", &v->fix2, 0},
                    {"a*T^-beta+a2/T+b", &v->free2, 0},
                    {"a*T^-1/2+a2/T+a3*T^-3/2+b", &v->fix2d, 1},
                    {"a*T^-beta+a2/T+b", &v->free2d, 1}};
        for (size_t k = 0; k < sizeof mods / sizeof mods[0]; k++) {
            const sim_fit_result *r = mods[k].r;
            if (fmod)
                fprintf(fmod,
                        "%s,%s,%u,%u,%.5f,%.5f,%.5f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%d,"
                        "%d\n",
                        names[mi], mods[k].name, Ts[mods[k].first], Ts[nT - 1], r->beta.est, r->beta.lo,
                        r->beta.hi, r->a.est, r->a.lo, r->a.hi, r->a2.est, r->a2.lo, r->a2.hi, r->a3.est, r->a3.lo,
                        r->a3.hi, r->b.est, r->b.lo, r->b.hi, r->rss, r->dof, r->at_bound);
        }
        printf("%-10s fit a T^-1/2 + a2/T + a3 T^-3/2 + b: a = %.4g, a2 = %.4g, a3 = %.4g, b = %.4g [%.4g, %.4g]; "
               "a T^-beta + a2/T + b: beta = %.3f [%.3f, %.3f], b = %.4g [%.4g, %.4g]\n",
               names[mi], v->fix2.a.est, v->fix2.a2.est, v->fix2.a3.est, v->fix2.b.est, v->fix2.b.lo, v->fix2.b.hi,
               v->free2.beta.est, v->free2.beta.lo, v->free2.beta.hi, v->free2.b.est, v->free2.b.lo,
               v->free2.b.hi);
        printf("%-10s first-order forms (not the verdict): a T^-1/2 + b: b = %.4g [%.4g, %.4g]; "
               "a T^-beta + b: beta = %.3f [%.3f, %.3f], b = %.4g [%.4g, %.4g]\n",
               names[mi], v->fix1.b.est, v->fix1.b.lo, v->fix1.b.hi, v->free1.beta.est, v->free1.beta.lo,
               v->free1.beta.hi, v->free1.b.est, v->free1.b.lo, v->free1.b.hi);
    }
    /* verdicts, the direct floor beside the fitted one, and the controls */
    printf("\nconvergence verdict (mean over t < T of |grad f(w_t)|^2; model a T^-beta + a2/T + b):\n");
    double g0 = 0;
    {
        double *gtmp = malloc(sizeof(double) * p.n_params);
        float *w0 = calloc(p.n_params, sizeof(float));
        g0 = sim_smooth_grad(&p, w0, gtmp);
        free(gtmp);
        free(w0);
    }
    /* The percentile bootstrap over ns seeds has C(2 ns - 1, ns) distinct
     * resamples per horizon: 10 for 3 seeds, 126 for 5. Below 5 its 2.5% and
     * 97.5% quantiles rest on a few extreme resamples, so no verdict (and no
     * control) is drawn from fewer seeds. */
    const int verdict_ok = ns >= 5;
    if (!verdict_ok)
        printf("  (%d seeds: below the 5 the bootstrap CIs need, so the verdicts are not drawn and the controls "
               "not checked)\n",
               ns);
    for (int mi = 0; mi < nm; mi++) {
        conv_verdict *v = &vs[mi];
        char text[512];
        verdict_text(v, Ts[0], Ts[nT - 1], text, sizeof text);
        if (!verdict_ok) {
            snprintf(text, sizeof text, "not determined (%d seeds < 5)", ns);
            v->rate = 0;
            v->floor = 0;
        }
        int agree = -1;
        char gdtext[256] = "";
        if (!o->adamw && !gd[mi].failed && v->floor == -1) {
            snprintf(gdtext, sizeof gdtext, "; direct floor (full-batch GD, Polyak) %.4g [%.4g, %.4g]: no fitted "
                     "floor to compare", gd[mi].b, gd[mi].lo, gd[mi].hi);
        } else if (!o->adamw && !gd[mi].failed) {
            agree = gd[mi].hi >= v->b_lo && gd[mi].lo <= v->b_hi;
            snprintf(gdtext, sizeof gdtext, "; direct floor (full-batch GD, Polyak) %.4g [%.4g, %.4g]: %s", gd[mi].b,
                     gd[mi].lo, gd[mi].hi,
                     agree ? "agrees with the fitted b" : "does NOT agree with the fitted b");
        } else if (!o->adamw) {
            snprintf(gdtext, sizeof gdtext, "; direct floor: full-batch GD failed (codec error)");
        }
        /* A floor the fit alone does not separate from 0 (its interval
         * joins the slow-exponent fits, which take up part of a floor: bias2
         * gets [-0.005, 0.553] around its closed-form 0.345) is still
         * a floor when full-batch descent measures one inside that interval
         * and at least CLAIM_FLOOR_FRAC of E at the largest horizon (the
         * share the horizons resolve, below). */
        const double e_last = e_last_m[mi];
        if (verdict_ok && v->floor == 0 && agree == 1 && gd[mi].lo >= CLAIM_FLOOR_FRAC * e_last) {
            v->floor = 1;
            v->floor_direct = 1;
            verdict_text(v, Ts[0], Ts[nT - 1], text, sizeof text);
        }
        printf("  %-10s %s%s\n", names[mi], text, gdtext);
        /* The paper's claim, apart from the tool's checks: SGD reaches a
         * stationary point at O(1/sqrt T). Not reproduced when the rate is
         * shown different, when the fit shows a floor, or when the direct
         * floor is at least CLAIM_FLOOR_FRAC of E at the largest horizon;
         * reproduced (to the resolution) when the rate is in the band, the
         * fit shows no floor and the direct floor is below that share. Why
         * 5%: a floor b turns the local slope -beta at T_max into about
         * -beta (1 - b/E); at b/E = 0.05 that moves it by 0.025, a sixth of
         * the band's half-width (0.15), so smaller floors are below what
         * these horizons resolve, and larger ones are a neighbourhood the
         * direct floor measures. */
        const int gd_ok = !o->adamw && !gd[mi].failed;
        const char *claim = "not determined";
        if (verdict_ok && !o->adamw) {
            if (v->rate == -1 || v->floor == 1 || (gd_ok && gd[mi].lo >= CLAIM_FLOOR_FRAC * e_last))
                claim = "not reproduced";
            else if (v->rate == 1 && gd_ok && gd[mi].hi < CLAIM_FLOOR_FRAC * e_last)
                claim = "reproduced to the resolution";
        }
        char claim_text[400];
        snprintf(claim_text, sizeof claim_text,
                 "O(1/sqrt T) to a stationary point: %s (floor b = %.3g [%.3g, %.3g]; direct floor %.3g = %.1f%% "
                 "of E(%u) = %.3g; delta along the trajectory: tahq-sim delta --trajectory)",
                 claim, v->b, v->b_lo, v->b_hi, gd_ok ? gd[mi].b : NAN,
                 gd_ok ? 100 * gd[mi].b / e_last : NAN, Ts[nT - 1], e_last);
        printf("  %-10s paper's claim: %s\n", "", claim_text);
        if (fv)
            fprintf(fv, "%s,%.4g,%s,%.5f,%.5f,%.5f,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,\"%s\",%s,%.6g\n", names[mi],
                    cms[mi].sched,
                    !verdict_ok ? "not determined" : v->rate == 1 ? "band" : v->rate == -1 ? "different" : "not resolved",
                    v->free2.beta.est, v->beta_lo, v->beta_hi,
                    !verdict_ok     ? "not determined"
                    : v->floor == 1 ? (v->floor_direct ? "floor (direct)" : "floor")
                    : v->floor == 0 ? "none"
                                    : "negative",
                    v->b, v->b_lo, v->b_hi,
                    o->adamw ? NAN : gd[mi].b, o->adamw ? NAN : gd[mi].lo, o->adamw ? NAN : gd[mi].hi,
                    agree < 0 ? "n/a" : agree ? "yes" : "no", text, claim, e_last);
        if (!checks)
            continue;
        const sim_method *m = &cms[mi].m;
        if (m->fwd == SIM_FWD_SCALE_BIAS && gd[mi].failed) {
            printf("FAIL: %s: full-batch descent failed\n", names[mi]);
            fail = 1;
        }
        if (m->fwd == SIM_FWD_SCALE_BIAS && !gd[mi].failed) {
            /* the biasP (scale) codec's stationary point is w* / g^(K-1) (every
             * stage's output crosses K-1 boundaries, the backward is exact),
             * so b = (1 - g^-(K-1))^2 |grad f(0)|^2. GD's error: the start is
             * forgotten to 1e-8 (above; twice that in |grad|^2) and binary32
             * w costs about (L/mu) 2^-24 / (1 - g^-(K-1)) < 1e-4 relative;
             * 1e-3 bounds both with room. */
            double s = pow((double)m->bias_scale, -(double)(p.K - 1));
            double want = (1 - s) * (1 - s) * g0;
            double rel = fabs(gd[mi].b - want) / want;
            printf("  %-10s control: analytic floor (1 - g^-(K-1))^2 |grad f(0)|^2 = %.6g, GD %.6g (rel. error "
                   "%.2g, tolerance 1e-3)\n",
                   names[mi], want, gd[mi].b, rel);
            if (!(rel <= 1e-3)) {
                printf("FAIL: %s direct floor differs from the analytic one\n", names[mi]);
                fail = 1;
            }
        }
        if (!verdict_ok)
            continue;
        /* The controls (sgd_sim/README.md, "Controls"): each must come out as
         * stated, so the analysis is shown able to call a rate different and
         * to see a floor. */
        int is_fp32 = m->fwd == SIM_FWD_NONE && m->bwd == SIM_BWD_NONE;
        if (is_fp32 && cms[mi].sched == 0.5 && !(v->rate == 1 && v->floor == 0)) {
            printf("FAIL: %s must be in the band [3/8, 5/8] without a floor\n", names[mi]);
            fail = 1;
        }
        if (is_fp32 && cms[mi].sched == 0.5 && strcmp(claim, "reproduced to the resolution") != 0) {
            printf("FAIL: %s: the paper's claim must come out reproduced for plain SGD\n", names[mi]);
            fail = 1;
        }
        /* the resolution controls: a true exponent inside [RES_LO, RES_HI]
         * must not be called a different rate (the verdict's wording says it
         * is not resolved there) */
        if (is_fp32 && cms[mi].sched >= RES_LO && cms[mi].sched <= RES_HI && v->rate == -1) {
            printf("FAIL: %s (eta ~ T^-%.2f, inside [%.2f, %.2f]) must not be reported as a different rate\n",
                   names[mi], cms[mi].sched, RES_LO, RES_HI);
            fail = 1;
        }
        /* any method: a fitted floor interval that the direct floor lies
         * outside of is a wrong verdict */
        if (agree == 0) {
            printf("FAIL: %s: the direct floor %.4g [%.4g, %.4g] contradicts the fitted b [%.4g, %.4g]\n",
                   names[mi], gd[mi].b, gd[mi].lo, gd[mi].hi, v->b_lo, v->b_hi);
            fail = 1;
        }
        if (fabs(cms[mi].sched - 0.5) >= 0.25 && strcmp(claim, "not reproduced") != 0) {
            printf("FAIL: %s: the paper's claim must come out not reproduced (rate different)\n", names[mi]);
            fail = 1;
        }
        if (fabs(cms[mi].sched - 0.5) >= 0.25 && v->rate != -1) {
            printf("FAIL: %s (eta ~ T^-%.2f) must be reported as a different rate\n", names[mi], cms[mi].sched);
            fail = 1;
        }
        int is_tah32 = m->fwd == SIM_FWD_TAH && m->fwd_cfg.hi_bits == 3 && m->fwd_cfg.lo_bits == 2;
        if ((is_tah32 || m->fwd == SIM_FWD_SCALE_BIAS) && strcmp(claim, "not reproduced") != 0) {
            printf("FAIL: %s: the paper's claim must come out not reproduced (a floor)\n", names[mi]);
            fail = 1;
        }
        if ((is_tah32 || m->fwd == SIM_FWD_SCALE_BIAS) && v->floor != 1) {
            printf("FAIL: %s must be reported with a floor\n", names[mi]);
            fail = 1;
        }
    }
    free(vs);
    if (fr)
        fclose(fr);
    if (fs)
        fclose(fs);
    if (ff)
        fclose(ff);
    if (fmod)
        fclose(fmod);
    if (floc)
        fclose(floc);
    if (fv)
        fclose(fv);
    printf("converge: %s (outputs in %s)\n", fail ? "FAIL" : "all checks passed", o->out);
    free(avg);
    free(mn);
    free(fp_avg);
    free(fp_min);
    free(tasks);
    sim_problem_free(&p);
    return fail;
}

/* ======================================================================== */
/* floor: the bias floor b = |grad f(w_b)|^2 by full-batch descent, per codec */
/* ======================================================================== */
/* Studies (floor.csv, one row per configuration): bits (TAH hi/lo 2/1..8/7,
 * nearest and stochastic rounding), codec (TAH token, TAH tile at G = 16,
 * plain 4-bit, fp16, AQ-SGD), backward codec (none, fixpoint 4/6/8, TAH),
 * data-set size (64..1024 sequences, TAH 4/3 nearest and stochastic) and
 * stages (K = 2, 4, 8). Each is gd_run above: no seeds, deterministic. */
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
        {"bits", "tah2/1", 64, 4},       {"bits", "tah3/2", 64, 4},       {"bits", "tah4/3", 64, 4},
        {"bits", "tah5/4", 64, 4},       {"bits", "tah6/5", 64, 4},       {"bits", "tah8/7", 64, 4},
        {"bits", "tah2/1-sr", 64, 4},    {"bits", "tah3/2-sr", 64, 4},    {"bits", "tah4/3-sr", 64, 4},
        {"bits", "tah5/4-sr", 64, 4},    {"bits", "tah6/5-sr", 64, 4},    {"bits", "tah8/7-sr", 64, 4},
        {"codec", "fp32", 64, 4},        {"codec", "fp16", 64, 4},        {"codec", "tah", 64, 4},
        {"codec", "tah-tile-g16", 64, 4}, {"codec", "tah-tile", 64, 4},    {"codec", "plain4", 64, 4},
        {"codec", "aqsgd", 64, 4},       {"backward", "tah+bwd-none", 64, 4}, {"backward", "fp32+bwd-fix4", 64, 4},
        {"backward", "fp32+bwd-fix6", 64, 4}, {"backward", "fp32+bwd-fix8", 64, 4},
        {"backward", "tah+bwd-tah", 64, 4}, {"stages", "tah", 64, 2},    {"stages", "tah", 64, 8},
        {"dataset", "tah", 256, 4},      {"dataset", "tah-sr", 256, 4},  {"dataset", "tah", 1024, 4},
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
    printf("floor: smooth problem, full-batch gradient descent with the codec from w* (eta = 1/L then 1/(2L),\n"
           "       %d iterations each); b = |grad f(w_bar)|^2 at the second phase's Polyak average w_bar,\n"
           "       range over both phases of |grad f(w_bar)|^2 and the mean of |grad f(w_t)|^2 (second halves)\n",
           FLOOR_ITERS);
    double t0 = now_s();
    int last = 0;
    int jobs = o->jobs < 1 ? 1 : o->jobs;
    /* rows are written as their batch finishes (the large data sets last) */
    FILE *f = open_out(o, "floor.csv");
    if (f)
        fprintf(f, "study,method,n_seq,K,hi_bits,lo_bits,rounding,b_gd,b_lo,b_hi,grad0_2,low_units_per_msg\n");
    printf("%-9s %-16s %6s %2s %11s %24s %s\n", "study", "method", "n_seq", "K", "b (GD)", "range", "note");
    for (size_t i0 = 0; i0 < n; i0 += (size_t)jobs) {
        size_t k = n - i0 < (size_t)jobs ? n - i0 : (size_t)jobs;
        gd_all(t + i0, (int)k, jobs);
        progress("floor", i0 + k, n, now_s() - t0, &last);
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
                printf("%-9s %-16s %6u %2u  codec error\n", all[i].study, all[i].method, p->n_seq, p->K);
            else
                printf("%-9s %-16s %6u %2u %11.4g   [%10.4g, %10.4g] %s\n", all[i].study, all[i].method, p->n_seq, p->K,
                       t[i].b, t[i].lo, t[i].hi, note);
            if (f)
                fprintf(f, "%s,%s,%u,%u,%u,%u,%s,%.6g,%.6g,%.6g,%.6g,%llu\n", all[i].study, all[i].method, p->n_seq,
                        p->K, hb ? ms[i].fwd_cfg.hi_bits : 0, hb ? ms[i].fwd_cfg.lo_bits : 0,
                        hb && ms[i].fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC ? "stochastic" : "nearest",
                        t[i].failed ? NAN : t[i].b, t[i].failed ? NAN : t[i].lo, t[i].failed ? NAN : t[i].hi, g0,
                        (unsigned long long)low);
        }
        if (f)
            fflush(f);
        fflush(stdout);
    }
    if (f)
        fclose(f);
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
    int f64;                /* 1: the update w -= eta g in binary64 */
    int base_iters;         /* iterations at 1/L (x2 at 1/(4L), x8 at 1/(32L)) */
    double b[3], infl[3];   /* per step: debiased floor, inflation estimate */
    int iters[3];
    int failed;
} range_task;

static const double range_steps[3] = {1.0, 0.25, 1.0 / 32};

static void range_run(range_task *t)
{
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

static void *range_worker(void *arg)
{
    range_task *t = arg;
    for (; t->p; t++) /* a NULL-terminated slice */
        range_run(t);
    return NULL;
}

int cmd_floor_range(const sim_cli *o)
{
    char names[16][48];
    int nm = split_methods(o->methods, o->quick ? "tah3/2" :
                           "tah3/2,tah3/2-gain,tah,tah-gain,tah5/4,tah6/5,tah-sr,tah-gain-sr,tah5/4-sr,tah6/5-sr",
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
    const int n = 2 * nm, jobs = o->jobs < 1 ? 1 : o->jobs;
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
    range_task **slices = calloc((size_t)jobs, sizeof *slices);
    if (!slices)
        return 1;
    /* round-robin slices, each NULL-terminated: task i goes to slice i % jobs */
    range_task *sl = calloc((size_t)n + (size_t)jobs, sizeof *sl);
    int *where = calloc((size_t)n, sizeof(int));
    if (!sl || !where)
        return 1;
    int pos = 0;
    for (int j = 0; j < jobs; j++) {
        slices[j] = &sl[pos];
        for (int i = j; i < n; i += jobs) {
            range_task *x = &sl[pos];
            x->p = &p;
            x->m = &ms[i / 2];
            x->f64 = i % 2;
            const int sr = ms[i / 2].fwd == SIM_FWD_TAH && ms[i / 2].fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC;
            const int hi = (int)ms[i / 2].fwd_cfg.hi_bits;
            x->base_iters = o->quick ? RANGE_ITERS_QUICK
                            : sr     ? (4 << (hi > 4 ? hi - 4 : 0)) * RANGE_ITERS0
                                     : RANGE_ITERS0;
            where[i] = pos++;
        }
        pos++; /* terminator: p = NULL */
    }
    printf("floor --range: smooth problem K=%u, full-batch descent with the codec, steps 1/L, 1/(4L), 1/(32L)\n"
           "  (continuation), binary32 and binary64 updates; b = |grad f(w_bar)|^2 at the Polyak average,\n"
           "  minus the batch-means estimate of its noise (stochastic rounding); err = that estimate / b\n",
           p.K);
    double t0 = now_s();
    pthread_t th[16];
    int nt = jobs < 16 ? jobs : 16;
    for (int j = 0; j < nt; j++)
        pthread_create(&th[j], NULL, range_worker, slices[j]);
    for (int j = 0; j < nt; j++)
        pthread_join(th[j], NULL);
    progress_line("floor --range", (size_t)n, (size_t)n, now_s() - t0, 1);
    FILE *f = open_out(o, "floor_range.csv");
    FILE *fs = open_out(o, "floor_range_summary.csv");
    if (f)
        fprintf(f, "method,update,step_over_1_over_L,iters,b,noise_estimate,rel_error\n");
    if (fs)
        fprintf(fs, "method,b_min,b_max,max_rel_error,bytes_per_elem\n");
    printf("%-14s %-8s %10s %12s %12s %12s %12s\n", "method", "update", "step L", "b (1/L)", "b (1/4L)", "b (1/32L)",
           "max err");
    int fail = 0;
    for (int mi = 0; mi < nm; mi++) {
        double lo = INFINITY, hi = -INFINITY, emax = 0;
        for (int prec = 0; prec < 2; prec++) {
            range_task *x = &sl[where[2 * mi + prec]];
            if (x->failed) {
                printf("%-14s %-8s codec error\n", names[mi], prec ? "binary64" : "binary32");
                fail = 1;
                continue;
            }
            double e = 0;
            for (int ph = 0; ph < 3; ph++) {
                double rel = x->infl[ph] / x->b[ph];
                e = fmax(e, rel);
                lo = fmin(lo, x->b[ph]);
                hi = fmax(hi, x->b[ph]);
                if (f)
                    fprintf(f, "%s,%s,%.6g,%d,%.6g,%.4g,%.4g\n", names[mi], prec ? "binary64" : "binary32",
                            range_steps[ph], x->iters[ph], x->b[ph], x->infl[ph], rel);
            }
            emax = fmax(emax, e);
            printf("%-14s %-8s %10s %12.4g %12.4g %12.4g %11.2g%%\n", names[mi], prec ? "binary64" : "binary32",
                   "1..1/32", x->b[0], x->b[1], x->b[2], 100 * e);
        }
        /* bytes per element of a [1, S, C] message: the floor beside its cost */
        float *xx = calloc((size_t)p.S * p.C, sizeof(float)), *yy = calloc((size_t)p.S * p.C, sizeof(float));
        for (size_t i = 0; xx && i < (size_t)p.S * p.C; i++)
            xx[i] = p.X[i];
        size_t bytes = xx && yy ? sim_fwd_roundtrip(&ms[mi], 1, p.S, p.C, xx, xx, yy, 1) : 0;
        free(xx);
        free(yy);
        printf("%-14s range %.4g .. %.4g (%.0f%% of the low end), estimate error <= %.2g%%, %.3f bytes/element\n",
               names[mi], lo, hi, 100 * (hi - lo) / lo, 100 * emax, (double)bytes / ((double)p.S * p.C));
        if (fs)
            fprintf(fs, "%s,%.6g,%.6g,%.4g,%.5f\n", names[mi], lo, hi, emax, (double)bytes / ((double)p.S * p.C));
        if (!o->quick && !(emax < 0.05)) {
            printf("FAIL: %s: the floor estimate's own error %.2g%% is not below 5%%\n", names[mi], 100 * emax);
            fail = 1;
        }
    }
    if (f)
        fclose(f);
    if (fs)
        fclose(fs);
    free(slices);
    free(sl);
    free(where);
    sim_problem_free(&p);
    return fail;
}

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

static void dtraj_run(dtraj_task *d)
{
    const sim_problem *p = d->p;
    size_t np = p->n_params;
    int sr = (d->m.fwd == SIM_FWD_TAH || d->m.fwd == SIM_FWD_PLAIN) && d->m.fwd_cfg.rounding == TAHQ_ROUND_STOCHASTIC;
    int K = sr ? DTRAJ_KEYS : 1;
    sim_opts so = {.micro = 2, .batch = 1, .eta = 4.0 / p->L / sqrt((double)DTRAJ_T), .seed = 1};
    sim_opts mo = {.micro = 2, .batch = 1, .eta = 0, .seed = 5};
    sim_run *r = sim_run_new(p, &d->m, &so), *meas = sim_run_new(p, &d->m, &mo);
    double *gf = malloc(sizeof(double) * np), *e = malloc(sizeof(double) * np * K), *sum = malloc(sizeof(double) * np);
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
                    if (sim_run_grad(meas, ids, sim_mix64(((uint64_t)t << 20) ^ ((uint64_t)k * 7919 + q)), gs, NULL))
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

static void *dtraj_worker(void *arg)
{
    dtraj_run(arg);
    return NULL;
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

int cmd_delta_traj(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1))
        return 1;
    char names[16][48];
    int nm = split_methods(o->methods, "tah,tah-gain,tah-sr,tah3/2,tah3/2-gain,tah3/2-sr,tah-tile-g16,plain4,fp32+bwd-fix6,fp16",
                           names, 16);
    dtraj_task *d = calloc(nm, sizeof *d);
    if (!d)
        return 1;
    for (int i = 0; i < nm; i++) {
        if (sim_method_parse(names[i], &d[i].m) || d[i].m.fwd == SIM_FWD_AQSGD) {
            fprintf(stderr, "tahq-sim: %s: unknown method (AQ-SGD is stateful: not measured here)\n", names[i]);
            free(d);
            return 2;
        }
        d[i].p = &p;
        memcpy(d[i].name, names[i], sizeof d[i].name);
    }
    printf("delta along SGD's trajectory: smooth problem, eta = (4/L)/sqrt(T), T = %d, seed 1; at t = 0, 2^6..2^14 "
           "the expectation over the data set (x %d keys, unbiased U-statistic, for stochastic rounding)\n",
           DTRAJ_T, DTRAJ_KEYS);
    double t0 = now_s();
    int last = 0, jobs = o->jobs < 1 ? 1 : o->jobs;
    for (int i = 0; i < nm; i += jobs) {
        pthread_t th[16];
        int k = 0;
        for (int j = i; j < nm && j < i + jobs && k < 16; j++, k++)
            pthread_create(&th[k], NULL, dtraj_worker, &d[j]);
        for (int j = 0; j < k; j++)
            pthread_join(th[j], NULL);
        progress("delta trajectory", (size_t)(i + k), (size_t)nm, now_s() - t0, &last);
    }
    FILE *f = open_out(o, "delta_traj.csv");
    if (f)
        fprintf(f, "method,t,grad2,delta,delta_lo,delta_hi,delta_plugin\n");
    printf("%-14s %6s %11s %9s %21s %9s\n", "method", "t", "|grad f|^2", "delta", "95% CI", "plug-in");
    for (int i = 0; i < nm; i++) {
        if (d[i].failed) {
            printf("%-14s codec error\n", d[i].name);
            continue;
        }
        for (int j = 0; j < d[i].npts; j++) {
            printf("%-14s %6.0f %11.4g %9.4f [%9.4f, %9.4f] %9.4f\n", d[i].name, d[i].t[j], d[i].g2[j], d[i].delta[j],
                   d[i].lo[j], d[i].hi[j], d[i].plugin[j]);
            if (f)
                fprintf(f, "%s,%.0f,%.8g,%.8g,%.8g,%.8g,%.8g\n", d[i].name, d[i].t[j], d[i].g2[j], d[i].delta[j],
                        d[i].lo[j], d[i].hi[j], d[i].plugin[j]);
        }
    }
    printf("\n|grad f|^2 at which delta first falls below 0.9 and below 0 along the run (interpolated):\n");
    FILE *fc = open_out(o, "delta_cross.csv");
    if (fc)
        fprintf(fc, "method,grad2_at_delta_0.9,grad2_at_delta_0,grad2_end\n");
    for (int i = 0; i < nm; i++) {
        if (d[i].failed)
            continue;
        double c9 = dtraj_cross(&d[i], 0.9), c0 = dtraj_cross(&d[i], 0.0);
        printf("  %-14s delta = 0.9 at %-10.4g delta = 0 at %-10.4g (|grad f|^2 at the end: %.4g)\n", d[i].name, c9, c0,
               d[i].g2[d[i].npts - 1]);
        if (fc)
            fprintf(fc, "%s,%.6g,%.6g,%.6g\n", d[i].name, c9, c0, d[i].g2[d[i].npts - 1]);
    }
    if (f)
        fclose(f);
    if (fc)
        fclose(fc);
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
        "tah6/5-sr+bwd-none,tah4/3-tile-g16+bwd-none,plain2+bwd-none,plain3+bwd-none,plain4+bwd-none,"
        "plain6+bwd-none,plain8+bwd-none,tah,tah-gain,tah-sr,tah3/2-gain,plain4,fp32+bwd-fix6,fp32+bwd-fix4,aqsgd";
    char names[32][48];
    int nm = split_methods(o->methods, def, names, 32);
    static const double alphas[] = {1.0, 0.1, 0.01};
    const int na = 3;
    const int reps_sr = o->quick ? 4 : 16;
    size_t np = p.n_params;
    uint32_t per_step = 2; /* micro 2 x batch 1 */
    uint32_t nsteps = p.n_seq / per_step;
    FILE *f = open_out(o, "delta.csv");
    if (f)
        fprintf(f, "method,fwd_bits_per_elem,bwd_bits_per_elem,alpha,grad2,rel_bias2,delta,sigma2,sigma2_rel,"
                   "low_units_per_msg\n");
    printf("delta: smooth problem, w = (1 - alpha) w*, E[g_hat] over the data set (%u mini-batches) "
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
        note_no_low_units("delta", names[mi], &m, 1, p.S, p.C);
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
            double fb = 8.0 * (double)(t1.fwd_bytes - t0.fwd_bytes) / (double)(t1.fwd_elems - t0.fwd_elems);
            double bb = 8.0 * (double)(t1.bwd_bytes - t0.bwd_bytes) / (double)(t1.bwd_elems - t0.bwd_elems);
            double delta = 1.0 - bias / gn;
            printf("%-20s %7.3f %7.3f %6.2f %11.4g %10.6f %10.4g %10.4g\n", names[mi], fb, bb, alphas[ai],
                   gn, delta, sigma2, sigma2 / gn);
            if (f)
                fprintf(f, "%s,%.4f,%.4f,%g,%.8g,%.8g,%.8g,%.8g,%.8g,%llu\n", names[mi], fb, bb, alphas[ai], gn,
                        bias / gn, delta, sigma2, sigma2 / gn, (unsigned long long)low_units);
            sim_run_free(r);
        }
        fprintf(stderr, "delta: %d/%d methods\n", mi + 1, nm);
    }
    if (f)
        fclose(f);
    free(gf);
    free(gm);
    free(g2);
    free(gs);
    free(w);
    sim_problem_free(&p);
    return 0;
}

/* ======================================================================== */
/* train: loss curves on the LLM-like residual-MLP pipeline                 */
/* ======================================================================== */
typedef struct train_task {
    const sim_problem *p;
    sim_method m;
    sim_opts so;
    int steps, every;
    double *loss, *eval; /* [steps], [steps/every+1] */
    sim_traffic tr;
    int failed;
} train_task;

static void *train_worker(void *arg)
{
    train_task *t = arg;
    sim_run *r = sim_run_new(t->p, &t->m, &t->so);
    if (!r) {
        t->failed = 1;
        return NULL;
    }
    for (int s = 0; s < t->steps; s++) {
        if (s % t->every == 0)
            t->eval[s / t->every] = sim_run_eval_loss(r);
        t->loss[s] = sim_run_step(r);
        if (!isfinite(t->loss[s]))
            t->failed = 1;
    }
    t->eval[t->steps / t->every] = sim_run_eval_loss(r);
    sim_run_traffic(r, &t->tr);
    sim_run_free(r);
    return NULL;
}

int cmd_train(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_mlp(&p, (uint32_t)o->K, 2))
        return 1;
    char names[16][48];
    int nm = split_methods(o->methods, "fp32,fp16,tah,tah-tile-g16,tah-sr,plain4,plain2,tah2/1,aqsgd", names, 16);
    int steps = o->steps > 0 ? o->steps : (o->quick ? 200 : 1000), every = 25;
    train_task *tt = calloc(nm, sizeof *tt);
    for (int i = 0; i < nm; i++) {
        if (sim_method_parse(names[i], &tt[i].m)) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
        note_no_low_units("train", names[i], &tt[i].m, 1, p.S, p.C);
        tt[i].p = &p;
        tt[i].so = (sim_opts){.micro = 4, .batch = 1, .eta = o->lr > 0 ? o->lr : o->adamw ? 1e-3 : 0.02,
                              .adamw = o->adamw, .beta1 = o->beta1, .beta2 = o->beta2, .eps = o->eps,
                              .weight_decay = o->weight_decay >= 0 ? o->weight_decay : SIM_ADAMW_WEIGHT_DECAY,
                              .clip = 1.0, .seed = 3};
        tt[i].steps = steps;
        tt[i].every = every;
        tt[i].loss = calloc(steps, sizeof(double));
        tt[i].eval = calloc(steps / every + 1, sizeof(double));
    }
    printf("train: LLM-like problem, K=%u residual MLP stages (C=%u, hidden %u), S=%u, %u sequences, "
           "4 micro-batches x 1 sequence, %s eta=%g, per-stage clip 1.0, %d steps\n",
           p.K, p.C, p.d, p.S, p.n_seq, o->adamw ? "AdamW" : "SGD", tt[0].so.eta, steps);
    if (o->adamw)
        printf("train: AdamW beta1=%g beta2=%g eps=%g weight_decay=%g (decoupled)\n", o->beta1, o->beta2,
               o->eps, tt[0].so.weight_decay);
    double t0 = now_s();
    int jobs = o->jobs < 1 ? 1 : o->jobs;
    for (int i = 0; i < nm; i += jobs) {
        pthread_t th[16];
        int n = 0;
        for (int j = i; j < nm && j < i + jobs && n < 16; j++, n++)
            pthread_create(&th[n], NULL, train_worker, &tt[j]);
        for (int j = 0; j < n; j++)
            pthread_join(th[j], NULL);
        fprintf(stderr, "train: %d/%d methods, %.0f s\n", i + n, nm, now_s() - t0);
    }
    FILE *f = open_out(o, "train.csv");
    FILE *fe = open_out(o, "train_eval.csv");
    if (f)
        fprintf(f, "method,step,loss\n");
    if (fe)
        fprintf(fe, "method,step,eval_loss\n");
    printf("%-10s %10s %10s %10s %9s %9s %12s\n", "method", "loss@0", "eval@end", "avg_last10%",
           "fwd_b/e", "bwd_b/e", "cache_bytes");
    for (int i = 0; i < nm; i++) {
        double tail = 0;
        int nt = steps / 10 > 0 ? steps / 10 : 1;
        for (int s = 0; s < steps; s++) {
            if (f)
                fprintf(f, "%s,%d,%.6g\n", names[i], s, tt[i].loss[s]);
            if (s >= steps - nt)
                tail += tt[i].loss[s] / nt;
        }
        for (int s = 0; s <= steps / every; s++)
            if (fe)
                fprintf(fe, "%s,%d,%.6g\n", names[i], s * every, tt[i].eval[s]);
        printf("%-10s %10.4f %10.4f %10.4f %9.3f %9.3f %12llu%s\n", names[i], tt[i].eval[0],
               tt[i].eval[steps / every], tail, 8.0 * tt[i].tr.fwd_bytes / (double)tt[i].tr.fwd_elems,
               8.0 * tt[i].tr.bwd_bytes / (double)tt[i].tr.bwd_elems,
               (unsigned long long)tt[i].tr.cache_bytes, tt[i].failed ? "  (diverged/codec error)" : "");
        free(tt[i].loss);
        free(tt[i].eval);
    }
    if (f)
        fclose(f);
    if (fe)
        fclose(fe);
    free(tt);
    sim_problem_free(&p);
    return 0;
}

/* ======================================================================== */
/* throughput model                                                         */
/* ======================================================================== */
static double median5(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* The model's assumptions, printed with the table and written next to the
 * CSV (throughput_assumptions.txt) so that a report can quote them as stated. */
static void throughput_assumptions(FILE *f, uint32_t B, uint32_t S, uint32_t C, uint32_t K,
                                   uint32_t M, double t_fwd, double t_bwd, double lat)
{
    fprintf(f, "throughput model (GPipe, K=%u stages, M=%u micro-batches of [%u, %u, %u] per step):\n", K, M, B, S, C);
    fprintf(f, "  - per stage and micro-batch compute: forward %.1f ms, backward %.1f ms (GPT2-XL 1.5B / 8 stages,\n"
               "    2*N*tokens flops forward and twice that backward at an assumed 40 TFLOP/s sustained)\n",
            t_fwd * 1e3, t_bwd * 1e3);
    fprintf(f, "  - one full-duplex link per boundary, bandwidth as listed, %.1f ms latency per message\n", lat * 1e3);
    fprintf(f, "  - transfer of micro-batch i overlaps compute of micro-batch i+1: a pipeline slot takes\n"
               "    max(compute + encode + decode, latency + bytes*8/bandwidth); step = (M + K - 1) slots\n"
               "    forward + (M + K - 1) slots backward (GPipe fill and drain), no other overheads\n");
    fprintf(f, "  - codec time: 'cpu' = encode+decode measured here with the single-thread C reference;\n"
               "    'free' = codec time 0 (GPU kernels, as in the authors' runs)\n");
    fprintf(f, "  - AQ-SGD: steady state after the first epoch (4-bit delta + fp16 scales); its first epoch\n"
               "    sends fp32. Its cache costs 2*S*C*2 = %.2f MB per sample per stage\n", 4.0 * S * C / 1e6);
    fprintf(f, "  - backward: fixpoint 6-bit for every compressed method, fp32 for fp32\n");
}

int cmd_throughput(const sim_cli *o)
{
    /* one micro-batch of GPT2-XL: [1, 1024, 1600]; LLM-like values */
    const uint32_t B = 1, S = o->quick ? 256 : 1024, C = 1600, K = 8, M = 32;
    const double t_fwd = 9.6e-3 * S / 1024.0, t_bwd = 19.2e-3 * S / 1024.0, lat = 1e-3;
    size_t n = (size_t)B * S * C;
    float *x = malloc(sizeof(float) * n), *prev = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    float *g = malloc(sizeof(float) * n);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    for (uint32_t t = 0; t < S; t++)
        for (uint32_t c = 0; c < C; c++) {
            double v = gsl_ran_gaussian(rng, 1.0);
            if (c == 3 || c == 700)
                v *= 20;
            if ((t == 0 || t % 97 == 13) && (c == 3 || c == 700))
                v = c == 3 ? 2000 : -1200;
            x[(size_t)t * C + c] = (float)v;
            prev[(size_t)t * C + c] = (float)(v + gsl_ran_gaussian(rng, 0.05 * fabs(v) + 0.01));
            g[(size_t)t * C + c] = (float)(gsl_ran_gaussian(rng, 1e-4) * (c % 64 == 5 ? 10 : 1));
        }
    gsl_rng_free(rng);
    const char *mn[] = {"fp32", "fp16", "aqsgd", "tah", "tah-tile", "plain4"};
    const int nm = 6;
    double fb[6], bb[6], tf[6], tb[6];
    int reps = o->quick ? 3 : 5;
    for (int i = 0; i < nm; i++) {
        sim_method m;
        sim_method_parse(mn[i], &m);
        note_no_low_units("throughput", mn[i], &m, B, S, C);
        double ts[8], us[8];
        for (int r = 0; r < reps; r++) {
            double a = now_s();
            fb[i] = (double)sim_fwd_roundtrip(&m, B, S, C, x, prev, y, 1);
            ts[r] = now_s() - a;
            a = now_s();
            bb[i] = (double)sim_bwd_roundtrip(&m, B, S, C, g, y, 1);
            us[r] = now_s() - a;
        }
        tf[i] = m.fwd == SIM_FWD_NONE ? 0 : median5(ts, reps);
        tb[i] = m.bwd == SIM_BWD_NONE ? 0 : median5(us, reps);
        fprintf(stderr, "throughput: measured %s\n", mn[i]);
    }
    throughput_assumptions(stdout, B, S, C, K, M, t_fwd, t_bwd, lat);
    printf("\n");
    FILE *fa = open_out(o, "throughput_assumptions.txt");
    if (fa) {
        throughput_assumptions(fa, B, S, C, K, M, t_fwd, t_bwd, lat);
        fclose(fa);
    }
    printf("%-9s %12s %12s %10s %10s\n", "method", "fwd_bytes", "bwd_bytes", "enc+dec_ms", "bwd_ms");
    for (int i = 0; i < nm; i++)
        printf("%-9s %12.0f %12.0f %10.2f %10.2f\n", mn[i], fb[i], bb[i], tf[i] * 1e3, tb[i] * 1e3);
    static const double bws[] = {10e9, 5e9, 2e9, 1e9, 500e6, 200e6, 100e6};
    FILE *f = open_out(o, "throughput.csv");
    if (f)
        fprintf(f, "bandwidth_bps,method,codec,fwd_bytes,bwd_bytes,step_s,tokens_per_s,speedup_vs_fp32\n");
    for (int mode = 0; mode < 2; mode++) {
        printf("\ntokens/s (codec %s; speedup vs fp32 in parentheses)\n%-9s", mode ? "free" : "cpu", "link");
        for (int i = 0; i < nm; i++)
            printf(" %17s", mn[i]);
        printf("\n");
        for (size_t b = 0; b < sizeof bws / sizeof bws[0]; b++) {
            double base = 0;
            printf("%6.0fMb ", bws[b] / 1e6);
            for (int i = 0; i < nm; i++) {
                double cf = mode ? 0 : tf[i], cb = mode ? 0 : tb[i];
                double xf = lat + fb[i] * 8 / bws[b], xb = lat + bb[i] * 8 / bws[b];
                double sf = fmax(t_fwd + cf, xf), sb = fmax(t_bwd + cb, xb);
                double step = (M + K - 1) * (sf + sb);
                double tps = (double)M * B * S / step;
                if (i == 0)
                    base = tps;
                printf(" %9.0f (%5.2fx)", tps, tps / base);
                if (f)
                    fprintf(f, "%.0f,%s,%s,%.0f,%.0f,%.6g,%.6g,%.4f\n", bws[b], mn[i], mode ? "free" : "cpu",
                            fb[i], bb[i], step, tps, tps / base);
            }
            printf("\n");
        }
    }
    if (f)
        fclose(f);
    free(x);
    free(prev);
    free(y);
    free(g);
    if (o->calibrate)
        return lk_calibrate(o->calibrate, o->out, nm, mn, fb, bb, S, C);
    return 0;
}
