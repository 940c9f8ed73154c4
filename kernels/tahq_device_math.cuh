/* SPDX-License-Identifier: MIT */
/*
 * tahq_device_math.cuh - what the warp programs compute per lane beyond the
 * scalar core (ref/tahq_core.h: bit views, little-endian fields, tile size,
 * log2 coefficients, Philox constants) and the CRC-32C algebra
 * (common/tahq_crc_gf2.h):
 *
 *   device intrinsics with their host equivalents: __float_as_uint,
 *   __uint_as_float, __double_as_longlong, __umulhi, __dadd_rn, __dsub_rn,
 *   __dmul_rn;
 *   binary16 / bfloat16 and the metadata grid (SPEC 2.2, 5.3), log2 (2.3)
 *   and the gain key (4.3): copies of ref/fp16.c, ref/entropy.c log2_core
 *   and ref/gain.c, operation for operation. They move into the scalar
 *   core once the mutation catalogue of golden/ follows the code there
 *   (ARCHITECTURE.md); test_device_math compares them with libtahq.
 *
 * Pure integer or basic binary32/binary64 arithmetic in the order the SPEC
 * writes it. Compiled by nvcc for the device (with --fmad=false, no
 * fast-math, no FTZ) and by the host C++ compiler for the CPU warp emulation
 * (test_device_math).
 */
#ifndef TAHQ_DEVICE_MATH_CUH
#define TAHQ_DEVICE_MATH_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"
#include "../ref/tahq_core.h"
#include "../common/tahq_crc_gf2.h"

#if defined(__CUDACC__)
#define TQ_HD __host__ __device__ __forceinline__
#else
#define TQ_HD inline
#endif

/* ---- bit views (SPEC 2.1) --------------------------------------------------- */

TQ_HD uint32_t tq_bits(float x)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    return tahq_bits_of(x);
#endif
}

TQ_HD float tq_float(uint32_t w)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(w);
#else
    return tahq_float_of(w);
#endif
}

/* ---- high half of a 32x32-bit product (Philox, SPEC 2.4) --------------------- */

TQ_HD uint32_t tq_mulhi(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* ---- binary64 arithmetic (SPEC 4.3) ------------------------------------------ *
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

TQ_HD float tq_bf16_to_f32(uint16_t h)
{
    return tq_float((uint32_t)h << 16);
}

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
    case TAHQ_META_FP16:
        return tq_f32_to_f16(v);
    case TAHQ_META_BF16:
        return tq_f32_to_bf16(v);
    default:
        return tq_bits(v);
    }
}

TQ_HD float tq_meta_value(uint32_t meta, uint32_t bits)
{
    switch (meta) {
    case TAHQ_META_FP16:
        return tq_f16_to_f32((uint16_t)bits);
    case TAHQ_META_BF16:
        return tq_bf16_to_f32((uint16_t)bits);
    default:
        return tq_float(bits);
    }
}

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

/* SPEC 5.3 step 3 / 7.2: the smallest meta value s >= fl(w / L) with
 * fl(w / s) <= L, as bits (w > 0 finite): start at up(fl(w / L)) and step to
 * the next pattern while fl(w / s) > L (w / 0 = inf skips a zero start);
 * +inf (the pattern after the largest finite) means overflow. */
TQ_HD uint32_t tq_meta_scale_bits(uint32_t meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_FP32   ? 0x7F800000u
                              : meta == TAHQ_META_BF16 ? 0x7F80u
                                                       : 0x7C00u;
    uint32_t sb = tq_meta_round_up_bits(meta, w / L);
    while (sb < inf_bits && !(w / tq_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}

/* ---- log2 (SPEC 2.3; ref/entropy.c log2_core, branch-free form) --------------- */

TQ_HD float tq_log2(float x)
{
    const float c0 = TAHQ_LOG2_C0, c1 = TAHQ_LOG2_C1, c2 = TAHQ_LOG2_C2, c3 = TAHQ_LOG2_C3,
                c4 = TAHQ_LOG2_C4, c5 = TAHQ_LOG2_C5, c6 = TAHQ_LOG2_C6, c7 = TAHQ_LOG2_C7,
                c8 = TAHQ_LOG2_C8;
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

/* ---- SPEC 4.3 gain key (ref/gain.c) --------------------------------------------- */

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

#endif /* TAHQ_DEVICE_MATH_CUH */
