/* SPDX-License-Identifier: MIT */
/* direct_floor.h - the floor b = |grad f(w_b)|^2 measured directly by
 * full-batch gradient descent with the codec: converge's check of its
 * fitted floor, and the studies of floor (direct_floor.c explains the
 * method and the number of iterations). */
#ifndef TAHQ_SIM_DIRECT_FLOOR_H
#define TAHQ_SIM_DIRECT_FLOOR_H

#include <stdint.h>

#include "sim.h"

enum { GD_ITERS = 600 };

typedef struct gd_task {
    const sim_problem *p;
    const sim_method *m;
    int iters;             /* per phase; 0: GD_ITERS */
    double b, lo, hi;      /* b_GD and its interval */
    double p1, a1, p2, a2; /* Polyak and mean-of-|grad|^2, phases 1 and 2 */
    int failed;
} gd_task;

/* The expected compressed gradient at w, summed (not averaged) over the
 * data set's n_seq/2 mini-batches of 2 sequences, into gm; stochastic
 * rounding keyed by the iteration it_all. 0 on success. */
int full_batch_grad_sum(sim_run *r, const sim_problem *p, const float *w, uint64_t it_all,
                        float *gs, double *gm);

/* t[0 .. n-1] on `jobs` threads. */
void gd_all(gd_task *t, int n, int jobs);

#endif
