/* SPDX-License-Identifier: MIT */
/*
 * test_jobs.c - the job pool of common/tahq_jobs.h, which starts every thread
 * of the project: tahq_jobs_each runs each thread index exactly once, index 0
 * on the calling thread and the others on threads of their own (indices past
 * TAHQ_JOBS_THREADS_MAX on the calling thread); tahq_jobs_run runs each task
 * exactly once and reports progress counts 1 .. n in order. A control feeds
 * the exactly-once check a count with a task run twice and one never run.
 */
#include <pthread.h>

#include "tahq_jobs.h"
#include "tutil.h"

#define MAXN 1000

typedef struct team_log {
    pthread_t caller;
    int calls[TAHQ_JOBS_THREADS_MAX + 64];
    pthread_t who[TAHQ_JOBS_THREADS_MAX + 64];
} team_log;

static void team_member(void *ctx, int t)
{
    team_log *l = ctx;
    __atomic_fetch_add(&l->calls[t], 1, __ATOMIC_RELAXED);
    l->who[t] = pthread_self();
}

/* 0 when every one of calls[0 .. n) is 1, else the number that are not. */
static int not_once(const int *calls, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += calls[i] != 1;
    return bad;
}

static void check_each(int threads)
{
    static team_log l;
    memset(&l, 0, sizeof l);
    l.caller = pthread_self();
    tahq_jobs_each(threads, team_member, &l);
    const int n = threads > 0 ? threads : 0;
    CHECKF(not_once(l.calls, n) == 0, "threads %d: %d indices not run once", threads,
           not_once(l.calls, n));
    CHECKF(l.calls[n] == 0, "threads %d: index %d run", threads, n);
    if (n > 0)
        CHECKF(pthread_equal(l.who[0], l.caller), "threads %d: index 0 not on the caller", threads);
    /* past the most threads one run starts: on the calling thread */
    for (int t = TAHQ_JOBS_THREADS_MAX; t < n; t++)
        CHECKF(pthread_equal(l.who[t], l.caller), "threads %d: index %d not on the caller", threads,
               t);
}

/* Small teams: every index on a thread of its own (the threads are all alive
 * until the join, so no two of them share an id). */
static void check_each_distinct(int threads)
{
    static team_log l;
    memset(&l, 0, sizeof l);
    l.caller = pthread_self();
    tahq_jobs_each(threads, team_member, &l);
    for (int a = 0; a < threads; a++)
        for (int b = a + 1; b < threads; b++)
            CHECKF(!pthread_equal(l.who[a], l.who[b]), "threads %d: %d and %d on one thread",
                   threads, a, b);
}

typedef struct pool_log {
    int calls[MAXN + 1];
    size_t seen[MAXN + 1], n_seen, n_reported;
} pool_log;

static void pool_task(void *ctx, size_t task)
{
    pool_log *l = ctx;
    __atomic_fetch_add(&l->calls[task], 1, __ATOMIC_RELAXED);
}

static void pool_done(void *ctx, size_t done, size_t n)
{
    pool_log *l = ctx;
    l->seen[l->n_seen++] = done;
    l->n_reported = n;
}

static void check_run(int threads, size_t n)
{
    static pool_log l;
    memset(&l, 0, sizeof l);
    tahq_jobs_run(threads, n, pool_task, pool_done, &l);
    CHECKF(not_once(l.calls, (int)n) == 0, "threads %d n %zu: %d tasks not run once", threads, n,
           not_once(l.calls, (int)n));
    CHECKF(l.calls[n] == 0, "threads %d n %zu: task n run", threads, n);
    CHECKF(l.n_seen == n, "threads %d n %zu: %zu progress calls", threads, n, l.n_seen);
    for (size_t i = 0; i < l.n_seen; i++)
        CHECKF(l.seen[i] == i + 1, "threads %d n %zu: progress %zu at call %zu", threads, n,
               l.seen[i], i);
    if (n > 0)
        CHECKF(l.n_reported == n, "threads %d n %zu: progress total %zu", threads, n, l.n_reported);
}

int main(void)
{
    /* control: the exactly-once check catches a repeat and an omission */
    int flawed[4] = {1, 2, 1, 0};
    CHECKF(not_once(flawed, 4) == 2, "control: %d", not_once(flawed, 4));

    const int teams[] = {-1, 0, 1, 2, 3, 8, 64, TAHQ_JOBS_THREADS_MAX, TAHQ_JOBS_THREADS_MAX + 37};
    for (size_t i = 0; i < sizeof teams / sizeof teams[0]; i++)
        check_each(teams[i]);
    for (int threads = 2; threads <= 8; threads++)
        check_each_distinct(threads);

    const int threads[] = {-3, 0, 1, 2, 7, 300};
    const size_t counts[] = {0, 1, 2, 5, 999, MAXN};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++)
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
            check_run(threads[i], counts[j]);

    return t_finish("test_jobs", "tahq_jobs_each, tahq_jobs_run");
}
