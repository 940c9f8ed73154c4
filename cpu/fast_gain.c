/* SPDX-License-Identifier: MIT */
/* fast_gain.c - the gain key of a token (SPEC §4.3) on the encoder's fast
 * path (cpu/fast_gain.h): the bits of ref/gain.c tahq_token_gain_key. The
 * 8-lane form is here, the 16-lane one of the avx512 path in
 * gain_avx512.h.
 *
 * The tile goes through the very range, gate, transform, metadata search and
 * nearest codes that the message's tile phase uses: the register helpers of
 * fast_tile_regs.h, shared with fast_encode.c.
 *
 * Per tile, loaded into AVX2 registers once: gate_regs (range, gate, pivot),
 * for a flagged tile forward_regs and range_regs; then for lo_bits and
 * hi_bits: zero_scale_avx, the codes in the registers (nearest: code8;
 * stochastic: tahq_stochastic_codes8, the rounding of the tile phase, with
 * the tile's random words drawn once by tahq_fast_random_words for both
 * widths; all zero where s = 0, as ref/quant.c), and the error of
 * SPEC §4.3 step 1 lane by lane: v̂ = fl(z + fl(q × s)), d = fl(v̂ − v) in
 * binary32, D = d × d in binary64 (exact), summed in the halving tree of
 * §2.5 in binary64 (levels h >= 8 whole vectors, h = 4, 2, 1 across lanes:
 * each lane 0 sum has the reference's two operands, and IEEE addition is
 * commutative). The tile gains go into the pairwise sum of §2.5 in binary64
 * (ref/gain.c gain_pairwise_push and _finish, whose operand order this
 * keeps), then the order-preserving map of step 4. No FMA (the target does
 * not enable it; -ffp-contract=off). */
#include <string.h>

#include "cpu_path.h"
#include "fast_encode.h"
#include "fast_gain.h"
#include "fast_tile.h"
#include "fast_tile_regs.h"
#include "internal.h"
#include "pairwise.h"

#ifdef TAHQ_FAST_ENC_X86

#include "stochastic_avx2.h"

/* The last two levels of SPEC §2.5's halving tree in binary64 on the 4
 * sums of level 4: lane 0 + lane 2 (h = 2), then lane 0 + lane 1 (h = 1). */
static inline __attribute__((always_inline)) ENC_TARGET double tree64_tail(__m256d v)
{
    v = _mm256_add_pd(v, _mm256_permute2f128_pd(v, v, 0x01)); /* h = 2 */
    v = _mm256_add_pd(v, _mm256_permute_pd(v, 0x5));          /* h = 1 */
    return _mm256_cvtsd_f64(v);
}

/* SPEC §2.5 halving tree in binary64 over the squares of one tile: lo[i]
 * holds elements 8i .. 8i+3, hi[i] elements 8i+4 .. 8i+7 (both overwritten). */
static inline __attribute__((always_inline)) ENC_TARGET double tree64_regs(__m256d *lo, __m256d *hi,
                                                                           const uint32_t n)
{
#pragma GCC unroll 8
    for (uint32_t h = n / 2; h >= 1; h /= 2)
#pragma GCC unroll 16
        for (uint32_t j = 0; j < h; j++) {
            lo[j] = _mm256_add_pd(lo[j], lo[j + h]);
            hi[j] = _mm256_add_pd(hi[j], hi[j + h]);
        }
    return tree64_tail(_mm256_add_pd(lo[0], hi[0])); /* h = 4 */
}

/* e_b of SPEC §4.3 step 1 for the tile u (n vectors) quantized to z, s and
 * the codes q (as floats, exact: q <= 255). */
static inline __attribute__((always_inline)) ENC_TARGET double
width_error_regs(const __m256 *u, const __m256 *q, const uint32_t n, float z, float s)
{
    const __m256 zv = _mm256_set1_ps(z), sv = _mm256_set1_ps(s);
    __m256d lo[TAHQ_TILE_MAX / 8], hi[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++) {
        const __m256 decoded = _mm256_add_ps(zv, _mm256_mul_ps(q[i], sv));
        const __m256 d = _mm256_sub_ps(decoded, u[i]);
        const __m256d d_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
        const __m256d d_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
        lo[i] = _mm256_mul_pd(d_lo, d_lo);
        hi[i] = _mm256_mul_pd(d_hi, d_hi);
    }
    return tree64_regs(lo, hi, n);
}

/* Whether the lane-wise largest magnitude bits `worst` fail the input check
 * of SPEC §3.2 (an element non-finite or of magnitude 2^64 or more). */
static inline __attribute__((always_inline)) ENC_TARGET int worst_fails(__m256i worst)
{
    const __m256i fail = _mm256_cmpgt_epi32(worst, _mm256_set1_epi32(0x5F800000 - 1));
    return !_mm256_testz_si256(fail, fail);
}

/* The gain g of SPEC §4.3 steps 1-2 of the tile at x (8n values; its first
 * element has index elem0), or the metadata overflow of either width; the
 * tile's gate, pivot and metadata at both widths in *kn (the message's).
 * The tile's magnitudes go into *worst; TAHQ_ERR_NONFINITE, before any
 * metadata, once *worst fails the input check. With hi_dst, the tile's
 * packed codes at hi_bits (the message's) go there. */
static inline __attribute__((always_inline)) ENC_TARGET tahq_status
tile_gain_regs(const tahq_config *c, const float *x, const uint32_t n, uint64_t elem0, double *gain,
               tahq_tile_meta *kn, __m256i *worst, uint8_t *hi_dst)
{
    const uint32_t G = 8u * n;
    __m256 u[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_loadu_ps(x + 8 * i);
    float lo, hi;
    uint32_t pivot;
    const int flagged = gate_regs(u, n, c->tau, &lo, &hi, &pivot, worst);
    if (worst_fails(*worst))
        return TAHQ_ERR_NONFINITE;
    kn->pivot = (uint16_t)pivot;
    kn->flagged = (uint16_t)flagged;
    if (flagged) {
        float v[TAHQ_TILE_MAX];
        forward_regs(u, n, pivot, v);
        range_regs(u, n, &lo, &hi);
    }
    /* the tile's random words, drawn once for both widths (they depend on
     * the seed and the element index only) */
    const int stochastic = c->rounding == TAHQ_ROUND_STOCHASTIC;
    uint32_t words[TAHQ_TILE_MAX];
    if (stochastic)
        tahq_fast_random_words(c->seed, elem0, G, words);
    const uint32_t widths[2] = {c->lo_bits, c->hi_bits};
    double err[2];
    for (uint32_t w = 0; w < 2; w++) {
        const uint32_t levels = (1u << widths[w]) - 1u;
        float z, s;
        uint32_t zero_bits, scale_bits;
        const tahq_status st =
            zero_scale_avx(c->meta, lo, hi, levels, &z, &s, &zero_bits, &scale_bits);
        if (st != TAHQ_OK)
            return st;
        kn->zero_bits[w] = zero_bits;
        kn->scale_bits[w] = scale_bits;
        __m256i qi[TAHQ_TILE_MAX / 8];
        const __m256 zv = _mm256_set1_ps(z), sv = _mm256_set1_ps(s);
        const __m256i lv = _mm256_set1_epi32((int)levels);
        if (s == 0.0f) {
#pragma GCC unroll 32
            for (uint32_t i = 0; i < n; i++)
                qi[i] = _mm256_setzero_si256();
        } else if (stochastic) {
#pragma GCC unroll 32
            for (uint32_t i = 0; i < n; i++)
                qi[i] = tahq_stochastic_codes8(
                    u[i], zv, sv, lv,
                    _mm256_loadu_si256((const __m256i *)(const void *)(words + 8 * i)));
        } else {
#pragma GCC unroll 32
            for (uint32_t i = 0; i < n; i++)
                qi[i] = code8(u[i], zv, sv, lv);
        }
        if (w == 1 && hi_dst)
            pack8_regs(qi, n, widths[1], hi_dst);
        __m256 q[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i++)
            q[i] = _mm256_cvtepi32_ps(qi[i]);
        err[w] = width_error_regs(u, q, n, z, s);
    }
    double g = err[0] - err[1];
    if (flagged && (tahq_tile_log2(G) & 1u))
        g = 2.0 * g;
    *gain = g;
    return TAHQ_OK;
}

/* ref/gain.c gain_pairwise: the pairwise (binary-counter) sum of SPEC §2.5
 * in binary64, with its operand order. */
typedef struct gain_acc {
    double sum[64];
    uint64_t count;
    uint32_t depth;
} gain_acc;

static inline void gain_push(gain_acc *acc, double v)
{
    for (uint64_t c = acc->count++; c & 1u; c >>= 1)
        v = acc->sum[--acc->depth] + v;
    acc->sum[acc->depth++] = v;
}

static inline double gain_finish(const gain_acc *acc)
{
    double v = acc->sum[acc->depth - 1];
    for (uint32_t i = acc->depth - 1; i > 0; i--)
        v = acc->sum[i - 1] + v;
    return v;
}

static inline __attribute__((always_inline)) ENC_TARGET tahq_status
row_gain_regs(const tahq_config *c, const float *row, uint32_t T, const uint32_t n, uint64_t elem0,
              double *sigma, tahq_tile_meta *known, uint8_t *hi_codes)
{
    gain_acc acc = {.count = 0, .depth = 0};
    __m256i worst = _mm256_setzero_si256();
    const uint32_t hi_bytes = n * c->hi_bits; /* a tile's codes at hi_bits */
    for (uint32_t t = 0; t < T; t++) {
        tahq_prefetch_tile_ahead(row, t, 8u * n);
        double g;
        const tahq_status st =
            tile_gain_regs(c, row + (uint64_t)t * 8u * n, n, elem0 + (uint64_t)t * 8u * n, &g,
                           &known[t], &worst, hi_codes ? hi_codes + (uint64_t)t * hi_bytes : NULL);
        if (st != TAHQ_OK)
            return st;
        gain_push(&acc, g);
    }
    *sigma = gain_finish(&acc);
    return TAHQ_OK;
}

static ENC_TARGET tahq_status row_gain_avx(const tahq_config *c, const float *row, uint32_t T,
                                           uint64_t elem0, double *sigma, tahq_tile_meta *known,
                                           uint8_t *hi_codes)
{
    switch (c->tile) {
    case 8:
        return row_gain_regs(c, row, T, 1, elem0, sigma, known, hi_codes);
    case 16:
        return row_gain_regs(c, row, T, 2, elem0, sigma, known, hi_codes);
    case 32:
        return row_gain_regs(c, row, T, 4, elem0, sigma, known, hi_codes);
    case 64:
        return row_gain_regs(c, row, T, 8, elem0, sigma, known, hi_codes);
    case 128:
        return row_gain_regs(c, row, T, 16, elem0, sigma, known, hi_codes);
    default:
        return row_gain_regs(c, row, T, 32, elem0, sigma, known, hi_codes);
    }
}

#include "gain_avx512.h"

tahq_status tahq_fast_gain_key(const tahq_config *cfg, const float *row, uint32_t tiles,
                               uint64_t elem0, uint32_t *key, tahq_tile_meta *known,
                               uint8_t *hi_codes)
{
    if (!tahq_fast_encode_active())
        return TAHQ_ERR_CONFIG;
    double sigma;
    tahq_status st;
    if (cfg->tile >= 16u && tahq_cpu_path_get() == TAHQ_CPU_AVX512) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        st = row_gain_avx512(cfg, row, tiles, elem0, &sigma, known, hi_codes);
    } else {
        tahq_cpu_path_count(TAHQ_CPU_AVX2);
        st = row_gain_avx(cfg, row, tiles, elem0, &sigma, known, hi_codes);
    }
    if (st != TAHQ_OK)
        return st;
    /* SPEC §4.3 step 4: sign 0 flips the sign bit, sign 1 every bit */
    uint64_t w;
    memcpy(&w, &sigma, sizeof w);
    const uint64_t ordered = (w >> 63) != 0 ? ~w : (w ^ UINT64_C(0x8000000000000000));
    *key = (uint32_t)(ordered >> 32);
    return TAHQ_OK;
}

#else /* no fast path: the caller keeps tahq_token_gain_key */

tahq_status tahq_fast_gain_key(const tahq_config *cfg, const float *row, uint32_t tiles,
                               uint64_t elem0, uint32_t *key, tahq_tile_meta *known,
                               uint8_t *hi_codes)
{
    (void)cfg, (void)row, (void)tiles, (void)elem0, (void)key, (void)known, (void)hi_codes;
    return TAHQ_ERR_CONFIG;
}

#endif
