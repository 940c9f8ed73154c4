/* SPDX-License-Identifier: MIT */
/* fast_tile_regs.h - the per-tile register helpers of the encoder's fast
 * path, shared by the message's tile phase (fast_encode.c) and the gain key
 * (fast_gain.c), so that both run the same range, gate, transform, metadata
 * search and nearest codes (what each step computes: fast_encode.c's head
 * comment). Static inline: each translation unit gets its own copy of these
 * always-inlined helpers. */
#ifndef TAHQ_FAST_TILE_REGS_H
#define TAHQ_FAST_TILE_REGS_H

#include <stdint.h>
#include <string.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_FAST_ENC_X86 1
#include <immintrin.h>

#include "fwht_avx2.h"
#include "prefetch.h"
#endif

/* Steps 2-3 of SPEC §5.3 exactly as ref/quant.c tile_zero_scale writes them,
 * with the metadata primitives DOWN(x), VALUE(bits) and SCALE_BITS(w, L)
 * supplied by the includer. */
#define TAHQ_ZERO_SCALE_BODY(DOWN, VALUE, SCALE_BITS) \
    do {                                              \
        uint32_t zb = (DOWN);                         \
        float z = VALUE(zb);                          \
        if (tahq_bits_of(z) == 0xFF800000u)           \
            return TAHQ_ERR_RANGE;                    \
        if (z == 0.0f) { /* canonical +0 */           \
            z = 0.0f;                                 \
            zb = 0;                                   \
        }                                             \
        float w = hi - z;                             \
        float s = 0.0f;                               \
        uint32_t sb = 0;                              \
        if (w != 0.0f) {                              \
            sb = SCALE_BITS(w, levels);               \
            s = VALUE(sb);                            \
            if (tahq_bits_of(s) == 0x7F800000u)       \
                return TAHQ_ERR_RANGE;                \
        }                                             \
        *zero = z;                                    \
        *scale = s;                                   \
        *zero_bits = zb;                              \
        *scale_bits = sb;                             \
        return TAHQ_OK;                               \
    } while (0)

#define REF_VALUE(b) tahq_meta_value(meta, (b))
#define REF_SCALE_BITS(w, L) tahq_meta_scale_bits(meta, (w), (L))

/* the reference's primitives (any metadata type) */
static inline tahq_status zero_scale_ref(tahq_meta meta, float lo, float hi, uint32_t levels,
                                         float *zero, float *scale, uint32_t *zero_bits,
                                         uint32_t *scale_bits)
{
    TAHQ_ZERO_SCALE_BODY(tahq_meta_round_down_bits(meta, lo), REF_VALUE, REF_SCALE_BITS);
}

/* Packed codes written as whole 64-bit words: groups of `nbits` <= 64 bits
 * (8 or 16 codes of b bits, SPEC §8.3's order) appended at bit `have` of `acc`,
 * which is stored (little-endian) when full; flush stores the last partial
 * word's whole bytes (the codes of a tile fill whole bytes). */
typedef struct tahq_bitwriter {
    uint8_t *out;
    uint64_t acc;
    uint32_t have;
} tahq_bitwriter;

static inline __attribute__((always_inline)) void tahq_bitwriter_put(tahq_bitwriter *w,
                                                                     uint64_t group, uint32_t nbits)
{
    w->acc |= group << w->have;
    w->have += nbits;
    if (w->have >= 64u) {
        memcpy(w->out, &w->acc, 8);
        w->out += 8;
        w->have -= 64u;
        /* the group's bits that did not fit (none when have is 0) */
        w->acc = w->have ? group >> (nbits - w->have) : 0;
    }
}

static inline __attribute__((always_inline)) void tahq_bitwriter_flush(tahq_bitwriter *w)
{
    if (w->have)
        memcpy(w->out, &w->acc, w->have / 8u);
}

#ifdef TAHQ_FAST_ENC_X86

#define ENC_TARGET __attribute__((target("avx2,bmi2,f16c")))

/* VCVTPS2PH with an explicit rounding (imm8 bit 2 clear: MXCSR.RC unused) */
static inline ENC_TARGET uint32_t f16_down(float x)
{
    return _cvtss_sh(x, _MM_FROUND_TO_NEG_INF);
}
static inline ENC_TARGET uint32_t f16_up(float x)
{
    return _cvtss_sh(x, _MM_FROUND_TO_POS_INF);
}
static inline ENC_TARGET float f16_value(uint32_t h)
{
    return _cvtsh_ss((unsigned short)h);
}

/* tahq_meta_scale_bits for fp16: up(fl(w / L)), then the next pattern while
 * fl(w / s) > L (0x7C00 = +inf ends it). */
static inline ENC_TARGET uint32_t f16_scale_bits(float w, uint32_t levels)
{
    const float L = (float)levels;
    uint32_t sb = f16_up(w / L);
    while (sb < 0x7C00u && !(w / f16_value(sb) <= L))
        sb++;
    return sb;
}

static inline ENC_TARGET tahq_status zero_scale_f16c(float lo, float hi, uint32_t levels,
                                                     float *zero, float *scale, uint32_t *zero_bits,
                                                     uint32_t *scale_bits)
{
    TAHQ_ZERO_SCALE_BODY(f16_down(lo), f16_value, f16_scale_bits);
}

static inline ENC_TARGET tahq_status zero_scale_avx(tahq_meta meta, float lo, float hi,
                                                    uint32_t levels, float *zero, float *scale,
                                                    uint32_t *zero_bits, uint32_t *scale_bits)
{
    if (meta == TAHQ_META_FP16)
        return zero_scale_f16c(lo, hi, levels, zero, scale, zero_bits, scale_bits);
    return zero_scale_ref(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
}

/* Across the 8 lanes: lane i gets op(v[i], v[i ^ 4]), then ^ 2, then ^ 1. */
static inline ENC_TARGET __m256i swap128(__m256i v)
{
    return _mm256_permute2x128_si256(v, v, 0x01);
}
static inline ENC_TARGET float hmin_ps(__m256 v)
{
    v = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_min_ps(v, _mm256_permute_ps(v, 0x4E));
    v = _mm256_min_ps(v, _mm256_permute_ps(v, 0xB1));
    return _mm256_cvtss_f32(v);
}
static inline ENC_TARGET float hmax_ps(__m256 v)
{
    v = _mm256_max_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_max_ps(v, _mm256_permute_ps(v, 0x4E));
    v = _mm256_max_ps(v, _mm256_permute_ps(v, 0xB1));
    return _mm256_cvtss_f32(v);
}

/* The largest and second largest of the multiset a1 ∪ a2 ∪ b1 ∪ b2, given
 * a1 >= a2 and b1 >= b2 (lane-wise). */
static inline ENC_TARGET void top2_merge(__m256i *a1, __m256i *a2, __m256i b1, __m256i b2)
{
    __m256i m = _mm256_max_epi32(*a1, b1);
    *a2 = _mm256_max_epi32(_mm256_min_epi32(*a1, b1), _mm256_max_epi32(*a2, b2));
    *a1 = m;
}

/* min and max of the n vectors of u (SPEC §5.3 step 1). VMINPS / VMAXPS
 * give the values of tahq_tile_range's integer order keys (the input is
 * finite) except possibly the sign of a zero result, which changes no byte:
 * a zero lo gives z = down(+-0) = +-0, written as the canonical +0 (step 2);
 * a zero hi gives w = fl(+-0 - z), the same value for both signs unless
 * z = +0, where w = +-0 and s = +0 either way (step 3); the gate uses
 * magnitudes only. */
static inline __attribute__((always_inline)) ENC_TARGET void
range_regs(const __m256 *u, const uint32_t n, float *lo, float *hi)
{
    __m256 mn = u[0], mx = u[0];
#pragma GCC unroll 32
    for (uint32_t i = 1; i < n; i++) {
        mn = _mm256_min_ps(mn, u[i]);
        mx = _mm256_max_ps(mx, u[i]);
    }
    *lo = hmin_ps(mn);
    *hi = hmax_ps(mx);
}

/* tahq_gate_from_range from per-lane partial results: mn, mx the lane-wise
 * min and max of the tile, a1 >= a2 per lane the two largest magnitude bits
 * of the values that lane saw (a multiset). Sets the range and the largest
 * magnitude's bits; returns the flag. Shared by the 8-lane gate below and
 * the 16-lane one (encode_avx512.h), which first merges its halves. */
static inline __attribute__((always_inline)) ENC_TARGET int gate_lanes(__m256 mn, __m256 mx,
                                                                       __m256i a1, __m256i a2,
                                                                       float tau, float *lo,
                                                                       float *hi, uint32_t *m1_out)
{
    *lo = hmin_ps(mn);
    *hi = hmax_ps(mx);
    /* tahq_gate_from_range: m1 = max(|lo|, |hi|) as bits */
    const uint32_t lo_bits = tahq_bits_of(*lo) & 0x7FFFFFFFu,
                   hi_bits = tahq_bits_of(*hi) & 0x7FFFFFFFu;
    const uint32_t m1_bits = lo_bits > hi_bits ? lo_bits : hi_bits;
    const float m1 = tahq_float_of(m1_bits);
    *m1_out = m1_bits;
    if (tahq_bits_of(tau) == 0x7F800000u || !(m1 > 0.0f))
        return 0;
    top2_merge(&a1, &a2, swap128(a1), swap128(a2));
    top2_merge(&a1, &a2, _mm256_shuffle_epi32(a1, 0x4E), _mm256_shuffle_epi32(a2, 0x4E));
    top2_merge(&a1, &a2, _mm256_shuffle_epi32(a1, 0xB1), _mm256_shuffle_epi32(a2, 0xB1));
    /* the multiset's second largest: m1 if it occurs twice, else the
     * largest magnitude below m1 (0 if none), = m2 of the reference */
    const float m2 = tahq_float_of((uint32_t)_mm256_cvtsi256_si32(a2));
    return m1 >= tau * m2;
}

/* The range and tahq_gate_from_range of the n vectors of u; with worst
 * (a constant NULL or not), the lane-wise largest magnitude bits of the
 * values are merged into *worst (the input check of SPEC §3.2: every
 * magnitude, NaN and infinity included, is below 2^31 as bits, so the
 * signed maximum orders them). */
static inline __attribute__((always_inline)) ENC_TARGET int
gate_regs(const __m256 *u, const uint32_t n, float tau, float *lo, float *hi, uint32_t *pivot,
          __m256i *worst)
{
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF);
    __m256 mn = u[0], mx = u[0];
    __m256i a1 = _mm256_and_si256(_mm256_castps_si256(u[0]), mag), a2 = _mm256_setzero_si256();
#pragma GCC unroll 32
    for (uint32_t i = 1; i < n; i++) {
        mn = _mm256_min_ps(mn, u[i]);
        mx = _mm256_max_ps(mx, u[i]);
        /* magnitude bits: finite, < 2^31, so signed order = value order */
        __m256i a = _mm256_and_si256(_mm256_castps_si256(u[i]), mag);
        a2 = _mm256_max_epi32(a2, _mm256_min_epi32(a1, a));
        a1 = _mm256_max_epi32(a1, a);
    }
    if (worst)
        *worst = _mm256_max_epi32(*worst, a1);
    uint32_t m1_bits;
    const int flagged = gate_lanes(mn, mx, a1, a2, tau, lo, hi, &m1_bits);
    *pivot = 0;
    if (flagged) { /* first index whose magnitude is m1 */
        const __m256i m1v = _mm256_set1_epi32((int)m1_bits);
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i++) {
            __m256i eq = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(u[i]), mag), m1v);
            uint32_t lanes = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
            if (lanes) {
                *pivot = 8u * i + (uint32_t)__builtin_ctz(lanes);
                break;
            }
        }
    }
    return flagged;
}

/* SPEC §5.2 forward on a flagged tile: the pivot swap on a copy, FWHT stages
 * h = 1, 2, 4 inside each vector (lanes with i & h = 0 get v[i] + v[i+h],
 * the others v[i-h] - v[i]: the scalar butterfly's operands and order),
 * stages h >= 8 across vectors (fwht_avx2.h), then the product with
 * 2^-ceil(k/2). */
static inline __attribute__((always_inline)) ENC_TARGET void
forward_regs(__m256 *u, const uint32_t n, uint32_t pivot, float *v)
{
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        _mm256_storeu_ps(v + 8 * i, u[i]);
    const float t = v[0];
    v[0] = v[pivot];
    v[pivot] = t;
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_loadu_ps(v + 8 * i);
    tahq_fwht_regs(u, n);
    const uint32_t k = tahq_tile_log2(8u * n);
    const __m256 f = _mm256_set1_ps(tahq_float_of((127u - (k + 1u) / 2u) << 23));
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_mul_ps(u[i], f);
}

/* ref/quant.c codes_nearest on the n vectors of u, packed as tahq_pack_tile
 * (8 codes = b bytes, code j at bits j*b) into dst. The integer nearest t,
 * ties to even (SPEC §5.3 step 4), by VCVTPS2DQ under the default rounding
 * of MXCSR: the value of the reference's (t + 2^23) - 2^23 for 0 <= t <= L. */
static inline __attribute__((always_inline)) ENC_TARGET __m256i code8(__m256 x, __m256 zv,
                                                                      __m256 sv, __m256i lv)
{
    __m256 t = _mm256_div_ps(_mm256_sub_ps(x, zv), sv);
    return _mm256_min_epi32(_mm256_cvtps_epi32(t), lv);
}

/* The packed codes (SPEC §8.3) of n vectors of 8 codes (int32 lanes, each
 * below 2^bits) into dst: each vector's codes to bytes (two saturating
 * packs, exact), PEXT of their b low bits, whole 64-bit stores through
 * tahq_bitwriter; the bytes of tahq_pack_tile. */
static inline __attribute__((always_inline)) ENC_TARGET void
pack8_regs(const __m256i *q, const uint32_t n, uint32_t bits, uint8_t *dst)
{
    const uint64_t mask = UINT64_C(0x0101010101010101) * ((1u << bits) - 1u);
    tahq_bitwriter w = {dst, 0, 0};
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++) {
        const __m128i q16 =
            _mm_packus_epi32(_mm256_castsi256_si128(q[i]), _mm256_extracti128_si256(q[i], 1));
        const uint64_t g = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(q16, q16));
        if (bits == 8)
            memcpy(dst + 8 * i, &g, 8);
        else
            tahq_bitwriter_put(&w, _pext_u64(g, mask), 8u * bits);
    }
    if (bits != 8)
        tahq_bitwriter_flush(&w);
}

#endif /* TAHQ_FAST_ENC_X86 */

#endif /* TAHQ_FAST_TILE_REGS_H */
