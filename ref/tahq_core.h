/* SPDX-License-Identifier: MIT */
/*
 * tahq_core.h - the scalar SPEC primitives that the reference (the ref/
 * sources), the fast CPU paths (cpu/) and the CUDA kernels (kernels/, host
 * and device) compute alike, written once:
 *
 *   bit views of binary32/binary64, absolute value,
 *   canonical NaN                                         SPEC 1, 2.1
 *   little-endian fields and the header offsets           SPEC 8.1
 *   metadata fields, zero padding of bit sections         SPEC 8.2, 8.4
 *   log2 of a tile size                                   SPEC 3.3
 *   binary16, bfloat16, the metadata grid, scale search   SPEC 2.2, 5.3
 *   the nearest code of one element                       SPEC 5.3, A.1
 *   the stochastic code of one element                    SPEC 5.3
 *   log2 and its coefficients                             SPEC 2.3
 *   the Philox4x32-10 block and its constants             SPEC 2.4
 *   the gain key                                          SPEC 4.3
 *
 * Header-only: every function is static inline (__host__ __device__ under
 * nvcc), C11, C++ and CUDA, integer or basic binary32 operations in the
 * order the SPEC writes them. The ACSL contracts are WP's (proofs/run.sh
 * proves the first copy Frama-C sees and skips the per-file duplicates);
 * their vocabulary is tahq_logic.h. The CRC-32C algebra has its own header,
 * common/tahq_crc_gf2.h. ARCHITECTURE.md lists what is still written twice
 * and why.
 *
 * A primitive that libtahq also exports (include/tahq_spec.h,
 * tahq_ref_api.h) is tahq_core_<name> here; ref/ defines the exported
 * tahq_<name> as a call of it, with the same contract, so that the proofs
 * of its callers read one contract whichever form they call.
 */
#ifndef TAHQ_CORE_H
#define TAHQ_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tahq.h"
#include "tahq_logic.h"

#if defined(__CUDACC__)
#define TAHQ_CORE_FN static __host__ __device__ __forceinline__
#else
#define TAHQ_CORE_FN static inline
#endif

/* ---- bit views (SPEC 2.1) ------------------------------------------------ */

/* Bit views of binary32 values (SPEC §2.1); memcpy is the defined way in C. */
/*@ assigns \nothing;
  @ ensures \result == tahq_f32_bits(x); */
TAHQ_CORE_FN uint32_t tahq_bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(w) ==> tahq_f32_bits(\result) == w; */
TAHQ_CORE_FN float tahq_float_of(uint32_t w)
{
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
}

/* Bit view of a binary64 value, trusted like tahq_bits_of
 * (proofs/README.md). */
/*@ assigns \nothing; */
TAHQ_CORE_FN uint64_t tahq_bits_of64(double x)
{
    uint64_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(tahq_f32_bits(x)) ==>
  @         tahq_f32_bits(\result) == (tahq_f32_bits(x) & 0x7FFFFFFF); */
TAHQ_CORE_FN float tahq_absf(float x)
{
    return tahq_float_of(tahq_bits_of(x) & 0x7FFFFFFFu);
}

/* The canonical quiet NaN of SPEC §1 rule 6: every NaN a decoder writes has
 * these bits (IEEE leaves a generated NaN's sign and payload open). */
#define TAHQ_CANONICAL_NAN_BITS 0x7FC00000u

/* x, or the canonical NaN if x is a NaN (SPEC §1 rule 6). */
/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_canonical_nan(float x)
{
    return x != x ? tahq_float_of(TAHQ_CANONICAL_NAN_BITS) : x;
}

/* A signed integer key that orders non-NaN floats like their values (with
 * -0 < +0): negative floats get their magnitude bits flipped. Integer
 * minimum and maximum of keys vectorize where float ones would not. */
/*@ assigns \nothing;
  @ ensures \result == tahq_okey(tahq_f32_bits(x)); */
TAHQ_CORE_FN int32_t tahq_order_key(float x)
{
    uint32_t u = tahq_bits_of(x);
    int32_t m = (int32_t)(u & 0x7FFFFFFFu);
    return u >= 0x80000000u ? ~m : m; /* negative: bits 0..30 flipped, = -1 - m */
}

/* The float of an order key (tahq_order_key's inverse). */
/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(tahq_okey_inv(k)) ==> tahq_f32_bits(\result) == tahq_okey_inv(k); */
TAHQ_CORE_FN float tahq_from_order_key(int32_t k)
{
    return tahq_float_of(k < 0 ? 0x80000000u + (uint32_t)(-(k + 1)) : (uint32_t)k);
}

/* ---- little-endian fields and header offsets (SPEC 8.1) --------------------- */

/* Little-endian field access. */
/*@ requires \valid(p + (0 .. 1));
  @ assigns p[0 .. 1]; */
TAHQ_CORE_FN void tahq_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
}
/*@ requires \valid(p + (0 .. 3));
  @ assigns p[0 .. 3]; */
TAHQ_CORE_FN void tahq_put_u32(uint8_t *p, uint32_t v)
{
    /*@ loop invariant 0 <= i <= 4;
      @ loop assigns i, p[0 .. 3];
      @ loop variant 4 - i; */
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid(p + (0 .. 7));
  @ assigns p[0 .. 7]; */
TAHQ_CORE_FN void tahq_put_u64(uint8_t *p, uint64_t v)
{
    /*@ loop invariant 0 <= i <= 8;
      @ loop assigns i, p[0 .. 7];
      @ loop variant 8 - i; */
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid_read(p + (0 .. 1));
  @ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] + p[1] * 256);
}
/*@ requires \valid_read(p + (0 .. 3));
  @ assigns \nothing; */
TAHQ_CORE_FN uint32_t tahq_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
/*@ requires \valid_read(p + (0 .. 7));
  @ assigns \nothing; */
TAHQ_CORE_FN uint64_t tahq_get_u64(const uint8_t *p)
{
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
           ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

/* One metadata value's wire bits: 4 bytes for fp32 metadata, 2 otherwise. */
/*@ requires \valid(dst + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ requires meta != TAHQ_META_FP32 ==> bits <= 0xFFFF;
  @ assigns dst[0 .. (meta == TAHQ_META_FP32 ? 3 : 1)]; */
TAHQ_CORE_FN void tahq_put_meta_bits(uint8_t *dst, tahq_meta meta, uint32_t bits)
{
    if (meta == TAHQ_META_FP32)
        tahq_put_u32(dst, bits);
    else
        tahq_put_u16(dst, (uint16_t)bits);
}
/*@ requires \valid_read(src + (0 .. (meta == TAHQ_META_FP32 ? 3 : 1)));
  @ assigns \nothing; */
TAHQ_CORE_FN uint32_t tahq_get_meta_bits(const uint8_t *src, tahq_meta meta)
{
    return meta == TAHQ_META_FP32 ? tahq_get_u32(src) : tahq_get_u16(src);
}

/* A bit section of nbits bits ends in a whole byte: the bits from nbits up
 * to the end of its last byte must be zero (SPEC 8.4). */
/*@ requires \valid_read(buf + (0 .. (nbits + 7) / 8 - 1));
  @ assigns \nothing; */
TAHQ_CORE_FN int tahq_padding_is_zero(const uint8_t *buf, uint64_t nbits)
{
    if ((nbits & 7u) == 0)
        return 1;
    return (buf[nbits >> 3] >> (nbits & 7u)) == 0;
}

/* Byte offsets of the fields of the 72-byte header (SPEC 8.1); the bytes
 * 64..67 are reserved (zero). */
#define TAHQ_HDR_MAGIC 0
#define TAHQ_HDR_VERSION 4
#define TAHQ_HDR_HEADER_BYTES 6
#define TAHQ_HDR_TILE_LOG2 8
#define TAHQ_HDR_HI_BITS 9
#define TAHQ_HDR_LO_BITS 10
#define TAHQ_HDR_ALLOC 11
#define TAHQ_HDR_ROUNDING 12
#define TAHQ_HDR_META 13
#define TAHQ_HDR_HI_PERMILLE 14
#define TAHQ_HDR_TAU 16
#define TAHQ_HDR_BATCH 20
#define TAHQ_HDR_SEQ_LEN 24
#define TAHQ_HDR_CHANNELS 28
#define TAHQ_HDR_SEED 32
#define TAHQ_HDR_N_LOW 40
#define TAHQ_HDR_N_FLAGGED 48
#define TAHQ_HDR_PAYLOAD_BYTES 56
#define TAHQ_HDR_RESERVED 64
#define TAHQ_HDR_CRC 68

/* ---- tile size (SPEC 3.3) ---------------------------------------------- */

/* log2 of a power-of-two tile size (8..256); 0 if not one. */
/*@ assigns \nothing;
  @ ensures \result <= 8;
  @ ensures tahq_valid_tile(tile) ==> \result == tahq_lg(tile);
  @ ensures 8 <= tile <= 256 && !tahq_valid_tile(tile) ==> \result == 0; */
TAHQ_CORE_FN uint32_t tahq_tile_log2(uint32_t tile)
{
    uint32_t k = 0;
    /*@ loop invariant 0 <= k <= 9;
      @ loop invariant \forall integer j; 0 <= j < k ==> (1 << j) != tile;
      @ loop invariant tahq_valid_tile(tile) ==> k <= tahq_lg(tile);
      @ loop assigns k;
      @ loop variant 9 - k; */
    while (k < 9u && (1u << k) != tile)
        k++;
    return k < 9u ? k : 0u;
}

/* ---- binary16 / bfloat16 and the metadata grid (SPEC 2.2) ---------------- */

/* Integer-only bit manipulation, so the results do not depend on the host's
 * or the device's conversion instructions. */

/*@ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_core_f32_to_f16(float x)
{
    uint32_t w = tahq_bits_of(x);
    uint32_t sign = (w >> 16) & 0x8000u;
    uint32_t a = w & 0x7FFFFFFFu;
    if (a > 0x7F800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u) /* >= 65520 rounds to infinity (65504 is odd) */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) { /* normal binary16: rebias, round at bit 13 */
        uint32_t h = a - 0x38000000u;
        h = (h + 0x0FFFu + ((h >> 13) & 1u)) >> 13;
        return (uint16_t)(sign | h);
    }
    if (a <= 0x33000000u) /* <= 2^-25: rounds to zero (2^-25 is a tie to even 0) */
        return (uint16_t)sign;
    /* subnormal binary16: value = m * 2^(e-150), result = round(value / 2^-24) */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t sh = 126u - e; /* 14..24 */
    /*@ assert 14 <= sh <= 24 && m <= 0xFFFFFF; */
    uint32_t q = m >> sh; /* m < 2^24, sh >= 14 */
    /*@ assert q <= 0x3FF; */
    uint32_t rem = m & ((1u << sh) - 1u);
    uint32_t half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1Fu;
    uint32_t m = (uint32_t)h & 0x3FFu;
    if (e == 0u) {
        if (m == 0u)
            return tahq_float_of(sign);
        /* subnormal: normalize the mantissa into a binary32 normal */
        uint32_t shift = 0;
        /*@ loop invariant 1 <= m < 0x800 && 0 <= shift <= 10;
          @ loop invariant (1 << shift) <= m;
          @ loop assigns m, shift;
          @ loop variant 0x400 - m; */
        while (m < 0x400u) { /* bit 10 clear: m < 0x800 throughout */
            m <<= 1;
            shift++;
        }
        m &= 0x3FFu;
        return tahq_float_of(sign | ((113u - shift) << 23) | (m << 13));
    }
    if (e == 31u)
        return tahq_float_of(sign | 0x7F800000u | (m << 13));
    return tahq_float_of(sign | ((e + 112u) << 23) | (m << 13));
}

/*@ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_core_f32_to_bf16(float x)
{
    uint32_t w = tahq_bits_of(x);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((w >> 16) | 0x40u);
    w += 0x7FFFu + ((w >> 16) & 1u);
    return (uint16_t)(w >> 16);
}

/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_bf16_to_f32(uint16_t h)
{
    return tahq_float_of((uint32_t)h << 16);
}

/* 16-bit sign-magnitude patterns (binary16 and bfloat16 alike): the next
 * representable value below / above. -0 and +0 both step to the smallest
 * subnormal of the right sign; the largest finite steps to infinity. */
/*@ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_pattern16_next_down(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x8001u;
    return (h & 0x8000u) ? (uint16_t)((h + 1u) & 0xFFFFu) : (uint16_t)(h - 1u);
}

/*@ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_pattern16_next_up(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x0001u;
    return (h & 0x8000u) ? (uint16_t)(h - 1u) : (uint16_t)((h + 1u) & 0xFFFFu);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
TAHQ_CORE_FN uint32_t tahq_core_meta_bits(tahq_meta meta, float v)
{
    /* FP32 tested first: every other meta is a 16-bit type, as in
     * tahq_meta_bytes, which is what the ensures clause states. */
    if (meta == TAHQ_META_FP32)
        return tahq_bits_of(v);
    /* One uint16_t variable for both 16-bit paths: WP keeps its type range,
     * which it loses when each call result is widened separately. */
    uint16_t h16;
    if (meta == TAHQ_META_BF16)
        h16 = tahq_core_f32_to_bf16(v);
    else
        h16 = tahq_core_f32_to_f16(v);
    return h16;
}

/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_meta_value(tahq_meta meta, uint32_t bits)
{
    if (meta == TAHQ_META_FP32) /* same test order as tahq_core_meta_bits */
        return tahq_float_of(bits);
    if (meta == TAHQ_META_BF16)
        return tahq_core_bf16_to_f32((uint16_t)(bits & 0xFFFFu));
    return tahq_core_f16_to_f32((uint16_t)(bits & 0xFFFFu));
}

/* Bit patterns of down(x) and up(x) (SPEC §2.2); x is not NaN. */
/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
TAHQ_CORE_FN uint32_t tahq_core_meta_round_down_bits(tahq_meta meta, float x)
{
    uint32_t h = tahq_core_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tahq_core_meta_value(meta, h) > x)
        h = tahq_pattern16_next_down((uint16_t)h);
    return h;
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
TAHQ_CORE_FN uint32_t tahq_core_meta_round_up_bits(tahq_meta meta, float x)
{
    uint32_t h = tahq_core_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tahq_core_meta_value(meta, h) < x)
        h = tahq_pattern16_next_up((uint16_t)h);
    return h;
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_meta_round_down(tahq_meta meta, float x)
{
    if (x != x)
        return x;
    return tahq_core_meta_value(meta, tahq_core_meta_round_down_bits(meta, x));
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_meta_round_up(tahq_meta meta, float x)
{
    if (x != x)
        return x;
    return tahq_core_meta_value(meta, tahq_core_meta_round_up_bits(meta, x));
}

/* SPEC §5.3 step 3 / §7.2: the smallest meta value s >= fl(w / levels) with
 * fl(w / s) <= levels, as bits (w > 0 finite). Starting from up(fl(w/L)),
 * at most a few steps are taken: one in the normal range (where the
 * rounding of w/L is relative), a few where w/L is subnormal (absolute
 * rounding). up(0) = 0 is skipped because w / 0 = inf. Positive patterns of
 * every meta type order like their values, so the next value is bits + 1;
 * the largest finite value steps to +inf, which the caller rejects. */
/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
TAHQ_CORE_FN uint32_t tahq_core_meta_scale_bits(tahq_meta meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_FP32   ? 0x7F800000u
                              : meta == TAHQ_META_BF16 ? 0x7F80u
                                                       : 0x7C00u;
    uint32_t sb = tahq_core_meta_round_up_bits(meta, w / L);
    /*@ loop invariant meta != TAHQ_META_FP32 ==> sb <= 0xFFFF;
      @ loop assigns sb;
      @ loop variant inf_bits - sb; */
    while (sb < inf_bits && !(w / tahq_core_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}

/* The nearest code of t = (v - z) / s, ties to even, at most levels (SPEC
 * 5.3 step 4; the paper profile's A.1 after its clamp): adding and removing
 * 2^23 rounds exactly once for 0 <= t < 2^22. The callers' t lies in
 * [0, levels] (SPEC 5.3, by the choice of z and s), so the min() never
 * changes a code; it only guards the byte conversion. */
/*@ requires 1 <= levels <= 255;
  @ assigns \nothing;
  @ ensures \result <= levels; */
TAHQ_CORE_FN uint8_t tahq_nearest_code(float t, uint32_t levels)
{
    float r = (t + 0x1p23f) - 0x1p23f;
    /*@ admit float_to_int: -1 < r < 4294967296; */ /* 0 <= t <= L (tested) */
    uint32_t q = (uint32_t)r;
    return (uint8_t)(q < levels ? q : levels);
}

/* The stochastic code of t = (v - z) / s with the element's random word
 * (SPEC 5.3 step 4): q = f0 + (rho < phi), where f0 = floor(t), phi = t - f0
 * (exact) and rho = (word >> 8) * 2^-24, at most levels. The callers' t lies
 * in [0, levels], so truncation is the floor and the min() changes a code
 * only at t = levels with rho < phi = 0, which cannot happen. */
/*@ requires 1 <= levels <= 255;
  @ assigns \nothing;
  @ ensures \result <= levels; */
TAHQ_CORE_FN uint8_t tahq_stochastic_code(float t, uint32_t word, uint32_t levels)
{
    /*@ admit float_to_int: -1 < t < 4294967296; */ /* SPEC 5.3: 0 <= t <= L (tested) */
    float f0 = (float)(uint32_t)t;                  /* floor, t >= 0 */
    float phi = t - f0;                             /* exact */
    float rho = (float)(word >> 8) * 0x1p-24f;
    /*@ admit float_to_int: -1 < f0 < 4294967296; */ /* f0 = floor(t) <= L (tested) */
    uint32_t q0 = (uint32_t)f0;
    /*@ admit floor_le_L: q0 <= levels; */ /* SPEC 5.3: t <= L (tested) */
    uint32_t q = q0 + (rho < phi ? 1u : 0u);
    return (uint8_t)(q < levels ? q : levels);
}

/* ---- log2 (SPEC 2.3) ----------------------------------------------------- */

/* Horner coefficients c0..c8 of log2(1+f)/f on [sqrt(1/2)-1, sqrt(2)-1].
 * TAHQ_LOG2_COEFFS initializes an array of the nine. */
#define TAHQ_LOG2_C0 0x1.715476p+0f
#define TAHQ_LOG2_C1 (-0x1.71547p-1f)
#define TAHQ_LOG2_C2 0x1.ec73d4p-2f
#define TAHQ_LOG2_C3 (-0x1.715c9cp-2f)
#define TAHQ_LOG2_C4 0x1.26d41p-2f
#define TAHQ_LOG2_C5 (-0x1.e94f12p-3f)
#define TAHQ_LOG2_C6 0x1.b9b11ep-3f
#define TAHQ_LOG2_C7 (-0x1.a8cc5cp-3f)
#define TAHQ_LOG2_C8 0x1.025a2p-3f
#define TAHQ_LOG2_COEFFS                                                                \
    TAHQ_LOG2_C0, TAHQ_LOG2_C1, TAHQ_LOG2_C2, TAHQ_LOG2_C3, TAHQ_LOG2_C4, TAHQ_LOG2_C5, \
        TAHQ_LOG2_C6, TAHQ_LOG2_C7, TAHQ_LOG2_C8

/* SPEC §2.3 written without branches (selects only) so that per-tile loops
 * vectorize and warp lanes do not diverge; the value is the same as the
 * step-by-step text. */
/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_core_log2(float x)
{
    uint32_t w0 = tahq_bits_of(x);
    uint32_t subnormal = w0 < 0x00800000u ? 0xFFFFFFFFu : 0u; /* all ones if subnormal */
    uint32_t w = (tahq_bits_of(x * 0x1p23f) & subnormal) | (w0 & ~subnormal); /* exact */
    int32_t e = (int32_t)(w >> 23) - 127 - (int32_t)(subnormal & 23u);
    uint32_t frac = w & 0x7FFFFFu;
    uint32_t above_sqrt2 = (uint32_t)(frac > 0x3504F3u);
    /* m in [1,2), halved (exponent field 127 -> 126, exact) above sqrt(2) */
    float m = tahq_float_of((frac | 0x3F800000u) - (above_sqrt2 << 23));
    e += (int32_t)above_sqrt2;
    float f = m - 1.0f; /* exact (Sterbenz) */
    float y = TAHQ_LOG2_C8;
    y = y * f + TAHQ_LOG2_C7;
    y = y * f + TAHQ_LOG2_C6;
    y = y * f + TAHQ_LOG2_C5;
    y = y * f + TAHQ_LOG2_C4;
    y = y * f + TAHQ_LOG2_C3;
    y = y * f + TAHQ_LOG2_C2;
    y = y * f + TAHQ_LOG2_C1;
    y = y * f + TAHQ_LOG2_C0;
    return (float)e + f * y;
}

/* ---- Philox4x32-10 (SPEC 2.4) ------------------------------------------- */

#define TAHQ_PHILOX_M0 0xD2511F53u
#define TAHQ_PHILOX_M1 0xCD9E8D57u
#define TAHQ_PHILOX_W0 0x9E3779B9u
#define TAHQ_PHILOX_W1 0xBB67AE85u

/* out = Philox4x32-10(counter, key): ten rounds, the key bumped by the Weyl
 * constants after each (SPEC §2.4). */
/*@ requires \valid_read(counter + (0 .. 3)) && \valid_read(key + (0 .. 1));
  @ requires \valid(out + (0 .. 3));
  @ requires \separated(out + (0 .. 3), counter + (0 .. 3), key + (0 .. 1));
  @ assigns out[0 .. 3]; */
TAHQ_CORE_FN void tahq_core_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                          uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    /*@ loop invariant 0 <= round <= 10;
      @ loop assigns round, c0, c1, c2, c3, k0, k1;
      @ loop variant 10 - round; */
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)TAHQ_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)TAHQ_PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)(p1 & 0xFFFFFFFFu); /* lo(M1 c2) */
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)(p0 & 0xFFFFFFFFu);
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 = (uint32_t)(((uint64_t)k0 + TAHQ_PHILOX_W0) & 0xFFFFFFFFu); /* mod 2^32 */
        k1 = (uint32_t)(((uint64_t)k1 + TAHQ_PHILOX_W1) & 0xFFFFFFFFu);
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* ---- the gain key (SPEC 4.3) --------------------------------------------- */

/* SPEC §4.3 step 4: the high 32 bits of the order-preserving map of the
 * binary64 bits (sign 0: flip the sign bit; sign 1: flip every bit). */
/*@ assigns \nothing; */
TAHQ_CORE_FN uint32_t tahq_gain_key_of(double sigma)
{
    const uint64_t w = tahq_bits_of64(sigma);
    const uint64_t ordered = (w >> 63) != 0 ? ~w : (w ^ 0x8000000000000000u);
    return (uint32_t)((ordered >> 32) & 0xFFFFFFFFu);
}

#endif /* TAHQ_CORE_H */
