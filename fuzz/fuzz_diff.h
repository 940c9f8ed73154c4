/* SPDX-License-Identifier: MIT */
/* fuzz_diff.h - shared by the differential harnesses (fuzz_diff_decode.c,
 * fuzz_diff_pv1.c): how the fuzzer's first two bytes pick the number of
 * jobs and the job runner of the parallel codec, and the configuration
 * bytes of an input to be encoded.
 *
 * The parallel codec promises the reference's results for every number of
 * jobs and every runner that runs each job once, in any order, on any
 * thread (include/tahq_parallel.h). A runner that calls the jobs in this
 * thread, in an order the fuzzer picks, reaches every split up to
 * TAHQ_JOBS_MAX at the cost of a function call; the built-in POSIX-threads
 * runner, with its thread start per job, is used for small job counts. */
#ifndef TAHQ_FUZZ_DIFF_H
#define TAHQ_FUZZ_DIFF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_parallel.h"
#include "tahq_core.h"

/* order of the in-thread runner */
typedef struct diff_order {
    uint32_t how; /* 0 forward, 1 backward, 2 odd jobs then even, 3 from the middle */
} diff_order;

static void diff_run_in_thread(void *ctx, tahq_job_fn fn, void *arg, uint32_t n)
{
    const diff_order *o = ctx;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;
        switch (o->how) {
        case 1:
            j = n - 1u - i;
            break;
        case 2:
            j = i < n / 2u ? 2u * i + 1u : 2u * (i - n / 2u);
            break;
        case 3:
            j = (i + n / 2u) % n;
            break;
        default:
            break;
        }
        fn(arg, j);
    }
}

/* b0: jobs; b1 bits 0..1: runner (0: built-in threads with at most 8 jobs,
 * else the in-thread runner in order b1 >> 2). */
static void diff_parallel(tahq_parallel *par, diff_order *order, uint8_t b0, uint8_t b1)
{
    if ((b1 & 3u) == 0) {
        tahq_parallel_threads(par, 1u + b0 % 8u);
        return;
    }
    order->how = (uint32_t)(b1 >> 2) % 4u;
    par->jobs = 1u + b0; /* 1 .. 256 = TAHQ_JOBS_MAX */
    par->run = diff_run_in_thread;
    par->ctx = order;
}

/* floats from the little-endian bits of data[0 .. size) (missing ones 0) */
static float *diff_floats(const uint8_t *data, size_t size, size_t count)
{
    float *x = calloc(count ? count : 1, sizeof *x);
    if (!x)
        abort();
    for (size_t i = 0; i < count && 4 * i + 4 <= size; i++) {
        uint32_t w = tahq_get_u32(data + 4 * i);
        memcpy(&x[i], &w, 4);
    }
    return x;
}

/* Both decodes wrote the same floats, bit for bit; on a failure neither
 * wrote anything (out keeps the fill pattern). */
static void diff_same_floats(const float *a, const float *b, size_t count, tahq_status st,
                             uint8_t fill)
{
    if (st == TAHQ_OK) {
        if (memcmp(a, b, count * sizeof *a) != 0)
            abort();
        return;
    }
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    for (size_t i = 0; i < count * sizeof *a; i++)
        if (pa[i] != fill || pb[i] != fill)
            abort();
}

#endif
