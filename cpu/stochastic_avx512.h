/* SPDX-License-Identifier: MIT */
/* stochastic_avx512.h - SPEC §5.3's stochastic rounding on 16 lanes (the
 * avx512 path): Philox4x32-10 (SPEC §2.4) of 16 consecutive blocks at once,
 * their 64 words in element order, and the codes of 16 values; shared by
 * tahq_fast_codes_stochastic (fast_tile.c) and the tile phase's batches
 * (encode_avx512.h). The operations per lane are those of philox8 and
 * tahq_stochastic_codes8 (stochastic_avx2.h). Not public; include after
 * regs_avx512.h. */
#ifndef TAHQ_CPU_STOCHASTIC_AVX512_H
#define TAHQ_CPU_STOCHASTIC_AVX512_H

#include <stdint.h>

#include <immintrin.h>

#include "regs_avx512.h"

/* The high and low 32 bits of the 16 products a * m (unsigned 32 x 32 bits):
 * VPMULUDQ on the even lanes and on the odd lanes shifted down. */
TAHQ_AVX512_INLINE void tahq_mulhilo16(__m512i a, __m512i m, __m512i *hi, __m512i *lo)
{
    const __m512i even = _mm512_mul_epu32(a, m),
                  odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
    *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
    *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/* Philox4x32-10 of blocks block0 .. block0 + 15: lane j of w[0..3] is word
 * 0..3 of block block0 + j. */
TAHQ_AVX512_INLINE void tahq_philox16(uint64_t block0, uint32_t key0, uint32_t key1, __m512i w[4])
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i lo0 = _mm512_set1_epi32((int)(uint32_t)block0);
    __m512i c0 = _mm512_add_epi32(lo0, lane);
    /* the low word wrapped: carry into the high word */
    const __mmask16 carry = _mm512_cmplt_epu32_mask(c0, lo0);
    const __m512i hi0 = _mm512_set1_epi32((int)(uint32_t)(block0 >> 32));
    __m512i c1 = _mm512_mask_add_epi32(hi0, carry, hi0, _mm512_set1_epi32(1));
    __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
    const __m512i m0 = _mm512_set1_epi32((int)TAHQ_PHILOX_M0),
                  m1 = _mm512_set1_epi32((int)TAHQ_PHILOX_M1);
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; round++) {
        __m512i h0, l0, h1, l1;
        tahq_mulhilo16(c0, m0, &h0, &l0);
        tahq_mulhilo16(c2, m1, &h1, &l1);
        c0 = _mm512_xor_si512(_mm512_xor_si512(h1, c1), _mm512_set1_epi32((int)k0));
        c2 = _mm512_xor_si512(_mm512_xor_si512(h0, c3), _mm512_set1_epi32((int)k1));
        c1 = l1;
        c3 = l0;
        k0 += TAHQ_PHILOX_W0; /* mod 2^32 */
        k1 += TAHQ_PHILOX_W1;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

/* The random words of elements elem0 .. elem0 + 63 (elem0 a multiple of 4)
 * in element order: tahq_philox16, then a transpose (4 words of each block
 * by unpacks inside 128-bit lanes, the lanes by VSHUFI32X4). */
TAHQ_AVX512_INLINE void tahq_words64(uint64_t elem0, uint32_t key0, uint32_t key1, __m512i e[4])
{
    __m512i o[4];
    tahq_philox16(elem0 >> 2, key0, key1, o);
    const __m512i a = _mm512_unpacklo_epi32(o[0], o[1]), b = _mm512_unpackhi_epi32(o[0], o[1]);
    const __m512i c = _mm512_unpacklo_epi32(o[2], o[3]), d = _mm512_unpackhi_epi32(o[2], o[3]);
    /* 128-bit lane q of bk holds block 4q + k */
    const __m512i b0 = _mm512_unpacklo_epi64(a, c), b1 = _mm512_unpackhi_epi64(a, c);
    const __m512i b2 = _mm512_unpacklo_epi64(b, d), b3 = _mm512_unpackhi_epi64(b, d);
    const __m512i t0 = _mm512_shuffle_i32x4(b0, b1, 0x44), t1 = _mm512_shuffle_i32x4(b2, b3, 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(b0, b1, 0xEE), t3 = _mm512_shuffle_i32x4(b2, b3, 0xEE);
    e[0] = _mm512_shuffle_i32x4(t0, t1, 0x88);
    e[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD);
    e[2] = _mm512_shuffle_i32x4(t2, t3, 0x88);
    e[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD);
}

/* tahq_stochastic_codes8 on 16 lanes: t = (v - z) / s, f0 = trunc(t),
 * phi = t - f0, rho = (w >> 8) * 2^-24, q = f0 + (rho < phi), min(q, L). */
TAHQ_AVX512_INLINE __m512i tahq_stochastic_q16(__m512 v, __m512 z, __m512 s, __m512i levels,
                                               __m512i w)
{
    const __m512 t = _mm512_div_ps(_mm512_sub_ps(v, z), s);
    const __m512i q0 = _mm512_cvttps_epi32(t); /* 0 <= t <= L < 256 */
    const __m512 phi = _mm512_sub_ps(t, _mm512_cvtepi32_ps(q0));
    const __m512 rho =
        _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, 8)), _mm512_set1_ps(0x1p-24f));
    const __mmask16 up = _mm512_cmp_ps_mask(rho, phi, _CMP_LT_OQ);
    const __m512i q = _mm512_mask_add_epi32(q0, up, q0, _mm512_set1_epi32(1));
    return _mm512_min_epu32(q, levels);
}

/* The same codes as 16 bytes (each < 256). */
TAHQ_AVX512_INLINE __m128i tahq_stochastic_codes16(__m512 v, __m512 z, __m512 s, __m512i levels,
                                                   __m512i w)
{
    return _mm512_cvtepi32_epi8(tahq_stochastic_q16(v, z, s, levels, w));
}

#endif
