/* SPDX-License-Identifier: MIT */ /*
 * tahq_jobs.h - the project's one way of starting threads: a small job pool
 * of n independent tasks on up to `threads` POSIX threads, each task taken
 * from a shared counter when a thread is free (so long and short tasks
 * balance without a schedule worked out in advance), and under it a fixed
 * team, one function call per thread index. The calling thread works too;
 * a thread that cannot be started leaves its work to the calling thread, so
 * a run never fails for that reason. Header-only (static inline), C11 and
 * C++; the simulations of sgd_sim/, the built-in job runner of cpu/parallel.c
 * and the threaded commands of cli/ (bounds, bench) run on it.
 *
 * Tasks must not depend on each other or on the order they run in: what a
 * task computes is then the same for every number of threads. `done`, when
 * not NULL, is called under the pool's lock after each task with the count
 * finished so far (progress output: one caller at a time, counts rising).
 */
#ifndef TAHQ_JOBS_H
#define TAHQ_JOBS_H

#include <pthread.h>
#include <stddef.h>

/* Most threads one run starts. */
#define TAHQ_JOBS_THREADS_MAX 256

typedef void (*tahq_thread_fn)(void *ctx, int thread);

typedef struct tahq_jobs_member {
    tahq_thread_fn fn;
    void *ctx;
    int thread;
} tahq_jobs_member;

static inline void *tahq_jobs_member_main(void *arg)
{
    const tahq_jobs_member *m = (const tahq_jobs_member *)arg;
    m->fn(m->ctx, m->thread);
    return NULL;
}

/* fn(ctx, t) exactly once for every t < threads (none for threads < 1),
 * each on a thread of its own: t = 0 on the calling thread, every other t on
 * a thread started for it. A t whose thread cannot be started, or beyond
 * TAHQ_JOBS_THREADS_MAX, runs on the calling thread after t = 0. Returns
 * when all have returned. For work already cut into one part per thread
 * (the parts of a parallel codec call, a scaling control). */
static inline void tahq_jobs_each(int threads, tahq_thread_fn fn, void *ctx)
{
    if (threads < 1)
        return;
    const int team = threads < TAHQ_JOBS_THREADS_MAX ? threads : TAHQ_JOBS_THREADS_MAX;
    pthread_t ids[TAHQ_JOBS_THREADS_MAX];
    tahq_jobs_member members[TAHQ_JOBS_THREADS_MAX];
    int started[TAHQ_JOBS_THREADS_MAX];
    for (int t = 1; t < team; t++) {
        members[t].fn = fn;
        members[t].ctx = ctx;
        members[t].thread = t;
        started[t] = pthread_create(&ids[t], NULL, tahq_jobs_member_main, &members[t]) == 0;
    }
    fn(ctx, 0);
    for (int t = 1; t < team; t++)
        if (!started[t])
            fn(ctx, t);
    for (int t = team; t < threads; t++)
        fn(ctx, t);
    for (int t = 1; t < team; t++)
        if (started[t])
            pthread_join(ids[t], NULL);
}

typedef void (*tahq_task_fn)(void *ctx, size_t task);
typedef void (*tahq_tasks_done_fn)(void *ctx, size_t done, size_t n);

typedef struct tahq_jobs_state {
    tahq_task_fn fn;
    tahq_tasks_done_fn done_fn;
    void *ctx;
    size_t n, next, done;
    pthread_mutex_t mu;
} tahq_jobs_state;

static inline void tahq_jobs_worker(void *arg, int thread)
{
    tahq_jobs_state *s = (tahq_jobs_state *)arg;
    (void)thread;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        const size_t task = s->next < s->n ? s->next++ : s->n;
        pthread_mutex_unlock(&s->mu);
        if (task >= s->n)
            return;
        s->fn(s->ctx, task);
        pthread_mutex_lock(&s->mu);
        s->done++;
        if (s->done_fn)
            s->done_fn(s->ctx, s->done, s->n);
        pthread_mutex_unlock(&s->mu);
    }
}

/* fn(ctx, i) once for every i < n, on at most `threads` threads (below 1
 * counts as 1, above TAHQ_JOBS_THREADS_MAX as that); returns when all
 * have returned. */
static inline void tahq_jobs_run(int threads, size_t n, tahq_task_fn fn, tahq_tasks_done_fn done,
                                 void *ctx)
{
    tahq_jobs_state s;
    s.fn = fn;
    s.done_fn = done;
    s.ctx = ctx;
    s.n = n;
    s.next = 0;
    s.done = 0;
    pthread_mutex_init(&s.mu, NULL);
    if (threads < 1)
        threads = 1;
    if (threads > TAHQ_JOBS_THREADS_MAX)
        threads = TAHQ_JOBS_THREADS_MAX;
    if ((size_t)threads > n)
        threads = n > 0 ? (int)n : 1;
    tahq_jobs_each(threads, tahq_jobs_worker, &s);
    pthread_mutex_destroy(&s.mu);
}

#endif /* TAHQ_JOBS_H */
