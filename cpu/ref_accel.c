/* SPDX-License-Identifier: MIT */
/* ref_accel.c - the fast forms of three reference functions, outside the
 * proof boundary: ref/ calls them where ref/internal.h declares them (not
 * under TAHQ_SCALAR_ONLY, which Frama-C sets), and keeps the scalar forms
 * the proofs read. Each computes what its scalar form computes:
 *   tahq_cpu_fwht8          the FWHT stages of ref/hadamard.c, 8 lanes
 *   tahq_cpu_halving_tree8  the halving tree of ref/entropy.c, 8 lanes
 *   tahq_cpu_crc32c         CRC-32C with the SSE4.2 instruction (the
 *                           table form of ref/format.c otherwise)
 * tests/test_hadamard.c, test_log2_entropy.c and test_crc.c run against
 * libtahq (these forms) and against the scalar build tahq_scalar. */
#include "internal.h"
#include "vec8.h"

#ifdef TAHQ_HAVE_V8
/* Stages h = 1, 2, 4 act inside each group of 8 consecutive values. With
 * 8-lane vectors the partner of every lane is a fixed permutation p of the
 * lanes: lanes with i & h == 0 take v + v[p] (= a + b), the others
 * v[p] - v (= a - b, the same single operation on the same operands). So
 * each value is computed exactly as in ref/hadamard.c's fwht_stages. */

/* One in-vector stage: v <- (v + v[p]) where upper == 0, (v[p] - v) where upper == -1. */
#define TAHQ_STAGE_IN_VECTOR(v, partner, upper)          \
    do {                                                 \
        tahq_v8f p_ = __builtin_shuffle((v), (partner)); \
        tahq_v8i sum_, diff_;                            \
        tahq_v8f s_ = (v) + p_, d_ = p_ - (v);           \
        memcpy(&sum_, &s_, sizeof sum_);                 \
        memcpy(&diff_, &d_, sizeof diff_);               \
        sum_ = (sum_ & ~(upper)) | (diff_ & (upper));    \
        memcpy(&(v), &sum_, sizeof sum_);                \
    } while (0)

static inline void fwht_low_stages(float *x, uint32_t tile)
{
    const tahq_v8i p1 = {1, 0, 3, 2, 5, 4, 7, 6}, u1 = {0, -1, 0, -1, 0, -1, 0, -1};
    const tahq_v8i p2 = {2, 3, 0, 1, 6, 7, 4, 5}, u2 = {0, 0, -1, -1, 0, 0, -1, -1};
    const tahq_v8i p4 = {4, 5, 6, 7, 0, 1, 2, 3}, u4 = {0, 0, 0, 0, -1, -1, -1, -1};
    for (uint32_t g = 0; g < tile; g += 8) {
        tahq_v8f v;
        memcpy(&v, x + g, sizeof v);
        TAHQ_STAGE_IN_VECTOR(v, p1, u1);
        TAHQ_STAGE_IN_VECTOR(v, p2, u2);
        TAHQ_STAGE_IN_VECTOR(v, p4, u4);
        memcpy(x + g, &v, sizeof v);
    }
}

/* Stages h >= 8: the pairs (j, j+h) form runs of whole 8-lane vectors. */
static inline void fwht_high_stages(float *x, uint32_t tile)
{
    for (uint32_t h = 8; h < tile; h *= 2)
        for (uint32_t i = 0; i < tile; i += 2 * h)
            for (uint32_t j = i; j < i + h; j += 8) {
                tahq_v8f a, b;
                memcpy(&a, x + j, sizeof a);
                memcpy(&b, x + j + h, sizeof b);
                tahq_v8f sum = a + b, diff = a - b;
                memcpy(x + j, &sum, sizeof sum);
                memcpy(x + j + h, &diff, sizeof diff);
            }
}

TAHQ_HOT void tahq_cpu_fwht8(float *x, uint32_t tile)
{
    fwht_low_stages(x, tile);
    fwht_high_stages(x, tile);
}

TAHQ_HOT float tahq_cpu_halving_tree8(float *w, uint32_t n)
{
    return tahq_v8_halving_tree(w, n);
}
#endif

#ifdef TAHQ_HAVE_CRC32C_SSE42
/* SSE4.2 has a CRC-32C instruction (same polynomial, same reflection). */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t c, const uint8_t *data,
                                                               size_t n)
{
    uint64_t c64 = c;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        c64 = __builtin_ia32_crc32di(c64, word);
    }
    uint32_t c32 = (uint32_t)c64;
    for (; i < n; i++)
        c32 = __builtin_ia32_crc32qi(c32, data[i]);
    return c32;
}

int tahq_cpu_crc32c(uint32_t *c, const uint8_t *data, size_t n)
{
    if (!__builtin_cpu_supports("sse4.2"))
        return 0;
    *c = crc32c_sse42(*c, data, n);
    return 1;
}
#endif
