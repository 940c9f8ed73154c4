/* SPDX-License-Identifier: MIT */
/* gain_avx512.h - the gain key of a token (SPEC §4.3) on 16 lanes (the
 * avx512 path of cpu_path.h), included once by fast_gain.c after its 8-lane
 * form, whose pairwise sum (gain_push, gain_finish) and last tree levels
 * (tree64_tail) it shares.
 *
 * The row's tiles go in batches of 16 through the tile phase's own steps
 * (tile_avx512.h: range, gate, transform, the metadata search of all 16 at
 * each width); then per tile, in order, the codes at both widths (nearest:
 * code16; stochastic: tahq_stochastic_q16 with the tile's words drawn once
 * by tahq_words64)
 * and the error of SPEC §4.3 step 1 lane by lane as in width_error_regs:
 * v̂ = fl(z + fl(q × s)), d = fl(v̂ − v) in binary32, d × d in binary64,
 * summed in the halving tree of §2.5 (levels h >= 16 whole vectors, h = 8
 * the two 8-double halves of a tile's 16 lanes, h = 4 their 256-bit
 * halves, then tree64_tail). A tile that overflows at either width makes
 * the row's status TAHQ_ERR_RANGE, as in the 8-lane form; a batch with an
 * element that fails the input check, TAHQ_ERR_NONFINITE (checked from
 * the gate's magnitudes before the batch's metadata). */
#ifndef TAHQ_CPU_GAIN_AVX512_H
#define TAHQ_CPU_GAIN_AVX512_H

#include "prefetch.h"
#include "regs_avx512.h"
#include "stochastic_avx512.h"
#include "tile_avx512.h"

/* e_b of SPEC §4.3 step 1 for the tile u (n 16-lane vectors) quantized to
 * z, s and the codes q (as floats, exact: q <= 255). */
TAHQ_AVX512_INLINE double width_error16(const __m512 *u, const __m512 *q, const uint32_t n, float z,
                                        float s)
{
    const __m512 zv = _mm512_set1_ps(z), sv = _mm512_set1_ps(s);
    __m512d lo[TAHQ_TILE_MAX / 16], hi[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        const __m512 decoded = _mm512_add_ps(zv, _mm512_mul_ps(q[i], sv));
        const __m512 d = _mm512_sub_ps(decoded, u[i]);
        const __m512d d_lo = _mm512_cvtps_pd(tahq_lo8_ps(d)),
                      d_hi = _mm512_cvtps_pd(tahq_hi8_ps(d));
        lo[i] = _mm512_mul_pd(d_lo, d_lo); /* elements 16i .. 16i+7 */
        hi[i] = _mm512_mul_pd(d_hi, d_hi); /* elements 16i+8 .. 16i+15 */
    }
#pragma GCC unroll 8
    for (uint32_t h = n / 2; h >= 1; h /= 2)
#pragma GCC unroll 8
        for (uint32_t j = 0; j < h; j++) {
            lo[j] = _mm512_add_pd(lo[j], lo[j + h]);
            hi[j] = _mm512_add_pd(hi[j], hi[j + h]);
        }
    const __m512d v = _mm512_add_pd(lo[0], hi[0]); /* h = 8 */
    return tree64_tail(
        _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1))); /* h = 4 */
}

/* The gain g of SPEC §4.3 steps 1-2 of a tile whose range, gate and
 * metadata at both widths are in b[0] (lo_bits) and b[1] (hi_bits), slot
 * j; v: the values it quantizes (batch16_values); elem0: the index of its
 * first element. With hi_dst, the tile's packed codes at hi_bits (the
 * message's, SPEC §8.3) go there. */
TAHQ_AVX512_INLINE double tile_gain16(const tahq_config *c, const batch16 b[2], uint32_t j,
                                      const float *v, const uint32_t n, uint64_t elem0,
                                      uint8_t *hi_dst)
{
    const uint32_t G = 16u * n;
    __m512 u[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm512_loadu_ps(v + 16 * i);
    const int stochastic = c->rounding == TAHQ_ROUND_STOCHASTIC;
    /* the random words, once for both widths (they depend on the seed and
     * the index only), 64 per step (a tile of 16 or 32 values uses the
     * first 16 or 32) */
    __m512i words[TAHQ_TILE_MAX / 16];
    if (stochastic)
        for (uint32_t i = 0; i < n; i += 4) {
            __m512i e[4];
            tahq_words64(elem0 + 16u * i, (uint32_t)c->seed, (uint32_t)(c->seed >> 32), e);
            for (uint32_t m = 0; m < 4 && i + m < n; m++)
                words[i + m] = e[m];
        }
    const uint32_t widths[2] = {c->lo_bits, c->hi_bits};
    double err[2];
    for (uint32_t w = 0; w < 2; w++) {
        const float z = b[w].z[j], s = b[w].s[j];
        const __m512 zv = _mm512_set1_ps(z), sv = _mm512_set1_ps(s);
        const __m512i lv = _mm512_set1_epi32((int)((1u << widths[w]) - 1u));
        __m512i qi[TAHQ_TILE_MAX / 16];
        if (s == 0.0f) {
#pragma GCC unroll 16
            for (uint32_t i = 0; i < n; i++)
                qi[i] = _mm512_setzero_si512();
        } else if (stochastic) {
#pragma GCC unroll 16
            for (uint32_t i = 0; i < n; i++)
                qi[i] = tahq_stochastic_q16(u[i], zv, sv, lv, words[i]);
        } else {
#pragma GCC unroll 16
            for (uint32_t i = 0; i < n; i++)
                qi[i] = code16(u[i], zv, sv, lv);
        }
        if (w == 1 && hi_dst)
            pack16_regs(qi, n, widths[1], hi_dst);
        __m512 q[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
        for (uint32_t i = 0; i < n; i++)
            q[i] = _mm512_cvtepi32_ps(qi[i]);
        err[w] = width_error16(u, q, n, z, s);
    }
    double g = err[0] - err[1];
    if (b[0].flagged[j] && (tahq_tile_log2(G) & 1u))
        g = 2.0 * g;
    return g;
}

/* row_gain_regs for tiles of 16n values, in batches of 16 tiles. */
TAHQ_AVX512_INLINE tahq_status row_gain16(const tahq_config *c, const float *row, uint32_t T,
                                          const uint32_t n, uint64_t elem0, double *sigma,
                                          tahq_tile_meta *known, uint8_t *hi_codes)
{
    const uint32_t hi_bytes = 2u * n * c->hi_bits; /* a tile's codes at hi_bits */
    const uint32_t G = 16u * n;
    gain_acc acc = {.count = 0, .depth = 0};
    float moved[16][TAHQ_TILE_MAX];
    __m512i worst = _mm512_setzero_si512();
    for (uint32_t t0 = 0; t0 < T; t0 += 16) {
        const uint32_t m = T - t0 < 16u ? T - t0 : 16u;
        const float *x = row + (uint64_t)t0 * G;
        batch16 b[2];
        memset(b, 0, sizeof b); /* the slots past m: read by masked loads only */
        batch16_ranges(&b[0], x, m, n, c->tau, moved, &worst);
        /* the input check of the batch's values, before their metadata */
        if (_mm512_reduce_max_epi32(worst) >= 0x5F800000)
            return TAHQ_ERR_NONFINITE;
        b[1] = b[0];
        batch16_meta(&b[0], m, c->meta, (1u << c->lo_bits) - 1u);
        batch16_meta(&b[1], m, c->meta, (1u << c->hi_bits) - 1u);
        for (uint32_t j = 0; j < m; j++)
            if (b[0].bad[j] || b[1].bad[j])
                return TAHQ_ERR_RANGE;
        for (uint32_t j = 0; j < m; j++)
            known[t0 + j] = (tahq_tile_meta){{b[0].zb[j], b[1].zb[j]},
                                             {b[0].sb[j], b[1].sb[j]},
                                             (uint16_t)b[0].pivot[j],
                                             (uint16_t)b[0].flagged[j]};
        for (uint32_t j = 0; j < m; j++) {
            tahq_prefetch_tile_ahead(x, j, G); /* the next batch's tile j */
            gain_push(&acc,
                      tile_gain16(c, b, j, batch16_values(&b[0], j, x + (uint64_t)j * G, moved), n,
                                  elem0 + (uint64_t)(t0 + j) * G,
                                  hi_codes ? hi_codes + (uint64_t)(t0 + j) * hi_bytes : NULL));
        }
    }
    *sigma = gain_finish(&acc);
    return TAHQ_OK;
}

static TAHQ_AVX512_TARGET tahq_status row_gain_avx512(const tahq_config *c, const float *row,
                                                      uint32_t T, uint64_t elem0, double *sigma,
                                                      tahq_tile_meta *known, uint8_t *hi_codes)
{
    switch (c->tile) {
    case 16:
        return row_gain16(c, row, T, 1, elem0, sigma, known, hi_codes);
    case 32:
        return row_gain16(c, row, T, 2, elem0, sigma, known, hi_codes);
    case 64:
        return row_gain16(c, row, T, 4, elem0, sigma, known, hi_codes);
    case 128:
        return row_gain16(c, row, T, 8, elem0, sigma, known, hi_codes);
    default:
        return row_gain16(c, row, T, 16, elem0, sigma, known, hi_codes);
    }
}

#endif
