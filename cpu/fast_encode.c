/* fast_encode.c - the encoder's per-tile fast path (cpu/fast_encode.h).
 *
 * One tile of G <= 256 values is loaded into AVX2 registers once; from them:
 *   - the range (SPEC §5.3 step 1) as integer order keys, as tahq_tile_range;
 *   - the gate (§5.1): the two largest magnitudes as a multiset (per lane the
 *     largest and second largest magnitude bits, merged across lanes), which
 *     is m2 of tahq_gate_from_range (m1 when it occurs twice, else the
 *     largest magnitude below m1); the pivot, for flagged tiles only, is the
 *     first lane equal to m1 (a compare and a bit scan);
 *   - flagged tiles: the reference's tahq_hadamard_forward on a copy, then
 *     the range of the transformed values;
 *   - metadata (§5.3 steps 2-3): ref/quant.c's tile_zero_scale step by step,
 *     with fp16 conversions by F16C: VCVTPS2PH with the round-down and
 *     round-up immediates gives down(x) and up(x) of SPEC §2.2 directly and
 *     VCVTPH2PS widens (tests/test_fast_encode.c compares them with
 *     ref/fp16.c on every binary32 and binary16 pattern);
 *   - nearest codes (§5.3 step 4): t = (v - z) / s, (t + 2^23) - 2^23,
 *     truncation, min(q, L) on 8 lanes, the operations and order of
 *     ref/quant.c codes_nearest (no FMA: the target below does not enable
 *     it and the build has -ffp-contract=off), packed with BMI2 PEXT in the
 *     registers; stochastic codes by tahq_fast_codes_stochastic (fast_tile.c).
 * The caller checked the input finite (SPEC §3.2); MXCSR is the C default
 * (round to nearest, no flush-to-zero / denormals-are-zero), as every float
 * operation of the codec assumes. */
#include <string.h>

#include "fast_encode.h"
#include "fast_tile.h"
#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_FAST_ENC_X86 1
#include <immintrin.h>
#endif

/* Steps 2-3 of SPEC §5.3 exactly as ref/quant.c tile_zero_scale writes them,
 * with the metadata primitives DOWN(x), VALUE(bits) and SCALE_BITS(w, L)
 * supplied by the includer. */
#define TAHQ_ZERO_SCALE_BODY(DOWN, VALUE, SCALE_BITS)                                \
    do {                                                                         \
        uint32_t zb = (DOWN);                                                    \
        float z = VALUE(zb);                                                     \
        if (tahq_bits_of(z) == 0xFF800000u)                                      \
            return TAHQ_ERR_RANGE;                                               \
        if (z == 0.0f) { /* canonical +0 */                                      \
            z = 0.0f;                                                            \
            zb = 0;                                                              \
        }                                                                        \
        float w = hi - z;                                                        \
        float s = 0.0f;                                                          \
        uint32_t sb = 0;                                                         \
        if (w != 0.0f) {                                                         \
            sb = SCALE_BITS(w, levels);                                          \
            s = VALUE(sb);                                                       \
            if (tahq_bits_of(s) == 0x7F800000u)                                  \
                return TAHQ_ERR_RANGE;                                           \
        }                                                                        \
        *zero = z;                                                               \
        *scale = s;                                                              \
        *zero_bits = zb;                                                         \
        *scale_bits = sb;                                                        \
        return TAHQ_OK;                                                          \
    } while (0)

#define REF_VALUE(b) tahq_meta_value(meta, (b))
#define REF_SCALE_BITS(w, L) tahq_meta_scale_bits(meta, (w), (L))

/* the reference's primitives (any metadata type) */
static tahq_status zero_scale_ref(tahq_meta meta, float lo, float hi, uint32_t levels, float *zero,
                                  float *scale, uint32_t *zero_bits, uint32_t *scale_bits)
{
    TAHQ_ZERO_SCALE_BODY(tahq_meta_round_down_bits(meta, lo), REF_VALUE, REF_SCALE_BITS);
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

static ENC_TARGET tahq_status zero_scale_f16c(float lo, float hi, uint32_t levels, float *zero,
                                              float *scale, uint32_t *zero_bits,
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
static inline ENC_TARGET int32_t hmin_epi32(__m256i v)
{
    v = _mm256_min_epi32(v, swap128(v));
    v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, 0x4E));
    v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, 0xB1));
    return _mm256_cvtsi256_si32(v);
}
static inline ENC_TARGET int32_t hmax_epi32(__m256i v)
{
    v = _mm256_max_epi32(v, swap128(v));
    v = _mm256_max_epi32(v, _mm256_shuffle_epi32(v, 0x4E));
    v = _mm256_max_epi32(v, _mm256_shuffle_epi32(v, 0xB1));
    return _mm256_cvtsi256_si32(v);
}

/* The largest and second largest of the multiset a1 ∪ a2 ∪ b1 ∪ b2, given
 * a1 >= a2 and b1 >= b2 (lane-wise). */
static inline ENC_TARGET void top2_merge(__m256i *a1, __m256i *a2, __m256i b1, __m256i b2)
{
    __m256i m = _mm256_max_epi32(*a1, b1);
    *a2 = _mm256_max_epi32(_mm256_min_epi32(*a1, b1), _mm256_max_epi32(*a2, b2));
    *a1 = m;
}

/* order key of a float's bits (ref/quant.c order_key) and back: negative
 * floats get their magnitude bits flipped; the map is its own inverse */
static inline ENC_TARGET __m256i order_key8(__m256i u)
{
    return _mm256_xor_si256(u, _mm256_srli_epi32(_mm256_srai_epi32(u, 31), 1));
}
static inline float from_order_key(int32_t k)
{
    uint32_t u = (uint32_t)k;
    return tahq_float_of(u ^ ((uint32_t)(k >> 31) >> 1));
}

/* min and max of the n vectors of u (tahq_tile_range) */
static inline __attribute__((always_inline)) ENC_TARGET void range_regs(const __m256i *u,
                                                                        const uint32_t n,
                                                                        float *lo, float *hi)
{
    __m256i kmin = order_key8(u[0]), kmax = kmin;
    for (uint32_t i = 1; i < n; i++) {
        __m256i k = order_key8(u[i]);
        kmin = _mm256_min_epi32(kmin, k);
        kmax = _mm256_max_epi32(kmax, k);
    }
    *lo = from_order_key(hmin_epi32(kmin));
    *hi = from_order_key(hmax_epi32(kmax));
}

/* tahq_tile_range and tahq_gate_from_range of the n vectors of u. */
static inline __attribute__((always_inline)) ENC_TARGET int gate_regs(const __m256i *u,
                                                                      const uint32_t n, float tau,
                                                                      float *lo, float *hi,
                                                                      uint32_t *pivot)
{
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i kmin = order_key8(u[0]), kmax = kmin;
    __m256i a1 = _mm256_and_si256(u[0], mag), a2 = _mm256_setzero_si256();
    for (uint32_t i = 1; i < n; i++) {
        __m256i k = order_key8(u[i]);
        kmin = _mm256_min_epi32(kmin, k);
        kmax = _mm256_max_epi32(kmax, k);
        __m256i a = _mm256_and_si256(u[i], mag); /* finite: < 2^31, signed order = value order */
        a2 = _mm256_max_epi32(a2, _mm256_min_epi32(a1, a));
        a1 = _mm256_max_epi32(a1, a);
    }
    *lo = from_order_key(hmin_epi32(kmin));
    *hi = from_order_key(hmax_epi32(kmax));
    /* tahq_gate_from_range: m1 = max(|lo|, |hi|) as bits */
    const uint32_t lo_bits = tahq_bits_of(*lo) & 0x7FFFFFFFu, hi_bits = tahq_bits_of(*hi) & 0x7FFFFFFFu;
    const uint32_t m1_bits = lo_bits > hi_bits ? lo_bits : hi_bits;
    const float m1 = tahq_float_of(m1_bits);
    int flagged = 0;
    if (tahq_bits_of(tau) != 0x7F800000u && m1 > 0.0f) {
        top2_merge(&a1, &a2, swap128(a1), swap128(a2));
        top2_merge(&a1, &a2, _mm256_shuffle_epi32(a1, 0x4E), _mm256_shuffle_epi32(a2, 0x4E));
        top2_merge(&a1, &a2, _mm256_shuffle_epi32(a1, 0xB1), _mm256_shuffle_epi32(a2, 0xB1));
        /* the multiset's second largest: m1 if it occurs twice, else the
         * largest magnitude below m1 (0 if none), = m2 of the reference */
        const float m2 = tahq_float_of((uint32_t)_mm256_cvtsi256_si32(a2));
        flagged = m1 >= tau * m2;
    }
    *pivot = 0;
    if (flagged) { /* first index whose magnitude is m1 */
        const __m256i m1v = _mm256_set1_epi32((int)m1_bits);
        for (uint32_t i = 0; i < n; i++) {
            __m256i eq = _mm256_cmpeq_epi32(_mm256_and_si256(u[i], mag), m1v);
            uint32_t bitsv = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(eq));
            if (bitsv) {
                *pivot = 8u * i + (uint32_t)__builtin_ctz(bitsv);
                break;
            }
        }
    }
    return flagged;
}

/* ref/quant.c codes_nearest on the n vectors of u, packed as tahq_pack_tile
 * (8 codes = b bytes, code j at bits j*b) into dst. */
static inline __attribute__((always_inline)) ENC_TARGET void codes_nearest_regs(
    const __m256i *u, const uint32_t n, float z, float s, uint32_t bits, uint8_t *dst)
{
    const __m256 zv = _mm256_set1_ps(z), sv = _mm256_set1_ps(s), big = _mm256_set1_ps(0x1p23f);
    const __m256i lv = _mm256_set1_epi32((int)((1u << bits) - 1u));
    const uint64_t mask = UINT64_C(0x0101010101010101) * ((1u << bits) - 1u);
    uint8_t buf[TAHQ_TILE_MAX + 8];
    for (uint32_t i = 0; i < n; i++) {
        __m256 t = _mm256_div_ps(_mm256_sub_ps(_mm256_castsi256_ps(u[i]), zv), sv);
        __m256 r = _mm256_sub_ps(_mm256_add_ps(t, big), big); /* one rounding, ties to even */
        __m256i q = _mm256_min_epi32(_mm256_cvttps_epi32(r), lv); /* 0 <= r <= L */
        __m128i q16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        uint64_t w = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(q16, q16));
        w = _pext_u64(w, mask);
        memcpy(buf + i * bits, &w, 8); /* the next group overwrites the extra bytes */
    }
    const uint32_t nbytes = n * bits;
    if (nbytes % 8u == 0) {
        for (uint32_t i = 0; i < nbytes; i += 8)
            memcpy(dst + i, buf + i, 8);
    } else {
        memcpy(dst, buf, nbytes);
    }
}

static inline __attribute__((always_inline)) ENC_TARGET tahq_status
encode_regs(const tahq_config *c, const float *x, const uint32_t n, uint32_t bits, uint64_t elem0,
            uint8_t *dst, uint32_t *zero_bits, uint32_t *scale_bits, int *flagged_out,
            uint32_t *pivot)
{
    __m256i u[TAHQ_TILE_MAX / 8];
    const uint32_t G = 8u * n;
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_loadu_si256((const __m256i *)(const void *)(x + 8 * i));
    float lo, hi;
    const int flagged = gate_regs(u, n, c->tau, &lo, &hi, pivot);
    float v[TAHQ_TILE_MAX];
    const float *values = x;
    if (flagged) {
        memcpy(v, x, G * sizeof(float));
        tahq_hadamard_forward(v, G, *pivot);
        for (uint32_t i = 0; i < n; i++)
            u[i] = _mm256_loadu_si256((const __m256i *)(const void *)(v + 8 * i));
        range_regs(u, n, &lo, &hi);
        values = v;
    }
    *flagged_out = flagged;
    const uint32_t levels = (1u << bits) - 1u;
    float z, s;
    tahq_status st = zero_scale_avx(c->meta, lo, hi, levels, &z, &s, zero_bits, scale_bits);
    if (st != TAHQ_OK)
        return st;
    if (s == 0.0f) {
        memset(dst, 0, G / 8u * bits);
    } else if (c->rounding == TAHQ_ROUND_STOCHASTIC) {
        uint8_t codes[TAHQ_TILE_MAX];
        tahq_fast_codes_stochastic(values, G, z, s, levels, c->seed, elem0, codes);
        tahq_fast_pack_tile(dst, codes, G, bits);
    } else {
        codes_nearest_regs(u, n, z, s, bits, dst);
    }
    return TAHQ_OK;
}

/* One copy per tile size, so that the loops unroll and the tile stays in
 * registers. */
static ENC_TARGET tahq_status encode_tile_avx(const tahq_config *c, const float *x, uint32_t bits,
                                              uint64_t elem0, uint8_t *dst, uint32_t *zb,
                                              uint32_t *sb, int *flagged, uint32_t *pivot)
{
    switch (c->tile) {
    case 8: return encode_regs(c, x, 1, bits, elem0, dst, zb, sb, flagged, pivot);
    case 16: return encode_regs(c, x, 2, bits, elem0, dst, zb, sb, flagged, pivot);
    case 32: return encode_regs(c, x, 4, bits, elem0, dst, zb, sb, flagged, pivot);
    case 64: return encode_regs(c, x, 8, bits, elem0, dst, zb, sb, flagged, pivot);
    case 128: return encode_regs(c, x, 16, bits, elem0, dst, zb, sb, flagged, pivot);
    default: return encode_regs(c, x, 32, bits, elem0, dst, zb, sb, flagged, pivot);
    }
}

static ENC_TARGET uint16_t down_avx(float x)
{
    return (uint16_t)f16_down(x);
}
static ENC_TARGET uint16_t up_avx(float x)
{
    return (uint16_t)f16_up(x);
}
static ENC_TARGET float value_avx(uint16_t h)
{
    return f16_value(h);
}
static ENC_TARGET tahq_status zero_scale_entry_avx(tahq_meta meta, float lo, float hi,
                                                   uint32_t levels, float *z, float *s,
                                                   uint32_t *zb, uint32_t *sb)
{
    return zero_scale_avx(meta, lo, hi, levels, z, s, zb, sb);
}

int tahq_fast_encode_active(void)
{
    return tahq_fast_tile_active(); /* the same features: AVX2, BMI2, F16C */
}

uint16_t tahq_fast_f16_down_bits(float x)
{
    return tahq_fast_encode_active() ? down_avx(x)
                                     : (uint16_t)tahq_meta_round_down_bits(TAHQ_META_FP16, x);
}

uint16_t tahq_fast_f16_up_bits(float x)
{
    return tahq_fast_encode_active() ? up_avx(x)
                                     : (uint16_t)tahq_meta_round_up_bits(TAHQ_META_FP16, x);
}

float tahq_fast_f16_value(uint16_t h)
{
    return tahq_fast_encode_active() ? value_avx(h) : tahq_meta_value(TAHQ_META_FP16, h);
}

tahq_status tahq_fast_zero_scale(tahq_meta meta, float lo, float hi, uint32_t levels, float *zero,
                                 float *scale, uint32_t *zero_bits, uint32_t *scale_bits)
{
    if (tahq_fast_encode_active())
        return zero_scale_entry_avx(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
    return zero_scale_ref(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
}

tahq_status tahq_fast_encode_tile(const tahq_config *cfg, const float *x, uint32_t bits,
                                  uint64_t elem0, uint8_t *dst, uint32_t *zero_bits,
                                  uint32_t *scale_bits, int *flagged, uint32_t *pivot)
{
    return encode_tile_avx(cfg, x, bits, elem0, dst, zero_bits, scale_bits, flagged, pivot);
}

#else /* the reference functions */

int tahq_fast_encode_active(void)
{
    return 0;
}

uint16_t tahq_fast_f16_down_bits(float x)
{
    return (uint16_t)tahq_meta_round_down_bits(TAHQ_META_FP16, x);
}

uint16_t tahq_fast_f16_up_bits(float x)
{
    return (uint16_t)tahq_meta_round_up_bits(TAHQ_META_FP16, x);
}

float tahq_fast_f16_value(uint16_t h)
{
    return tahq_meta_value(TAHQ_META_FP16, h);
}

tahq_status tahq_fast_zero_scale(tahq_meta meta, float lo, float hi, uint32_t levels, float *zero,
                                 float *scale, uint32_t *zero_bits, uint32_t *scale_bits)
{
    return zero_scale_ref(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
}

tahq_status tahq_fast_encode_tile(const tahq_config *cfg, const float *x, uint32_t bits,
                                  uint64_t elem0, uint8_t *dst, uint32_t *zero_bits,
                                  uint32_t *scale_bits, int *flagged, uint32_t *pivot)
{
    (void)cfg, (void)x, (void)bits, (void)elem0, (void)dst, (void)zero_bits, (void)scale_bits,
        (void)flagged, (void)pivot;
    return TAHQ_ERR_CONFIG; /* never called: tahq_fast_encode_active() is 0 */
}

#endif
