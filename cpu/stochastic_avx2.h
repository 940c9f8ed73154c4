/* SPDX-License-Identifier: MIT */
/* stochastic_avx2.h - SPEC §5.3's stochastic rounding of 8 values held in an
 * AVX2 register, shared by the tile phase's codes (fast_tile.c) and the gain
 * key's (fast_gain.c), so both round with the same operations. Not public;
 * include in code built for AVX2. */
#ifndef TAHQ_CPU_STOCHASTIC_AVX2_H
#define TAHQ_CPU_STOCHASTIC_AVX2_H

#include <immintrin.h>

/* The 8 codes (as int32) of the values v with their random words w, in the
 * reference's operations (ref/quant.c codes_stochastic): t = (v - z) / s,
 * f0 = trunc(t), phi = t - f0, rho = (w >> 8) * 2^-24, q = f0 + (rho < phi),
 * min(q, L). */
static inline __attribute__((always_inline, target("avx2"))) __m256i
tahq_stochastic_codes8(__m256 v, __m256 z, __m256 s, __m256i levels, __m256i w)
{
    const __m256 t = _mm256_div_ps(_mm256_sub_ps(v, z), s);
    const __m256i q0 = _mm256_cvttps_epi32(t); /* 0 <= t <= L < 256 */
    const __m256 phi = _mm256_sub_ps(t, _mm256_cvtepi32_ps(q0));
    const __m256 rho =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w, 8)), _mm256_set1_ps(0x1p-24f));
    const __m256i up = _mm256_castps_si256(_mm256_cmp_ps(rho, phi, _CMP_LT_OQ)); /* all ones: +1 */
    return _mm256_min_epu32(_mm256_sub_epi32(q0, up), levels);
}

#endif
