/* SPDX-License-Identifier: MIT */
/* cmd_shared.h - the commands of tahq-sim (one file each, cmd_*.c) and what
 * they share: the parsed options, progress on stderr, output files, method
 * lists and the job pool they run their simulations on. */
#ifndef TAHQ_SIM_CMD_SHARED_H
#define TAHQ_SIM_CMD_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct sim_cli {
    const char *out; /* output folder */
    int quick;
    int trajectory; /* delta: along SGD's trajectory */
    int range;      /* floor: over steps and update precisions */
    int jobs;
    int seeds; /* 0 = default */
    int K;
    int adamw; /* --optimizer adamw */
    double beta1, beta2, eps;
    double weight_decay; /* < 0: the command's default */
    double lr;           /* train: step size, 0 = default */
    int steps;           /* train: 0 = default */
    const char *methods; /* comma list, NULL = default */
    const char *runs;    /* converge: analyse this converge_runs.csv instead of running */
    const char
        *calibrate; /* throughput: calibrate against this measurement (plots/links.py calib) */
} sim_cli;

/* A command: its name, its line in the program's help (a '\n' continues it
 * on the next line), its own help (tahq-sim NAME --help) and what it runs. */
typedef struct sim_command {
    const char *name, *summary, *help;
    int (*run)(const sim_cli *o);
} sim_command;

extern const sim_command sim_cmd_converge, sim_cmd_delta, sim_cmd_floor, sim_cmd_train,
    sim_cmd_throughput, sim_cmd_plots;

/* The studies behind the commands, also run one after the other by `all`. */
int cmd_converge(const sim_cli *o);
int cmd_delta(const sim_cli *o);
int cmd_floor(const sim_cli *o);
int cmd_floor_range(const sim_cli *o);
int cmd_train(const sim_cli *o);
int cmd_throughput(const sim_cli *o);
int cmd_plots(const sim_cli *o);

/* Monotonic clock in seconds. */
double sim_now(void);

/* Progress on stderr. On a terminal: a bar with the elapsed time and an ETA
 * (from the mean time per finished unit), rewritten in place. Otherwise
 * (a log file, CTest): whole lines, one per tenth of the work and one at the
 * end, so a log never holds a partial line. *last: the tenths printed so far
 * (start at 0). */
void sim_progress(const char *label, size_t done, size_t n, double elapsed, int *last);
/* One progress line for work that is not counted as it goes; final: the
 * closing line. */
void sim_progress_line(const char *label, size_t done, size_t n, double elapsed, int final);

/* fn(ctx, i) for every i < n on `jobs` threads of the job pool
 * (common/tahq_jobs.h); with a label, progress on stderr as tasks finish. */
void sim_jobs_run(int jobs, size_t n, void (*fn)(void *ctx, size_t i), void *ctx,
                  const char *label);

/* OUT/name opened for writing (OUT created when missing), or NULL after a
 * message. */
FILE *sim_open_out(const sim_cli *o, const char *name);
/* The same for a CSV file, with its header line written. */
FILE *sim_open_csv(const sim_cli *o, const char *name, const char *header);
/* Closes an output of sim_open_out or sim_open_csv; NULL: none. */
void sim_close_out(FILE *f);

/* The comma list (def when NULL) into names[0 .. max-1]; their number. */
int sim_split_methods(const char *list, const char *def, char names[][48], int max);

/* A TAH configuration whose allocation has no low units at this shape (tile
 * allocation with C/G tiles per token, floor(C/G (1 - r)) = 0: C = 128,
 * G = 64 gives 2 tiles and none low) is a uniform hi-bit quantizer, not an
 * allocation result: say so. Returns 1 when that is the case. */
int sim_note_no_low_units(const char *cmd, const char *name, const sim_method *m, uint32_t B,
                          uint32_t S, uint32_t C);

#endif
