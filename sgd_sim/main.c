/* SPDX-License-Identifier: MIT */
/* tahq-sim: pipeline-parallel SGD with compressed stage boundaries. The
 * commands live in cmd_*.c; here are the option table, the help made from
 * it and the dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_shared.h"
#include "sim.h"
#include "tahq_options.h"

#ifndef TAHQ_SIM_VERSION
#define TAHQ_SIM_VERSION "unknown"
#endif

/* The column of the options' help texts, and of the commands'. */
enum { OPTION_COLUMN = 18, COMMAND_COLUMN = 14 };

/* The integer options keep atoi's reading (a value that is no number is
 * 0); their ranges are checked after the parse. */
static int option_atoi(const tahq_option *opt, const char *val)
{
    *(int *)opt->dst = atoi(val);
    return 0;
}

/* A number in [0, 1e6]. */
static int option_nonnegative(const tahq_option *opt, const char *val)
{
    char *end = NULL;
    double x = strtod(val, &end);
    if (!end || *end || !(x >= 0) || x > 1e6)
        return 1;
    *(double *)opt->dst = x;
    return 0;
}

static const char *const optimizers[] = {"sgd", "adamw", NULL};

/* The options of every command, into o; a NULL help is an option a
 * command's own help describes. */
static void option_table(sim_cli *o, tahq_option t[32])
{
    const tahq_option table[] = {
        {.name = "--out", .arg = "DIR", .dst = &o->out, .help = "output folder (build-sim/sim)"},
        {.name = "--quick",
         .dst = &o->quick,
         .help = "small sweep (converge: T = 2^8..2^14 and the controls, asserts the verdicts)"},
        {.name = "--jobs",
         .arg = "N",
         .set = option_atoi,
         .dst = &o->jobs,
         .help = "worker threads (2)"},
        {.name = "--seeds",
         .arg = "N",
         .set = option_atoi,
         .dst = &o->seeds,
         .help = "seeds per T (10)"},
        {.name = "--stages",
         .arg = "K",
         .set = option_atoi,
         .dst = &o->K,
         .help = "pipeline stages, 2..8 (4)"},
        {.name = "--methods",
         .arg = "LIST",
         .dst = &o->methods,
         .help = "comma list: fp32 fp16 tah tahH/L tah-tile tah-gain tah-sr tah-gN plainB aqsgd "
                 "biasP,\n"
                 "each optionally +bwd-none, +bwd-fixB or +bwd-tah; converge also METHOD@s\n"
                 "(step eta ~ T^-s instead of T^-1/2)"},
        {.name = "--runs",
         .arg = "FILE",
         .dst = &o->runs,
         .help = "converge: analyse the runs of an earlier sweep (its converge_runs.csv)\n"
                 "instead of running them (with --quick if that sweep was quick: T_tune)"},
        {.name = "--steps",
         .arg = "N",
         .set = option_atoi,
         .dst = &o->steps,
         .help = "train: steps"},
        {.name = "--optimizer",
         .arg = "O",
         .set = tahq_option_choice,
         .dst = &o->adamw,
         .choices = optimizers,
         .help = "sgd (default) or adamw, for converge and train (--adamw = adamw)"},
        {.name = "--adamw", .dst = &o->adamw},
        {.name = "--lr",
         .arg = "X",
         .set = option_nonnegative,
         .dst = &o->lr,
         .help = "train: step size (SGD 0.02, AdamW 0.001)"},
        {.name = "--beta1",
         .arg = "X",
         .set = option_nonnegative,
         .dst = &o->beta1,
         .help = "AdamW first-moment decay (0.9)"},
        {.name = "--beta2",
         .arg = "X",
         .set = option_nonnegative,
         .dst = &o->beta2,
         .help = "AdamW second-moment decay (0.999)"},
        {.name = "--eps",
         .arg = "X",
         .set = option_nonnegative,
         .dst = &o->eps,
         .help = "AdamW denominator epsilon (1e-8)"},
        {.name = "--weight-decay",
         .arg = "X",
         .set = option_nonnegative,
         .dst = &o->weight_decay,
         .help = "AdamW decoupled weight decay (train 0.01; converge 0, since\n"
                 "decay moves the stationary point away from w*)"},
        {.name = "--trajectory", .dst = &o->trajectory},
        {.name = "--range", .dst = &o->range},
        {.name = "--calibrate", .arg = "FILE", .dst = &o->calibrate},
        {.name = NULL},
    };
    _Static_assert(sizeof table <= 32 * sizeof(tahq_option), "the option table needs more room");
    memcpy(t, table, sizeof table);
}

/* In place of a command; after one, --help gives that command's help. */
static const tahq_option program_options[] = {
    {.name = "--help", .alias = "-h", .help = "this text (after a command: that command's)"},
    {.name = "--version", .help = "the program's version"},
    {.name = NULL},
};
static const tahq_option *const program_tables[] = {program_options, NULL};

static void options_help(FILE *f)
{
    sim_cli o;
    tahq_option t[32];
    option_table(&o, t);
    fprintf(f, "options:\n");
    tahq_options_help(f, t, OPTION_COLUMN);
    tahq_options_help(f, program_options, OPTION_COLUMN);
}

/* converge, delta, floor, train, throughput and plots, one after the
 * other (floor without --range) */
static int run_all(const sim_cli *o)
{
    int rc = cmd_converge(o);
    rc |= cmd_delta(o);
    rc |= cmd_floor(o);
    rc |= cmd_train(o);
    rc |= cmd_throughput(o);
    rc |= cmd_plots(o);
    return rc;
}

static const sim_command sim_cmd_all = {
    "all",
    "converge, delta, floor, train, throughput, plots",
    "usage: tahq-sim all [options]\nconverge, delta, floor, train, throughput, then plots, into "
    "--out.\n",
    run_all,
};

static const sim_command *const commands[] = {
    &sim_cmd_converge,   &sim_cmd_delta, &sim_cmd_floor, &sim_cmd_train,
    &sim_cmd_throughput, &sim_cmd_plots, &sim_cmd_all,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tahq-sim COMMAND [options]    (tahq-sim COMMAND --help for one command)\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        tahq_options_help_line(f, commands[i]->name, commands[i]->summary, COMMAND_COLUMN);
    options_help(f);
}

static const sim_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* Parses argv[2 ..] into o: 0, or the exit status after a message. */
static int parse_options(int argc, char **argv, sim_cli *o)
{
    tahq_option t[32];
    option_table(o, t);
    const tahq_option *const tables[] = {t, NULL};
    tahq_options_at at;
    const tahq_options_status st = tahq_options_parse(tables, argc, argv, 2, &at);
    if (st == TAHQ_OPTIONS_BAD_VALUE && at.opt->choices) {
        char choices[64];
        tahq_option_choices_text(at.opt->choices, choices, sizeof choices);
        fprintf(stderr, "tahq-sim: %s must be %s, not %s\n", at.opt->name, choices, at.val);
        return 2;
    }
    if (st == TAHQ_OPTIONS_BAD_VALUE) {
        fprintf(stderr, "tahq-sim: %s needs a non-negative number, not %s\n", at.arg, at.val);
        return 2;
    }
    if (st != TAHQ_OPTIONS_OK) {
        fprintf(stderr, "tahq-sim: unknown option %s\n", at.arg);
        usage(stderr);
        return 2;
    }
    if (o->K < 2 || o->K > 8 || o->jobs < 1 || o->jobs > 16 || o->seeds < 0 || o->seeds == 1) {
        fprintf(stderr, "tahq-sim: --stages must be 2..8, --jobs 1..16, --seeds >= 2\n");
        return 2;
    }
    if (o->beta1 >= 1 || o->beta2 >= 1 || o->eps <= 0) {
        fprintf(stderr, "tahq-sim: --beta1 and --beta2 must be in [0, 1), --eps > 0\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const tahq_option *first = argc < 2 ? NULL : tahq_options_find(program_tables, argv[1]);
    if (argc < 2 || (first && strcmp(first->name, "--help") == 0)) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (first) {
        printf("tahq-sim %s (tahq format %u)\n", TAHQ_SIM_VERSION, (unsigned)TAHQ_FORMAT_VERSION);
        return 0;
    }
    const sim_command *cmd = find_command(argv[1]);
    if (!cmd) {
        fprintf(stderr, "tahq-sim: unknown command %s\n", argv[1]);
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s", cmd->help);
            options_help(stdout);
            return 0;
        }
    sim_cli o = {.out = "build-sim/sim",
                 .jobs = 2,
                 .K = 4,
                 .beta1 = SIM_ADAMW_BETA1,
                 .beta2 = SIM_ADAMW_BETA2,
                 .eps = SIM_ADAMW_EPS,
                 .weight_decay = -1};
    const int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    sim_blas_init();
    return cmd->run(&o);
}
