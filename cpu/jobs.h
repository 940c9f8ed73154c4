/* SPDX-License-Identifier: MIT */
/* jobs.h - the job runner and the range split of cpu/parallel.c, shared
 * with cpu/paper_v1_fast.c. Not public. */
#ifndef TAHQ_CPU_JOBS_H
#define TAHQ_CPU_JOBS_H

#include <stdint.h>

#include "tahq_parallel.h"

/* fn(arg, j) for j < n on par's runner (or the built-in one: a thread per
 * job, common/tahq_jobs.h's tahq_jobs_each). */
void tahq_cpu_run_jobs(const tahq_parallel *par, tahq_job_fn fn, void *arg, uint32_t n);
/* Start of part j of n of [0, count), rounded down to a multiple of align;
 * part 0 starts at 0, part n at count. */
uint64_t tahq_cpu_part_start(uint64_t count, uint32_t n, uint32_t j, uint64_t align);

/* Index of the first element of x[0 .. n) that is not finite or has
 * |x| >= 2^64 (SPEC §3.2, the input check of both profiles), or n; *st its
 * status (TAHQ_ERR_NONFINITE, TAHQ_ERR_RANGE, or TAHQ_OK). */
uint64_t tahq_cpu_first_bad(const float *x, uint64_t n, tahq_status *st);

#endif
