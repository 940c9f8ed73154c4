// SPDX-License-Identifier: MIT
/* cputime.c - thread CPU time of the parallel codec on one job (a caller's
 * runner that runs the jobs in order on the calling thread), on the bench's
 * tensor ([8, 1024, 2048], LLM_DEFAULT_SEED; tahq bench's shape for --mib
 * 64), for one CPU path: canonical nearest encode, gain nearest and gain
 * stochastic encode (the paper point in gain allocation), canonical
 * nearest decode. Best of R repetitions of CLOCK_THREAD_CPUTIME_ID, which
 * counts only the time this thread ran: another process taking the second
 * vCPU or time-slicing this one moves it far less than the wall clock
 * (cache and memory contention still do). Prints one JSON object; run.sh
 * builds it against two libraries and alternates them.
 * usage: cputime PATH [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_path.h"
#include "llm_tensor.h"
#include "tahq.h"
#include "tahq_parallel.h"

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run_in_order(void *ctx, tahq_job_fn fn, void *arg, uint32_t n)
{
    (void)ctx;
    for (uint32_t j = 0; j < n; j++)
        fn(arg, j);
}

int main(int argc, char **argv)
{
    tahq_cpu_path path;
    if (argc < 2 || !tahq_cpu_path_parse(argv[1], &path) || !tahq_cpu_path_set(path)) {
        fprintf(stderr, "usage: cputime scalar|avx2|avx512 [REPS] (a path this CPU has)\n");
        return 2;
    }
    const int reps = argc > 2 ? atoi(argv[2]) : 7;
    const tahq_shape shape = {8, 1024, 2048};
    const size_t n = (size_t)shape.batch * shape.seq_len * shape.channels;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y ||
        llm_tensor_fill(x, shape.batch, shape.seq_len, shape.channels, LLM_DEFAULT_SEED) != 0)
        return 1;
    memset(y, 0, n * sizeof *y);
    tahq_parallel par;
    tahq_parallel_threads(&par, 1);
    par.run = run_in_order;
    const char *names[3] = {"canonical_nearest", "gain_nearest", "gain_stochastic"};
    double enc[3], dec = 1e300;
    printf("{\"path\": \"%s\"", argv[1]);
    for (int c = 0; c < 3; c++) {
        tahq_config cfg;
        tahq_config_default(&cfg);
        if (c > 0)
            cfg.alloc = TAHQ_ALLOC_GAIN;
        if (c == 2)
            cfg.rounding = TAHQ_ROUND_STOCHASTIC;
        size_t cap, wsz, len = 0;
        if (tahq_encode_bound(&cfg, &shape, &cap) != TAHQ_OK ||
            tahq_encode_parallel_workspace_size(&cfg, &shape, 1, &wsz) != TAHQ_OK)
            return 1;
        uint8_t *msg = malloc(cap);
        void *ws = malloc(wsz);
        if (!msg || !ws)
            return 1;
        memset(msg, 0, cap);
        memset(ws, 0, wsz);
        enc[c] = 1e300;
        for (int r = 0; r < reps; r++) {
            const double t0 = thread_seconds();
            if (tahq_encode_parallel(&cfg, &shape, x, ws, wsz, msg, cap, &len, &par) != TAHQ_OK)
                return 1;
            const double t1 = thread_seconds();
            enc[c] = t1 - t0 < enc[c] ? t1 - t0 : enc[c];
            if (c == 0) {
                if (tahq_decode_parallel(msg, len, y, n, &par) != TAHQ_OK)
                    return 1;
                const double t2 = thread_seconds();
                dec = t2 - t1 < dec ? t2 - t1 : dec;
            }
        }
        /* FNV-1a of the message: both libraries must agree */
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < len; i++)
            h = (h ^ msg[i]) * 16777619u;
        printf(", \"%s_encode_gbps\": %.4f, \"%s_message_fnv\": \"%08x\"", names[c],
               (double)n * 4.0 / enc[c] / 1e9, names[c], h);
        free(msg);
        free(ws);
    }
    uint32_t hy = 2166136261u;
    const uint8_t *yb = (const uint8_t *)y;
    for (size_t i = 0; i < n * sizeof *y; i++)
        hy = (hy ^ yb[i]) * 16777619u;
    printf(", \"canonical_nearest_decode_gbps\": %.4f, \"decode_output_fnv\": \"%08x\"}\n",
           (double)n * 4.0 / dec / 1e9, hy);
    free(x);
    free(y);
    return 0;
}
