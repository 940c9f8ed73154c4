/* SPDX-License-Identifier: MIT */
/* tile_avx512.h - the per-tile steps of the 16-lane forms (the avx512 path
 * of cpu_path.h), shared by the message's tile phase (encode_avx512.h) and
 * the gain key (gain_avx512.h), so that both run the same range, gate,
 * transform and metadata search: a tile of G >= 16 values in G / 16
 * registers, tiles in batches of 16 whose fp16 metadata searches share one
 * register. Each lane does the scalar operations of fast_tile_regs.h's
 * 8-lane helpers (whose scalar steps it calls). Static inline; include after
 * fast_tile_regs.h. */
#ifndef TAHQ_CPU_TILE_AVX512_H
#define TAHQ_CPU_TILE_AVX512_H

#include "regs_avx512.h"

/* code8 on 16 lanes: min(the integer nearest (x - z) / s, L), ties to even. */
TAHQ_AVX512_INLINE __m512i code16(__m512 x, __m512 zv, __m512 sv, __m512i lv)
{
    return _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_div_ps(_mm512_sub_ps(x, zv), sv)), lv);
}

/* One vector of 16 codes (int32 lanes, each < 2^bits), the i-th of its
 * tile, into the tile's packed codes at dst through w: the codes to bytes
 * by VPMOVDB (each < 256), two PEXT, the groups' bits gathered in a 64-bit
 * word that is stored whenever full (tahq_bitwriter: whole 8-byte stores
 * that no later load has to merge); 8-bit codes stored as they are. */
TAHQ_AVX512_INLINE void pack16_put(tahq_bitwriter *w, __m512i q, const uint32_t bits, uint64_t mask,
                                   uint8_t *dst, uint32_t i)
{
    const __m128i b = _mm512_cvtepi32_epi8(q);
    if (bits == 8) {
        _mm_storeu_si128((__m128i *)(void *)(dst + 16 * i), b);
        return;
    }
    const uint64_t g0 = _pext_u64((uint64_t)_mm_cvtsi128_si64(b), mask),
                   g1 = _pext_u64((uint64_t)_mm_extract_epi64(b, 1), mask);
    if (bits <= 4) { /* the 16 codes fill at most 64 bits: one word */
        tahq_bitwriter_put(w, g0 | g1 << (8u * bits), 16u * bits);
    } else {
        tahq_bitwriter_put(w, g0, 8u * bits);
        tahq_bitwriter_put(w, g1, 8u * bits);
    }
}

/* pack8_regs on 16 lanes: n vectors of codes by pack16_put. */
TAHQ_AVX512_INLINE void pack16_regs(const __m512i *q, const uint32_t n, const uint32_t bits,
                                    uint8_t *dst)
{
    const uint64_t mask = TAHQ_BYTE_MASK(bits);
    tahq_bitwriter w = {dst, 0, 0};
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++)
        pack16_put(&w, q[i], bits, mask, dst, i);
    if (bits != 8)
        tahq_bitwriter_flush(&w);
}

/* The range and gate of a tile in n 16-lane vectors: the lane-wise min, max
 * and two largest magnitudes, merged to 8 lanes for gate_lanes; the pivot
 * by a compare mask and a bit scan. With worst (a constant NULL or not),
 * the lane-wise largest magnitude bits are merged into *worst, as in
 * gate_regs. */
TAHQ_AVX512_INLINE int gate16_regs(const __m512 *u, const uint32_t n, float tau, float *lo,
                                   float *hi, uint32_t *pivot, __m512i *worst)
{
    const __m512i mag = _mm512_set1_epi32(0x7FFFFFFF);
    __m512 mn = u[0], mx = u[0];
    __m512i a1 = _mm512_and_si512(_mm512_castps_si512(u[0]), mag), a2 = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (uint32_t i = 1; i < n; i++) {
        mn = _mm512_min_ps(mn, u[i]);
        mx = _mm512_max_ps(mx, u[i]);
        __m512i a = _mm512_and_si512(_mm512_castps_si512(u[i]), mag);
        a2 = _mm512_max_epi32(a2, _mm512_min_epi32(a1, a));
        a1 = _mm512_max_epi32(a1, a);
    }
    if (worst)
        *worst = _mm512_max_epi32(*worst, a1);
    __m256i b1 = tahq_lo8_epi32(a1), b2 = tahq_lo8_epi32(a2);
    top2_merge(&b1, &b2, tahq_hi8_epi32(a1), tahq_hi8_epi32(a2));
    uint32_t m1_bits;
    const int flagged =
        gate_lanes(_mm256_min_ps(tahq_lo8_ps(mn), tahq_hi8_ps(mn)),
                   _mm256_max_ps(tahq_lo8_ps(mx), tahq_hi8_ps(mx)), b1, b2, tau, lo, hi, &m1_bits);
    *pivot = 0;
    if (flagged) {
        /* the first index whose magnitude is m1: the least index of the
         * equal lanes (masked VPMINUD). No mask goes to a general register:
         * GCC 12 spills such a conversion as a 16-bit store and reloads it
         * as 32 bits, the upper bits undefined. */
        const __m512i m1v = _mm512_set1_epi32((int)m1_bits);
        const __m512i lane =
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        __m512i first = _mm512_set1_epi32(-1);
#pragma GCC unroll 16
        for (uint32_t i = 0; i < n; i++) {
            const __mmask16 eq =
                _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(u[i]), mag), m1v);
            first = _mm512_mask_min_epu32(
                first, eq, first, _mm512_add_epi32(lane, _mm512_set1_epi32((int)(16u * i))));
        }
        *pivot = (uint32_t)_mm512_reduce_min_epu32(first);
    }
    return flagged;
}

/* forward_regs and range_regs on 16 lanes: the pivot swap in the registers
 * (the two values from the input tile x; a masked move per vector, so no
 * vector load waits on a narrower store), the transform, the product with
 * 2^-ceil(k/2), the range. */
TAHQ_AVX512_INLINE void forward16_regs(__m512 *u, const uint32_t n, const float *x, uint32_t pivot,
                                       float *lo, float *hi)
{
    const __m512 x0 = _mm512_set1_ps(x[0]), xp = _mm512_set1_ps(x[pivot]);
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t at = pivot / 16u == i ? 1u << (pivot % 16u) : 0u;
        u[i] = _mm512_mask_mov_ps(u[i], _cvtu32_mask16(at), x0);
    }
    u[0] = _mm512_mask_mov_ps(u[0], _cvtu32_mask16(1u), xp);
    tahq_fwht16_regs(u, n);
    const uint32_t k = tahq_tile_log2(16u * n);
    const __m512 f = _mm512_set1_ps(tahq_float_of((127u - (k + 1u) / 2u) << 23));
    __m512 mn, mx;
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        u[i] = _mm512_mul_ps(u[i], f);
        mn = i ? _mm512_min_ps(mn, u[i]) : u[i];
        mx = i ? _mm512_max_ps(mx, u[i]) : u[i];
    }
    *lo = hmin_ps(_mm256_min_ps(tahq_lo8_ps(mn), tahq_hi8_ps(mn)));
    *hi = hmax_ps(_mm256_max_ps(tahq_lo8_ps(mx), tahq_hi8_ps(mx)));
}

/* Steps 2-3 of SPEC §5.3 for fp16 metadata (zero_scale_f16c) on 16 ranges
 * at once, lane by lane the scalar operations: z = value(down(lo)) by
 * VCVTPS2PH with the round-down immediate and VCVTPH2PS, the canonical +0,
 * w = hi - z, sb = up(w / L), then sb + 1 while sb < 0x7C00 and
 * !(w / value(sb) <= L) (lanes with w = 0: s = +0, sb = 0). Returns the
 * lanes whose z is -inf or s +inf (TAHQ_ERR_RANGE). */
TAHQ_AVX512_INLINE __mmask16 zero_scale16_f16(__m512 lo, __m512 hi, uint32_t levels, __m512 *z,
                                              __m512 *s, __m512i *zb, __m512i *sb)
{
    const __m512 zero = _mm512_setzero_ps(), L = _mm512_set1_ps((float)levels);
    const __m256i zh = _mm512_cvtps_ph(lo, _MM_FROUND_TO_NEG_INF);
    __m512 zv = _mm512_cvtph_ps(zh);
    __m512i zbits = _mm512_cvtepu16_epi32(zh);
    __mmask16 bad =
        _mm512_cmpeq_epi32_mask(_mm512_castps_si512(zv), _mm512_set1_epi32((int)0xFF800000u));
    const __mmask16 zz = _mm512_cmp_ps_mask(zv, zero, _CMP_EQ_OQ); /* +-0: canonical +0 */
    zv = _mm512_mask_mov_ps(zv, zz, zero);
    zbits = _mm512_mask_mov_epi32(zbits, zz, _mm512_setzero_si512());
    const __m512 w = _mm512_sub_ps(hi, zv);
    const __mmask16 wnz = _mm512_cmp_ps_mask(w, zero, _CMP_NEQ_UQ); /* C's w != 0 */
    __m512i sbits =
        _mm512_cvtepu16_epi32(_mm512_cvtps_ph(_mm512_div_ps(w, L), _MM_FROUND_TO_POS_INF));
    __m512 sv;
    for (;;) {
        sv = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(sbits));
        const __mmask16 more =
            _mm512_mask_cmplt_epu32_mask(wnz, sbits, _mm512_set1_epi32(0x7C00)) &
            _mm512_cmp_ps_mask(_mm512_div_ps(w, sv), L, _CMP_NLE_UQ); /* !(w / s <= L) */
        if (_kortestz_mask16_u8(more, more))
            break;
        sbits = _mm512_mask_add_epi32(sbits, more, sbits, _mm512_set1_epi32(1));
    }
    sv = _mm512_maskz_mov_ps(wnz, sv);
    sbits = _mm512_maskz_mov_epi32(wnz, sbits);
    bad |=
        _mm512_mask_cmpeq_epi32_mask(wnz, _mm512_castps_si512(sv), _mm512_set1_epi32(0x7F800000));
    *z = zv;
    *s = sv;
    *zb = zbits;
    *sb = sbits;
    return bad;
}

/* What a batch of up to 16 tiles knows after its first pass (range, gate,
 * transform) and its metadata search at one width. */
typedef struct batch16 {
    float lo[16], hi[16], z[16], s[16];
    uint32_t zb[16], sb[16], bad[16];
    uint32_t flagged[16], pivot[16];
} batch16;

/* The first pass over tiles 0 .. m-1 of 16n values at x: range, gate and,
 * for a flagged tile, the transform (kept in moved[j]) and its range; with
 * worst, the magnitudes' lane-wise maximum as in gate16_regs. */
TAHQ_AVX512_INLINE void batch16_ranges(batch16 *b, const float *x, uint32_t m, const uint32_t n,
                                       float tau, float moved[16][TAHQ_TILE_MAX], __m512i *worst)
{
    for (uint32_t j = 0; j < m; j++) {
        const float *xt = x + (uint64_t)j * 16u * n;
        __m512 u[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
        for (uint32_t i = 0; i < n; i++)
            u[i] = _mm512_loadu_ps(xt + 16 * i);
        b->flagged[j] = (uint32_t)gate16_regs(u, n, tau, &b->lo[j], &b->hi[j], &b->pivot[j], worst);
        if (b->flagged[j]) {
            forward16_regs(u, n, xt, b->pivot[j], &b->lo[j], &b->hi[j]);
#pragma GCC unroll 16
            for (uint32_t i = 0; i < n; i++)
                _mm512_storeu_ps(moved[j] + 16 * i, u[i]);
        }
    }
}

/* The values tile j of a batch quantizes: its transform if flagged, else
 * the input tile x_j. */
TAHQ_AVX512_INLINE const float *batch16_values(const batch16 *b, uint32_t j, const float *xj,
                                               float moved[16][TAHQ_TILE_MAX])
{
    return b->flagged[j] ? moved[j] : xj;
}

/* The metadata of tiles 0 .. m-1 of a batch from their ranges: 16 lanes at
 * once for fp16, tile by tile (the reference's conversions) otherwise. */
TAHQ_AVX512_INLINE void batch16_meta(batch16 *b, uint32_t m, tahq_meta meta, uint32_t levels)
{
    if (meta == TAHQ_META_FP16) {
        /* lanes past m: the range [0, 0], harmless */
        const __mmask16 live = (__mmask16)((1u << m) - 1u);
        __m512 z, s;
        __m512i zb, sb;
        const __mmask16 bad =
            zero_scale16_f16(_mm512_maskz_loadu_ps(live, b->lo), _mm512_maskz_loadu_ps(live, b->hi),
                             levels, &z, &s, &zb, &sb);
        _mm512_storeu_ps(b->z, z);
        _mm512_storeu_ps(b->s, s);
        _mm512_storeu_si512(b->zb, zb);
        _mm512_storeu_si512(b->sb, sb);
        /* the lanes as 0 / 1 words: no mask goes to a general register */
        _mm512_storeu_si512(b->bad, _mm512_maskz_set1_epi32(bad, 1));
        return;
    }
    for (uint32_t j = 0; j < m; j++)
        b->bad[j] = zero_scale_avx(meta, b->lo[j], b->hi[j], levels, &b->z[j], &b->s[j], &b->zb[j],
                                   &b->sb[j]) != TAHQ_OK;
}

#endif
