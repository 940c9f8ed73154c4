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

#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
        if (pl->done == pl->n || pl->done % 10 == 0)
            fprintf(stderr, "\r%s: %zu/%zu runs, %.0f s", pl->label, pl->done, pl->n,
                    now_s() - pl->t0);
        if (pl->done == pl->n)
            fputc('\n', stderr);
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

int cmd_converge(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1)) {
        fprintf(stderr, "tahq-sim: problem setup failed\n");
        return 1;
    }
    char names[16][48];
    int nm = split_methods(o->methods, o->quick ? "fp32,tah" : "fp32,fp16,tah,plain4,aqsgd", names, 16);
    sim_method ms[16];
    for (int i = 0; i < nm; i++)
        if (sim_method_parse(names[i], &ms[i])) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
    int lo2 = 8, hi2 = o->quick ? 12 : 16, nT = hi2 - lo2 + 1;
    int ns = o->seeds > 0 ? o->seeds : 10;
    uint32_t Ts[16];
    for (int i = 0; i < nT; i++)
        Ts[i] = 1u << (lo2 + i);
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
        printf("converge: SGD\n");
    /* tuning: eta = c/sqrt(T), c = gamma/L, gamma on a log grid, at Ttune */
    FILE *ft = open_out(o, "converge_tuning.csv");
    if (ft)
        fprintf(ft, "method,gamma,c,T,mean_avg_grad2,optimizer\n");
    double cbest[16];
    for (int mi = 0; mi < nm; mi++) {
        conv_task tk[7 * 3];
        for (int gi = 0; gi < ng; gi++)
            for (int s = 0; s < ntune; s++) {
                conv_task *t = &tk[gi * ntune + s];
                memset(t, 0, sizeof *t);
                t->p = &p;
                t->m = &ms[mi];
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
        printf("converge: %-8s tuned c = %.4g (gamma = c L = %.4g; grid %s, T=%u, %d seeds)\n",
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
                t->m = &ms[mi];
                t->base = &base;
                t->T = Ts[i];
                t->seed = (uint64_t)s + 1;
                t->eta = cbest[mi] / sqrt((double)Ts[i]);
            }
    run_pool(tasks, ntask, o->jobs, "converge");
    FILE *fr = open_out(o, "converge_runs.csv");
    FILE *fs = open_out(o, "converge_summary.csv");
    FILE *ff = open_out(o, "converge_fit.csv");
    if (fr)
        fprintf(fr, "method,T,seed,eta,avg_grad2,min_grad2,final_gap\n");
    if (fs)
        fprintf(fs, "method,T,eta,mean_avg,sd_avg,mean_min,sd_min,mean_gap,ratio_avg_vs_fp32,ratio_min_vs_fp32\n");
    if (ff)
        fprintf(ff, "method,quantity,slope,ci_lo,ci_hi,c,gamma,ln_intercept,optimizer\n");
    double *avg = malloc(sizeof(double) * nT * ns), *mn = malloc(sizeof(double) * nT * ns);
    double *fp_avg = calloc(nT, sizeof(double)), *fp_min = calloc(nT, sizeof(double));
    int fail = 0;
    /* the quick run's assertions are about SGD, the theory's setting */
    const int checks = o->quick && !o->adamw;
    double slopes[16][2];
    printf("\n%-8s %6s %11s %11s %11s %9s %9s\n", "method", "T", "eta", "avg|g|^2", "min|g|^2",
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
            if (strcmp(names[mi], "fp32") == 0) {
                fp_avg[i] = ma;
                fp_min[i] = mm;
            }
            double ra = fp_avg[i] > 0 ? ma / fp_avg[i] : NAN, rm = fp_min[i] > 0 ? mm / fp_min[i] : NAN;
            printf("%-8s %6u %11.4g %11.4g %11.4g %9.3f %9.3f\n", names[mi], Ts[i],
                   cbest[mi] / sqrt((double)Ts[i]), ma, mm, ra, rm);
            if (fs)
                fprintf(fs, "%s,%u,%.6g,%.8g,%.6g,%.8g,%.6g,%.6g,%.6g,%.6g\n", names[mi], Ts[i],
                        cbest[mi] / sqrt((double)Ts[i]), ma, sa, mm, sm, gap, ra, rm);
            /* the quick test: TAH/FP32 ratio of the bound quantity <= 2 */
            if (checks && strncmp(names[mi], "tah", 3) == 0 && !(ra <= 2.0 && ra >= 0.5)) {
                printf("FAIL: %s/fp32 ratio of avg |grad f|^2 at T=%u is %.3f, outside [0.5, 2]\n",
                       names[mi], Ts[i], ra);
                fail = 1;
            }
        }
        for (int q = 0; q < 2; q++) {
            double sl, ic, clo, chi;
            fit_slope(q ? mn : avg, nT, ns, Ts, 77 + (uint64_t)mi, &sl, &ic, &clo, &chi);
            slopes[mi][q] = sl;
            printf("%-8s slope of %s |grad f|^2 vs T: %.3f, 95%% bootstrap CI [%.3f, %.3f]\n",
                   names[mi], q ? "min" : "avg", sl, clo, chi);
            if (ff)
                fprintf(ff, "%s,%s,%.5f,%.5f,%.5f,%.6g,%.4g,%.6g,%s\n", names[mi], q ? "min" : "avg", sl,
                        clo, chi, cbest[mi], cbest[mi] * p.L, ic, o->adamw ? "adamw" : "sgd");
            if (checks && q == 0 && (strcmp(names[mi], "fp32") == 0 || strncmp(names[mi], "tah", 3) == 0) &&
                !(sl >= -0.65 && sl <= -0.35)) {
                printf("FAIL: %s slope %.3f outside [-0.65, -0.35]\n", names[mi], sl);
                fail = 1;
            }
        }
    }
    (void)slopes;
    if (fr)
        fclose(fr);
    if (fs)
        fclose(fs);
    if (ff)
        fclose(ff);
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
/* delta: relative bias and variance of the compressed gradient             */
/* ======================================================================== */
int cmd_delta(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_smooth(&p, (uint32_t)o->K, 1))
        return 1;
    const char *def =
        "fp32,fp16+bwd-none,tah2/1+bwd-none,tah3/2+bwd-none,tah4/3+bwd-none,tah5/4+bwd-none,"
        "tah6/5+bwd-none,tah8/7+bwd-none,tah2/1-sr+bwd-none,tah3/2-sr+bwd-none,tah4/3-sr+bwd-none,"
        "tah6/5-sr+bwd-none,tah4/3-tile+bwd-none,plain2+bwd-none,plain3+bwd-none,plain4+bwd-none,"
        "plain6+bwd-none,plain8+bwd-none,tah,tah-sr,plain4,fp32+bwd-fix6,fp32+bwd-fix4,aqsgd";
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
        fprintf(f, "method,fwd_bits_per_elem,bwd_bits_per_elem,alpha,grad2,rel_bias2,delta,sigma2,sigma2_rel\n");
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
                fprintf(f, "%s,%.4f,%.4f,%g,%.8g,%.8g,%.8g,%.8g,%.8g\n", names[mi], fb, bb, alphas[ai], gn,
                        bias / gn, delta, sigma2, sigma2 / gn);
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
    int nm = split_methods(o->methods, "fp32,fp16,tah,tah-tile,tah-sr,plain4,plain2,tah2/1,aqsgd", names, 16);
    int steps = o->steps > 0 ? o->steps : (o->quick ? 200 : 1000), every = 25;
    train_task *tt = calloc(nm, sizeof *tt);
    for (int i = 0; i < nm; i++) {
        if (sim_method_parse(names[i], &tt[i].m)) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
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
    return 0;
}
