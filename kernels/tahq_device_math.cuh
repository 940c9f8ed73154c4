/* SPDX-License-Identifier: MIT */
/*
 * tahq_device_math.cuh - the device intrinsics the warp programs use, each
 * with its host equivalent for the CPU warp emulation (test_device_math):
 * __float_as_uint, __uint_as_float, __umulhi, __dadd_rn, __dsub_rn,
 * __dmul_rn. Everything a lane computes beyond them is the scalar core's
 * (ref/tahq_core.h: bit views, binary16/bfloat16 and the metadata grid, the
 * scale search, log2, the gain key, little-endian fields) or the CRC-32C
 * algebra's (common/tahq_crc_gf2.h), the same text libtahq compiles.
 *
 * Compiled by nvcc for the device (with --fmad=false, no fast-math, no FTZ)
 * and by the host C++ compiler for the CPU warp emulation.
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

#endif /* TAHQ_DEVICE_MATH_CUH */
