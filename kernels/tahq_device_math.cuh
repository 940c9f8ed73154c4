/* SPDX-License-Identifier: MIT */
/*
 * tahq_device_math.cuh - the scalar SPEC primitives as __host__ __device__
 * functions, written to mirror ref/ operation for operation:
 *
 *   bit views (SPEC 2.1)           ref/internal.h
 *   binary16 / bfloat16 (2.2)      ref/fp16.c
 *   metadata grid rounding (2.2)   ref/fp16.c
 *   log2 (2.3)                     ref/entropy.c (log2_core)
 *   Philox4x32-10 (2.4)            ref/rng.c
 *   order keys for min/max (5.3)   ref/quant.c
 *   binary64 sums, gain key (4.3)  ref/gain.c
 *   CRC-32C (2.6) + GF(2) algebra  ref/format.c (table); the combine algebra is
 *                                  common/tahq_crc_gf2.h, shared with cpu/parallel.c
 *   low(n) (4.2), layout (8.2)     ref/format.c
 *
 * Every function here is pure integer or basic binary32 arithmetic in the
 * order the SPEC writes it. Compiled by nvcc for the device (with
 * --fmad=false, no fast-math, no FTZ) and by the host C++ compiler for the
 * CPU-side test (test_device_math), which checks each function bit for bit
 * against libtahq.
 */
#ifndef TAHQ_DEVICE_MATH_CUH
#define TAHQ_DEVICE_MATH_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"
#include "../common/tahq_crc_gf2.h"

#if defined(__CUDACC__)
#define TQ_HD __host__ __device__ __forceinline__
#define TQ_HDNI __host__ __device__
#else
#define TQ_HD inline
#define TQ_HDNI inline
#endif

/* ---- bit views (SPEC 2.1) --------------------------------------------------- */

TQ_HD uint32_t tq_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return w;
#endif
}

TQ_HD float tq_float(uint32_t w)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(w);
#else
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
#endif
}

TQ_HD float tq_absf(float x) { return tq_float(tq_bits(x) & 0x7FFFFFFFu); }

/* log2 of a power-of-two tile size (8..256); 0 if not one (ref/internal.h). */
TQ_HD uint32_t tq_tile_log2(uint32_t tile)
{
    uint32_t k = 0;
    while (k < 9u && (1u << k) != tile)
        k++;
    return k < 9u ? k : 0u;
}

/* ---- binary16 / bfloat16 (SPEC 2.2, ref/fp16.c) ---------------------------- */

TQ_HD uint16_t tq_f32_to_f16(float x)
{
    uint32_t w = tq_bits(x);
    uint32_t sign = (w >> 16) & 0x8000u;
    uint32_t a = w & 0x7FFFFFFFu;
    if (a > 0x7F800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u) /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) { /* normal binary16: rebias, round at bit 13 */
        uint32_t h = a - 0x38000000u;
        h = (h + 0x0FFFu + ((h >> 13) & 1u)) >> 13;
        return (uint16_t)(sign | h);
    }
    if (a <= 0x33000000u) /* <= 2^-25 rounds to zero */
        return (uint16_t)sign;
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t sh = 126u - e; /* 14..24 */
    uint32_t q = m >> sh;
    uint32_t rem = m & ((1u << sh) - 1u);
    uint32_t half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

TQ_HD float tq_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1Fu;
    uint32_t m = (uint32_t)h & 0x3FFu;
    if (e == 0u) {
        if (m == 0u)
            return tq_float(sign);
        uint32_t shift = 0;
        while ((m & 0x400u) == 0u) {
            m <<= 1;
            shift++;
        }
        m &= 0x3FFu;
        return tq_float(sign | ((113u - shift) << 23) | (m << 13));
    }
    if (e == 31u)
        return tq_float(sign | 0x7F800000u | (m << 13));
    return tq_float(sign | ((e + 112u) << 23) | (m << 13));
}

TQ_HD uint16_t tq_f32_to_bf16(float x)
{
    uint32_t w = tq_bits(x);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((w >> 16) | 0x40u);
    w += 0x7FFFu + ((w >> 16) & 1u);
    return (uint16_t)(w >> 16);
}

TQ_HD float tq_bf16_to_f32(uint16_t h) { return tq_float((uint32_t)h << 16); }

TQ_HD uint16_t tq_pattern16_next_down(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x8001u;
    return (h & 0x8000u) ? (uint16_t)(h + 1u) : (uint16_t)(h - 1u);
}

TQ_HD uint16_t tq_pattern16_next_up(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x0001u;
    return (h & 0x8000u) ? (uint16_t)(h - 1u) : (uint16_t)(h + 1u);
}

/* meta: 0 fp16, 1 bf16, 2 fp32 (tahq_meta) */
TQ_HD uint32_t tq_meta_bits(uint32_t meta, float v)
{
    switch (meta) {
    case TAHQ_META_FP16: return tq_f32_to_f16(v);
    case TAHQ_META_BF16: return tq_f32_to_bf16(v);
    default: return tq_bits(v);
    }
}

TQ_HD float tq_meta_value(uint32_t meta, uint32_t bits)
{
    switch (meta) {
    case TAHQ_META_FP16: return tq_f16_to_f32((uint16_t)bits);
    case TAHQ_META_BF16: return tq_bf16_to_f32((uint16_t)bits);
    default: return tq_float(bits);
    }
}

TQ_HD uint32_t tq_meta_bytes(uint32_t meta) { return meta == TAHQ_META_FP32 ? 4u : 2u; }

/* Bit patterns of down(x) and up(x) (SPEC 2.2); x is not NaN. */
TQ_HD uint32_t tq_meta_round_down_bits(uint32_t meta, float x)
{
    uint32_t h = tq_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tq_meta_value(meta, h) > x)
        h = tq_pattern16_next_down((uint16_t)h);
    return h;
}

TQ_HD uint32_t tq_meta_round_up_bits(uint32_t meta, float x)
{
    uint32_t h = tq_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tq_meta_value(meta, h) < x)
        h = tq_pattern16_next_up((uint16_t)h);
    return h;
}

TQ_HD float tq_meta_round_down(uint32_t meta, float x)
{
    if (x != x)
        return x;
    return tq_meta_value(meta, tq_meta_round_down_bits(meta, x));
}

TQ_HD float tq_meta_round_up(uint32_t meta, float x)
{
    if (x != x)
        return x;
    return tq_meta_value(meta, tq_meta_round_up_bits(meta, x));
}

/* Smallest positive value of each metadata type. */
TQ_HD float tq_meta_min_positive(uint32_t meta)
{
    return meta == TAHQ_META_FP16 ? 0x1p-24f : meta == TAHQ_META_BF16 ? 0x1p-133f : 0x1p-149f;
}

/* SPEC 5.3 step 3 / 7.2: the smallest meta value s >= fl(w / L) with
 * fl(w / s) <= L, as bits (w > 0 finite): start at up(fl(w / L)) and step to
 * the next pattern while fl(w / s) > L (w / 0 = inf skips a zero start);
 * +inf (the pattern after the largest finite) means overflow. */
TQ_HD uint32_t tq_meta_scale_bits(uint32_t meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_FP32 ? 0x7F800000u : meta == TAHQ_META_BF16 ? 0x7F80u : 0x7C00u;
    uint32_t sb = tq_meta_round_up_bits(meta, w / L);
    while (sb < inf_bits && !(w / tq_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}

/* ---- SPEC 5.3 zero-point and scale of one tile ------------------------------- *
 * From the tile's min lo and max hi: z = down(lo) (+0 if zero), s = +0 if
 * w = fl(hi - z) = 0, else the search above. *range is set on overflow. */
TQ_HD void tq_zero_scale(uint32_t meta, float lo, float hi, uint32_t levels, float *zero,
                         float *scale, uint32_t *range)
{
    float z = tq_meta_value(meta, tq_meta_round_down_bits(meta, lo));
    uint32_t bad = tq_bits(z) == 0xFF800000u ? 1u : 0u;
    if (z == 0.0f)
        z = 0.0f; /* canonical +0 */
    float w = hi - z;
    float s = 0.0f;
    if (w != 0.0f) {
        s = tq_meta_value(meta, tq_meta_scale_bits(meta, w, levels));
        if (tq_bits(s) == 0x7F800000u)
            bad = 1u;
    }
    *zero = z;
    *scale = s;
    *range = bad;
}

/* ---- log2 (SPEC 2.3; ref/entropy.c log2_core, branch-free form) --------------- */

TQ_HD float tq_log2(float x)
{
    const float c0 = 0x1.715476p+0f, c1 = -0x1.71547p-1f, c2 = 0x1.ec73d4p-2f,
                c3 = -0x1.715c9cp-2f, c4 = 0x1.26d41p-2f, c5 = -0x1.e94f12p-3f,
                c6 = 0x1.b9b11ep-3f, c7 = -0x1.a8cc5cp-3f, c8 = 0x1.025a2p-3f;
    uint32_t w0 = tq_bits(x);
    uint32_t subnormal = 0u - (uint32_t)(w0 < 0x00800000u);
    uint32_t w = (tq_bits(x * 0x1p23f) & subnormal) | (w0 & ~subnormal);
    int32_t e = (int32_t)(w >> 23) - 127 - (int32_t)(subnormal & 23u);
    uint32_t frac = w & 0x7FFFFFu;
    uint32_t above_sqrt2 = (uint32_t)(frac > 0x3504F3u);
    float m = tq_float((frac | 0x3F800000u) - (above_sqrt2 << 23));
    e += (int32_t)above_sqrt2;
    float f = m - 1.0f;
    float y = c8;
    y = y * f + c7;
    y = y * f + c6;
    y = y * f + c5;
    y = y * f + c4;
    y = y * f + c3;
    y = y * f + c2;
    y = y * f + c1;
    y = y * f + c0;
    return (float)e + f * y;
}

/* SPEC 4.1 step 4: p = min(fl(a * inv), 1) with inv = fl(1 / sum); when
 * inv overflows (sum < 2^-128), p = fl(a / sum). */
TQ_HD float tq_entropy_p(float a, float inv, float sum)
{
    if (tq_bits(inv) == 0x7F800000u)
        return a / sum;
    float p = a * inv;
    return p < 1.0f ? p : 1.0f;
}

/* h = p * log2(p), +0 when p = 0 (SPEC 4.1 step 4). ref/entropy.c leaves
 * the product -0 for p = 0; zero terms never change a non-zero partial sum
 * and H = 0 - sum maps both zeros to +0, so H is the same bit pattern. */
TQ_HD float tq_plogp(float p)
{
    uint32_t plogp = tq_bits(p * tq_log2(p));
    return tq_float(tq_bits(p) == 0u ? 0u : plogp);
}

/* ---- Philox4x32-10 (SPEC 2.4, ref/rng.c) -------------------------------------- */

TQ_HD uint32_t tq_mulhi(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* In-place: c[0..3] = philox(c, key). */
TQ_HD void tq_philox(uint32_t &c0, uint32_t &c1, uint32_t &c2, uint32_t &c3, uint32_t k0,
                     uint32_t k1)
{
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int round = 0; round < 10; round++) {
        uint32_t hi0 = tq_mulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        uint32_t hi1 = tq_mulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        uint32_t n0 = hi1 ^ c1 ^ k0;
        uint32_t n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* The four words of block idx >> 2 (counter (lo(blk), hi(blk), 0, 0)). */
struct tq_u32x4 {
    uint32_t w[4];
};

TQ_HD tq_u32x4 tq_random_block(uint64_t seed, uint64_t block)
{
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = 0u, c3 = 0u;
    tq_philox(c0, c1, c2, c3, (uint32_t)seed, (uint32_t)(seed >> 32));
    tq_u32x4 r;
    r.w[0] = c0;
    r.w[1] = c1;
    r.w[2] = c2;
    r.w[3] = c3;
    return r;
}

TQ_HD uint32_t tq_random_word(uint64_t seed, uint64_t idx)
{
    tq_u32x4 r = tq_random_block(seed, idx >> 2);
    return r.w[idx & 3u];
}

/* ---- order keys (ref/quant.c) -------------------------------------------------- */

TQ_HD int32_t tq_order_key(float x)
{
    int32_t w = (int32_t)tq_bits(x);
    return w ^ (int32_t)((uint32_t)(w >> 31) >> 1);
}

TQ_HD float tq_from_order_key(int32_t k)
{
    return tq_float((uint32_t)(k ^ (int32_t)((uint32_t)(k >> 31) >> 1)));
}

/* ---- SPEC 5.3 codes for one value --------------------------------------------- */

/* nearest-even code of v against (z, s), s > 0 (ref/quant.c codes_nearest) */
TQ_HD uint32_t tq_code_nearest(float v, float z, float s, uint32_t levels)
{
    float t = (v - z) / s;
    uint32_t q = (uint32_t)((t + 0x1p23f) - 0x1p23f);
    return q < levels ? q : levels;
}

/* stochastic code with the random word of the element (ref/quant.c) */
TQ_HD uint32_t tq_code_stochastic(float v, float z, float s, uint32_t levels, uint32_t word)
{
    float t = (v - z) / s;
    float f0 = (float)(uint32_t)t;
    float phi = t - f0;
    float rho = (float)(word >> 8) * 0x1p-24f;
    uint32_t q = (uint32_t)f0 + (rho < phi ? 1u : 0u);
    return q < levels ? q : levels;
}

/* ---- SPEC 4.3 binary64 arithmetic and the gain key (ref/gain.c) ------------------ *
 * The gain of a token is summed in binary64. Each operation is one IEEE
 * binary64 operation rounded to nearest even: on the device the _rn
 * intrinsics, which nvcc never contracts into a fused multiply-add (whatever
 * --fmad says); on the host plain operators under -ffp-contract=off. */

TQ_HD double tq_dadd(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

TQ_HD double tq_dsub(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

TQ_HD double tq_dmul(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* bit view of a binary64 value */
TQ_HD uint64_t tq_bits64(double x)
{
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t w;
    memcpy(&w, &x, sizeof w);
    return w;
#endif
}

/* SPEC 4.3 step 4: the high 32 bits of the order-preserving map of the
 * binary64 bits (sign 0: flip the sign bit; sign 1: flip every bit). */
TQ_HD uint32_t tq_gain_key(double sigma)
{
    const uint64_t w = tq_bits64(sigma);
    const uint64_t ordered = (w >> 63) != 0u ? ~w : (w ^ 0x8000000000000000ull);
    return (uint32_t)(ordered >> 32);
}

/* ---- SPEC 7.2 fixpoint --------------------------------------------------------- */

TQ_HD int32_t tq_round_half_even_signed(float t)
{
    float a = tq_absf(t);
    int32_t m = (int32_t)((a + 0x1p23f) - 0x1p23f);
    return (tq_bits(t) & 0x80000000u) ? -m : m;
}

/* ---- CRC-32C (SPEC 2.6) and GF(2) algebra ---------------------------------------- *
 * The algebra is shared with the CPU's multi-threaded codec: common/tahq_crc_gf2.h
 * (reflected representation, as zlib's crc32_combine; raw(s, M) is the CRC
 * register after M starting from register s, without the final xor). The tq_
 * names below are the kernels' spelling of it. */
#define TQ_CRC_POLY TAHQ_CRC32C_POLY

/* Table entry for byte v (the same values as ref/format.c's table). */
TQ_HD uint32_t tq_crc_table_entry(uint32_t v) { return tahq_gf2_crc_table_entry(v); }

/* a * b mod P */
TQ_HD uint32_t tq_gf2_mulmod(uint32_t a, uint32_t b) { return tahq_gf2_mulmod(a, b); }

/* x^n mod P (n up to 2^64 - 1) */
TQ_HD uint32_t tq_gf2_xpow(uint64_t n) { return tahq_gf2_xpow(n); }

/* x^-1 mod P */
TQ_HD uint32_t tq_gf2_xinv(void) { return tahq_gf2_xinv(); }

/* x^(-n) mod P */
TQ_HD uint32_t tq_gf2_xpow_inv(uint64_t n) { return tahq_gf2_xpow_inv(n); }

/* raw CRC register update over n bytes, bytewise. */
TQ_HD uint32_t tq_crc_raw_bytes(uint32_t c, const uint8_t *p, size_t n)
{
    return tahq_gf2_crc_raw_bytes(c, p, n);
}

/* ---- SPEC 4.2 and 8.2 ------------------------------------------------------------ */

/* floor(n * (1000 - r) / 1000), exact for every 64-bit n (ref/format.c) */
TQ_HD uint64_t tq_low_count(uint64_t n, uint32_t hi_permille)
{
    const uint64_t k = 1000u - hi_permille;
    return (n / 1000u) * k + (n % 1000u) * k / 1000u;
}

#endif /* TAHQ_DEVICE_MATH_CUH */
