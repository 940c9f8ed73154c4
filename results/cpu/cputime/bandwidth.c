// SPDX-License-Identifier: MIT
/* bandwidth.c - the memory roofline for the two-thread target of issue 42:
 * the rate of a 512-bit read-only pass (what the encoder's phases A and C
 * each do to the input), of plain 512-bit stores and of non-temporal
 * stores over a 64 MiB buffer (the bench tensor's size), on 1 and on 2
 * threads (each thread its half), best of 7; and memcpy of 64 MiB on one
 * thread as the bench times it. Meaningful only on an idle machine: with
 * the second vCPU taken, the two-thread rows measure the scheduler.
 * Build: cc -O2 -pthread bandwidth.c -o bandwidth (x86-64 with AVX-512F). */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES ((size_t)64 << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct part {
    float *p;
    size_t floats;
    int mode; /* 0 store, 1 non-temporal store, 2 read */
    float sum;
} part;

__attribute__((target("avx512f"))) static void *run_part(void *arg)
{
    part *a = arg;
    const __m512 one = _mm512_set1_ps(1.0f);
    if (a->mode == 0) {
        for (size_t i = 0; i < a->floats; i += 16)
            _mm512_store_ps(a->p + i, one);
    } else if (a->mode == 1) {
        for (size_t i = 0; i < a->floats; i += 16)
            _mm512_stream_ps(a->p + i, one);
        _mm_sfence();
    } else {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (size_t i = 0; i < a->floats; i += 64) {
            s0 = _mm512_add_ps(s0, _mm512_load_ps(a->p + i));
            s1 = _mm512_add_ps(s1, _mm512_load_ps(a->p + i + 16));
            s2 = _mm512_add_ps(s2, _mm512_load_ps(a->p + i + 32));
            s3 = _mm512_add_ps(s3, _mm512_load_ps(a->p + i + 48));
        }
        a->sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    }
    return NULL;
}

int main(void)
{
    float *buf = aligned_alloc(64, BYTES), *src = aligned_alloc(64, BYTES);
    if (!buf || !src)
        return 1;
    memset(buf, 1, BYTES);
    memset(src, 1, BYTES);
    static const char *const names[3] = {"store", "non-temporal store", "read"};
    float sink = 0;
    for (int mode = 0; mode < 3; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            double best = 1e300;
            for (int rep = 0; rep < 7; rep++) {
                part parts[2];
                pthread_t t;
                for (int j = 0; j < threads; j++)
                    parts[j] = (part){buf + (size_t)j * (BYTES / 4 / threads), BYTES / 4 / threads,
                                      mode, 0};
                const double t0 = now();
                if (threads == 2 && pthread_create(&t, NULL, run_part, &parts[1]) != 0)
                    return 1;
                run_part(&parts[0]);
                if (threads == 2)
                    pthread_join(t, NULL);
                const double d = now() - t0;
                best = d < best ? d : best;
                sink += parts[0].sum;
            }
            printf("%-18s %d thread(s): %6.2f GB/s\n", names[mode], threads,
                   (double)BYTES / best / 1e9);
        }
    double best = 1e300;
    for (int rep = 0; rep < 7; rep++) {
        const double t0 = now();
        memcpy(buf, src, BYTES);
        const double d = now() - t0;
        best = d < best ? d : best;
    }
    printf("memcpy             1 thread:  %6.2f GB/s (bytes copied)%s\n",
           (double)BYTES / best / 1e9, sink == 12345.0f ? " " : "");
    free(buf);
    free(src);
    return 0;
}
