/* SPDX-License-Identifier: MIT */ /* pairwise.h - the pairwise accumulator of tile sums (entropy.c); only
 * entropy.c and paper_v1.c include it. */
#ifndef TAHQ_PAIRWISE_H
#define TAHQ_PAIRWISE_H
#include "internal.h"

/* Pairwise (binary-counter) combination of tile sums (SPEC §2.5), used by
 * the codec's entropy and the paper-v1 profile's: partial sums of
 * complete subtrees live on a stack; pushing a tile sum merges equal-sized
 * neighbours, finishing merges what remains from the right. depth is the
 * number of bits set in count, so 64 entries hold any 64-bit count. */
typedef struct tahq_pairwise_acc {
    float sum[64];
    uint64_t count; /* number of tile sums pushed; its bits say which subtrees exist */
    uint32_t depth;
} tahq_pairwise_acc;
void tahq_pairwise_push(tahq_pairwise_acc *acc, float v);
float tahq_pairwise_finish(const tahq_pairwise_acc *acc);

#endif
