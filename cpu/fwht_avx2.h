/* SPDX-License-Identifier: MIT */
/* fwht_avx2.h - SPEC §5.2's FWHT stages on a tile held in AVX2 registers,
 * shared by the encoder's forward transform (fast_encode.c) and the
 * decoder's inverse (fast_tile.c). Not public; include after <immintrin.h>
 * in code built for AVX2. */
#ifndef TAHQ_CPU_FWHT_AVX2_H
#define TAHQ_CPU_FWHT_AVX2_H

#include <stdint.h>

#include <immintrin.h>

#define TAHQ_FWHT_TARGET __attribute__((always_inline, target("avx2")))

/* One FWHT stage h < 8 inside an 8-lane vector: lanes with i & h = 0 get
 * v[i] + v[i+h], the others v[i-h] - v[i]: the same operands in the same
 * order as the scalar butterfly (a + b, a - b). */
static inline TAHQ_FWHT_TARGET __m256 tahq_fwht_stage1(__m256 v)
{
    __m256 p = _mm256_permute_ps(v, 0xB1); /* lanes 1 0 3 2 */
    return _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xAA);
}
static inline TAHQ_FWHT_TARGET __m256 tahq_fwht_stage2(__m256 v)
{
    __m256 p = _mm256_permute_ps(v, 0x4E); /* lanes 2 3 0 1 */
    return _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xCC);
}
static inline TAHQ_FWHT_TARGET __m256 tahq_fwht_stage4(__m256 v)
{
    __m256 p = _mm256_permute2f128_ps(v, v, 0x01); /* halves swapped */
    return _mm256_blend_ps(_mm256_add_ps(v, p), _mm256_sub_ps(p, v), 0xF0);
}

/* The FWHT stages across the n vectors r[0 .. n) of one tile (n a power of
 * two): vector stage h = 1 .. n/2 gives r[j] + r[j+h] and r[j] - r[j+h].
 * GCC's vector operators (one VADDPS / VSUBPS per vector, as the
 * intrinsics), so that the 8-lane form here and the 16-lane one
 * (regs_avx512.h) share it; the loops unroll fully where n is a constant. */
#define TAHQ_FWHT_ACROSS(r, n)                                                      \
    do {                                                                            \
        _Pragma("GCC unroll 8") for (uint32_t h_ = 1; h_ < (n); h_ *= 2)            \
            _Pragma("GCC unroll 32") for (uint32_t i_ = 0; i_ < (n); i_ += 2 * h_)  \
                _Pragma("GCC unroll 32") for (uint32_t j_ = i_; j_ < i_ + h_; j_++) \
        {                                                                           \
            const __typeof__((r)[0]) a_ = (r)[j_], b_ = (r)[j_ + h_];               \
            (r)[j_] = a_ + b_;                                                      \
            (r)[j_ + h_] = a_ - b_;                                                 \
        }                                                                           \
    } while (0)

/* The unscaled transform of the 8n values in r[0 .. n) (n a power of two,
 * at most 32): stages h = 1, 2, 4 inside each vector, then h = 8 .. 4n
 * across vectors. The loops unroll fully where n is a constant, so r stays
 * in registers. */
static inline TAHQ_FWHT_TARGET void tahq_fwht_regs(__m256 *r, const uint32_t n)
{
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        r[i] = tahq_fwht_stage4(tahq_fwht_stage2(tahq_fwht_stage1(r[i])));
    TAHQ_FWHT_ACROSS(r, n);
}

#endif
