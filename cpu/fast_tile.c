/* SPDX-License-Identifier: MIT */
/* fast_tile.c - per-tile fast paths (cpu/fast_tile.h).
 *
 * Codes of one tile (SPEC §8.3): each group of 8 b-bit codes fills exactly b
 * bytes, code j of the group at bits j*b of the little-endian group. BMI2's
 * PDEP spreads such a group into 8 bytes (code j in byte j) and PEXT packs it
 * back: one instruction per group instead of the reference's SWAR steps.
 * The decode converts the 8 codes to float (exact: q < 256) and computes
 * zero + q * scale as two rounded binary32 operations in that order, the
 * reference's expression (no FMA: the target below does not enable it and
 * the project compiles with -ffp-contract=off). fp16 metadata is widened
 * with F16C (exact for every finite binary16, which is all a validated
 * message holds). */
#include <stdlib.h>
#include <string.h>

#include "cpu_path.h"
#include "fast_tile.h"
#include "internal.h"
#include "../common/tahq_crc_gf2.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_FAST_X86 1
#include <cpuid.h>
#include <immintrin.h>

#include "crc32c_clmul512.h"
#include "fwht_avx2.h"
#include "regs_avx512.h"
#include "stochastic_avx2.h"
#include "stochastic_avx512.h"
#endif

/* ---- the path selector (cpu_path.h) ----------------------------------------- */

static tahq_cpu_path detect_best(void);

/* -1 until the first call; atomic, since the parallel codec's threads ask
 * (every fast entry reads path_now: a line of their own, written only when
 * the path changes) */
static int path_best __attribute__((aligned(64))) = -1;
static int path_now = -1;

/* The run counters, a cache line per slot: each thread counts in its own
 * slot (taken in turn at its first count), so the codec's threads, which
 * count a run per row, write no line that another thread writes or that
 * every entry reads. */
#define PATH_SLOTS 16
typedef struct path_slot {
    unsigned long long runs[TAHQ_CPU_PATH_COUNT];
} __attribute__((aligned(64))) path_slot;
static path_slot path_slots[PATH_SLOTS];
static unsigned path_slot_next __attribute__((aligned(64)));
static _Thread_local int path_slot_mine = -1;

static const char *const path_names[TAHQ_CPU_PATH_COUNT] = {"scalar", "avx2", "avx512"};

tahq_cpu_path tahq_cpu_path_best(void)
{
    int b = __atomic_load_n(&path_best, __ATOMIC_RELAXED);
    if (b < 0) {
        b = (int)detect_best();
        __atomic_store_n(&path_best, b, __ATOMIC_RELAXED);
    }
    return (tahq_cpu_path)b;
}

tahq_cpu_path tahq_cpu_path_get(void)
{
    int p = __atomic_load_n(&path_now, __ATOMIC_RELAXED);
    if (p < 0) { /* the first use: the best path, or a lower one by TAHQ_CPU_PATH */
        int want = (int)tahq_cpu_path_best(), expected = -1;
        const char *env = getenv("TAHQ_CPU_PATH");
        tahq_cpu_path named;
        if (env && tahq_cpu_path_parse(env, &named) && (int)named < want)
            want = (int)named;
        /* a concurrent tahq_cpu_path_set wins */
        __atomic_compare_exchange_n(&path_now, &expected, want, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        p = __atomic_load_n(&path_now, __ATOMIC_RELAXED);
    }
    return (tahq_cpu_path)p;
}

int tahq_cpu_path_set(tahq_cpu_path p)
{
    if ((int)p < 0 || p > tahq_cpu_path_best())
        return 0;
    __atomic_store_n(&path_now, (int)p, __ATOMIC_RELAXED);
    return 1;
}

const char *tahq_cpu_path_name(tahq_cpu_path p)
{
    return (unsigned)p < TAHQ_CPU_PATH_COUNT ? path_names[p] : "?";
}

int tahq_cpu_path_parse(const char *s, tahq_cpu_path *p)
{
    for (int i = 0; i < TAHQ_CPU_PATH_COUNT; i++)
        if (strcmp(s, path_names[i]) == 0) {
            *p = (tahq_cpu_path)i;
            return 1;
        }
    return 0;
}

void tahq_cpu_path_count(tahq_cpu_path p)
{
    int slot = path_slot_mine;
    if (slot < 0) {
        slot = (int)(__atomic_fetch_add(&path_slot_next, 1u, __ATOMIC_RELAXED) % PATH_SLOTS);
        path_slot_mine = slot;
    }
    __atomic_fetch_add(&path_slots[slot].runs[p], 1u, __ATOMIC_RELAXED);
}

unsigned long long tahq_cpu_path_runs(tahq_cpu_path p)
{
    unsigned long long total = 0;
    for (int slot = 0; slot < PATH_SLOTS; slot++)
        total += __atomic_load_n(&path_slots[slot].runs[p], __ATOMIC_RELAXED);
    return total;
}

/* ---- decode: the reference's steps, where no fast path runs ---------------- */

/* tahq_fast_decode_tiles with the reference's functions, tile by tile. */
static void decode_tiles_ref(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                             const uint8_t **codes, uint64_t *pivot)
{
    const uint32_t G = d->tile, k = d->tile_log2;
    const uint8_t *src = *codes;
    for (const uint64_t e = t + n; t < e; t++, src += G / 8u * b) {
        float *dst = d->out + t * G;
        uint8_t q[TAHQ_TILE_MAX];
        tahq_unpack_tile(src, q, G, b);
        tahq_dequantize_tile(
            q, G,
            tahq_meta_value(d->meta, tahq_get_meta_bits(d->zero + t * d->meta_bytes, d->meta)),
            tahq_meta_value(d->meta, tahq_get_meta_bits(d->scale + t * d->meta_bytes, d->meta)),
            dst);
        if (tahq_get_bit(d->flags, t)) {
            uint8_t p;
            tahq_unpack_bits(d->pivots, *pivot * k, &p, 1, k);
            ++*pivot;
            tahq_hadamard_inverse(dst, G, p);
            for (uint32_t i = 0; i < G; i++)
                dst[i] = tahq_canonical_nan(dst[i]);
        }
    }
    *codes = src;
}

/* tahq_fast_meta_bad, one tile at a time. */
static int meta_bad_ref(const uint8_t *zp, const uint8_t *sp, uint64_t n, tahq_meta meta)
{
    const uint32_t mb = meta == TAHQ_META_FP32 ? 4u : 2u;
    const uint32_t sign = meta == TAHQ_META_FP32 ? 0x80000000u : 0x8000u;
    const uint32_t expo = meta == TAHQ_META_FP32   ? 0x7F800000u
                          : meta == TAHQ_META_BF16 ? 0x7F80u
                                                   : 0x7C00u;
    for (uint64_t t = 0; t < n; t++, zp += mb, sp += mb) {
        const uint32_t zb = tahq_get_meta_bits(zp, meta), sb = tahq_get_meta_bits(sp, meta);
        if ((zb & expo) == expo || zb == sign) /* non-finite, or -0 */
            return 1;
        if ((sb & expo) == expo || (sb & sign))
            return 1;
    }
    return 0;
}

#ifdef TAHQ_FAST_X86

#define FAST_TARGET __attribute__((target("avx2,bmi2,f16c")))

/* The best path of this CPU. F16C from CPUID leaf 1 (ECX bit 29): clang's
 * __builtin_cpu_supports does not know the name, and the fuzz harnesses
 * build this file with clang; AVX2 support already implies the OS saves the
 * YMM state, and __builtin_cpu_supports("avx512f") that it saves the ZMM
 * state. */
static tahq_cpu_path detect_best(void)
{
    __builtin_cpu_init();
    unsigned eax, ebx, ecx = 0, edx;
    const int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && f16c))
        return TAHQ_CPU_SCALAR;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return TAHQ_CPU_AVX512;
    return TAHQ_CPU_AVX2;
}

/* the fast paths of fast_tile.c run on the avx2 and avx512 paths */
static int fast_check(void)
{
    return tahq_cpu_path_get() >= TAHQ_CPU_AVX2;
}

static inline FAST_TARGET void pack_width(uint8_t *dst, const uint8_t *codes, uint32_t tile,
                                          const uint32_t b)
{
    for (uint32_t g = 0; g < tile; g += 8, dst += b) {
        uint64_t u;
        memcpy(&u, codes + g, 8);
        uint64_t w = _pext_u64(u, TAHQ_BYTE_MASK(b));
        memcpy(dst, &w, b); /* little-endian: the b low bytes */
    }
}

static FAST_TARGET void pack_avx(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1:
        pack_width(dst, codes, tile, 1);
        break;
    case 2:
        pack_width(dst, codes, tile, 2);
        break;
    case 3:
        pack_width(dst, codes, tile, 3);
        break;
    case 4:
        pack_width(dst, codes, tile, 4);
        break;
    case 5:
        pack_width(dst, codes, tile, 5);
        break;
    case 6:
        pack_width(dst, codes, tile, 6);
        break;
    case 7:
        pack_width(dst, codes, tile, 7);
        break;
    default:
        memcpy(dst, codes, tile);
        break; /* 8 bits: the bytes themselves */
    }
}

static inline FAST_TARGET void decode_width(const uint8_t *src, uint32_t tile, const uint32_t b,
                                            __m256 z, __m256 s, float *out)
{
    for (uint32_t g = 0; g < tile; g += 8, src += b) {
        uint64_t w = 0;
        memcpy(&w, src, b); /* only the group's b bytes: never past the message */
        uint64_t u = b == 8 ? w : _pdep_u64(w, TAHQ_BYTE_MASK(b));
        __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)u)));
        _mm256_storeu_ps(out + g, _mm256_add_ps(z, _mm256_mul_ps(q, s)));
    }
}

/* SPEC §5.2 inverse with the decoder's NaN rule, on a tile of G = 8n <= 256
 * values held in registers r[0 .. n) (n a power of two): FWHT stages h = 1,
 * 2, 4 (in-vector), 8 .. G/2 (across vectors; fwht_avx2.h), times
 * 2^-floor(k/2), canonical NaNs, stored to x, then the pivot swap. The loops unroll fully (n is a
 * constant in every copy), so r stays in registers up to G = 128. */
static inline __attribute__((always_inline)) FAST_TARGET void
inverse_store(__m256 *r, const uint32_t n, float *x, uint32_t pivot, float factor)
{
    tahq_fwht_regs(r, n);
    const __m256 f = _mm256_set1_ps(factor);
    const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32((int)TAHQ_CANONICAL_NAN_BITS));
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++) {
        __m256 v = _mm256_mul_ps(r[i], f);
        _mm256_storeu_ps(x + 8 * i, _mm256_blendv_ps(v, canon, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    float t = x[0];
    x[0] = x[pivot];
    x[pivot] = t;
}

/* The same on a tile already stored at x. */
static inline __attribute__((always_inline)) FAST_TARGET void
inverse_regs(float *x, const uint32_t n, uint32_t pivot, float factor)
{
    __m256 r[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
    for (uint32_t i = 0; i < n; i++)
        r[i] = _mm256_loadu_ps(x + 8 * i);
    inverse_store(r, n, x, pivot, factor);
}

/* One copy per tile size, so that the loops unroll and r stays in registers. */
static FAST_TARGET void inverse_avx(float *x, uint32_t G, uint32_t pivot, float factor)
{
    switch (G) {
    case 8:
        inverse_regs(x, 1, pivot, factor);
        break;
    case 16:
        inverse_regs(x, 2, pivot, factor);
        break;
    case 32:
        inverse_regs(x, 4, pivot, factor);
        break;
    case 64:
        inverse_regs(x, 8, pivot, factor);
        break;
    case 128:
        inverse_regs(x, 16, pivot, factor);
        break;
    default:
        inverse_regs(x, 32, pivot, factor);
        break;
    }
}

static inline FAST_TARGET float meta_avx(tahq_meta meta, uint32_t bits)
{
    switch (meta) {
    case TAHQ_META_FP32:
        return tahq_float_of(bits);
    case TAHQ_META_BF16:
        return tahq_float_of(bits << 16);
    default:
        return _cvtsh_ss((unsigned short)bits);
    }
}

static FAST_TARGET void decode_avx(const uint8_t *src, uint32_t tile, uint32_t b, float zero,
                                   float scale, float *out)
{
    const __m256 z = _mm256_set1_ps(zero), s = _mm256_set1_ps(scale);
    switch (b) {
    case 1:
        decode_width(src, tile, 1, z, s, out);
        break;
    case 2:
        decode_width(src, tile, 2, z, s, out);
        break;
    case 3:
        decode_width(src, tile, 3, z, s, out);
        break;
    case 4:
        decode_width(src, tile, 4, z, s, out);
        break;
    case 5:
        decode_width(src, tile, 5, z, s, out);
        break;
    case 6:
        decode_width(src, tile, 6, z, s, out);
        break;
    case 7:
        decode_width(src, tile, 7, z, s, out);
        break;
    default:
        decode_width(src, tile, 8, z, s, out);
        break;
    }
}

/* Philox4x32-10 (SPEC §2.4) of 8 consecutive blocks at once, structure of
 * arrays: lane j of c0..c3 is the counter, then the output, of block
 * block0 + j. The 32x32-bit products: PMULUDQ on the even lanes and on the
 * odd lanes shifted down, the high and low halves blended back. */
static inline FAST_TARGET void philox8(uint64_t block0, uint32_t key0, uint32_t key1, __m256i *o0,
                                       __m256i *o1, __m256i *o2, __m256i *o3)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    /* block0 + j for j < 8: the low word may carry into the high word */
    const __m256i lo0 = _mm256_set1_epi32((int)(uint32_t)block0);
    __m256i c0 = _mm256_add_epi32(lo0, lane);
    /* carry where the sum wrapped: unsigned c0 < lo0 */
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    __m256i carry = _mm256_cmpgt_epi32(_mm256_xor_si256(lo0, bias), _mm256_xor_si256(c0, bias));
    __m256i c1 = _mm256_sub_epi32(_mm256_set1_epi32((int)(uint32_t)(block0 >> 32)), carry);
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    const __m256i m0 = _mm256_set1_epi32((int)TAHQ_PHILOX_M0),
                  m1 = _mm256_set1_epi32((int)TAHQ_PHILOX_M1);
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; round++) {
        __m256i p0e = _mm256_mul_epu32(c0, m0);
        __m256i p0o = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
        __m256i p1e = _mm256_mul_epu32(c2, m1);
        __m256i p1o = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
        __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(p0e, 32), p0o, 0xAA);
        __m256i lo0w = _mm256_blend_epi32(p0e, _mm256_slli_epi64(p0o, 32), 0xAA);
        __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(p1e, 32), p1o, 0xAA);
        __m256i lo1w = _mm256_blend_epi32(p1e, _mm256_slli_epi64(p1o, 32), 0xAA);
        __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
        __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
        c0 = n0;
        c1 = lo1w;
        c2 = n2;
        c3 = lo0w;
        k0 += TAHQ_PHILOX_W0; /* mod 2^32 */
        k1 += TAHQ_PHILOX_W1;
    }
    *o0 = c0;
    *o1 = c1;
    *o2 = c2;
    *o3 = c3;
}

/* 8 codes of SPEC §5.3's stochastic rounding from the 8 values at v and
 * their 8 random words, in the reference's operations:
 * t = (v - z) / s, f0 = trunc(t), phi = t - f0, rho = (w >> 8) * 2^-24,
 * q = f0 + (rho < phi), min(q, L). */
static inline FAST_TARGET void stochastic8(const float *v, __m256 z, __m256 s, __m256i levels,
                                           __m256i w, uint8_t *codes)
{
    __m256i q = tahq_stochastic_codes8(_mm256_loadu_ps(v), z, s, levels, w);
    __m128i q16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i *)(void *)codes, _mm_packus_epi16(q16, q16));
}

/* The random words of elements elem0 .. elem0 + 31 (elem0 a multiple of 4)
 * in element order: philox8 and a 4 x 8 transpose. */
static inline FAST_TARGET void words32(uint64_t elem0, uint32_t key0, uint32_t key1, __m256i w[4])
{
    __m256i c0, c1, c2, c3;
    philox8(elem0 >> 2, key0, key1, &c0, &c1, &c2, &c3);
    __m256i a = _mm256_unpacklo_epi32(c0, c1), b = _mm256_unpackhi_epi32(c0, c1);
    __m256i c = _mm256_unpacklo_epi32(c2, c3), d = _mm256_unpackhi_epi32(c2, c3);
    __m256i e = _mm256_unpacklo_epi64(a, c), f = _mm256_unpackhi_epi64(a, c);
    __m256i g = _mm256_unpacklo_epi64(b, d), h = _mm256_unpackhi_epi64(b, d);
    w[0] = _mm256_permute2x128_si256(e, f, 0x20);
    w[1] = _mm256_permute2x128_si256(g, h, 0x20);
    w[2] = _mm256_permute2x128_si256(e, f, 0x31);
    w[3] = _mm256_permute2x128_si256(g, h, 0x31);
}

static FAST_TARGET void codes_stochastic_avx(const float *v, uint32_t tile, float zero, float scale,
                                             uint32_t levels, uint64_t seed, uint64_t elem0,
                                             uint8_t *codes)
{
    const __m256 z = _mm256_set1_ps(zero), s = _mm256_set1_ps(scale);
    const __m256i lv = _mm256_set1_epi32((int)levels);
    const uint32_t key0 = (uint32_t)seed, key1 = (uint32_t)(seed >> 32);
    /* elem0 is a multiple of the tile (>= 8), so the tile starts a block */
    for (uint32_t i = 0; i < tile; i += 32) {
        __m256i w[4];
        words32(elem0 + i, key0, key1, w);
        for (uint32_t m = 0; m < 4 && i + 8 * m < tile; m++)
            stochastic8(v + i + 8 * m, z, s, lv, w[m], codes + i + 8 * m);
    }
}

/* codes_stochastic_avx on 16 lanes, 64 elements (16 Philox blocks) per
 * step: tiles of 64 values and more. */
static TAHQ_AVX512_TARGET void codes_stochastic_avx512(const float *v, uint32_t tile, float zero,
                                                       float scale, uint32_t levels, uint64_t seed,
                                                       uint64_t elem0, uint8_t *codes)
{
    const __m512 z = _mm512_set1_ps(zero), s = _mm512_set1_ps(scale);
    const __m512i lv = _mm512_set1_epi32((int)levels);
    for (uint32_t i = 0; i < tile; i += 64) {
        __m512i w[4];
        tahq_words64(elem0 + i, (uint32_t)seed, (uint32_t)(seed >> 32), w);
        for (uint32_t m = 0; m < 4; m++)
            _mm_storeu_si128(
                (__m128i *)(void *)(codes + i + 16 * m),
                tahq_stochastic_codes16(_mm512_loadu_ps(v + i + 16 * m), z, s, lv, w[m]));
    }
}

/* random_words_avx, 64 words (16 Philox blocks) per step. */
static TAHQ_AVX512_TARGET void random_words_avx512(uint64_t seed, uint64_t elem0, uint32_t tile,
                                                   uint32_t *words)
{
    for (uint32_t i = 0; i < tile; i += 64) {
        __m512i w[4];
        tahq_words64(elem0 + i, (uint32_t)seed, (uint32_t)(seed >> 32), w);
        for (uint32_t m = 0; m < 4; m++)
            _mm512_storeu_si512(words + i + 16 * m, w[m]);
    }
}

static FAST_TARGET void random_words_avx(uint64_t seed, uint64_t elem0, uint32_t tile,
                                         uint32_t *words)
{
    for (uint32_t i = 0; i < tile; i += 32) {
        __m256i w[4];
        words32(elem0 + i, (uint32_t)seed, (uint32_t)(seed >> 32), w);
        for (uint32_t m = 0; m < 4 && i + 8 * m < tile; m++)
            _mm256_storeu_si256((__m256i *)(void *)(words + i + 8 * m), w[m]);
    }
}

/* SPEC §1 rule 6 on n values (a multiple of 8): NaN lanes (unordered with
 * themselves) become 0x7FC00000, every other lane keeps its bits. */
static FAST_TARGET void canonical_nans_avx(float *x, uint32_t n)
{
    const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32((int)TAHQ_CANONICAL_NAN_BITS));
    for (uint32_t i = 0; i < n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(v, canon, nan));
    }
}

int tahq_fast_tile_active(void)
{
    return fast_check();
}

void tahq_fast_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    if (fast_check())
        pack_avx(dst, codes, tile, b);
    else
        tahq_pack_tile(dst, codes, tile, b);
}

/* Pivot number `index`: k bits at bit index * k of the pivots section. */
static inline uint32_t pivot_at(const uint8_t *pivots, uint64_t index, uint32_t k)
{
    const uint64_t bit = index * k;
    const uint32_t o = (uint32_t)(bit & 7u);
    uint32_t v = pivots[bit >> 3];
    if (o + k > 8u) /* the pivot runs into the next byte, which then exists */
        v |= (uint32_t)pivots[(bit >> 3) + 1u] << 8;
    return (v >> o) & ((1u << k) - 1u);
}

/* The 8 codes of width b at src, dequantized (zero + (float)q * scale). The
 * load takes 8 bytes, of which PDEP keeps the group's 8b low bits: the
 * caller makes sure that the 8 bytes lie inside the message. */
static inline __attribute__((always_inline)) FAST_TARGET __m256 group8(const uint8_t *src,
                                                                       uint64_t mask, __m256 z,
                                                                       __m256 s)
{
    uint64_t w;
    memcpy(&w, src, 8);
    const uint64_t u = _pdep_u64(w, mask);
    __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)u)));
    return _mm256_add_ps(z, _mm256_mul_ps(q, s));
}

/* The zero-point or scale at p, widened (fp16 through F16C). */
static inline __attribute__((always_inline)) FAST_TARGET float meta_load(tahq_meta meta,
                                                                         const uint8_t *p)
{
    if (meta == TAHQ_META_FP16) {
        uint16_t h;
        memcpy(&h, p, 2); /* little-endian */
        return _cvtsh_ss(h);
    }
    return meta_avx(meta, tahq_get_meta_bits(p, meta));
}

/* How many of the n tiles from src (step code bytes each) can take 8-byte
 * loads of their groups without reading at or past the message's end. */
static inline uint64_t wide_tiles(const tahq_fast_dec *d, const uint8_t *src, uint32_t step,
                                  uint64_t n)
{
    const size_t room = (size_t)(d->end - src);
    const uint64_t wide = room < (size_t)step + 8u ? 0 : (room - 8u) / step;
    return wide < n ? wide : n;
}

/* Tiles t .. e - 1 with group-sized loads (decode_avx), then inverse_avx
 * for the flagged ones: the last few tiles of a message. */
static FAST_TARGET void tiles_narrow(const tahq_fast_dec *d, uint64_t t, uint64_t e, uint32_t b,
                                     const uint8_t **codes, uint64_t *pivot)
{
    const uint32_t G = d->tile, k = d->tile_log2, step = G / 8u * b, mb = d->meta_bytes;
    const float factor = tahq_float_of((127u - k / 2u) << 23);
    const uint8_t *src = *codes;
    for (; t < e; t++, src += step) {
        float *dst = d->out + t * G;
        decode_avx(src, G, b, meta_load(d->meta, d->zero + t * mb),
                   meta_load(d->meta, d->scale + t * mb), dst);
        if ((d->flags[t >> 3] >> (t & 7u)) & 1u)
            inverse_avx(dst, G, pivot_at(d->pivots, (*pivot)++, k), factor);
    }
    *codes = src;
}

/* A decoder's walk over a run of tiles of G values and `step` code bytes
 * (the 8- and 16-lane forms share it): the tile t, where its codes,
 * metadata and output are, the next pivot's number, the end of the tiles
 * that take 8-byte loads (e_wide) and of the run (e). */
typedef struct dec_walk {
    const uint8_t *src, *zp, *sp;
    float *dst;
    uint64_t t, e, e_wide, np;
    float factor; /* 2^-floor(k/2) */
    uint32_t G, k, step, mb;
} dec_walk;

static inline __attribute__((always_inline)) dec_walk walk_begin(const tahq_fast_dec *d, uint64_t t,
                                                                 uint64_t n, const uint8_t *codes,
                                                                 uint64_t pivot, uint32_t G,
                                                                 uint32_t step)
{
    dec_walk w;
    w.G = G;
    w.k = d->tile_log2;
    w.step = step;
    w.mb = d->meta_bytes;
    w.factor = tahq_float_of((127u - w.k / 2u) << 23);
    w.src = codes;
    w.zp = d->zero + t * w.mb;
    w.sp = d->scale + t * w.mb;
    w.dst = d->out + t * G;
    w.np = pivot;
    w.t = t;
    w.e = t + n;
    w.e_wide = t + wide_tiles(d, codes, step, n);
    return w;
}

static inline __attribute__((always_inline)) void walk_next(dec_walk *w)
{
    w->t++;
    w->src += w->step;
    w->zp += w->mb;
    w->sp += w->mb;
    w->dst += w->G;
}

static inline __attribute__((always_inline)) int walk_flagged(const tahq_fast_dec *d,
                                                              const dec_walk *w)
{
    return (d->flags[w->t >> 3] >> (w->t & 7u)) & 1u;
}

/* The number of the current tile's pivot (then the next one's). */
static inline __attribute__((always_inline)) uint32_t walk_pivot(const tahq_fast_dec *d,
                                                                 dec_walk *w)
{
    return pivot_at(d->pivots, w->np++, w->k);
}

/* After the wide tiles: the rest by tiles_narrow, the run's cursors back. */
static inline __attribute__((always_inline)) void walk_end(const tahq_fast_dec *d,
                                                           const dec_walk *w, uint32_t b,
                                                           const uint8_t **codes, uint64_t *pivot)
{
    *pivot = w->np;
    *codes = w->src;
    tiles_narrow(d, w->t, w->e, b, codes, pivot);
}

/* tahq_fast_decode_tiles for G = 8 nv (nv a power of two, a constant in each copy;
 * meta too, for fp16): a flagged tile goes from its codes through the
 * inverse transform in registers and is stored once. The tiles whose codes
 * end less than 8 bytes before the message's end (the last few) take the
 * group-sized loads of tiles_narrow. */
static inline __attribute__((always_inline)) FAST_TARGET void
tiles_avx(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b, const uint8_t **codes,
          uint64_t *pivot, const uint32_t nv, const tahq_meta meta)
{
    const uint64_t mask = TAHQ_BYTE_MASK(b);
    dec_walk w = walk_begin(d, t, n, *codes, *pivot, 8u * nv, nv * b);
    for (; w.t < w.e_wide; walk_next(&w)) {
        const __m256 z = _mm256_set1_ps(meta_load(meta, w.zp)),
                     s = _mm256_set1_ps(meta_load(meta, w.sp));
        if (!walk_flagged(d, &w)) {
#pragma GCC unroll 32
            for (uint32_t g = 0; g < nv; g++)
                _mm256_storeu_ps(w.dst + 8 * g, group8(w.src + g * b, mask, z, s));
        } else {
            __m256 r[TAHQ_TILE_MAX / 8];
#pragma GCC unroll 32
            for (uint32_t g = 0; g < nv; g++)
                r[g] = group8(w.src + g * b, mask, z, s);
            inverse_store(r, nv, w.dst, walk_pivot(d, &w), w.factor);
        }
    }
    walk_end(d, &w, b, codes, pivot);
}

/* One copy per tile size, and for fp16 metadata or not. */
static inline __attribute__((always_inline)) FAST_TARGET void
tiles_meta(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b, const uint8_t **codes,
           uint64_t *pivot, const tahq_meta meta)
{
    switch (d->tile) {
    case 8:
        tiles_avx(d, t, n, b, codes, pivot, 1, meta);
        break;
    case 16:
        tiles_avx(d, t, n, b, codes, pivot, 2, meta);
        break;
    case 32:
        tiles_avx(d, t, n, b, codes, pivot, 4, meta);
        break;
    case 64:
        tiles_avx(d, t, n, b, codes, pivot, 8, meta);
        break;
    case 128:
        tiles_avx(d, t, n, b, codes, pivot, 16, meta);
        break;
    default:
        tiles_avx(d, t, n, b, codes, pivot, 32, meta);
        break;
    }
}

static FAST_TARGET void decode_tiles_avx(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                                         const uint8_t **codes, uint64_t *pivot)
{
    if (d->meta == TAHQ_META_FP16)
        tiles_meta(d, t, n, b, codes, pivot, TAHQ_META_FP16);
    else
        tiles_meta(d, t, n, b, codes, pivot, d->meta);
}

#include "decode_avx512.h"

/* Lanes of 32 bits (w32) or 16 bits equal. */
static inline __attribute__((always_inline)) FAST_TARGET __m256i eq_lanes(__m256i a, __m256i b,
                                                                          int w32)
{
    return w32 ? _mm256_cmpeq_epi32(a, b) : _mm256_cmpeq_epi16(a, b);
}

/* The metadata check on whole vectors (16 fp16/bf16 or 8 fp32 values of
 * each kind), the rest with meta_bad_ref. */
static FAST_TARGET int meta_bad_avx(const uint8_t *zp, const uint8_t *sp, uint64_t n,
                                    tahq_meta meta)
{
    const int w32 = meta == TAHQ_META_FP32;
    const uint32_t mb = w32 ? 4u : 2u, per = 32u / mb;
    const __m256i expo = w32 ? _mm256_set1_epi32(0x7F800000)
                             : _mm256_set1_epi16(meta == TAHQ_META_BF16 ? 0x7F80 : 0x7C00);
    const __m256i sign =
        w32 ? _mm256_set1_epi32((int)0x80000000u) : _mm256_set1_epi16((short)0x8000);
    __m256i bad = _mm256_setzero_si256();
    uint64_t i = 0;
    for (; i + per <= n; i += per) {
        const __m256i z = _mm256_loadu_si256((const __m256i *)(const void *)(zp + mb * i));
        const __m256i s = _mm256_loadu_si256((const __m256i *)(const void *)(sp + mb * i));
        bad = _mm256_or_si256(bad, eq_lanes(_mm256_and_si256(z, expo), expo, w32));
        bad = _mm256_or_si256(bad, eq_lanes(z, sign, w32));
        bad = _mm256_or_si256(bad, eq_lanes(_mm256_and_si256(s, expo), expo, w32));
        bad = _mm256_or_si256(bad, _mm256_and_si256(s, sign));
    }
    if (!_mm256_testz_si256(bad, bad))
        return 1;
    return meta_bad_ref(zp + i * mb, sp + i * mb, n - i, meta);
}

/* Streams of at least this many bytes make up for the two combines
 * (about 10^4 instructions each). */
#define CRC3_MIN_STREAM 16384u

/* CRC-32C from crc over p[0 .. n): the three thirds (multiples of 8 bytes;
 * the last takes the rest) in one loop, then joined (common/tahq_crc_gf2.h:
 * CRC(A || B) = mulmod(CRC(A), x^(8|B|)) ^ CRC(B)). */
static FAST_TARGET uint32_t crc3_avx(uint32_t crc, const uint8_t *p, size_t n)
{
    const size_t L = n / 24u * 8u;
    const uint8_t *pb = p + L, *pc = p + 2u * L;
    uint64_t a = ~crc, b = 0xFFFFFFFFu, c = 0xFFFFFFFFu;
    for (size_t i = 0; i < L; i += 8) {
        uint64_t wa, wb, wc;
        memcpy(&wa, p + i, 8);
        memcpy(&wb, pb + i, 8);
        memcpy(&wc, pc + i, 8);
        a = _mm_crc32_u64(a, wa);
        b = _mm_crc32_u64(b, wb);
        c = _mm_crc32_u64(c, wc);
    }
    /* the third stream goes on over the rest */
    const uint32_t crc_c = tahq_crc32c(~(uint32_t)c, p + 3u * L, n - 3u * L);
    const uint32_t ab = tahq_gf2_crc32c_combine(~(uint32_t)a, ~(uint32_t)b, L);
    return tahq_gf2_crc32c_combine(ab, crc_c, n - 2u * L);
}

/* VPCLMULQDQ (CPUID leaf 7, ECX bit 10), which the avx512 path does not
 * imply: -1 until the first call. */
static int clmul512_state = -1;

static int has_clmul512(void)
{
    int v = __atomic_load_n(&clmul512_state, __ATOMIC_RELAXED);
    if (v < 0) {
        unsigned eax, ebx, ecx = 0, edx;
        v = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 10)) != 0;
        __atomic_store_n(&clmul512_state, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* Buffers of at least this many bytes take the carry-less folds (their
 * fixed work, the last folds and the block's crc32, is about 40
 * instructions). */
#define CRC_CLMUL_MIN 1024u

uint32_t tahq_fast_crc32c(uint32_t crc, const uint8_t *data, size_t n)
{
    if (n >= CRC_CLMUL_MIN && tahq_cpu_path_get() == TAHQ_CPU_AVX512 && has_clmul512())
        return crc32c_clmul512(crc, data, n);
    if (n / 3u >= CRC3_MIN_STREAM && fast_check())
        return crc3_avx(crc, data, n);
    return tahq_crc32c(crc, data, n);
}

void tahq_fast_decode_tiles(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                            const uint8_t **codes, uint64_t *pivot)
{
    const tahq_cpu_path p = tahq_cpu_path_get();
    if (p == TAHQ_CPU_AVX512 && d->tile >= 16u) {
        tahq_cpu_path_count(TAHQ_CPU_AVX512);
        decode_tiles_avx512(d, t, n, b, codes, pivot);
    } else if (p >= TAHQ_CPU_AVX2) {
        tahq_cpu_path_count(TAHQ_CPU_AVX2);
        decode_tiles_avx(d, t, n, b, codes, pivot);
    } else {
        tahq_cpu_path_count(TAHQ_CPU_SCALAR);
        decode_tiles_ref(d, t, n, b, codes, pivot);
    }
}

int tahq_fast_meta_bad(const uint8_t *zp, const uint8_t *sp, uint64_t n, tahq_meta meta)
{
    return fast_check() ? meta_bad_avx(zp, sp, n, meta) : meta_bad_ref(zp, sp, n, meta);
}

void tahq_fast_decode_tile(const uint8_t *src, uint32_t tile, uint32_t b, float zero, float scale,
                           float *out)
{
    if (fast_check()) {
        decode_avx(src, tile, b, zero, scale, out);
    } else {
        uint8_t codes[TAHQ_TILE_MAX];
        tahq_unpack_tile(src, codes, tile, b);
        tahq_dequantize_tile(codes, tile, zero, scale, out);
    }
}

int tahq_fast_codes_stochastic(const float *v, uint32_t tile, float zero, float scale,
                               uint32_t levels, uint64_t seed, uint64_t elem0, uint8_t *codes)
{
    const tahq_cpu_path p = tahq_cpu_path_get();
    if (p == TAHQ_CPU_AVX512 && tile >= 64u)
        codes_stochastic_avx512(v, tile, zero, scale, levels, seed, elem0, codes);
    else if (p >= TAHQ_CPU_AVX2)
        codes_stochastic_avx(v, tile, zero, scale, levels, seed, elem0, codes);
    else
        return 0;
    return 1;
}

int tahq_fast_random_words(uint64_t seed, uint64_t elem0, uint32_t tile, uint32_t *words)
{
    const tahq_cpu_path p = tahq_cpu_path_get();
    if (p == TAHQ_CPU_AVX512 && tile >= 64u)
        random_words_avx512(seed, elem0, tile, words);
    else if (p >= TAHQ_CPU_AVX2)
        random_words_avx(seed, elem0, tile, words);
    else
        return 0;
    return 1;
}

void tahq_fast_canonical_nans(float *x, uint32_t n)
{
    if (fast_check() && n % 8u == 0) {
        canonical_nans_avx(x, n);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        x[i] = tahq_canonical_nan(x[i]);
}

#else /* the reference functions */

static tahq_cpu_path detect_best(void)
{
    return TAHQ_CPU_SCALAR;
}

int tahq_fast_tile_active(void)
{
    return 0;
}

void tahq_fast_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    tahq_pack_tile(dst, codes, tile, b);
}

void tahq_fast_decode_tile(const uint8_t *src, uint32_t tile, uint32_t b, float zero, float scale,
                           float *out)
{
    uint8_t codes[TAHQ_TILE_MAX];
    tahq_unpack_tile(src, codes, tile, b);
    tahq_dequantize_tile(codes, tile, zero, scale, out);
}

int tahq_fast_codes_stochastic(const float *v, uint32_t tile, float zero, float scale,
                               uint32_t levels, uint64_t seed, uint64_t elem0, uint8_t *codes)
{
    (void)v, (void)tile, (void)zero, (void)scale, (void)levels, (void)seed, (void)elem0,
        (void)codes;
    return 0;
}

int tahq_fast_random_words(uint64_t seed, uint64_t elem0, uint32_t tile, uint32_t *words)
{
    (void)seed, (void)elem0, (void)tile, (void)words;
    return 0;
}

void tahq_fast_canonical_nans(float *x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        x[i] = tahq_canonical_nan(x[i]);
}

void tahq_fast_decode_tiles(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                            const uint8_t **codes, uint64_t *pivot)
{
    tahq_cpu_path_count(TAHQ_CPU_SCALAR);
    decode_tiles_ref(d, t, n, b, codes, pivot);
}

uint32_t tahq_fast_crc32c(uint32_t crc, const uint8_t *data, size_t n)
{
    return tahq_crc32c(crc, data, n);
}

int tahq_fast_meta_bad(const uint8_t *zp, const uint8_t *sp, uint64_t n, tahq_meta meta)
{
    return meta_bad_ref(zp, sp, n, meta);
}

#endif
