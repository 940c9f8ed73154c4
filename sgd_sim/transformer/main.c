/* SPDX-License-Identifier: MIT */
/* tahq-train: a byte-level transformer language model trained through a
 * pipeline of K stages whose boundaries go through tahq's codecs. Here:
 * the option table, the help made from it, the checks of the options, the
 * corpus and the model; one run is train_run.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tahq_datadir.h"
#include "tahq_options.h"
#include "train_cli.h"
#include "tt_bert.h"
#include "wordpiece.h"

#ifdef TT_MPI
/* tahq-train-mpi: the same program, one MPI rank per stage; rank 0 prints
 * and writes the results. */
#include <mpi.h>
#endif

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

/* The column of the options' help texts. */
enum { OPTION_COLUMN = 20 };

static const char *const schedules[] = {"linear", "cosine", "const",
                                        NULL};                      /* tt_schedule's order */
static const char *const tied_exchanges[] = {"fp32", "none", NULL}; /* untied_head 0, 1 */
static const char *const mpi_waits[] = {"poll", "sleep", NULL};
static const char *const models[] = {"bytes", "minilm", NULL};
static const char *const inits[] = {"pretrained", "random", NULL};

/* --progress: seconds, or off (-1) */
static int option_progress(const tahq_option *opt, const char *val)
{
    if (strcmp(val, "off") == 0) {
        *(double *)opt->dst = -1;
        return 0;
    }
    return tahq_option_double(opt, val);
}

/* The option tables, one per section of the help, into a. */
typedef struct option_tables {
    tahq_option run[16], model[8], data[8], output[12];
} option_tables;

static void run_options(train_cli *a, tahq_option *t)
{
    const tahq_option table[] = {
        {.name = "--method",
         .alias = "--methods",
         .arg = "LIST",
         .dst = &a->methods,
         .help =
             "comma list of methods (tah): fp32 fp16 tah tah-tile tah-gain tah-sr tahH/L plainB\n"
             "aqsgd (tah variants also -tauX: the gate threshold, inf = no gate),\n"
             "each with optional +bwd-none, +bwd-fixB, +bwd-tah; compressed\n"
             "methods default to +bwd-fix6, fp32 to +bwd-none"},
        {.name = "--seed",
         .alias = "--seeds",
         .arg = "LIST",
         .dst = &a->seeds,
         .help = "comma list of seeds (1); each (method, seed) is one run"},
        {.name = "--steps",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->o.steps,
         .lo = 1,
         .hi = 100000000,
         .help = "training steps (200)"},
        {.name = "--stages",
         .arg = "K",
         .set = tahq_option_int,
         .dst = &a->o.K,
         .lo = 1,
         .hi = 256,
         .help = "pipeline stages, 1..blocks (4)"},
        {.name = "--micro",
         .arg = "M",
         .set = tahq_option_int,
         .dst = &a->o.micro,
         .lo = 1,
         .hi = 4096,
         .help = "micro-batches per step (4)"},
        {.name = "--batch",
         .arg = "B",
         .set = tahq_option_int,
         .dst = &a->o.batch,
         .lo = 1,
         .hi = 4096,
         .help = "sequences per micro-batch (2)"},
        {.name = "--lr",
         .arg = "X",
         .set = tahq_option_double,
         .dst = &a->o.lr,
         .lo = 0,
         .hi = 10,
         .help = "peak AdamW step size (1e-3)"},
        {.name = "--warmup",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->o.warmup,
         .lo = 0,
         .hi = 100000000,
         .help = "warm-up steps (steps/10)"},
        {.name = "--schedule",
         .arg = "S",
         .set = tahq_option_choice,
         .dst = &a->schedule,
         .choices = schedules,
         .help = "linear (default), cosine or const: decay to lr/10 after the warm-up"},
        {.name = "--weight-decay",
         .arg = "X",
         .set = tahq_option_double,
         .dst = &a->o.weight_decay,
         .lo = 0,
         .hi = 10,
         .help = "decoupled weight decay on matrices and embeddings (0.01)"},
        {.name = "--clip",
         .arg = "X",
         .set = tahq_option_double,
         .dst = &a->o.clip,
         .lo = 0,
         .hi = 1e30,
         .help = "gradient-norm clip per stage and for the tied embedding (1.0; 0 = none)"},
        {.name = "--tied-exchange",
         .arg = "X",
         .set = tahq_option_choice,
         .dst = &a->o.untied_head,
         .choices = tied_exchanges,
         .help = "fp32 (default): the output head is tied to the input embedding and the\n"
                 "first and last stage exchange their binary32 gradients of it every step\n"
                 "(V x C x 4 bytes each way); none: the head is untied (it starts as a copy\n"
                 "of the embedding and learns from its own gradient): no exchange"},
        {.name = "--mpi-wait",
         .arg = "W",
         .set = tahq_option_choice,
         .dst = &a->mpi_wait,
         .choices = mpi_waits,
         .help = "tahq-train-mpi: poll (default: MPI's blocking calls, which poll the\n"
                 "transport and keep the core busy while a rank waits) or sleep (test the\n"
                 "request every 50 us and sleep in between: a waiting rank frees its core)"},
        {.name = "--codec-threads",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->o.codec_threads,
         .lo = 1,
         .hi = TAHQ_JOBS_MAX,
         .help = "encode and decode each tahq message on N threads (1; the parallel\n"
                 "codec of tahq_parallel.h writes the same bytes for every N); pays\n"
                 "off for large boundary tensors only: at the default shape (80K\n"
                 "values a message) the codec is under 1% of a step and 2 threads\n"
                 "are slower"},
        {.name = NULL},
    };
    _Static_assert(sizeof table <= sizeof((option_tables *)0)->run,
                   "option_tables.run is too small");
    memcpy(t, table, sizeof table);
}

static void model_options(train_cli *a, tahq_option *t)
{
    const tahq_option table[] = {
        /* the shape's four options share one help line */
        {.name = "--channels",
         .arg = "C",
         .set = tahq_option_int,
         .dst = &a->o.cfg.C,
         .lo = 1,
         .hi = 8192,
         .help = "(320)   --layers L (4)   --heads H (5)   --context T (128)"},
        {.name = "--layers",
         .arg = "L",
         .set = tahq_option_int,
         .dst = &a->o.cfg.L,
         .lo = 1,
         .hi = 256},
        {.name = "--heads",
         .arg = "H",
         .set = tahq_option_int,
         .dst = &a->o.cfg.NH,
         .lo = 1,
         .hi = 8192},
        {.name = "--context",
         .arg = "T",
         .set = tahq_option_int,
         .dst = &a->o.cfg.T,
         .lo = 1,
         .hi = 8192},
        {.name = "--model",
         .arg = "M",
         .dst = &a->model,
         .help = "bytes (the byte-level decoder above, default) or minilm: the\n"
                 "pretrained BERT encoder of scripts/fetch_model.sh (6 blocks, C 384,\n"
                 "12 heads; --channels/--layers/--heads ignored) fine-tuned as a masked\n"
                 "language model on the corpus's WordPiece ids: samples of --context T\n"
                 "tokens ([CLS] T-2 ids [SEP]), 15% of the T-2 masked (80/10/10); the\n"
                 "loss and val_loss are masked-token cross-entropies, val_acc (in the\n"
                 "CSV's fifth column) the masked-token accuracy"},
        {.name = "--model-dir",
         .arg = "DIR",
         .dst = &a->model_dir,
         .help = "the minilm folder (" TAHQ_TRAIN_MODEL ")"},
        {.name = "--init",
         .arg = "I",
         .dst = &a->init,
         .help = "minilm: pretrained (default) or random (the control)"},
        {.name = NULL},
    };
    _Static_assert(sizeof table <= sizeof((option_tables *)0)->model,
                   "option_tables.model is too small");
    memcpy(t, table, sizeof table);
}

static void data_options(train_cli *a, tahq_option *t)
{
    const tahq_option table[] = {
        {.name = "--data",
         .arg = "DIR",
         .dst = &a->data,
         .help = "folder with train.bin and val.bin ($TAHQ_TRAIN_DATA, else\n"
                 "./" TAHQ_TRAIN_DATA "; fetch_corpus.sh DIR builds them: scripts/ of the\n"
                 "sources, share/tahq/ of an install)"},
        /* the two files share one help line, its text three spaces on */
        {.name = "--train-file",
         .arg = "F",
         .dst = &a->train_file,
         .usage = "--train-file F, --val-file F",
         .help = " other byte files instead"},
        {.name = "--val-file", .arg = "F", .dst = &a->val_file},
        {.name = "--train-windows",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->train_windows,
         .lo = 1,
         .hi = 100000000,
         .help = "a fixed set of N training windows (from the seed), visited in epochs\n"
                 "(a new order each epoch), for every method; default: a fresh random\n"
                 "window per sample, except aqsgd (its per-sample cache needs a set): 256"},
        {.name = "--eval-every",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->eval_every,
         .lo = 0,
         .hi = 100000000,
         .help = "validation every N steps and at the last (steps/10)"},
        {.name = "--eval-windows",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->eval_windows,
         .lo = 1,
         .hi = 1000000,
         .help = "validation windows of T bytes (64)"},
        {.name = NULL},
    };
    _Static_assert(sizeof table <= sizeof((option_tables *)0)->data,
                   "option_tables.data is too small");
    memcpy(t, table, sizeof table);
}

static void output_options(train_cli *a, tahq_option *t)
{
    const tahq_option table[] = {
        {.name = "--out",
         .arg = "DIR",
         .dst = &a->out,
         .help = "write DIR/METHOD_kK_sSEED.csv per run as it finishes; runs whose file\n"
                 "exists are skipped (resume); without --out nothing is written"},
        {.name = "--print-every",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->print_every,
         .lo = 0,
         .hi = 100000000,
         .help = "print every N-th step's loss (1; 0 = only the summary); on a\n"
                 "terminal each printed step shows the elapsed time and the ETA"},
        {.name = "--progress",
         .arg = "S",
         .set = option_progress,
         .dst = &a->progress_s,
         .lo = 0,
         .hi = 1e9,
         .help = "when standard output is not a terminal (a log file, a pipe): a\n"
                 "line with the step, elapsed time and ETA on standard error every S\n"
                 "seconds (10; 0 = every step; off = never)"},
        {.name = "--timing",
         .arg = "FILE",
         .dst = &a->timing,
         .help = "append one row per step and stage to the CSV FILE (header when new):\n"
                 "the step's wall time, message bytes, and where each stage's time went\n"
                 "(compute, encode, decode, send, receive, tied-embedding exchange, update,\n"
                 "loss broadcast) and, with MPI, the payload bytes its rank has sent so far;\n"
                 "the loss CSV (--out) stays free of times"},
        {.name = "--dump-activations",
         .arg = "DIR",
         .dst = &a->dump_dir,
         .help = "at steps 1, the last and every --dump-every N: each boundary's\n"
                 "forward activation of micro-batch 0 as DIR/RUN/act_bK_stepS.npy (float32\n"
                 "[B, T, C]) and a row of DIR/RUN/act_stats.csv (channel RMS, kurtosis,\n"
                 "outlier channels, the outlier gate's flagged tiles, low-precision tiles)"},
        {.name = "--dump-every",
         .arg = "N",
         .set = tahq_option_int,
         .dst = &a->dump_every,
         .lo = 0,
         .hi = 100000000,
         .help = "also dump every N-th step (0: only the first and the last)"},
        {.name = "--help",
         .alias = "-h",
         .dst = &a->help,
         .stops = 1,
         .usage = "--help, --version",
         .help = ""},
        {.name = "--version", .dst = &a->version, .stops = 1},
        {.name = NULL},
    };
    _Static_assert(sizeof table <= sizeof((option_tables *)0)->output,
                   "option_tables.output is too small");
    memcpy(t, table, sizeof table);
}

static void option_tables_of(train_cli *a, option_tables *t)
{
    run_options(a, t->run);
    model_options(a, t->model);
    data_options(a, t->data);
    output_options(a, t->output);
}

static void print_help(FILE *f)
{
    train_cli a;
    option_tables t;
    option_tables_of(&a, &t);
    fprintf(
        f, "usage: tahq-train [options]\n"
           "Train a byte-level decoder-only transformer through a K-stage pipeline (one process, "
           "GPipe);\n"
           "every stage boundary encodes the forward activation and the backward gradient into a\n"
           "message with the method's codecs and the next stage computes with the decoded tensor.\n"
           "\n");
    const struct {
        const char *title;
        const tahq_option *table;
    } sections[] = {{"run", t.run}, {"model", t.model}, {"data", t.data}, {"output", t.output}};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        fprintf(f, "%s:\n", sections[i].title);
        tahq_options_help(f, sections[i].table, OPTION_COLUMN);
    }
    fprintf(
        f,
        "Several processes: mpirun -np K tahq-train-mpi [options] runs stage k on rank k (K = the\n"
        "number of ranks) and sends the same messages with MPI; rank 0 prints and writes the "
        "results.\n"
        "Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    if (train_rank != 0)
        return 2;
    fprintf(stderr, "tahq-train: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (tahq-train --help)\n");
    return 2;
}

/* "NAME must be A, B or C, not 'VAL'" as a usage error */
static int choice_error(const char *name, const char *const *choices, const char *val)
{
    char text[64], msg[160];
    tahq_option_choices_text(choices, text, sizeof text);
    snprintf(msg, sizeof msg, "%s must be %s, not '%s'", name, text, val);
    return usage_error("%s", msg);
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
static void cli_defaults(train_cli *a)
{
    memset(a, 0, sizeof *a);
    /* C = 320 (5 tiles of 64 per token, 5 heads of 64): the smallest width
     * at which tile allocation at r = 0.8 gives a token a low tile
     * (floor(5 * 0.2) = 1); at C = 256 it would give none */
    a->o.cfg = (tt_config){256, 320, 5, 128, 4};
    a->o.K = 0; /* not given: 4, or the number of ranks (cli_check_stages) */
    a->o.micro = 4, a->o.batch = 2, a->o.steps = 200, a->o.warmup = -1;
    a->schedule = TT_SCHED_LINEAR;
    a->o.lr = 1e-3, a->o.beta1 = 0.9, a->o.beta2 = 0.999, a->o.eps = 1e-8;
    a->o.weight_decay = 0.01, a->o.clip = 1.0, a->o.codec_threads = 1;
    const char *data_env = getenv("TAHQ_TRAIN_DATA");
    a->progress_s = 10;
    a->methods = "tah", a->seeds = "1",
    a->data = data_env && *data_env ? data_env : TAHQ_TRAIN_DATA;
    a->eval_every = -1, a->eval_windows = 64, a->print_every = 1;
    a->train_windows = -1;
    a->dump_every = 0;
    a->model = "bytes", a->model_dir = TAHQ_TRAIN_MODEL, a->init = "pretrained";
}

/* The options into a: -1 to go on, or the exit status (after the help,
 * the version or a message). */
static int cli_parse(train_cli *a, int argc, char **argv)
{
    option_tables t;
    option_tables_of(a, &t);
    const tahq_option *const tables[] = {t.run, t.model, t.data, t.output, NULL};
    tahq_options_at at;
    switch (tahq_options_parse(tables, argc, argv, 1, &at)) {
    case TAHQ_OPTIONS_OK:
        break;
    case TAHQ_OPTIONS_STOPPED:
        if (a->help && train_rank == 0)
            print_help(stdout);
        else
            train_say("tahq-train %s%s\n", TAHQ_TRAIN_VERSION, train_size > 1 ? " (MPI)" : "");
        return 0;
    case TAHQ_OPTIONS_POSITIONAL:
        return usage_error("unexpected argument '%s'", at.arg);
    case TAHQ_OPTIONS_UNKNOWN: /* every option takes a value: a last one lacks it first */
        return at.index + 1 >= argc ? usage_error("option %s needs a value", at.arg)
                                    : usage_error("unknown option '%s'", at.arg);
    case TAHQ_OPTIONS_NO_VALUE:
        return usage_error("option %s needs a value", at.arg);
    case TAHQ_OPTIONS_TWICE: /* the strict rules only, not used here */
    case TAHQ_OPTIONS_FLAG_VALUE:
        return usage_error("bad option '%s'", at.arg);
    case TAHQ_OPTIONS_BAD_VALUE:
        if (at.opt->choices)
            return choice_error(at.arg, at.opt->choices, at.val);
        if (train_rank == 0)
            fprintf(stderr, "tahq-train: bad value '%s' for %s (tahq-train --help)\n", at.val,
                    at.arg);
        return 2;
    }
    a->o.schedule = (tt_schedule)a->schedule;
    a->mpi_wait_sleep_us = a->mpi_wait ? 50 : 0;
    if (tahq_choice_index(models, a->model) < 0)
        return choice_error("--model", models, a->model);
    if (tahq_choice_index(inits, a->init) < 0)
        return choice_error("--init", inits, a->init);
    return -1;
}

/* --model minilm: the pretrained encoder and its tokenizer, and the model
 * options that follow from them. 0, or the exit status after a message. */
static int load_minilm(train_cli *a, tb_pretrained *bert, wp_tokenizer *wtk)
{
    char berr[1200], tkp[4200];
    snprintf(tkp, sizeof tkp, "%s/tokenizer.json", a->model_dir);
    if (tb_pretrained_open(bert, a->model_dir, berr, sizeof berr) ||
        wp_load(wtk, tkp, berr, sizeof berr)) {
        tb_pretrained_close(bert);
        if (train_rank == 0)
            fprintf(stderr, "tahq-train: %s (fetch the model with: scripts/fetch_model.sh %s)\n",
                    berr, a->model_dir);
        return 1;
    }
    a->o.bert = 1;
    a->o.bert_cfg = bert->cfg;
    a->o.bert_init = strcmp(a->init, "random") ? bert : NULL;
    a->o.cfg = (tt_config){bert->cfg.V, bert->cfg.C, bert->cfg.NH, a->o.cfg.T, bert->cfg.L};
    a->o.tok_cls = wtk->cls, a->o.tok_sep = wtk->sep, a->o.tok_mask = wtk->mask;
    a->o.mask_per_seq = (int)lround(0.15 * (a->o.cfg.T - 2)); /* BERT's 15% */
    if (a->o.cfg.T < 9 || a->o.cfg.T > bert->cfg.P) {
        char msg[96];
        snprintf(msg, sizeof msg, "--context must be in 9..%d for minilm", bert->cfg.P);
        return usage_error("%s", msg);
    }
    return 0;
}

/* The shape, the stages (one MPI rank each) and the defaults that follow
 * from the steps. 0, or the exit status after a message. */
static int check_shape(train_cli *a)
{
    const char *cerr = tt_config_check(&a->o.cfg);
    if (cerr)
        return usage_error("%s", cerr);
    const int stages_set = a->o.K != 0;
    if (!stages_set)
        a->o.K = 4;
#ifdef TT_MPI
    /* one rank per stage */
    if (!stages_set)
        a->o.K = train_size;
    if (a->o.K != train_size) {
        if (train_rank == 0)
            fprintf(stderr, "tahq-train: --stages %d needs mpirun -np %d (this job has %d ranks)\n",
                    a->o.K, a->o.K, train_size);
        return 2;
    }
#else
    if (!stages_set && a->o.K > a->o.cfg.L)
        a->o.K = a->o.cfg.L;
#endif
    if (a->o.K > a->o.cfg.L) {
        if (train_rank == 0)
            fprintf(stderr, "tahq-train: %d stages exceed --layers %d (each stage needs a block)\n",
                    a->o.K, a->o.cfg.L);
        return 2;
    }
    if (a->o.warmup < 0)
        a->o.warmup = a->o.steps / 10;
    if (a->eval_every < 0)
        a->eval_every = a->o.steps >= 10 ? a->o.steps / 10 : 1;
    if ((a->train_file != NULL) != (a->val_file != NULL))
        return usage_error("%s", "--train-file and --val-file go together");
    return 0;
}

/* The method and seed lists, checked before any run starts. */
typedef struct run_lists {
    char mlist[1024], slist[1024]; /* the lists, cut into their items */
    const char *mv[64];
    uint64_t sv[64];
    int nm, ns;
} run_lists;

/* 0, or the exit status after a message. */
static int parse_lists(const train_cli *a, run_lists *l)
{
    snprintf(l->mlist, sizeof l->mlist, "%s", a->methods);
    snprintf(l->slist, sizeof l->slist, "%s", a->seeds);
    l->nm = l->ns = 0;
    for (char *tok = strtok(l->mlist, ","); tok; tok = strtok(NULL, ",")) {
        sim_method m;
        const char *err = tt_method_parse(tok, &m);
        if (err) {
            if (train_rank == 0)
                fprintf(stderr, "tahq-train: method '%s': %s\n", tok, err);
            return 2;
        }
        if (l->nm == 64)
            return usage_error("%s", "at most 64 methods");
        l->mv[l->nm++] = tok;
    }
    for (char *tok = strtok(l->slist, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(tok, &end, 10);
        if (errno || end == tok || *end || tok[0] == '-')
            return usage_error("bad seed '%s'", tok);
        if (l->ns == 64)
            return usage_error("%s", "at most 64 seeds");
        l->sv[l->ns++] = (uint64_t)s;
    }
    if (!l->nm || !l->ns)
        return usage_error("%s", "empty --method or --seed list");
    return 0;
}

/* The training and validation text (bytes, and minilm's WordPiece ids),
 * owned here; d views it. */
typedef struct corpus {
    tt_data d;
    uint8_t *train, *val;
    int *train_ids, *val_ids;
} corpus;

static void corpus_free(corpus *c)
{
    free(c->train);
    free(c->val);
    free(c->train_ids);
    free(c->val_ids);
}

/* The corpus's bytes (every MPI rank reads them). 0, or 1 after a
 * message. */
static int load_corpus(const train_cli *a, corpus *c)
{
    char tp[4096], vp[4096];
    if (a->train_file) {
        snprintf(tp, sizeof tp, "%s", a->train_file);
        snprintf(vp, sizeof vp, "%s", a->val_file);
    } else {
        snprintf(tp, sizeof tp, "%s/train.bin", a->data);
        snprintf(vp, sizeof vp, "%s/val.bin", a->data);
    }
    tt_data *d = &c->d;
    c->train = read_file(tp, &d->n_train);
    c->val = read_file(vp, &d->n_val);
    int missing = !c->train || !c->val, read_errno = errno;
#ifdef TT_MPI
    /* every rank reads the corpus; any rank without it stops them all */
    int any = missing;
    MPI_Allreduce(&missing, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !missing)
        return 1;
#endif
    if (missing) {
        const char *miss = !c->train ? tp : vp;
        if (a->train_file) {
            fprintf(stderr, "tahq-train: cannot read %s: %s\n", miss, strerror(read_errno));
        } else {
            char fetch[3 * 4096 + 16];
            if (tahq_data_path("fetch_corpus.sh", fetch, sizeof fetch) != 0)
                snprintf(fetch, sizeof fetch, "scripts/fetch_corpus.sh");
            fprintf(stderr,
                    "tahq-train: corpus not found: %s (--data DIR or $TAHQ_TRAIN_DATA names the "
                    "folder, default ./%s; build it with: sh %s %s)\n",
                    miss, TAHQ_TRAIN_DATA, fetch, a->data);
        }
        return 1;
    }
    d->train = c->train, d->val = c->val;
    if (d->n_train < (size_t)a->o.cfg.T + 2 || d->n_val < (size_t)a->o.cfg.T + 2) {
        fprintf(stderr, "tahq-train: %s must hold more than context + 1 = %d bytes\n",
                d->n_train < (size_t)a->o.cfg.T + 2 ? tp : vp, a->o.cfg.T + 1);
        return 1;
    }
    return 0;
}

/* minilm: the corpus as WordPiece ids. 0, or 1 after a message. */
static int encode_corpus(const train_cli *a, const wp_tokenizer *wtk, corpus *c)
{
    tt_data *d = &c->d;
    c->train_ids = wp_encode_text(wtk, (const char *)c->train, d->n_train, &d->n_train_ids);
    c->val_ids = wp_encode_text(wtk, (const char *)c->val, d->n_val, &d->n_val_ids);
    if (!c->train_ids || !c->val_ids || d->n_train_ids < (size_t)a->o.cfg.T ||
        d->n_val_ids < (size_t)a->o.cfg.T) {
        fprintf(stderr, "tahq-train: the corpus has too few WordPiece ids (or out of memory)\n");
        return 1;
    }
    d->train_ids = c->train_ids, d->val_ids = c->val_ids;
    train_say("minilm (%s): %s, %zu parameters; corpus: %zu training and %zu validation WordPiece "
              "ids; %d of each sample's %d tokens masked\n",
              a->o.bert_init ? "pretrained" : "random initialisation", a->model_dir,
              tb_model_params(&a->o.bert_cfg), d->n_train_ids, d->n_val_ids, a->o.mask_per_seq,
              a->o.cfg.T);
    return 0;
}

/* After the options: the corpus, the output folder, the timing file and
 * every run. The exit status. */
static int train_runs(train_cli *a, const run_lists *l, const wp_tokenizer *wtk, corpus *c)
{
    if (load_corpus(a, c))
        return 1;
    if (train_rank == 0 && a->out && mkdir(a->out, 0777) && errno != EEXIST) {
        fprintf(stderr, "tahq-train: cannot create %s: %s\n", a->out, strerror(errno));
        return train_failed();
    }
    if (train_rank == 0 && a->timing && train_timing_open(a))
        return train_failed();
    if (a->o.bert && encode_corpus(a, wtk, c))
        return train_failed();
    sim_blas_init();
    const int tty = train_rank == 0 && isatty(STDOUT_FILENO);
    int rc = 0;
    for (int i = 0; i < l->nm && !rc; i++)
        for (int j = 0; j < l->ns && !rc; j++)
            rc = train_one_run(a, l->mv[i], l->sv[j], &c->d, tty, i * l->ns + j, l->nm * l->ns);
    return rc;
}

static int tahq_train(int argc, char **argv)
{
    train_cli a;
    cli_defaults(&a);
    const int parsed = cli_parse(&a, argc, argv);
    if (parsed >= 0)
        return parsed;
    tb_pretrained bert;
    wp_tokenizer wtk;
    memset(&bert, 0, sizeof bert);
    memset(&wtk, 0, sizeof wtk);
    run_lists lists;
    corpus c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    if (!strcmp(a.model, "minilm"))
        rc = load_minilm(&a, &bert, &wtk);
    if (!rc)
        rc = check_shape(&a);
    if (!rc)
        rc = parse_lists(&a, &lists);
    if (!rc)
        rc = train_runs(&a, &lists, &wtk, &c);
    corpus_free(&c);
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
    MPI_Comm_rank(MPI_COMM_WORLD, &train_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &train_size);
    int rc = tahq_train(argc, argv);
    MPI_Finalize();
    return rc;
#else
    return tahq_train(argc, argv);
#endif
}
