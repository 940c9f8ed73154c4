/* SPDX-License-Identifier: MIT */
/* case_inputs.h - the building blocks of the golden cases' inputs, shared by
 * the case families of golden_gen.c and golden_gain.c: a shape, a
 * configuration, a tensor of zeros (exit on out of memory: the generator
 * cannot go on), a uniform value from a Philox word, and the row count of
 * a case table. Integer operations
 * and exact binary32 scaling only, so the sets are the same on every
 * platform. */
#ifndef TAHQ_GOLDEN_CASE_INPUTS_H
#define TAHQ_GOLDEN_CASE_INPUTS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "case_writer.h"
#include "tahq.h"
#include "tahq_spec.h"

/* the rows of a static table of cases */
#define N_ROWS(t) (sizeof t / sizeof t[0])

static inline tahq_shape golden_shape(uint32_t b, uint32_t s, uint32_t c)
{
    tahq_shape r = {b, s, c};
    return r;
}

/* The default configuration with these tile, bit-widths, allocation, tau
 * and metadata. */
static inline tahq_config golden_config(uint32_t G, uint32_t hi, uint32_t lo, tahq_alloc a,
                                        float tau, tahq_meta m)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = G;
    c.hi_bits = hi;
    c.lo_bits = lo;
    c.alloc = a;
    c.tau = tau;
    c.meta = m;
    return c;
}

/* A zeroed tensor of shape s (one element more, so that an empty shape
 * still gets a pointer). */
static inline float *golden_alloc_x(const tahq_shape *s)
{
    float *x = calloc((size_t)golden_count_of(s) + 1, sizeof(float));
    if (!x) {
        fprintf(stderr, "tahq golden-gen: out of memory\n");
        exit(1);
    }
    return x;
}

/* Uniform in [-1, 1) on a 2^-23 grid: word i of the Philox stream of seed. */
static inline float golden_unif(uint64_t seed, uint64_t i)
{
    const uint32_t w = tahq_random_word(seed, i);
    return (float)((int32_t)(w >> 8) - 8388608) * 0x1p-23f;
}

#endif
