/* SPDX-License-Identifier: MIT */
/* dist_gen.h - deterministic synthetic input distributions for tahq bounds.
 *
 * Each tensor is i.i.d. over its elements (except "llm", the built-in
 * LLM-like tensor of llm_tensor.h) and a function of (seed, element index)
 * only: Philox4x32-10 words (tahq_philox4x32_10, SPEC §2.4), integer
 * operations, binary32 basic operations and sqrtf (correctly rounded in
 * IEEE-754), and the SPEC's own log2 (tahq_log2, §2.3, built from basic
 * operations). No other libm function is used, so the tensors are
 * bit-identical on every IEEE-754 platform.
 *   gauss     standard normal (Marsaglia's polar method)
 *   laplace   Laplace with unit variance (inverse CDF: -b*ln(U), random sign)
 *   student-t Student's t with nu = 3 (Z / sqrt(chi2_3 / 3)), variance 3
 *   llm       the built-in LLM-like tensor (outlier channels, massive tokens)
 */
#ifndef TAHQ_SUPPORT_DIST_GEN_H
#define TAHQ_SUPPORT_DIST_GEN_H

#include <stdint.h>

typedef enum dist_kind {
    DIST_GAUSS = 0,
    DIST_LAPLACE = 1,
    DIST_STUDENT_T = 2,
    DIST_LLM = 3,
    DIST_COUNT = 4
} dist_kind;

const char *dist_name(dist_kind d);
const char *dist_description(dist_kind d);
/* Parse a name; returns -1 if unknown. */
int dist_parse(const char *name);
/* The --dist option of tahq bounds and alloc-study: use[d] = 1 for each
 * name of the comma-separated list, 0 for the others. 0, or the usage exit
 * status after a message naming the unknown distribution. */
int dist_parse_list(const char *list, int use[DIST_COUNT]);

/* Fill x[batch*seq*channels] with distribution d. Returns 0, or -1 if
 * memory runs out (llm only). */
int dist_fill(dist_kind d, float *x, uint32_t batch, uint32_t seq, uint32_t channels,
              uint64_t seed);

/* One standard normal deviate for element idx, variate k (k < 2^8), from the
 * polar method with rejection (deterministic: the attempt number is part of
 * the Philox counter). */
float dist_gauss(uint64_t seed, uint64_t idx, uint32_t k);

#endif
