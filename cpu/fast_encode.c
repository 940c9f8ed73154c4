/* SPDX-License-Identifier: MIT */
/* fast_encode.c - the encoder's per-tile fast path (cpu/fast_encode.h).
 *
 * One tile of G <= 256 values is loaded into AVX2 registers once; from them:
 *   - the range (SPEC §5.3 step 1) with VMINPS / VMAXPS (the values of
 *     tahq_tile_range but for the sign of a zero, which changes no byte:
 *     see range_regs);
 *   - the gate (§5.1): the two largest magnitudes as a multiset (per lane the
 *     largest and second largest magnitude bits, merged across lanes), which
 *     is m2 of tahq_gate_from_range (m1 when it occurs twice, else the
 *     largest magnitude below m1); the pivot, for flagged tiles only, is the
 *     first lane equal to m1 (a compare and a bit scan);
 *   - flagged tiles: the transform of SPEC §5.2 (tahq_hadamard_forward) in
 *     the registers, then the range of the transformed values;
 *   - metadata (§5.3 steps 2-3): ref/quant.c's tile_zero_scale step by step,
 *     with fp16 conversions by F16C: VCVTPS2PH with the round-down and
 *     round-up immediates gives down(x) and up(x) of SPEC §2.2 directly and
 *     VCVTPH2PS widens (tests/test_fast_encode.c compares them with
 *     ref/fp16.c on every binary32 and binary16 pattern);
 *   - nearest codes (§5.3 step 4): t = (v - z) / s, the integer nearest t
 *     (ties to even), min(q, L) on 8 lanes (no FMA: the target below does
 *     not enable it and the build has -ffp-contract=off), packed with BMI2
 *     PEXT in the registers; stochastic codes by tahq_fast_codes_stochastic
 *     (fast_tile.c).
 * The caller checked the input finite (SPEC §3.2); MXCSR is the C default
 * (round to nearest, no flush-to-zero / denormals-are-zero), as every float
 * operation of the codec assumes. */
#include <string.h>

#include "cpu_path.h"
#include "fast_encode.h"
#include "fast_tile.h"
#include "internal.h"
#include "pairwise.h"

#include "fast_tile_regs.h"

#ifdef TAHQ_FAST_ENC_X86

/* What the tile phase writes for one tile besides its codes. */
typedef struct enc_tile {
    uint32_t zero_bits, scale_bits, pivot;
    int flagged;
} enc_tile;

/* The packed codes of a tile from the buffer of 8-byte group stores to the
 * message: whole words where the length allows. */
static inline __attribute__((always_inline)) void copy_codes(uint8_t *dst, const uint8_t *buf,
                                                             const uint32_t nbytes)
{
    if (nbytes % 8u == 0) {
        for (uint32_t i = 0; i < nbytes; i += 8)
            memcpy(dst + i, buf + i, 8);
    } else {
        memcpy(dst, buf, nbytes);
    }
}

/* The stochastic codes of a tile (fast_tile.c), packed. */
static void codes_stochastic(const float *values, uint32_t G, float z, float s, uint32_t bits,
                             uint64_t seed, uint64_t elem0, uint8_t *dst)
{
    uint8_t codes[TAHQ_TILE_MAX];
    tahq_fast_codes_stochastic(values, G, z, s, (1u << bits) - 1u, seed, elem0, codes);
    tahq_fast_pack_tile(dst, codes, G, bits);
}

static inline __attribute__((always_inline)) ENC_TARGET void
codes_nearest_regs(const __m256 *u, const uint32_t n, float z, float s, uint32_t bits, uint8_t *dst)
{
    const __m256 zv = _mm256_set1_ps(z), sv = _mm256_set1_ps(s);
    const __m256i lv = _mm256_set1_epi32((int)((1u << bits) - 1u));
    const uint64_t mask = UINT64_C(0x0101010101010101) * ((1u << bits) - 1u);
    uint8_t buf[TAHQ_TILE_MAX + 8];
    if (n >= 4) {
        /* 4 vectors at a time: 32 codes to bytes in 3 packs and a permute */
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i += 4) {
            __m256i p01 = _mm256_packus_epi32(code8(u[i], zv, sv, lv), code8(u[i + 1], zv, sv, lv));
            __m256i p23 =
                _mm256_packus_epi32(code8(u[i + 2], zv, sv, lv), code8(u[i + 3], zv, sv, lv));
            __m256i b = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(p01, p23), order);
            __m128i lo = _mm256_castsi256_si128(b), hi = _mm256_extracti128_si256(b, 1);
            uint64_t w[4] = {(uint64_t)_mm_cvtsi128_si64(lo), (uint64_t)_mm_extract_epi64(lo, 1),
                             (uint64_t)_mm_cvtsi128_si64(hi), (uint64_t)_mm_extract_epi64(hi, 1)};
            for (uint32_t m = 0; m < 4; m++) {
                uint64_t g = _pext_u64(w[m], mask);
                memcpy(buf + (i + m) * bits, &g, 8); /* the next group overwrites the extra bytes */
            }
        }
    } else {
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i++) {
            __m256i q = code8(u[i], zv, sv, lv);
            __m128i q16 =
                _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            uint64_t g = _pext_u64((uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(q16, q16)), mask);
            memcpy(buf + i * bits, &g, 8);
        }
    }
    copy_codes(dst, buf, n * bits);
}

/* The codes of the tile x (u: its values in registers, transformed if
 * flagged; v: room for them) at z, s, packed into dst. */
static inline __attribute__((always_inline)) ENC_TARGET void
tile_codes_regs(const tahq_config *c, const float *x, const __m256 *u, const uint32_t n,
                uint32_t bits, uint64_t elem0, int flagged, float z, float s, float *v,
                uint8_t *dst)
{
    if (s == 0.0f) {
        memset(dst, 0, n * bits);
    } else if (c->rounding == TAHQ_ROUND_STOCHASTIC) {
        if (flagged)
#pragma GCC unroll 32
            for (uint32_t i = 0; i < n; i++)
                _mm256_storeu_ps(v + 8 * i, u[i]);
        codes_stochastic(flagged ? v : x, 8u * n, z, s, bits, c->seed, elem0, dst);
    } else {
        codes_nearest_regs(u, n, z, s, bits, dst);
    }
}

static inline __attribute__((always_inline)) ENC_TARGET tahq_status
encode_regs(const tahq_config *c, const float *x, const uint32_t n, uint32_t bits, uint64_t elem0,
            uint8_t *dst, enc_tile *out)
{
    __m256 u[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_loadu_ps(x + 8 * i);
    float lo, hi;
    out->flagged = gate_regs(u, n, c->tau, &lo, &hi, &out->pivot, NULL);
    float v[TAHQ_TILE_MAX];
    if (out->flagged) {
        forward_regs(u, n, out->pivot, v);
        range_regs(u, n, &lo, &hi);
    }
    const uint32_t levels = (1u << bits) - 1u;
    float z, s;
    tahq_status st =
        zero_scale_avx(c->meta, lo, hi, levels, &z, &s, &out->zero_bits, &out->scale_bits);
    if (st != TAHQ_OK)
        return st;
    tile_codes_regs(c, x, u, n, bits, elem0, out->flagged, z, s, v, dst);
    return TAHQ_OK;
}

/* The zero point or scale of metadata bits b (tile_zero_scale's VALUE). */
static inline __attribute__((always_inline)) ENC_TARGET float meta_value_avx(tahq_meta meta,
                                                                             uint32_t b)
{
    return meta == TAHQ_META_FP16 ? f16_value(b) : tahq_meta_value(meta, b);
}

/* A tile's fields at width `bits` from what the gain key's pass knows of
 * it (kn), its zero point and scale in *z, *s. */
static inline __attribute__((always_inline)) ENC_TARGET void
known_fields(const tahq_config *c, uint32_t bits, const tahq_tile_meta *kn, enc_tile *out, float *z,
             float *s)
{
    const uint32_t w = bits == c->lo_bits ? 0u : 1u;
    *out = (enc_tile){kn->zero_bits[w], kn->scale_bits[w], kn->pivot, kn->flagged};
    *z = meta_value_avx(c->meta, out->zero_bits);
    *s = meta_value_avx(c->meta, out->scale_bits);
}

/* encode_regs for a tile whose gate, pivot and metadata are known (kn):
 * only the transform of a flagged tile and the codes are computed. */
static inline __attribute__((always_inline)) ENC_TARGET void
encode_known_regs(const tahq_config *c, const float *x, const uint32_t n, uint32_t bits,
                  uint64_t elem0, const tahq_tile_meta *kn, uint8_t *dst, enc_tile *out)
{
    float z, s;
    known_fields(c, bits, kn, out, &z, &s);
    __m256 u[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm256_loadu_ps(x + 8 * i);
    float v[TAHQ_TILE_MAX];
    if (out->flagged)
        forward_regs(u, n, out->pivot, v);
    tile_codes_regs(c, x, u, n, bits, elem0, out->flagged, z, s, v, dst);
}

/* ---- entropy of a token (SPEC §4.1, §2.3, §2.5) ---------------------------- */

/* SPEC §2.3's Horner coefficients c0 .. c8 (the scalar core's) as an array,
 * for the lane loop of log2_8. */
static const float log2_coeff[9] = {TAHQ_LOG2_COEFFS};

/* tahq_core_log2 (ref/tahq_core.h) on 8 lanes of x >= +0 (finite): the subnormal
 * select, the exponent and the fraction halved above sqrt(2), f = m - 1,
 * the 9 Horner steps y = y * f + c (two roundings each, no FMA), then
 * (float)e + f * y; each lane's operations are the scalar ones. */
static inline ENC_TARGET __m256 log2_8(__m256 x)
{
    const __m256i w0 = _mm256_castps_si256(x);
    /* x >= +0: the bits are a non-negative int32, so a signed compare */
    const __m256i sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), w0);
    const __m256i ws = _mm256_castps_si256(_mm256_mul_ps(x, _mm256_set1_ps(0x1p23f)));
    const __m256i w = _mm256_blendv_epi8(w0, ws, sub);
    __m256i e = _mm256_sub_epi32(_mm256_sub_epi32(_mm256_srli_epi32(w, 23), _mm256_set1_epi32(127)),
                                 _mm256_and_si256(sub, _mm256_set1_epi32(23)));
    const __m256i frac = _mm256_and_si256(w, _mm256_set1_epi32(0x7FFFFF));
    const __m256i above = _mm256_cmpgt_epi32(frac, _mm256_set1_epi32(0x3504F3)); /* all ones: 1 */
    const __m256 m = _mm256_castsi256_ps(
        _mm256_sub_epi32(_mm256_or_si256(frac, _mm256_set1_epi32(0x3F800000)),
                         _mm256_and_si256(above, _mm256_set1_epi32(0x00800000))));
    e = _mm256_sub_epi32(e, above);
    const __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
    __m256 y = _mm256_set1_ps(log2_coeff[8]);
    for (int i = 7; i >= 0; i--)
        y = _mm256_add_ps(_mm256_mul_ps(y, f), _mm256_set1_ps(log2_coeff[i]));
    return _mm256_add_ps(_mm256_cvtepi32_ps(e), _mm256_mul_ps(f, y));
}

/* SPEC §2.5 halving tree of one tile held in n vectors (w is overwritten):
 * levels h >= 8 add whole vectors (w[j] + w[j+h]), the last three add a lane
 * permutation; lane 0 holds w[0] + w[h] at each (as ref/entropy.c). */
static inline __attribute__((always_inline)) ENC_TARGET float tree_regs(__m256 *w, const uint32_t n)
{
#pragma GCC unroll 8
    for (uint32_t h = n / 2; h >= 1; h /= 2)
#pragma GCC unroll 16
        for (uint32_t j = 0; j < h; j++)
            w[j] = _mm256_add_ps(w[j], w[j + h]);
    __m256 v = w[0];
    v = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_add_ps(v, _mm256_permute_ps(v, 0x4E));
    v = _mm256_add_ps(v, _mm256_permute_ps(v, 0xB1));
    return _mm256_cvtss_f32(v);
}

/* tahq_pairwise_push (ref/entropy.c): merge the complete subtrees of equal
 * size that the count's low one bits say exist, then stack the sum. */
static inline void pair_push(tahq_pairwise_acc *acc, float v)
{
    for (uint64_t c = acc->count++; c & 1u; c >>= 1)
        v = acc->sum[--acc->depth] + v;
    acc->sum[acc->depth++] = v;
}

/* After the first pass of a row of T tiles of G values (Σ|x| in acc): 1 with
 * *entropy set where the total decides it (0, or below 2^-128, where the
 * reference divides), else 0 with 1 / total in *inverse. */
static int entropy_total(tahq_pairwise_acc *acc, const float *row, uint32_t T, uint32_t G,
                         float *entropy, float *inverse)
{
    const float total = tahq_pairwise_finish(acc);
    if (total == 0.0f) {
        *entropy = 0.0f;
        return 1;
    }
    *inverse = 1.0f / total;
    if (tahq_bits_of(*inverse) == 0x7F800000u) { /* total < 2^-128: the reference divides */
        *entropy = tahq_entropy(row, T, G);
        return 1;
    }
    return 0;
}

/* The input check and tahq_entropy of a row of T tiles of 8n values. */
static inline __attribute__((always_inline)) ENC_TARGET int
entropy_regs(const float *row, uint32_t T, const uint32_t n, float *entropy)
{
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i worst = _mm256_setzero_si256();
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    const float *x = row;
    for (uint32_t t = 0; t < T; t++, x += 8 * n) {
        __m256 w[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i++) {
            __m256i a = _mm256_and_si256(
                _mm256_loadu_si256((const __m256i *)(const void *)(x + 8 * i)), mag);
            worst = _mm256_max_epi32(worst, a); /* magnitude bits < 2^31: signed order */
            w[i] = _mm256_castsi256_ps(a);
        }
        pair_push(&acc, tree_regs(w, n));
    }
    {
        __m256i v = _mm256_max_epi32(worst, _mm256_permute2x128_si256(worst, worst, 0x01));
        v = _mm256_max_epi32(v, _mm256_shuffle_epi32(v, 0x4E));
        v = _mm256_max_epi32(v, _mm256_shuffle_epi32(v, 0xB1));
        if (_mm256_cvtsi256_si32(v) >= 0x5F800000) /* a value >= 2^64, infinite or NaN */
            return 0;
    }
    float inverse;
    if (entropy_total(&acc, row, T, 8u * n, entropy, &inverse))
        return 1;
    const __m256 inv = _mm256_set1_ps(inverse), one = _mm256_set1_ps(1.0f);
    tahq_pairwise_acc hacc = {.count = 0, .depth = 0};
    x = row;
    /* the next row's first pass reads from memory: ask for it meanwhile */
    const uint64_t next = (uint64_t)T * 8u * n;
    for (uint32_t t = 0; t < T; t++, x += 8 * n) {
        tahq_prefetch_floats(row, next + (uint64_t)t * 8u * n, 8u * n);
        __m256 w[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
        for (uint32_t i = 0; i < n; i++) {
            __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + 8 * i), _mm256_castsi256_ps(mag));
            /* p = min(|x| * (1 / total), 1): MINPS gives p < 1 ? p : 1 */
            __m256 p = _mm256_min_ps(_mm256_mul_ps(a, inv), one);
            w[i] = _mm256_mul_ps(p, log2_8(p)); /* -0 for p = +0, as the reference */
        }
        pair_push(&hacc, tree_regs(w, n));
    }
    *entropy = 0.0f - tahq_pairwise_finish(&hacc);
    return 1;
}

static ENC_TARGET int row_entropy_avx(const float *row, uint32_t T, uint32_t G, float *entropy)
{
    switch (G) {
    case 8:
        return entropy_regs(row, T, 1, entropy);
    case 16:
        return entropy_regs(row, T, 2, entropy);
    case 32:
        return entropy_regs(row, T, 4, entropy);
    case 64:
        return entropy_regs(row, T, 8, entropy);
    case 128:
        return entropy_regs(row, T, 16, entropy);
    default:
        return entropy_regs(row, T, 32, entropy);
    }
}

static ENC_TARGET void log2_8_avx(const float *x, float *y)
{
    _mm256_storeu_ps(y, log2_8(_mm256_loadu_ps(x)));
}

/* The loop of tahq_fast_encode_run around ENCODE_ONE, an expression that
 * encodes tile t (at x + t * G) into `codes` and fills `tile` (enc_tile),
 * then its fields: one copy per tile size and lane width. Returns. */
#define RUN_TILES(c, t0, count, bits, run, ENCODE_ONE)                                     \
    do {                                                                                   \
        const uint32_t G = (c)->tile, k = tahq_tile_log2(G), code_bytes = G / 8u * (bits); \
        const uint64_t meta_bytes = tahq_meta_bytes((c)->meta);                            \
        uint8_t *codes = (run)->codes;                                                     \
        uint64_t pivot_bit = (run)->pivot_bit;                                             \
        tahq_status st = TAHQ_OK;                                                          \
        for (uint64_t t = (t0); t < (t0) + (count); t++, codes += code_bytes) {            \
            enc_tile tile;                                                                 \
            st = (ENCODE_ONE);                                                             \
            if (st != TAHQ_OK)                                                             \
                break;                                                                     \
            pivot_bit = store_tile(run, t, &tile, meta_bytes, k, pivot_bit);               \
        }                                                                                  \
        (run)->codes = codes;                                                              \
        (run)->pivot_bit = pivot_bit;                                                      \
        return st;                                                                         \
    } while (0)

/* The metadata fields of tile t, and for a flagged tile its flag bit and
 * its pivot's k <= 8 bits at pivot_bit (the area is zeroed: ORed in);
 * returns the next pivot bit. */
static inline __attribute__((always_inline)) uint64_t store_tile(tahq_fast_run *run, uint64_t t,
                                                                 const enc_tile *tile,
                                                                 uint64_t meta_bytes, uint32_t k,
                                                                 uint64_t pivot_bit)
{
    if (meta_bytes == 4) {
        tahq_put_u32(run->zeros + 4 * t, tile->zero_bits);
        tahq_put_u32(run->scales + 4 * t, tile->scale_bits);
    } else {
        tahq_put_u16(run->zeros + 2 * t, (uint16_t)tile->zero_bits);
        tahq_put_u16(run->scales + 2 * t, (uint16_t)tile->scale_bits);
    }
    if (!tile->flagged)
        return pivot_bit;
    const uint32_t at = (uint32_t)(pivot_bit & 7u), bits16 = tile->pivot << at;
    uint8_t *b = run->pivots + (pivot_bit >> 3);
    tahq_set_bit(run->flags, t);
    b[0] |= (uint8_t)bits16;
    if (at + k > 8)
        b[1] |= (uint8_t)(bits16 >> 8);
    return pivot_bit + k;
}

static ENC_TARGET tahq_status encode_run_avx(const tahq_config *c, const float *x, uint64_t t0,
                                             uint64_t count, uint32_t bits, tahq_fast_run *run)
{
#define ENC8(n)                                   \
    RUN_TILES(c, t0, count, bits, run,            \
              (tahq_prefetch_tile_ahead(x, t, G), \
               encode_regs(c, x + t * G, n, bits, t * G, codes, &tile)))
    switch (c->tile) {
    case 8:
        ENC8(1);
    case 16:
        ENC8(2);
    case 32:
        ENC8(4);
    case 64:
        ENC8(8);
    case 128:
        ENC8(16);
    default:
        ENC8(32);
    }
#undef ENC8
}

static ENC_TARGET tahq_status encode_run_known_avx(const tahq_config *c, const float *x,
                                                   uint64_t t0, uint64_t count, uint32_t bits,
                                                   const tahq_tile_meta *known, tahq_fast_run *run)
{
#define ENC8K(n)                                                                                \
    RUN_TILES(c, t0, count, bits, run,                                                          \
              (tahq_prefetch_tile_ahead(x, t, G),                                               \
               encode_known_regs(c, x + t * G, n, bits, t * G, &known[t - (t0)], codes, &tile), \
               TAHQ_OK))
    switch (c->tile) {
    case 8:
        ENC8K(1);
    case 16:
        ENC8K(2);
    case 32:
        ENC8K(4);
    case 64:
        ENC8K(8);
    case 128:
        ENC8K(16);
    default:
        ENC8K(32);
    }
#undef ENC8K
}

/* A run of tiles whose codes at `bits` (hi_bits) the gain key's pass
 * packed (tahq_fast_gain_key): the codes copied, the fields from known. */
static void encode_run_coded(const tahq_config *c, uint64_t t0, uint64_t count, uint32_t bits,
                             const tahq_tile_meta *known, const uint8_t *codes, tahq_fast_run *run)
{
    const uint32_t k = tahq_tile_log2(c->tile);
    const uint64_t code_bytes = (uint64_t)c->tile / 8u * bits;
    const uint64_t meta_bytes = tahq_meta_bytes(c->meta);
    const uint32_t w = bits == c->lo_bits ? 0u : 1u; /* as known_fields */
    memcpy(run->codes, codes, (size_t)(count * code_bytes));
    run->codes += count * code_bytes;
    uint64_t pivot_bit = run->pivot_bit;
    for (uint64_t i = 0; i < count; i++) {
        const tahq_tile_meta *kn = &known[i];
        const enc_tile tile = {kn->zero_bits[w], kn->scale_bits[w], kn->pivot, kn->flagged};
        pivot_bit = store_tile(run, t0 + i, &tile, meta_bytes, k, pivot_bit);
    }
    run->pivot_bit = pivot_bit;
}

#include "encode_avx512.h"

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

/* The 16-lane forms on the avx512 path, for tiles of 16 values and more. */
static int use_avx512(uint32_t tile)
{
    return tile >= 16u && tahq_cpu_path_get() == TAHQ_CPU_AVX512;
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
    if (use_avx512(16u)) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        return zero_scale_avx512(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
    }
    if (tahq_fast_encode_active()) {
        tahq_cpu_path_count(TAHQ_CPU_AVX2);
        return zero_scale_entry_avx(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
    }
    return zero_scale_ref(meta, lo, hi, levels, zero, scale, zero_bits, scale_bits);
}

tahq_status tahq_fast_encode_run(const tahq_config *cfg, const float *x, uint64_t t0,
                                 uint64_t count, uint32_t bits, tahq_fast_run *run)
{
    if (use_avx512(cfg->tile)) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        return encode_run_avx512(cfg, x, t0, count, bits, run);
    }
    tahq_cpu_path_count(TAHQ_CPU_AVX2);
    return encode_run_avx(cfg, x, t0, count, bits, run);
}

tahq_status tahq_fast_encode_run_known(const tahq_config *cfg, const float *x, uint64_t t0,
                                       uint64_t count, uint32_t bits, const tahq_tile_meta *known,
                                       tahq_fast_run *run)
{
    if (use_avx512(cfg->tile)) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        return encode_run_known_avx512(cfg, x, t0, count, bits, known, run);
    }
    tahq_cpu_path_count(TAHQ_CPU_AVX2);
    return encode_run_known_avx(cfg, x, t0, count, bits, known, run);
}

void tahq_fast_encode_run_coded(const tahq_config *cfg, uint64_t t0, uint64_t count, uint32_t bits,
                                const tahq_tile_meta *known, const uint8_t *codes,
                                tahq_fast_run *run)
{
    tahq_cpu_path_count(use_avx512(cfg->tile) ? TAHQ_CPU_AVX512 : TAHQ_CPU_AVX2);
    encode_run_coded(cfg, t0, count, bits, known, codes, run);
}

int tahq_fast_row_entropy(const float *row, uint32_t tiles, uint32_t tile, float *entropy)
{
    if (use_avx512(tile)) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        return row_entropy_avx512(row, tiles, tile, entropy);
    }
    tahq_cpu_path_count(TAHQ_CPU_AVX2);
    return row_entropy_avx(row, tiles, tile, entropy);
}

void tahq_fast_log2_8(const float *x, float *y)
{
    if (use_avx512(16u)) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        log2_8_avx512(x, y);
        return;
    }
    if (tahq_fast_encode_active()) {
        tahq_cpu_path_count(TAHQ_CPU_AVX2);
        log2_8_avx(x, y);
        return;
    }
    for (int i = 0; i < 8; i++)
        y[i] = tahq_log2(x[i]);
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

tahq_status tahq_fast_encode_run(const tahq_config *cfg, const float *x, uint64_t t0,
                                 uint64_t count, uint32_t bits, tahq_fast_run *run)
{
    (void)cfg, (void)x, (void)t0, (void)count, (void)bits, (void)run;
    return TAHQ_ERR_CONFIG; /* never called: tahq_fast_encode_active() is 0 */
}

tahq_status tahq_fast_encode_run_known(const tahq_config *cfg, const float *x, uint64_t t0,
                                       uint64_t count, uint32_t bits, const tahq_tile_meta *known,
                                       tahq_fast_run *run)
{
    (void)cfg, (void)x, (void)t0, (void)count, (void)bits, (void)known, (void)run;
    return TAHQ_ERR_CONFIG; /* never called: tahq_fast_encode_active() is 0 */
}

void tahq_fast_encode_run_coded(const tahq_config *cfg, uint64_t t0, uint64_t count, uint32_t bits,
                                const tahq_tile_meta *known, const uint8_t *codes,
                                tahq_fast_run *run)
{
    (void)cfg, (void)t0, (void)count, (void)bits, (void)known, (void)codes, (void)run;
    /* never called: tahq_fast_encode_active() is 0 */
}

int tahq_fast_row_entropy(const float *row, uint32_t tiles, uint32_t tile, float *entropy)
{
    (void)row, (void)tiles, (void)tile, (void)entropy;
    return 0; /* never called: tahq_fast_encode_active() is 0 */
}

void tahq_fast_log2_8(const float *x, float *y)
{
    for (int i = 0; i < 8; i++)
        y[i] = tahq_log2(x[i]);
}

#endif
