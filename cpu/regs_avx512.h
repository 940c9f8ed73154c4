/* SPDX-License-Identifier: MIT */
/* regs_avx512.h - a tile held in 16-lane AVX-512 registers: the target, the
 * reductions to 8 lanes and SPEC §5.2's FWHT stages, shared by the encoder's
 * (encode_avx512.h) and the decoder's (decode_avx512.h) 16-lane forms. Not
 * public; include after <immintrin.h> and fwht_avx2.h.
 *
 * No FMA: AVX-512F has fused multiply-adds, and the target below lets the
 * compiler use them, so these functions rely on the build's
 * -ffp-contract=off (every multiply and add here is its own intrinsic; the
 * exhaustive log2 test and the whole-message tests would see a contraction). */
#ifndef TAHQ_CPU_REGS_AVX512_H
#define TAHQ_CPU_REGS_AVX512_H

#include <stdint.h>

#include <immintrin.h>

#define TAHQ_AVX512_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,bmi2,f16c")))
#define TAHQ_AVX512_INLINE static inline __attribute__((always_inline)) TAHQ_AVX512_TARGET

/* Lanes 0..7 op lanes 8..15: the first step of every 16-lane reduction (a
 * halving tree's level h = 8, or a min / max), then the 8-lane helpers. */
TAHQ_AVX512_INLINE __m256 tahq_lo8_ps(__m512 v)
{
    return _mm512_castps512_ps256(v);
}
TAHQ_AVX512_INLINE __m256 tahq_hi8_ps(__m512 v)
{
    return _mm512_extractf32x8_ps(v, 1);
}
TAHQ_AVX512_INLINE __m256i tahq_lo8_epi32(__m512i v)
{
    return _mm512_castsi512_si256(v);
}
TAHQ_AVX512_INLINE __m256i tahq_hi8_epi32(__m512i v)
{
    return _mm512_extracti64x4_epi64(v, 1);
}

/* One FWHT stage h < 16 inside a 16-lane vector, p = the lanes i ^ h: lanes
 * with i & h = 0 get v[i] + v[i+h], the others (mask) v[i-h] - v[i], the
 * scalar butterfly's operands and order (as fwht_avx2.h). */
TAHQ_AVX512_INLINE __m512 tahq_fwht16_stage(__m512 v, __m512 p, __mmask16 upper)
{
    return _mm512_mask_sub_ps(_mm512_add_ps(v, p), upper, p, v);
}

/* The unscaled transform of the 16n values in r[0 .. n) (n a power of two,
 * at most 16): stages h = 1, 2, 4, 8 inside each vector, then h = 16 .. 8n
 * across vectors (r[j] + r[j+h], r[j] - r[j+h]). */
TAHQ_AVX512_INLINE void tahq_fwht16_regs(__m512 *r, const uint32_t n)
{
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        __m512 v = r[i];
        v = tahq_fwht16_stage(v, _mm512_permute_ps(v, 0xB1), 0xAAAA);          /* h = 1 */
        v = tahq_fwht16_stage(v, _mm512_permute_ps(v, 0x4E), 0xCCCC);          /* h = 2 */
        v = tahq_fwht16_stage(v, _mm512_shuffle_f32x4(v, v, 0xB1), 0xF0F0);    /* h = 4 */
        r[i] = tahq_fwht16_stage(v, _mm512_shuffle_f32x4(v, v, 0x4E), 0xFF00); /* h = 8 */
    }
    TAHQ_FWHT_ACROSS(r, n); /* stages 16 .. 8n */
}

/* 0x01 repeated in each byte times 2^b - 1: the b low bits of every byte. */
#define TAHQ_BYTE_MASK(b) (UINT64_C(0x0101010101010101) * ((1u << (b)) - 1u))

#endif
