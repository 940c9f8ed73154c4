/* SPDX-License-Identifier: MIT */
/* cmd_shared.c - what the commands of tahq-sim share (cmd_shared.h). */
#include "cmd_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tahq_jobs.h"

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_progress(const char *label, size_t done, size_t n, double elapsed, int *last)
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
        fprintf(stderr, "\r%s [%s] %zu/%zu, %.0f s, ETA %.0f s ", label, bar, done, n, elapsed,
                eta);
        if (done == n)
            fputc('\n', stderr);
    } else {
        int tenth = (int)(done * 10 / n);
        if (tenth > *last || done == n) {
            if (done == n && *last >= 10)
                return;
            *last = done == n ? 10 : tenth;
            fprintf(stderr, "%s: %zu/%zu (%d%%), %.0f s\n", label, done, n, (int)(done * 100 / n),
                    elapsed);
        }
    }
    fflush(stderr);
}

void sim_progress_line(const char *label, size_t done, size_t n, double elapsed, int final)
{
    int last = final ? 9 : 0;
    sim_progress(label, done, n, elapsed, &last);
}

/* the pool's context: the task function and the progress state */
typedef struct tasks_run {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    const char *label;
    double t0;
    int last;
} tasks_run;

static void task_run(void *arg, size_t i)
{
    const tasks_run *tr = arg;
    tr->fn(tr->ctx, i);
}

static void task_done(void *arg, size_t done, size_t n)
{
    tasks_run *tr = arg;
    sim_progress(tr->label, done, n, sim_now() - tr->t0, &tr->last);
}

void sim_jobs_run(int jobs, size_t n, void (*fn)(void *ctx, size_t i), void *ctx, const char *label)
{
    tasks_run tr = {.fn = fn, .ctx = ctx, .label = label, .t0 = sim_now()};
    tahq_jobs_run(jobs, n, task_run, label ? task_done : NULL, &tr);
}

FILE *sim_open_out(const sim_cli *o, const char *name)
{
    char path[1024];
    mkdir(o->out, 0755);
    snprintf(path, sizeof path, "%s/%s", o->out, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tahq-sim: cannot write %s\n", path);
    return f;
}

FILE *sim_open_csv(const sim_cli *o, const char *name, const char *header)
{
    FILE *f = sim_open_out(o, name);
    if (f)
        fprintf(f, "%s\n", header);
    return f;
}

void sim_close_out(FILE *f)
{
    if (f)
        fclose(f);
}

int sim_split_methods(const char *list, const char *def, char names[][48], int max)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list ? list : def);
    int n = 0;
    for (char *t = strtok(buf, ","); t && n < max; t = strtok(NULL, ","))
        snprintf(names[n++], 48, "%s", t);
    return n;
}

int sim_note_no_low_units(const char *cmd, const char *name, const sim_method *m, uint32_t B,
                          uint32_t S, uint32_t C)
{
    uint64_t units = 0, low = sim_method_low_units(m, B, S, C, &units);
    if (units == 0 || low > 0)
        return 0;
    printf("%s: %s: its %s allocation gives 0 low units per message of [%u, %u, %u] (%llu %s, all "
           "at %u "
           "bits): NOT a %s-allocation result (use -g16 or smaller tiles, or C >= 5 G)\n",
           cmd, name, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tile" : "token", B, S, C,
           (unsigned long long)units, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tiles" : "tokens",
           m->fwd_cfg.hi_bits, m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? "tile" : "token");
    return 1;
}
