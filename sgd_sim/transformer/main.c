/* SPDX-License-Identifier: MIT */
/* tahq-train: a byte-level transformer language model trained through a
 * pipeline of K stages whose boundaries go through tahq's codecs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tahq_datadir.h"
#include "tt_stats.h"
#include "tt_train.h"
#include "wordpiece.h"

#ifdef TT_MPI
/* tahq-train-mpi: the same program, one MPI rank per stage; rank 0 prints
 * and writes the results. */
#include <mpi.h>

#include "tt_mpi.h"
#endif
#include <stdarg.h>

static int g_rank = 0, g_size = 1; /* MPI rank and size (0 and 1 without MPI) */

/* stdout, from rank 0 only */
static void say(const char *fmt, ...)
{
    if (g_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* a runtime error inside a run: with MPI the other ranks would wait for
 * ever, so the job is aborted */
static int run_failed(void)
{
#ifdef TT_MPI
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
}

#ifndef TAHQ_TRAIN_VERSION
#define TAHQ_TRAIN_VERSION "unknown"
#endif
/* --data when neither the option nor $TAHQ_TRAIN_DATA is given: a folder of
 * the current directory, never a path of the build or source tree (the
 * installed program has neither) */
#define TAHQ_TRAIN_DATA "shakespeare"
#ifndef TAHQ_TRAIN_MODEL
#define TAHQ_TRAIN_MODEL "build/minilm"
#endif

static const char *const help_text =
    "usage: tahq-train [options]\n"
    "Train a byte-level decoder-only transformer through a K-stage pipeline (one process, GPipe);\n"
    "every stage boundary encodes the forward activation and the backward gradient into a\n"
    "message with the method's codecs and the next stage computes with the decoded tensor.\n"
    "\n"
    "run:\n"
    "  --method LIST     comma list of methods (tah): fp32 fp16 tah tah-tile tah-gain tah-sr tahH/L plainB\n"
    "                    aqsgd (tah variants also -tauX: the gate threshold, inf = no gate),\n"
    "                    each with optional +bwd-none, +bwd-fixB, +bwd-tah; compressed\n"
    "                    methods default to +bwd-fix6, fp32 to +bwd-none\n"
    "  --seed LIST       comma list of seeds (1); each (method, seed) is one run\n"
    "  --steps N         training steps (200)\n"
    "  --stages K        pipeline stages, 1..blocks (4)\n"
    "  --micro M         micro-batches per step (4)\n"
    "  --batch B         sequences per micro-batch (2)\n"
    "  --lr X            peak AdamW step size (1e-3)\n"
    "  --warmup N        warm-up steps (steps/10)\n"
    "  --schedule S      linear (default), cosine or const: decay to lr/10 after the warm-up\n"
    "  --weight-decay X  decoupled weight decay on matrices and embeddings (0.01)\n"
    "  --clip X          gradient-norm clip per stage and for the tied embedding (1.0; 0 = none)\n"
    "  --tied-exchange X fp32 (default): the output head is tied to the input embedding and the\n"
    "                    first and last stage exchange their binary32 gradients of it every step\n"
    "                    (V x C x 4 bytes each way); none: the head is untied (it starts as a copy\n"
    "                    of the embedding and learns from its own gradient): no exchange\n"
    "  --mpi-wait W      tahq-train-mpi: poll (default: MPI's blocking calls, which poll the\n"
    "                    transport and keep the core busy while a rank waits) or sleep (test the\n"
    "                    request every 50 us and sleep in between: a waiting rank frees its core)\n"
    "  --codec-threads N encode and decode each tahq message on N threads (1; the parallel\n"
    "                    codec of tahq_parallel.h writes the same bytes for every N); pays\n"
    "                    off for large boundary tensors only: at the default shape (80K\n"
    "                    values a message) the codec is under 1% of a step and 2 threads\n"
    "                    are slower\n"
    "model:\n"
    "  --channels C      (320)   --layers L (4)   --heads H (5)   --context T (128)\n"
    "  --model M         bytes (the byte-level decoder above, default) or minilm: the\n"
    "                    pretrained BERT encoder of scripts/fetch_model.sh (6 blocks, C 384,\n"
    "                    12 heads; --channels/--layers/--heads ignored) fine-tuned as a masked\n"
    "                    language model on the corpus's WordPiece ids: samples of --context T\n"
    "                    tokens ([CLS] T-2 ids [SEP]), 15%% of the T-2 masked (80/10/10); the\n"
    "                    loss and val_loss are masked-token cross-entropies, val_acc (in the\n"
    "                    CSV's fifth column) the masked-token accuracy\n"
    "  --model-dir DIR   the minilm folder (" TAHQ_TRAIN_MODEL ")\n"
    "  --init I          minilm: pretrained (default) or random (the control)\n"
    "data:\n"
    "  --data DIR        folder with train.bin and val.bin ($TAHQ_TRAIN_DATA, else\n"
    "                    ./" TAHQ_TRAIN_DATA "; fetch_corpus.sh DIR builds them: scripts/ of the\n"
    "                    sources, share/tahq/ of an install)\n"
    "  --train-file F, --val-file F   other byte files instead\n"
    "  --train-windows N a fixed set of N training windows (from the seed), visited in epochs\n"
    "                    (a new order each epoch), for every method; default: a fresh random\n"
    "                    window per sample, except aqsgd (its per-sample cache needs a set): 256\n"
    "  --eval-every N    validation every N steps and at the last (steps/10)\n"
    "  --eval-windows N  validation windows of T bytes (64)\n"
    "output:\n"
    "  --out DIR         write DIR/METHOD_kK_sSEED.csv per run as it finishes; runs whose file\n"
    "                    exists are skipped (resume); without --out nothing is written\n"
    "  --print-every N   print every N-th step's loss (1; 0 = only the summary); on a\n"
    "                    terminal each printed step shows the elapsed time and the ETA\n"
    "  --progress S      when standard output is not a terminal (a log file, a pipe): a\n"
    "                    line with the step, elapsed time and ETA on standard error every S\n"
    "                    seconds (10; 0 = every step; off = never)\n"
    "  --timing FILE     append one row per step and stage to the CSV FILE (header when new):\n"
    "                    the step's wall time, message bytes, and where each stage's time went\n"
    "                    (compute, encode, decode, send, receive, tied-embedding exchange, update,\n"
    "                    loss broadcast) and, with MPI, the payload bytes its rank has sent so far;\n"
    "                    the loss CSV (--out) stays free of times\n"
    "  --dump-activations DIR  at steps 1, the last and every --dump-every N: each boundary's\n"
    "                    forward activation of micro-batch 0 as DIR/RUN/act_bK_stepS.npy (float32\n"
    "                    [B, T, C]) and a row of DIR/RUN/act_stats.csv (channel RMS, kurtosis,\n"
    "                    outlier channels, the outlier gate's flagged tiles, low-precision tiles)\n"
    "  --dump-every N    also dump every N-th step (0: only the first and the last)\n"
    "  --help, --version\n"
    "Several processes: mpirun -np K tahq-train-mpi [options] runs stage k on rank k (K = the\n"
    "number of ranks) and sends the same messages with MPI; rank 0 prints and writes the results.\n"
    "Exit status: 0 success, 1 runtime error, 2 usage error.\n";

static int usage_error(const char *fmt, const char *arg)
{
    if (g_rank != 0)
        return 2;
    fprintf(stderr, "tahq-train: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (tahq-train --help)\n");
    return 2;
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return 1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return 1;
    *out = v;
    return 0;
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *n = len;
    return buf;
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct cli {
    tt_opts o;
    const char *methods, *seeds, *data, *train_file, *val_file, *out;
    int eval_every, eval_windows, print_every;
    double progress_s; /* stderr progress when stdout is no terminal; < 0: off */
    int train_windows; /* -1: not given */
    const char *dump_dir;
    int dump_every;
    const char *timing;
    FILE *timing_f; /* rank 0 */
    int mpi_wait_sleep_us; /* --mpi-wait sleep: 50; poll: 0 */
    const char *model, *model_dir, *init;
} cli;

/* activation dumps of one run (tt_probe_fn's context) */
typedef struct dumper {
    char dir[4096];          /* DIR/RUN */
    tahq_config gate;        /* the configuration whose outlier gate is reported */
    const tahq_config *gate_p;
    tt_act_stats *st;        /* [K] statistics of boundary k in the step probed */
    int *have;               /* [K] boundary k probed by this process */
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
        fprintf(stderr, "tahq-train: step %d, boundary %d: outlier gate not run: %s\n", step, k, se);
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

/* a run that stops on an error after it started: close and free what it
 * opened, remove its unfinished CSV (tmp), and fail (run_failed) */
static int run_abandon(FILE *stats, dumper *dp, tt_run *r, FILE *csv, const char *tmp)
{
    if (stats)
        fclose(stats);
    dumper_free(dp);
    tt_run_free(r);
    if (csv) {
        fclose(csv);
        remove(tmp);
    }
    return run_failed();
}

/* the statistics of one dump step: (MPI: gathered on rank 0,) a CSV row and
 * a line on stdout per boundary. 0, or 1 on an error. */
static int dump_stats(dumper *dp, FILE *stats, int K, int step, const char *gate_name)
{
#ifdef TT_MPI
    /* rank k probed boundary k (k < K-1) */
    const int nv = TT_STATS_NVAL;
    double *all = g_rank == 0 ? malloc(sizeof(double) * (size_t)nv * (size_t)K) : NULL;
    if ((g_rank == 0 && !all) || tt_mpi_gather_f64((const double *)&dp->st[g_rank], nv, all)) {
        free(all);
        return 1;
    }
    if (g_rank == 0)
        for (int k = 0; k + 1 < K; k++) {
            memcpy(&dp->st[k], all + (size_t)k * nv, sizeof(tt_act_stats));
            dp->have[k] = 1;
        }
    free(all);
#endif
    if (g_rank != 0)
        return 0;
    for (int k = 0; k + 1 < K; k++) {
        if (!dp->have[k])
            continue;
        const tt_act_stats *s = &dp->st[k];
        char row[1024];
        tt_act_stats_row(row, sizeof row, step, k, gate_name, s);
        fprintf(stats, "%s\n", row);
        say("activations step %d boundary %d: channel RMS min %.3g median %.3g max %.3g, |x| max "
            "%.3g, excess kurtosis %.3g, top channels",
            step, k, s->rms_min, s->rms_median, s->rms_max, s->absmax, s->kurtosis);
        for (int j = 0; j < TT_STATS_TOP; j++)
            say(" %d (%.2fx)", (int)s->top_ch[j], s->top_ratio[j]);
        if (s->tiles > 0)
            say("; %s gate: %.2f%% of tiles flagged, %.2f%% low", gate_name, 100 * s->flagged_share,
                100 * s->low_share);
        say("\n");
    }
    fflush(stats);
    return 0;
}

static const char *const timing_header =
    "run,method,K,micro,batch,T,C,train_windows,aq_cache_bytes,step,step_s,tokens,fwd_bytes,bwd_bytes,"
    "aq_new_samples,stage,compute_fwd_s,compute_bwd_s,encode_s,decode_s,send_s,recv_s,swap_s,update_s,"
    "sync_s,sent_bytes_cum,sent_next_cum,sent_prev_cum";
#define TIMING_NV (TT_TIMES_N + 3)

/* one step's rows of --timing (MPI: every rank calls it, rank 0 writes).
 * 0, or 1 on an error. */
static int timing_rows(const cli *a, const char *name, const char *method, const tt_opts *o,
                       const tt_run *r, int step, double step_s, uint64_t fb, uint64_t bb,
                       uint64_t nn, const double sent[3])
{
    const int K = o->K;
    double *v = malloc(sizeof(double) * TIMING_NV * (size_t)K);
    if (!v)
        return 1;
    for (int k = 0; k < K; k++) {
#ifdef TT_MPI
        if (k != g_rank)
            continue;
        double *w = v; /* this rank's stage, gathered below */
#else
        double *w = v + (size_t)k * TIMING_NV;
#endif
        tt_times t;
        tt_run_times(r, k, &t);
        const double tv[TIMING_NV] = {t.compute_fwd, t.compute_bwd, t.encode, t.decode, t.send,
                                      t.recv, t.swap, t.update, t.sync, sent[0], sent[1],
                                      sent[2]};
        memcpy(w, tv, sizeof tv);
    }
#ifdef TT_MPI
    double *all = g_rank == 0 ? malloc(sizeof(double) * TIMING_NV * (size_t)K) : NULL;
    if ((g_rank == 0 && !all) || tt_mpi_gather_f64(v, TIMING_NV, all)) {
        free(all);
        free(v);
        return 1;
    }
    if (g_rank == 0)
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
                    method, K, o->micro, o->batch, o->cfg.T, o->cfg.C, o->train_windows, cache, step,
                    step_s, o->micro * o->batch * o->cfg.T, (unsigned long long)fb,
                    (unsigned long long)bb, (unsigned long long)nn, k);
            for (int j = 0; j < TT_TIMES_N; j++)
                fprintf(a->timing_f, ",%.6f", w[j]);
#ifdef TT_MPI
            fprintf(a->timing_f, ",%.0f,%.0f,%.0f\n", w[TT_TIMES_N], w[TT_TIMES_N + 1], w[TT_TIMES_N + 2]);
#else
            fprintf(a->timing_f, ",,,\n");
#endif
        }
        fflush(a->timing_f);
    }
    free(v);
    return 0;
}

/* one run; returns 0, or 1 on a runtime error */
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

static int one_run(const cli *a, const char *method, uint64_t seed, const tt_data *d, int tty,
                   int idx, int total)
{
    sim_method m;
    const char *err = tt_method_parse(method, &m);
    if (err) {
        fprintf(stderr, "tahq-train: method '%s': %s\n", method, err);
        return 1;
    }
    tt_opts o = a->o;
    o.seed = seed;
    o.train_windows = a->train_windows >= 0 ? a->train_windows
                      : m.fwd == SIM_FWD_AQSGD ? TT_AQSGD_WINDOWS
                                               : 0;
    char name[128], path[4096], tmp[4200];
    run_name(name, sizeof name, method, o.K, seed);
    FILE *csv = NULL;
    if (a->out) {
        /* rank 0 decides whether the run is done already, and tells the others */
        snprintf(path, sizeof path, "%s/%s.csv", a->out, name);
        struct stat sb;
        int skip = stat(path, &sb) == 0;
#ifdef TT_MPI
        if (tt_mpi_bcast_int(&skip))
            return run_failed();
#endif
        if (skip) {
            say("run %s: %s exists, skipped\n", name, path);
            return 0;
        }
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        if (g_rank == 0) {
            csv = fopen(tmp, "w");
            if (!csv) {
                fprintf(stderr, "tahq-train: cannot write %s: %s\n", tmp, strerror(errno));
                return run_failed();
            }
            fprintf(csv, "step,lr,loss,val_loss,%s,fwd_bytes,bwd_bytes\n",
                    o.bert ? "val_acc" : "val_bpb");
        }
    }
#ifdef TT_MPI
    tt_transport tr;
    tt_mpi_set_wait_sleep(a->mpi_wait_sleep_us);
    if (tt_mpi_transport(&tr)) {
        fprintf(stderr, "tahq-train: out of memory\n");
        return run_failed();
    }
    tt_run *r = tt_run_new(&o, &m, d, g_rank, g_rank, &tr, &err);
#else
    tt_run *r = tt_run_new(&o, &m, d, 0, o.K - 1, NULL, &err);
#endif
    if (!r) {
        fprintf(stderr, "tahq-train: run %s: %s\n", name, err);
        if (csv) {
            fclose(csv);
            remove(tmp);
        }
        return run_failed();
    }
    say("run %s: %s, K=%d, C=%d L=%d H=%d T=%d, M=%d x B=%d, %d steps, seed %llu, %zu parameters\n",
           name, method, o.K, o.cfg.C, o.cfg.L, o.cfg.NH, o.cfg.T, o.micro, o.batch, o.steps,
           (unsigned long long)seed, o.bert ? tb_model_params(&o.bert_cfg) : tt_model_params(&o.cfg));
    uint64_t group, low = tt_low_units(&m, (uint32_t)o.cfg.T, (uint32_t)o.cfg.C, &group);
    if (group && low == 0)
        say("note: %s allocates per %s: floor(%llu x (1 - r)) = 0 low-precision units, so "
               "every unit gets the high bit width\n",
               method, m.fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "token" : "sequence",
               (unsigned long long)group);
    if (o.train_windows > 0) {
        const int mb = o.micro * o.batch;
        say("window set: %d windows of %d bytes, %d per step: an epoch is %.4g steps\n", o.train_windows,
            o.cfg.T + 1, mb, (double)o.train_windows / mb);
    }
    if (m.fwd == SIM_FWD_AQSGD)
        say("aqsgd cache: %.2f MiB per boundary (%d windows x %d x %d binary16 values), held by "
            "the sender and by the receiver\n",
            (double)o.train_windows * o.cfg.T * o.cfg.C * 2 / 1048576.0, o.train_windows, o.cfg.T,
            o.cfg.C);
    dumper dp;
    memset(&dp, 0, sizeof dp);
    FILE *stats = NULL;
    if (a->dump_dir) {
        snprintf(dp.dir, sizeof dp.dir, "%s/%s", a->dump_dir, name);
        dp.st = calloc((size_t)o.K, sizeof *dp.st);
        dp.have = calloc((size_t)o.K, sizeof *dp.have);
        if (m.fwd == SIM_FWD_TAH || m.fwd == SIM_FWD_PLAIN)
            dp.gate = m.fwd_cfg;
        else
            tahq_config_default(&dp.gate); /* the method tah's */
        dp.gate_p = &dp.gate;
        int bad = !dp.st || !dp.have || make_dir(a->dump_dir) || make_dir(dp.dir);
        if (!bad && g_rank == 0) {
            char sp[4300];
            snprintf(sp, sizeof sp, "%s/act_stats.csv", dp.dir);
            stats = fopen(sp, "w");
            bad = !stats;
            if (stats)
                fprintf(stats, "%s\n", tt_act_stats_header());
        }
        if (bad) {
            fprintf(stderr, "tahq-train: cannot write to %s: %s\n", dp.dir, strerror(errno));
            return run_abandon(stats, &dp, r, csv, tmp);
        }
        say("activation dumps: %s (gate of %s)\n", dp.dir,
            m.fwd == SIM_FWD_TAH || m.fwd == SIM_FWD_PLAIN ? method : "tah");
    }
    fflush(stdout);
    const double t0 = now_s();
    double last_progress = t0;
    /* AQ-SGD: steps with first visits, the other steps; binary32 bytes of first visits */
    uint64_t aq_steps[2] = {0, 0}, aq_fwd[2] = {0, 0}, aq_new_total = 0, aq_new_bytes = 0;
    int aq_last_new = 0;
    const double tokens_per_step = (double)o.micro * o.batch * o.cfg.T;
    double loss = NAN, vloss = NAN, first = NAN;
    uint64_t fb = 0, bb = 0;
    for (int t = 0; t < o.steps; t++) {
        double lr = tt_lr(&o, t);
        const int dump = a->dump_dir && (t == 0 || t + 1 == o.steps ||
                                         (a->dump_every > 0 && (t + 1) % a->dump_every == 0));
        if (dump) {
            memset(dp.have, 0, sizeof(int) * (size_t)o.K);
            tt_run_probe_next(r, probe, &dp);
        }
        const double ts0 = now_s();
        loss = tt_run_step(r, &err);
        const double step_s = now_s() - ts0;
        if (isnan(loss) && err) {
            fprintf(stderr, "tahq-train: run %s, step %d: %s\n", name, t + 1, err);
            return run_abandon(stats, &dp, r, csv, tmp);
        }
        if (t == 0)
            first = loss;
        if (dump && dump_stats(&dp, stats, o.K, t + 1, m.fwd == SIM_FWD_TAH || m.fwd == SIM_FWD_PLAIN ? method : "tah"))
            return run_failed();
        tt_run_bytes(r, &fb, &bb);
        uint64_t nn = 0, nb = 0;
        tt_run_aq_counts(r, &nn, &nb);
#ifdef TT_MPI
        uint64_t sums[4] = {fb, bb, nn, nb};
        if (tt_mpi_sum_u64(sums, 4))
            return run_failed();
        fb = sums[0], bb = sums[1], nn = sums[2], nb = sums[3];
#endif
        if (m.fwd == SIM_FWD_AQSGD) {
            aq_steps[nn == 0]++;
            aq_fwd[nn == 0] += fb;
            aq_new_total += nn;
            aq_new_bytes += nb;
            if (nn)
                aq_last_new = t + 1;
        }
        int ev = (a->eval_every > 0 && (t + 1) % a->eval_every == 0) || t + 1 == o.steps;
        if (ev)
            vloss = tt_run_eval(r, a->eval_windows);
        /* the fifth CSV column: bits per byte, or the masked-token accuracy */
        const double v5 = o.bert ? tt_run_eval_accuracy(r) : vloss / log(2.0);
        if (a->timing) {
            /* payload bytes sent so far: in all, to the next rank, to the previous */
            double sent[3] = {0, 0, 0};
#ifdef TT_MPI
            sent[0] = (double)tt_mpi_sent_bytes(&tr);
            sent[1] = (double)tt_mpi_sent_to(&tr, g_rank + 1);
            sent[2] = (double)tt_mpi_sent_to(&tr, g_rank - 1);
#endif
            if (timing_rows(a, name, method, &o, r, t + 1, step_s, fb, bb, nn, sent))
                return run_abandon(stats, &dp, r, csv, tmp);
        }
        if (csv) {
            if (ev)
                fprintf(csv, "%d,%.6e,%.6f,%.6f,%.6f,%llu,%llu\n", t + 1, lr, loss, vloss, v5,
                        (unsigned long long)fb, (unsigned long long)bb);
            else
                fprintf(csv, "%d,%.6e,%.6f,,,%llu,%llu\n", t + 1, lr, loss, (unsigned long long)fb,
                        (unsigned long long)bb);
        }
        if (a->print_every > 0 && ((t + 1) % a->print_every == 0 || t + 1 == o.steps || ev)) {
            say("step %d/%d loss %.4f lr %.3e", t + 1, o.steps, loss, lr);
            if (ev)
                say(o.bert ? " val %.4f (accuracy %.4f)" : " val %.4f (%.3f bits/byte)", vloss, v5);
            if (tty) {
                char eta[160];
                eta_text(eta, sizeof eta, now_s() - t0, t + 1, o.steps, idx, total);
                say("  [%s]", eta);
            }
            say("\n");
            fflush(stdout);
        }
        /* a log file or a pipe gets no ETA on its step lines (they stay
         * comparable between runs); the progress goes to stderr instead,
         * every --progress seconds and at the last step */
        if (!tty && g_rank == 0 && a->progress_s >= 0) {
            const double now = now_s();
            if (now - last_progress >= a->progress_s || t + 1 == o.steps) {
                char eta[160];
                eta_text(eta, sizeof eta, now - t0, t + 1, o.steps, idx, total);
                fprintf(stderr, "tahq-train: %s step %d/%d loss %.4f [%s]\n", name, t + 1, o.steps,
                        loss, eta);
                last_progress = now;
            }
        }
    }
    const double el = now_s() - t0;
    const double r_acc = tt_run_eval_accuracy(r);
    tt_run_free(r);
    dumper_free(&dp);
    if (stats && fclose(stats)) {
        fprintf(stderr, "tahq-train: cannot write %s/act_stats.csv\n", dp.dir);
        return run_failed();
    }
#ifdef TT_MPI
    tt_mpi_transport_free(&tr);
#endif
    if (csv) {
        if (fclose(csv) || rename(tmp, path)) {
            fprintf(stderr, "tahq-train: cannot write %s: %s\n", path, strerror(errno));
            remove(tmp);
            return run_failed();
        }
    }
    say(o.bert ? "run %s: loss %.4f -> %.4f, val %.4f (accuracy %.4f), wire bytes per step fwd "
                 "%llu bwd %llu, %.1f s, %.0f tokens/s%s%s\n"
               : "run %s: loss %.4f -> %.4f, val %.4f (%.3f bits/byte), wire bytes per step fwd "
                 "%llu bwd %llu, %.1f s, %.0f tokens/s%s%s\n",
           name, first, loss, vloss, o.bert ? r_acc : vloss / log(2.0), (unsigned long long)fb,
           (unsigned long long)bb, el, tokens_per_step * o.steps / el, csv ? ", wrote " : "",
           csv ? path : "");
    if (m.fwd == SIM_FWD_AQSGD) {
        say("run %s: aqsgd wire: %llu first visits sent in binary32 (%llu bytes), %llu bytes of "
            "delta messages; forward bytes per step: %.0f over the %llu steps with first visits "
            "(the last: step %d), %.0f over the %llu steps without\n",
            name, (unsigned long long)aq_new_total, (unsigned long long)aq_new_bytes,
            (unsigned long long)(aq_fwd[0] + aq_fwd[1] - aq_new_bytes),
            aq_steps[0] ? (double)aq_fwd[0] / (double)aq_steps[0] : 0.0, (unsigned long long)aq_steps[0],
            aq_last_new,
            aq_steps[1] ? (double)aq_fwd[1] / (double)aq_steps[1] : 0.0,
            (unsigned long long)aq_steps[1]);
    }
    fflush(stdout);
    return 0;
}

static int tahq_train(int argc, char **argv)
{
    cli a;
    memset(&a, 0, sizeof a);
    /* C = 320 (5 tiles of 64 per token, 5 heads of 64): the smallest width
     * at which tile allocation at r = 0.8 gives a token a low tile
     * (floor(5 * 0.2) = 1); at C = 256 it would give none */
    a.o.cfg = (tt_config){256, 320, 5, 128, 4};
    a.o.K = 4, a.o.micro = 4, a.o.batch = 2, a.o.steps = 200, a.o.warmup = -1;
    a.o.schedule = TT_SCHED_LINEAR;
    a.o.lr = 1e-3, a.o.beta1 = 0.9, a.o.beta2 = 0.999, a.o.eps = 1e-8;
    a.o.weight_decay = 0.01, a.o.clip = 1.0, a.o.codec_threads = 1;
    const char *data_env = getenv("TAHQ_TRAIN_DATA");
    a.progress_s = 10;
    a.methods = "tah", a.seeds = "1", a.data = data_env && *data_env ? data_env : TAHQ_TRAIN_DATA;
    a.eval_every = -1, a.eval_windows = 64, a.print_every = 1;
    a.train_windows = -1;
    a.dump_every = 0;
    a.model = "bytes", a.model_dir = TAHQ_TRAIN_MODEL, a.init = "pretrained";
    int stages_set = 0;

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            say("%s", help_text);
            return 0;
        }
        if (!strcmp(o, "--version")) {
            say("tahq-train %s%s\n", TAHQ_TRAIN_VERSION, g_size > 1 ? " (MPI)" : "");
            return 0;
        }
        if (strncmp(o, "--", 2) != 0)
            return usage_error("unexpected argument '%s'", o);
        if (i + 1 >= argc)
            return usage_error("option %s needs a value", o);
        const char *v = argv[++i];
        int bad = 0;
        if (!strcmp(o, "--method") || !strcmp(o, "--methods"))
            a.methods = v;
        else if (!strcmp(o, "--seed") || !strcmp(o, "--seeds"))
            a.seeds = v;
        else if (!strcmp(o, "--steps"))
            bad = parse_int(v, 1, 100000000, &a.o.steps);
        else if (!strcmp(o, "--stages"))
            bad = parse_int(v, 1, 256, &a.o.K), stages_set = 1;
        else if (!strcmp(o, "--micro"))
            bad = parse_int(v, 1, 4096, &a.o.micro);
        else if (!strcmp(o, "--batch"))
            bad = parse_int(v, 1, 4096, &a.o.batch);
        else if (!strcmp(o, "--lr"))
            bad = parse_double(v, 0, 10, &a.o.lr);
        else if (!strcmp(o, "--warmup"))
            bad = parse_int(v, 0, 100000000, &a.o.warmup);
        else if (!strcmp(o, "--schedule")) {
            if (!strcmp(v, "linear"))
                a.o.schedule = TT_SCHED_LINEAR;
            else if (!strcmp(v, "cosine"))
                a.o.schedule = TT_SCHED_COSINE;
            else if (!strcmp(v, "const"))
                a.o.schedule = TT_SCHED_CONST;
            else
                return usage_error("--schedule must be linear, cosine or const, not '%s'", v);
        } else if (!strcmp(o, "--weight-decay"))
            bad = parse_double(v, 0, 10, &a.o.weight_decay);
        else if (!strcmp(o, "--clip"))
            bad = parse_double(v, 0, 1e30, &a.o.clip);
        else if (!strcmp(o, "--tied-exchange")) {
            if (!strcmp(v, "fp32"))
                a.o.untied_head = 0;
            else if (!strcmp(v, "none"))
                a.o.untied_head = 1;
            else
                return usage_error("--tied-exchange must be fp32 or none, not '%s'", v);
        } else if (!strcmp(o, "--mpi-wait")) {
            if (!strcmp(v, "poll"))
                a.mpi_wait_sleep_us = 0;
            else if (!strcmp(v, "sleep"))
                a.mpi_wait_sleep_us = 50;
            else
                return usage_error("--mpi-wait must be poll or sleep, not '%s'", v);
        } else if (!strcmp(o, "--codec-threads"))
            bad = parse_int(v, 1, (int)TAHQ_JOBS_MAX, &a.o.codec_threads);
        else if (!strcmp(o, "--channels"))
            bad = parse_int(v, 1, 8192, &a.o.cfg.C);
        else if (!strcmp(o, "--layers"))
            bad = parse_int(v, 1, 256, &a.o.cfg.L);
        else if (!strcmp(o, "--heads"))
            bad = parse_int(v, 1, 8192, &a.o.cfg.NH);
        else if (!strcmp(o, "--context"))
            bad = parse_int(v, 1, 8192, &a.o.cfg.T);
        else if (!strcmp(o, "--data"))
            a.data = v;
        else if (!strcmp(o, "--train-file"))
            a.train_file = v;
        else if (!strcmp(o, "--val-file"))
            a.val_file = v;
        else if (!strcmp(o, "--eval-every"))
            bad = parse_int(v, 0, 100000000, &a.eval_every);
        else if (!strcmp(o, "--train-windows"))
            bad = parse_int(v, 1, 100000000, &a.train_windows);
        else if (!strcmp(o, "--eval-windows"))
            bad = parse_int(v, 1, 1000000, &a.eval_windows);
        else if (!strcmp(o, "--out"))
            a.out = v;
        else if (!strcmp(o, "--dump-activations"))
            a.dump_dir = v;
        else if (!strcmp(o, "--dump-every"))
            bad = parse_int(v, 0, 100000000, &a.dump_every);
        else if (!strcmp(o, "--timing"))
            a.timing = v;
        else if (!strcmp(o, "--model"))
            a.model = v;
        else if (!strcmp(o, "--model-dir"))
            a.model_dir = v;
        else if (!strcmp(o, "--init"))
            a.init = v;
        else if (!strcmp(o, "--print-every"))
            bad = parse_int(v, 0, 100000000, &a.print_every);
        else if (!strcmp(o, "--progress")) {
            if (!strcmp(v, "off"))
                a.progress_s = -1;
            else
                bad = parse_double(v, 0, 1e9, &a.progress_s);
        }
        else
            return usage_error("unknown option '%s'", o);
        if (bad) {
            if (g_rank == 0)
                fprintf(stderr, "tahq-train: bad value '%s' for %s (tahq-train --help)\n", v, o);
            return 2;
        }
    }
    if (strcmp(a.model, "bytes") && strcmp(a.model, "minilm"))
        return usage_error("--model must be bytes or minilm, not '%s'", a.model);
    if (strcmp(a.init, "pretrained") && strcmp(a.init, "random"))
        return usage_error("--init must be pretrained or random, not '%s'", a.init);
    tb_pretrained bert;
    wp_tokenizer wtk;
    memset(&bert, 0, sizeof bert);
    memset(&wtk, 0, sizeof wtk);
    if (!strcmp(a.model, "minilm")) {
        char berr[1200], tkp[4200];
        snprintf(tkp, sizeof tkp, "%s/tokenizer.json", a.model_dir);
        if (tb_pretrained_open(&bert, a.model_dir, berr, sizeof berr) ||
            wp_load(&wtk, tkp, berr, sizeof berr)) {
            tb_pretrained_close(&bert);
            if (g_rank == 0)
                fprintf(stderr, "tahq-train: %s (fetch the model with: scripts/fetch_model.sh %s)\n",
                        berr, a.model_dir);
            return 1;
        }
        a.o.bert = 1;
        a.o.bert_cfg = bert.cfg;
        a.o.bert_init = strcmp(a.init, "random") ? &bert : NULL;
        a.o.cfg = (tt_config){bert.cfg.V, bert.cfg.C, bert.cfg.NH, a.o.cfg.T, bert.cfg.L};
        a.o.tok_cls = wtk.cls, a.o.tok_sep = wtk.sep, a.o.tok_mask = wtk.mask;
        a.o.mask_per_seq = (int)lround(0.15 * (a.o.cfg.T - 2)); /* BERT's 15% */
        if (a.o.cfg.T < 9 || a.o.cfg.T > bert.cfg.P) {
            char msg[96];
            snprintf(msg, sizeof msg, "--context must be in 9..%d for minilm", bert.cfg.P);
            tb_pretrained_close(&bert);
            wp_free(&wtk);
            return usage_error("%s", msg);
        }
    }
    const char *cerr = tt_config_check(&a.o.cfg);
    if (cerr)
        return usage_error("%s", cerr);
#ifdef TT_MPI
    /* one rank per stage */
    if (!stages_set)
        a.o.K = g_size;
    if (a.o.K != g_size) {
        if (g_rank == 0)
            fprintf(stderr, "tahq-train: --stages %d needs mpirun -np %d (this job has %d ranks)\n",
                    a.o.K, a.o.K, g_size);
        return 2;
    }
#else
    if (!stages_set && a.o.K > a.o.cfg.L)
        a.o.K = a.o.cfg.L;
#endif
    if (a.o.K > a.o.cfg.L) {
        if (g_rank == 0)
            fprintf(stderr, "tahq-train: %d stages exceed --layers %d (each stage needs a block)\n",
                    a.o.K, a.o.cfg.L);
        return 2;
    }
    if (a.o.warmup < 0)
        a.o.warmup = a.o.steps / 10;
    if (a.eval_every < 0)
        a.eval_every = a.o.steps >= 10 ? a.o.steps / 10 : 1;
    if ((a.train_file != NULL) != (a.val_file != NULL))
        return usage_error("%s", "--train-file and --val-file go together");
    /* the method and seed lists, checked before any run starts */
    char mlist[1024], slist[1024];
    snprintf(mlist, sizeof mlist, "%s", a.methods);
    snprintf(slist, sizeof slist, "%s", a.seeds);
    const char *mv[64];
    uint64_t sv[64];
    int nm = 0, ns = 0;
    for (char *tok = strtok(mlist, ","); tok; tok = strtok(NULL, ",")) {
        sim_method m;
        const char *err = tt_method_parse(tok, &m);
        if (err) {
            if (g_rank == 0)
                fprintf(stderr, "tahq-train: method '%s': %s\n", tok, err);
            return 2;
        }
        if (nm == 64)
            return usage_error("%s", "at most 64 methods");
        mv[nm++] = tok;
    }
    for (char *tok = strtok(slist, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(tok, &end, 10);
        if (errno || end == tok || *end || tok[0] == '-')
            return usage_error("bad seed '%s'", tok);
        if (ns == 64)
            return usage_error("%s", "at most 64 seeds");
        sv[ns++] = (uint64_t)s;
    }
    if (!nm || !ns)
        return usage_error("%s", "empty --method or --seed list");

    /* data */
    char tp[4096], vp[4096];
    if (a.train_file) {
        snprintf(tp, sizeof tp, "%s", a.train_file);
        snprintf(vp, sizeof vp, "%s", a.val_file);
    } else {
        snprintf(tp, sizeof tp, "%s/train.bin", a.data);
        snprintf(vp, sizeof vp, "%s/val.bin", a.data);
    }
    tt_data d;
    uint8_t *tb = read_file(tp, &d.n_train), *vb = read_file(vp, &d.n_val);
    int missing = !tb || !vb, read_errno = errno;
#ifdef TT_MPI
    /* every rank reads the corpus; any rank without it stops them all */
    int any = missing;
    MPI_Allreduce(&missing, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !missing) {
        free(tb);
        free(vb);
        return 1;
    }
#endif
    if (missing) {
        const char *miss = !tb ? tp : vp;
        if (a.train_file) {
            fprintf(stderr, "tahq-train: cannot read %s: %s\n", miss, strerror(read_errno));
        } else {
            char fetch[3 * 4096 + 16];
            if (tahq_data_path("fetch_corpus.sh", fetch, sizeof fetch) != 0)
                snprintf(fetch, sizeof fetch, "scripts/fetch_corpus.sh");
            fprintf(stderr,
                    "tahq-train: corpus not found: %s (--data DIR or $TAHQ_TRAIN_DATA names the "
                    "folder, default ./%s; build it with: sh %s %s)\n",
                    miss, TAHQ_TRAIN_DATA, fetch, a.data);
        }
        free(tb);
        free(vb);
        return 1;
    }
    d.train = tb, d.val = vb;
    if (d.n_train < (size_t)a.o.cfg.T + 2 || d.n_val < (size_t)a.o.cfg.T + 2) {
        fprintf(stderr, "tahq-train: %s must hold more than context + 1 = %d bytes\n",
                d.n_train < (size_t)a.o.cfg.T + 2 ? tp : vp, a.o.cfg.T + 1);
        free(tb);
        free(vb);
        return 1;
    }
    if (g_rank == 0 && a.out && mkdir(a.out, 0777) && errno != EEXIST) {
        fprintf(stderr, "tahq-train: cannot create %s: %s\n", a.out, strerror(errno));
        free(tb);
        free(vb);
        return run_failed();
    }
    if (g_rank == 0 && a.timing) {
        struct stat sb;
        int fresh = stat(a.timing, &sb) != 0 || sb.st_size == 0;
        a.timing_f = fopen(a.timing, "a");
        if (!a.timing_f) {
            fprintf(stderr, "tahq-train: cannot write %s: %s\n", a.timing, strerror(errno));
            free(tb);
            free(vb);
            return run_failed();
        }
        if (fresh)
            fprintf(a.timing_f, "%s\n", timing_header);
    }
    int *tids = NULL, *vids = NULL;
    if (a.o.bert) {
        tids = wp_encode_text(&wtk, (const char *)tb, d.n_train, &d.n_train_ids);
        vids = wp_encode_text(&wtk, (const char *)vb, d.n_val, &d.n_val_ids);
        if (!tids || !vids || d.n_train_ids < (size_t)a.o.cfg.T || d.n_val_ids < (size_t)a.o.cfg.T) {
            fprintf(stderr, "tahq-train: the corpus has too few WordPiece ids (or out of memory)\n");
            free(tids);
            free(vids);
            free(tb);
            free(vb);
            return run_failed();
        }
        d.train_ids = tids, d.val_ids = vids;
        say("minilm (%s): %s, %zu parameters; corpus: %zu training and %zu validation WordPiece "
            "ids; %d of each sample's %d tokens masked\n",
            a.o.bert_init ? "pretrained" : "random initialisation", a.model_dir,
            tb_model_params(&a.o.bert_cfg), d.n_train_ids, d.n_val_ids, a.o.mask_per_seq, a.o.cfg.T);
    }
    sim_blas_init();
    const int tty = g_rank == 0 && isatty(STDOUT_FILENO);
    int rc = 0;
    for (int i = 0; i < nm && !rc; i++)
        for (int j = 0; j < ns && !rc; j++)
            rc = one_run(&a, mv[i], sv[j], &d, tty, i * ns + j, nm * ns);
    free(tb);
    free(vb);
    free(tids);
    free(vids);
    tb_pretrained_close(&bert);
    wp_free(&wtk);
    if (a.timing_f && fclose(a.timing_f)) {
        fprintf(stderr, "tahq-train: cannot write %s\n", a.timing);
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
#ifdef TT_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int rc = tahq_train(argc, argv);
    MPI_Finalize();
    return rc;
#else
    return tahq_train(argc, argv);
#endif
}
