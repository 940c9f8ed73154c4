/* SPDX-License-Identifier: MIT */
/* vec8.h - 8-lane binary32 vectors (GCC vector extensions,
 * __builtin_shuffle) for the fast forms of cpu/: ref_accel.c (the
 * reference's FWHT and halving tree) and paper_v1_fast.c. Each form
 * computes the same binary32 operations on the same operands as its scalar
 * form in ref/. Defined where ref/internal.h sets TAHQ_HAVE_V8 (GCC, not
 * under TAHQ_SCALAR_ONLY); other compilers take the scalar forms. Not
 * public. */
#ifndef TAHQ_CPU_VEC8_H
#define TAHQ_CPU_VEC8_H

#include <stdint.h>
#include <string.h>

#include "internal.h"

#ifdef TAHQ_HAVE_V8
typedef float tahq_v8f __attribute__((vector_size(32)));
typedef int32_t tahq_v8i __attribute__((vector_size(32)));

/* SPEC §2.5 halving tree over w[0 .. n), n a power of two >= 8; w is
 * overwritten. Levels h >= 8 add whole vectors; the last three levels
 * (h = 4, 2, 1) add a lane permutation, and only lane 0 (which holds
 * w[0] + w[h] at every level) is used at the end. Every value that reaches
 * lane 0 is the SPEC's. */
static inline float tahq_v8_halving_tree(float *w, uint32_t n)
{
    for (uint32_t h = n / 2; h >= 8; h /= 2)
        for (uint32_t j = 0; j < h; j += 8) {
            tahq_v8f a, b;
            memcpy(&a, w + j, sizeof a);
            memcpy(&b, w + j + h, sizeof b);
            a = a + b;
            memcpy(w + j, &a, sizeof a);
        }
    const tahq_v8i up4 = {4, 5, 6, 7, 0, 1, 2, 3}, up2 = {2, 3, 0, 1, 6, 7, 4, 5},
                   up1 = {1, 0, 3, 2, 5, 4, 7, 6};
    tahq_v8f v;
    memcpy(&v, w, sizeof v);
    v = v + __builtin_shuffle(v, up4);
    v = v + __builtin_shuffle(v, up2);
    v = v + __builtin_shuffle(v, up1);
    return v[0];
}
#endif

#endif
