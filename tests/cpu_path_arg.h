/* SPDX-License-Identifier: MIT */
/*
 * cpu_path_arg.h - the CPU codec's path (cpu/cpu_path.h) chosen by a test's
 * command-line argument, so that one test binary checks each path in its
 * own ctest entry, and the proof afterwards that the chosen path's code is
 * what ran (its run counter grew, the other fast path's did not where the
 * chosen path has its own form).
 */
#ifndef TAHQ_TESTS_CPU_PATH_ARG_H
#define TAHQ_TESTS_CPU_PATH_ARG_H

#include <stdio.h>

#include "cpu_path.h"

typedef struct test_path {
    int chosen; /* 0: the default path, nothing to prove */
    tahq_cpu_path path;
    unsigned long long runs[TAHQ_CPU_PATH_COUNT];
} test_path;

/* Use the path `name` (NULL: the default). 0 on success; 77 after printing
 * SKIPPED where the CPU or build lacks the path (the tests'
 * SKIP_RETURN_CODE); 2 for a name that is no path. */
static inline int test_path_choose(test_path *tp, const char *name, const char *test)
{
    tp->chosen = 0;
    if (!name)
        return 0;
    if (!tahq_cpu_path_parse(name, &tp->path)) {
        fprintf(stderr, "%s: no CPU path '%s' (scalar, avx2, avx512)\n", test, name);
        return 2;
    }
    if (!tahq_cpu_path_set(tp->path)) {
        printf("SKIPPED: %s: the %s path is not available on this CPU or build (best: %s)\n", test,
               name, tahq_cpu_path_name(tahq_cpu_path_best()));
        return 77;
    }
    tp->chosen = 1;
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        tp->runs[p] = tahq_cpu_path_runs((tahq_cpu_path)p);
    printf("%s: CPU path %s\n", test, name);
    return 0;
}

/* After the test: 1 if the chosen path's code ran (avx2, avx512: its counter
 * grew; avx2 and scalar: the avx512 counter did not; scalar: nor avx2's),
 * else 0 with a message. Always 1 for the default path. */
static inline int test_path_ran(const test_path *tp, const char *test)
{
    if (!tp->chosen)
        return 1;
    unsigned long long d[TAHQ_CPU_PATH_COUNT];
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        d[p] = tahq_cpu_path_runs((tahq_cpu_path)p) - tp->runs[p];
    printf("%s: runs of each path's code: scalar %llu, avx2 %llu, avx512 %llu\n", test,
           d[TAHQ_CPU_SCALAR], d[TAHQ_CPU_AVX2], d[TAHQ_CPU_AVX512]);
    int ok = 1;
    if (tp->path != TAHQ_CPU_SCALAR && d[tp->path] == 0)
        ok = 0;
    if (tp->path < TAHQ_CPU_AVX512 && d[TAHQ_CPU_AVX512] != 0)
        ok = 0;
    if (tp->path == TAHQ_CPU_SCALAR && d[TAHQ_CPU_AVX2] != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "%s: FAIL: the code that ran is not the %s path's\n", test,
                tahq_cpu_path_name(tp->path));
    return ok;
}

#endif
