/* SPDX-License-Identifier: MIT */
/* train_run.c - one run of tahq-train (train_cli.h): the pipeline trained
 * for a method and seed, its CSV of losses and message bytes, the
 * activation dumps and the per-stage timing rows. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "train_cli.h"
#include "tt_stats.h"

#ifdef TT_MPI
#include <mpi.h>

#include "tt_mpi.h"
#endif

int train_rank = 0, train_size = 1;

void train_say(const char *fmt, ...)
{
    if (train_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

int train_failed(void)
{
#ifdef TT_MPI
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
}

double train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_name(char *out, size_t n, const char *method, int K, uint64_t seed)
{
    char m[64];
    snprintf(m, sizeof m, "%s", method);
    for (char *p = m; *p; p++)
        if (*p == '/' || *p == '+')
            *p = *p == '/' ? '-' : '_';
    snprintf(out, n, "%s_k%d_s%llu", m, K, (unsigned long long)seed);
}

/* activation dumps of one run (tt_probe_fn's context) */
typedef struct dumper {
    char dir[4096];   /* DIR/RUN */
    tahq_config gate; /* the configuration whose outlier gate is reported */
    const tahq_config *gate_p;
    tt_act_stats *st; /* [K] statistics of boundary k in the step probed */
    int *have;        /* [K] boundary k probed by this process */
    char errbuf[4500];
} dumper;

static int probe(void *ctx, int k, int step, const float *y, int B, int T, int C, const char **err)
{
    dumper *dp = ctx;
    char path[4300];
    snprintf(path, sizeof path, "%s/act_b%d_step%d.npy", dp->dir, k, step);
    int e = tt_npy_write(path, B, T, C, y);
    if (e) {
        snprintf(dp->errbuf, sizeof dp->errbuf, "cannot write %s: %s", path, strerror(e));
        *err = dp->errbuf;
        return 1;
    }
    const char *se = NULL;
    /* a failed gate (e.g. a non-finite value) leaves its columns empty */
    if (tt_act_stats_compute(y, B, T, C, dp->gate_p, &dp->st[k], &se) && dp->st[k].tiles == 0 && se)
        fprintf(stderr, "tahq-train: step %d, boundary %d: outlier gate not run: %s\n", step, k,
                se);
    dp->have[k] = 1;
    return 0;
}

static int make_dir(const char *d)
{
    return mkdir(d, 0777) && errno != EEXIST;
}

/* AQ-SGD's default window set */
#define TT_AQSGD_WINDOWS 256

static void dumper_free(dumper *dp)
{
    free(dp->st);
    free(dp->have);
}

/* the statistics of one dump step: (MPI: gathered on rank 0,) a CSV row and
 * a line on stdout per boundary. 0, or 1 on an error. */
static int dump_stats(dumper *dp, FILE *stats, int K, int step, const char *gate_name)
{
#ifdef TT_MPI
    /* rank k probed boundary k (k < K-1) */
    const int nv = TT_STATS_NVAL;
    double *all = train_rank == 0 ? malloc(sizeof(double) * (size_t)nv * (size_t)K) : NULL;
    if ((train_rank == 0 && !all) ||
        tt_mpi_gather_f64((const double *)&dp->st[train_rank], nv, all)) {
        free(all);
        return 1;
    }
    if (train_rank == 0)
        for (int k = 0; k + 1 < K; k++) {
            memcpy(&dp->st[k], all + (size_t)k * nv, sizeof(tt_act_stats));
            dp->have[k] = 1;
        }
    free(all);
#endif
    if (train_rank != 0)
        return 0;
    for (int k = 0; k + 1 < K; k++) {
        if (!dp->have[k])
            continue;
        const tt_act_stats *s = &dp->st[k];
        char row[1024];
        tt_act_stats_row(row, sizeof row, step, k, gate_name, s);
        fprintf(stats, "%s\n", row);
        train_say(
            "activations step %d boundary %d: channel RMS min %.3g median %.3g max %.3g, |x| max "
            "%.3g, excess kurtosis %.3g, top channels",
            step, k, s->rms_min, s->rms_median, s->rms_max, s->absmax, s->kurtosis);
        for (int j = 0; j < TT_STATS_TOP; j++)
            train_say(" %d (%.2fx)", (int)s->top_ch[j], s->top_ratio[j]);
        if (s->tiles > 0)
            train_say("; %s gate: %.2f%% of tiles flagged, %.2f%% low", gate_name,
                      100 * s->flagged_share, 100 * s->low_share);
        train_say("\n");
    }
    fflush(stats);
    return 0;
}

static const char *const timing_header = "run,method,K,micro,batch,T,C,train_windows,aq_cache_"
                                         "bytes,step,step_s,tokens,fwd_bytes,bwd_bytes,"
                                         "aq_new_samples,stage,compute_fwd_s,compute_bwd_s,encode_"
                                         "s,decode_s,send_s,recv_s,swap_s,update_s,"
                                         "sync_s,sent_bytes_cum,sent_next_cum,sent_prev_cum";
#define TIMING_NV (TT_TIMES_N + 3)

int train_timing_open(train_cli *a)
{
    struct stat sb;
    int fresh = stat(a->timing, &sb) != 0 || sb.st_size == 0;
    a->timing_f = fopen(a->timing, "a");
    if (!a->timing_f) {
        fprintf(stderr, "tahq-train: cannot write %s: %s\n", a->timing, strerror(errno));
        return 1;
    }
    if (fresh)
        fprintf(a->timing_f, "%s\n", timing_header);
    return 0;
}

/* one step's rows of --timing (MPI: every rank calls it, rank 0 writes).
 * 0, or 1 on an error. */
static int timing_rows(const train_cli *a, const char *name, const char *method, const tt_opts *o,
                       const tt_run *r, int step, double step_s, uint64_t fb, uint64_t bb,
                       uint64_t nn, const double sent[3])
{
    const int K = o->K;
    double *v = malloc(sizeof(double) * TIMING_NV * (size_t)K);
    if (!v)
        return 1;
    for (int k = 0; k < K; k++) {
#ifdef TT_MPI
        if (k != train_rank)
            continue;
        double *w = v; /* this rank's stage, gathered below */
#else
        double *w = v + (size_t)k * TIMING_NV;
#endif
        tt_times t;
        tt_run_times(r, k, &t);
        const double tv[TIMING_NV] = {t.compute_fwd, t.compute_bwd, t.encode, t.decode,
                                      t.send,        t.recv,        t.swap,   t.update,
                                      t.sync,        sent[0],       sent[1],  sent[2]};
        memcpy(w, tv, sizeof tv);
    }
#ifdef TT_MPI
    double *all = train_rank == 0 ? malloc(sizeof(double) * TIMING_NV * (size_t)K) : NULL;
    if ((train_rank == 0 && !all) || tt_mpi_gather_f64(v, TIMING_NV, all)) {
        free(all);
        free(v);
        return 1;
    }
    if (train_rank == 0)
        memcpy(v, all, sizeof(double) * TIMING_NV * (size_t)K);
    free(all);
#endif
    if (a->timing_f) {
        const double cache = o->train_windows > 0 && !strncmp(method, "aqsgd", 5)
                                 ? (double)o->train_windows * o->cfg.T * o->cfg.C * 2
                                 : 0;
        for (int k = 0; k < K; k++) {
            const double *w = v + (size_t)k * TIMING_NV;
            fprintf(a->timing_f, "%s,%s,%d,%d,%d,%d,%d,%d,%.0f,%d,%.6f,%d,%llu,%llu,%llu,%d", name,
                    method, K, o->micro, o->batch, o->cfg.T, o->cfg.C, o->train_windows, cache,
                    step, step_s, o->micro * o->batch * o->cfg.T, (unsigned long long)fb,
                    (unsigned long long)bb, (unsigned long long)nn, k);
            for (int j = 0; j < TT_TIMES_N; j++)
                fprintf(a->timing_f, ",%.6f", w[j]);
#ifdef TT_MPI
            fprintf(a->timing_f, ",%.0f,%.0f,%.0f\n", w[TT_TIMES_N], w[TT_TIMES_N + 1],
                    w[TT_TIMES_N + 2]);
#else
            fprintf(a->timing_f, ",,,\n");
#endif
        }
        fflush(a->timing_f);
    }
    free(v);
    return 0;
}

/* A run's elapsed time and ETA after `done` of `steps` steps; for a sweep
 * (total runs, this is run idx) also the ETA of the whole sweep, assuming
 * the remaining runs take as long as this one. */
static void eta_text(char *buf, size_t n, double elapsed, int done, int steps, int idx, int total)
{
    const double per = elapsed / done, eta = per * (steps - done);
    int w = snprintf(buf, n, "%.0f s, eta %.0f s", elapsed, eta);
    if (total > 1 && w > 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, ", run %d/%d, sweep eta %.0f s", idx + 1, total,
                 eta + per * steps * (total - idx - 1));
}

/* One run between its steps. */
typedef struct run_state {
    const train_cli *a;
    const char *method;
    sim_method m;
    tt_opts o;
    const tt_data *d;
    char name[128], path[4096], tmp[4200];
    FILE *csv; /* rank 0 with --out: the run's CSV, written to tmp and renamed at the end */
    tt_run *r;
#ifdef TT_MPI
    tt_transport tr;
#endif
    dumper dp;
    FILE *stats;           /* rank 0 with --dump-activations: act_stats.csv */
    const char *gate_name; /* whose outlier gate the dumps report */
    int tty, idx, total;
    double t0, last_progress;
    /* AQ-SGD: steps with first visits, the other steps; binary32 bytes of first visits */
    uint64_t aq_steps[2], aq_fwd[2], aq_new_total, aq_new_bytes;
    int aq_last_new;
    double loss, vloss, first;
    uint64_t fb, bb;
} run_state;

/* a run that stops on an error after it started: close and free what it
 * opened, remove its unfinished CSV (tmp), and fail (train_failed) */
static int run_abandon(run_state *s)
{
    if (s->stats)
        fclose(s->stats);
    dumper_free(&s->dp);
    tt_run_free(s->r);
    if (s->csv) {
        fclose(s->csv);
        remove(s->tmp);
    }
    return train_failed();
}

enum { RUN_GO = 0, RUN_SKIP = 1, RUN_FAIL = 2 };

/* With --out: RUN_SKIP when the run's CSV exists (rank 0 decides and tells
 * the others), else its temporary file opened (rank 0); RUN_FAIL after a
 * message. */
static int run_open_csv(run_state *s)
{
    if (!s->a->out)
        return RUN_GO;
    snprintf(s->path, sizeof s->path, "%s/%s.csv", s->a->out, s->name);
    struct stat sb;
    int skip = stat(s->path, &sb) == 0;
#ifdef TT_MPI
    if (tt_mpi_bcast_int(&skip))
        return RUN_FAIL;
#endif
    if (skip) {
        train_say("run %s: %s exists, skipped\n", s->name, s->path);
        return RUN_SKIP;
    }
    snprintf(s->tmp, sizeof s->tmp, "%s.tmp", s->path);
    if (train_rank == 0) {
        s->csv = fopen(s->tmp, "w");
        if (!s->csv) {
            fprintf(stderr, "tahq-train: cannot write %s: %s\n", s->tmp, strerror(errno));
            return RUN_FAIL;
        }
        fprintf(s->csv, "step,lr,loss,val_loss,%s,fwd_bytes,bwd_bytes\n",
                s->o.bert ? "val_acc" : "val_bpb");
    }
    return RUN_GO;
}

/* The engine of the run (MPI: this rank's stage). 0, or 1 after a
 * message. */
static int run_start(run_state *s)
{
    const char *err = NULL;
#ifdef TT_MPI
    tt_mpi_set_wait_sleep(s->a->mpi_wait_sleep_us);
    if (tt_mpi_transport(&s->tr)) {
        fprintf(stderr, "tahq-train: out of memory\n");
        return 1;
    }
    s->r = tt_run_new(&s->o, &s->m, s->d, train_rank, train_rank, &s->tr, &err);
#else
    s->r = tt_run_new(&s->o, &s->m, s->d, 0, s->o.K - 1, NULL, &err);
#endif
    if (!s->r) {
        fprintf(stderr, "tahq-train: run %s: %s\n", s->name, err);
        if (s->csv) {
            fclose(s->csv);
            remove(s->tmp);
        }
        return 1;
    }
    return 0;
}

/* The run's setting on stdout: shape, parameters, the allocation's low
 * units, the window set, AQ-SGD's cache. */
static void run_describe(const run_state *s, uint64_t seed)
{
    const tt_opts *o = &s->o;
    const sim_method *m = &s->m;
    train_say(
        "run %s: %s, K=%d, C=%d L=%d H=%d T=%d, M=%d x B=%d, %d steps, seed %llu, %zu parameters\n",
        s->name, s->method, o->K, o->cfg.C, o->cfg.L, o->cfg.NH, o->cfg.T, o->micro, o->batch,
        o->steps, (unsigned long long)seed,
        o->bert ? tb_model_params(&o->bert_cfg) : tt_model_params(&o->cfg));
    uint64_t group, low = tt_low_units(m, (uint32_t)o->cfg.T, (uint32_t)o->cfg.C, &group);
    if (group && low == 0)
        train_say("note: %s allocates per %s: floor(%llu x (1 - r)) = 0 low-precision units, so "
                  "every unit gets the high bit width\n",
                  s->method, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "token" : "sequence",
                  (unsigned long long)group);
    if (o->train_windows > 0) {
        const int mb = o->micro * o->batch;
        train_say("window set: %d windows of %d bytes, %d per step: an epoch is %.4g steps\n",
                  o->train_windows, o->cfg.T + 1, mb, (double)o->train_windows / mb);
    }
    if (m->fwd == SIM_FWD_AQSGD)
        train_say(
            "aqsgd cache: %.2f MiB per boundary (%d windows x %d x %d binary16 values), held by "
            "the sender and by the receiver\n",
            (double)o->train_windows * o->cfg.T * o->cfg.C * 2 / 1048576.0, o->train_windows,
            o->cfg.T, o->cfg.C);
}

/* With --dump-activations: the run's folder, the statistics and their
 * CSV (rank 0). 0, or 1 after a message. */
static int run_open_dumps(run_state *s)
{
    const train_cli *a = s->a;
    dumper *dp = &s->dp;
    const int own_gate = s->m.fwd == SIM_FWD_TAH || s->m.fwd == SIM_FWD_PLAIN;
    s->gate_name = own_gate ? s->method : "tah";
    if (!a->dump_dir)
        return 0;
    snprintf(dp->dir, sizeof dp->dir, "%s/%s", a->dump_dir, s->name);
    dp->st = calloc((size_t)s->o.K, sizeof *dp->st);
    dp->have = calloc((size_t)s->o.K, sizeof *dp->have);
    if (own_gate)
        dp->gate = s->m.fwd_cfg;
    else
        tahq_config_default(&dp->gate); /* the method tah's */
    dp->gate_p = &dp->gate;
    int bad = !dp->st || !dp->have || make_dir(a->dump_dir) || make_dir(dp->dir);
    if (!bad && train_rank == 0) {
        char sp[4300];
        snprintf(sp, sizeof sp, "%s/act_stats.csv", dp->dir);
        s->stats = fopen(sp, "w");
        bad = !s->stats;
        if (s->stats)
            fprintf(s->stats, "%s\n", tt_act_stats_header());
    }
    if (bad) {
        fprintf(stderr, "tahq-train: cannot write to %s: %s\n", dp->dir, strerror(errno));
        return 1;
    }
    train_say("activation dumps: %s (gate of %s)\n", dp->dir, s->gate_name);
    return 0;
}

/* Step t's line on stdout (every --print-every steps, at evaluations and
 * at the last) and, when stdout is no terminal, the progress on stderr. */
static void run_step_lines(run_state *s, int t, double lr, int ev, double v5)
{
    const train_cli *a = s->a;
    const int steps = s->o.steps;
    if (a->print_every > 0 && ((t + 1) % a->print_every == 0 || t + 1 == steps || ev)) {
        train_say("step %d/%d loss %.4f lr %.3e", t + 1, steps, s->loss, lr);
        if (ev)
            train_say(s->o.bert ? " val %.4f (accuracy %.4f)" : " val %.4f (%.3f bits/byte)",
                      s->vloss, v5);
        if (s->tty) {
            char eta[160];
            eta_text(eta, sizeof eta, train_now() - s->t0, t + 1, steps, s->idx, s->total);
            train_say("  [%s]", eta);
        }
        train_say("\n");
        fflush(stdout);
    }
    /* a log file or a pipe gets no ETA on its step lines (they stay
     * comparable between runs); the progress goes to stderr instead,
     * every --progress seconds and at the last step */
    if (!s->tty && train_rank == 0 && a->progress_s >= 0) {
        const double now = train_now();
        if (now - s->last_progress >= a->progress_s || t + 1 == steps) {
            char eta[160];
            eta_text(eta, sizeof eta, now - s->t0, t + 1, steps, s->idx, s->total);
            fprintf(stderr, "tahq-train: %s step %d/%d loss %.4f [%s]\n", s->name, t + 1, steps,
                    s->loss, eta);
            s->last_progress = now;
        }
    }
}

/* Step t: train, dump, count the bytes, evaluate, write its rows and
 * lines. 0, or the run's failure (train_failed). */
static int run_step(run_state *s, int t)
{
    const train_cli *a = s->a;
    const tt_opts *o = &s->o;
    const char *err = NULL;
    double lr = tt_lr(o, t);
    const int dump = a->dump_dir && (t == 0 || t + 1 == o->steps ||
                                     (a->dump_every > 0 && (t + 1) % a->dump_every == 0));
    if (dump) {
        memset(s->dp.have, 0, sizeof(int) * (size_t)o->K);
        tt_run_probe_next(s->r, probe, &s->dp);
    }
    const double ts0 = train_now();
    s->loss = tt_run_step(s->r, &err);
    const double step_s = train_now() - ts0;
    if (isnan(s->loss) && err) {
        fprintf(stderr, "tahq-train: run %s, step %d: %s\n", s->name, t + 1, err);
        return run_abandon(s);
    }
    if (t == 0)
        s->first = s->loss;
    if (dump && dump_stats(&s->dp, s->stats, o->K, t + 1, s->gate_name))
        return train_failed();
    tt_run_bytes(s->r, &s->fb, &s->bb);
    uint64_t nn = 0, nb = 0;
    tt_run_aq_counts(s->r, &nn, &nb);
#ifdef TT_MPI
    uint64_t sums[4] = {s->fb, s->bb, nn, nb};
    if (tt_mpi_sum_u64(sums, 4))
        return train_failed();
    s->fb = sums[0], s->bb = sums[1], nn = sums[2], nb = sums[3];
#endif
    if (s->m.fwd == SIM_FWD_AQSGD) {
        s->aq_steps[nn == 0]++;
        s->aq_fwd[nn == 0] += s->fb;
        s->aq_new_total += nn;
        s->aq_new_bytes += nb;
        if (nn)
            s->aq_last_new = t + 1;
    }
    int ev = (a->eval_every > 0 && (t + 1) % a->eval_every == 0) || t + 1 == o->steps;
    if (ev)
        s->vloss = tt_run_eval(s->r, a->eval_windows);
    /* the fifth CSV column: bits per byte, or the masked-token accuracy */
    const double v5 = o->bert ? tt_run_eval_accuracy(s->r) : s->vloss / log(2.0);
    if (a->timing) {
        /* payload bytes sent so far: in all, to the next rank, to the previous */
        double sent[3] = {0, 0, 0};
#ifdef TT_MPI
        sent[0] = (double)tt_mpi_sent_bytes(&s->tr);
        sent[1] = (double)tt_mpi_sent_to(&s->tr, train_rank + 1);
        sent[2] = (double)tt_mpi_sent_to(&s->tr, train_rank - 1);
#endif
        if (timing_rows(a, s->name, s->method, o, s->r, t + 1, step_s, s->fb, s->bb, nn, sent))
            return run_abandon(s);
    }
    if (s->csv) {
        if (ev)
            fprintf(s->csv, "%d,%.6e,%.6f,%.6f,%.6f,%llu,%llu\n", t + 1, lr, s->loss, s->vloss, v5,
                    (unsigned long long)s->fb, (unsigned long long)s->bb);
        else
            fprintf(s->csv, "%d,%.6e,%.6f,,,%llu,%llu\n", t + 1, lr, s->loss,
                    (unsigned long long)s->fb, (unsigned long long)s->bb);
    }
    run_step_lines(s, t, lr, ev, v5);
    return 0;
}

/* After the last step: free the engine, close the dumps and the CSV
 * (renamed into place), print the summary. 0, or the run's failure. */
static int run_finish(run_state *s)
{
    const tt_opts *o = &s->o;
    const double el = train_now() - s->t0;
    const double r_acc = tt_run_eval_accuracy(s->r);
    const double tokens_per_step = (double)o->micro * o->batch * o->cfg.T;
    tt_run_free(s->r);
    dumper_free(&s->dp);
    if (s->stats && fclose(s->stats)) {
        fprintf(stderr, "tahq-train: cannot write %s/act_stats.csv\n", s->dp.dir);
        return train_failed();
    }
#ifdef TT_MPI
    tt_mpi_transport_free(&s->tr);
#endif
    if (s->csv) {
        if (fclose(s->csv) || rename(s->tmp, s->path)) {
            fprintf(stderr, "tahq-train: cannot write %s: %s\n", s->path, strerror(errno));
            remove(s->tmp);
            return train_failed();
        }
    }
    train_say(o->bert
                  ? "run %s: loss %.4f -> %.4f, val %.4f (accuracy %.4f), wire bytes per step fwd "
                    "%llu bwd %llu, %.1f s, %.0f tokens/s%s%s\n"
                  : "run %s: loss %.4f -> %.4f, val %.4f (%.3f bits/byte), wire bytes per step fwd "
                    "%llu bwd %llu, %.1f s, %.0f tokens/s%s%s\n",
              s->name, s->first, s->loss, s->vloss, o->bert ? r_acc : s->vloss / log(2.0),
              (unsigned long long)s->fb, (unsigned long long)s->bb, el,
              tokens_per_step * o->steps / el, s->csv ? ", wrote " : "", s->csv ? s->path : "");
    if (s->m.fwd == SIM_FWD_AQSGD) {
        train_say(
            "run %s: aqsgd wire: %llu first visits sent in binary32 (%llu bytes), %llu bytes of "
            "delta messages; forward bytes per step: %.0f over the %llu steps with first visits "
            "(the last: step %d), %.0f over the %llu steps without\n",
            s->name, (unsigned long long)s->aq_new_total, (unsigned long long)s->aq_new_bytes,
            (unsigned long long)(s->aq_fwd[0] + s->aq_fwd[1] - s->aq_new_bytes),
            s->aq_steps[0] ? (double)s->aq_fwd[0] / (double)s->aq_steps[0] : 0.0,
            (unsigned long long)s->aq_steps[0], s->aq_last_new,
            s->aq_steps[1] ? (double)s->aq_fwd[1] / (double)s->aq_steps[1] : 0.0,
            (unsigned long long)s->aq_steps[1]);
    }
    fflush(stdout);
    return 0;
}

int train_one_run(const train_cli *a, const char *method, uint64_t seed, const tt_data *d, int tty,
                  int idx, int total)
{
    run_state *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "tahq-train: out of memory\n");
        return train_failed();
    }
    const char *err = tt_method_parse(method, &s->m);
    if (err) {
        fprintf(stderr, "tahq-train: method '%s': %s\n", method, err);
        free(s);
        return 1;
    }
    s->a = a;
    s->method = method;
    s->d = d;
    s->tty = tty;
    s->idx = idx;
    s->total = total;
    s->loss = s->vloss = s->first = NAN;
    s->o = a->o;
    s->o.seed = seed;
    s->o.train_windows = a->train_windows >= 0       ? a->train_windows
                         : s->m.fwd == SIM_FWD_AQSGD ? TT_AQSGD_WINDOWS
                                                     : 0;
    run_name(s->name, sizeof s->name, method, s->o.K, seed);
    int rc = 0;
    const int open = run_open_csv(s);
    if (open == RUN_FAIL || (open == RUN_GO && run_start(s)))
        rc = train_failed();
    else if (open == RUN_GO) {
        run_describe(s, seed);
        if (run_open_dumps(s))
            rc = run_abandon(s);
        fflush(stdout);
        s->t0 = s->last_progress = train_now();
        for (int t = 0; t < s->o.steps && !rc; t++)
            rc = run_step(s, t);
        if (!rc)
            rc = run_finish(s);
    }
    free(s);
    return rc;
}
