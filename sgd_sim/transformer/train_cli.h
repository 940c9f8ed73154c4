/* SPDX-License-Identifier: MIT */
/* train_cli.h - the tahq-train program: its parsed options (main.c) and
 * one run of a method and seed (train_run.c). Built twice: tahq-train, and
 * with TT_MPI tahq-train-mpi, one MPI rank per stage. */
#ifndef TAHQ_TRAIN_CLI_H
#define TAHQ_TRAIN_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tt_train.h"

typedef struct train_cli {
    tt_opts o;
    const char *methods, *seeds, *data, *train_file, *val_file, *out;
    int eval_every, eval_windows, print_every;
    double progress_s; /* stderr progress when stdout is no terminal; < 0: off */
    int train_windows; /* -1: not given */
    const char *dump_dir;
    int dump_every;
    const char *timing;
    FILE *timing_f;        /* rank 0 */
    int mpi_wait;          /* --mpi-wait: 0 poll, 1 sleep */
    int mpi_wait_sleep_us; /* --mpi-wait sleep: 50; poll: 0 */
    int schedule;          /* --schedule: a tt_schedule */
    const char *model, *model_dir, *init;
    int help, version; /* --help, --version given */
} train_cli;

/* MPI rank and size (0 and 1 without MPI). */
extern int train_rank, train_size;

/* printf to stdout, from rank 0 only */
void train_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A runtime error inside a run: with MPI the other ranks would wait for
 * ever, so the job is aborted; 1 otherwise. */
int train_failed(void);

/* Monotonic clock in seconds. */
double train_now(void);

/* Opens --timing for appending (a->timing_f; the header when the file is
 * new or empty): 0, or 1 after a message. */
int train_timing_open(train_cli *a);

/* One run of method and seed on the data d (run idx of total, for the ETA;
 * tty: standard output is a terminal). 0, or 1 on a runtime error. */
int train_one_run(const train_cli *a, const char *method, uint64_t seed, const tt_data *d, int tty,
                  int idx, int total);

#endif
