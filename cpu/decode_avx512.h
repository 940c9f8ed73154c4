/* SPDX-License-Identifier: MIT */
/* decode_avx512.h - the 16-lane form of the decoder's runs of tiles (the
 * avx512 path of cpu_path.h), included once by fast_tile.c after its 8-lane
 * form (tiles_avx), whose walk it keeps: the same loads, the same operations
 * per lane, 16 values per register. Each group of 16 codes comes from two
 * PDEPs (8 codes each) of 8-byte loads, widened by VPMOVZXBD, converted and
 * dequantized as zero + (float)q * scale (two rounded operations); a flagged
 * tile stays in registers through the inverse transform (regs_avx512.h),
 * the scaling and the canonical NaNs (a compare mask) to its one store.
 * Tiles of 8 values take the 8-lane form. */
#ifndef TAHQ_CPU_DECODE_AVX512_H
#define TAHQ_CPU_DECODE_AVX512_H

#include "regs_avx512.h"

/* The 16 codes of width b at src (two groups of 8, b bytes each),
 * dequantized. Both 8-byte loads must lie inside the message. */
TAHQ_AVX512_INLINE __m512 group16(const uint8_t *src, const uint32_t b, uint64_t mask, __m512 z,
                                  __m512 s)
{
    uint64_t w0, w1;
    memcpy(&w0, src, 8);
    memcpy(&w1, src + b, 8);
    const __m128i u =
        _mm_set_epi64x((long long)_pdep_u64(w1, mask), (long long)_pdep_u64(w0, mask));
    const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(u));
    return _mm512_add_ps(z, _mm512_mul_ps(q, s));
}

/* inverse_store on 16 lanes: the transform, times 2^-floor(k/2), canonical
 * NaNs, stored to x, then the pivot swap. */
TAHQ_AVX512_INLINE void inverse16_store(__m512 *r, const uint32_t n, float *x, uint32_t pivot,
                                        float factor)
{
    tahq_fwht16_regs(r, n);
    const __m512 f = _mm512_set1_ps(factor);
    const __m512 canon = _mm512_castsi512_ps(_mm512_set1_epi32((int)TAHQ_CANONICAL_NAN_BITS));
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        const __m512 v = _mm512_mul_ps(r[i], f);
        _mm512_storeu_ps(x + 16 * i,
                         _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), canon));
    }
    const float t = x[0];
    x[0] = x[pivot];
    x[pivot] = t;
}

/* tiles_avx for G = 16 nv, on the same walk (dec_walk, fast_tile.c): the
 * tiles whose 8-byte loads stay inside the message here, the last few by
 * tiles_narrow. */
TAHQ_AVX512_INLINE void tiles16(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                                const uint8_t **codes, uint64_t *pivot, const uint32_t nv,
                                const tahq_meta meta)
{
    const uint64_t mask = TAHQ_BYTE_MASK(b);
    dec_walk w = walk_begin(d, t, n, *codes, *pivot, 16u * nv, 2u * nv * b);
    for (; w.t < w.e_wide; walk_next(&w)) {
        const __m512 z = _mm512_set1_ps(meta_load(meta, w.zp)),
                     s = _mm512_set1_ps(meta_load(meta, w.sp));
        if (!walk_flagged(d, &w)) {
#pragma GCC unroll 16
            for (uint32_t g = 0; g < nv; g++)
                _mm512_storeu_ps(w.dst + 16 * g, group16(w.src + 2 * g * b, b, mask, z, s));
        } else {
            __m512 r[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
            for (uint32_t g = 0; g < nv; g++)
                r[g] = group16(w.src + 2 * g * b, b, mask, z, s);
            inverse16_store(r, nv, w.dst, walk_pivot(d, &w), w.factor);
        }
    }
    walk_end(d, &w, b, codes, pivot);
}

/* One copy per tile size, and for fp16 metadata or not (as decode_tiles_avx). */
TAHQ_AVX512_INLINE void tiles16_meta(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                                     const uint8_t **codes, uint64_t *pivot, const tahq_meta meta)
{
    switch (d->tile) {
    case 16:
        tiles16(d, t, n, b, codes, pivot, 1, meta);
        break;
    case 32:
        tiles16(d, t, n, b, codes, pivot, 2, meta);
        break;
    case 64:
        tiles16(d, t, n, b, codes, pivot, 4, meta);
        break;
    case 128:
        tiles16(d, t, n, b, codes, pivot, 8, meta);
        break;
    default:
        tiles16(d, t, n, b, codes, pivot, 16, meta);
        break;
    }
}

static TAHQ_AVX512_TARGET void decode_tiles_avx512(const tahq_fast_dec *d, uint64_t t, uint64_t n,
                                                   uint32_t b, const uint8_t **codes,
                                                   uint64_t *pivot)
{
    if (d->meta == TAHQ_META_FP16)
        tiles16_meta(d, t, n, b, codes, pivot, TAHQ_META_FP16);
    else
        tiles16_meta(d, t, n, b, codes, pivot, d->meta);
}

#endif
