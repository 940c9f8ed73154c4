/* SPDX-License-Identifier: MIT */ /* fp16.c - binary16 / bfloat16 conversions and the metadata grid (SPEC §2.2).
 * Integer-only bit manipulation, so the results do not depend on the host's
 * conversion instructions. */
#include "internal.h"

/*@ assigns \nothing; */
uint16_t tahq_f32_to_f16(float x)
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
float tahq_f16_to_f32(uint16_t h)
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
uint16_t tahq_f32_to_bf16(float x)
{
    uint32_t w = tahq_bits_of(x);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((w >> 16) | 0x40u);
    w += 0x7FFFu + ((w >> 16) & 1u);
    return (uint16_t)(w >> 16);
}

/*@ assigns \nothing; */
float tahq_bf16_to_f32(uint16_t h)
{
    return tahq_float_of((uint32_t)h << 16);
}

/* 16-bit sign-magnitude patterns (binary16 and bfloat16 alike): the next
 * representable value below / above. -0 and +0 both step to the smallest
 * subnormal of the right sign; the largest finite steps to infinity. */
/*@ assigns \nothing; */
static uint16_t pattern16_next_down(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x8001u;
    return (h & 0x8000u) ? (uint16_t)((h + 1u) & 0xFFFFu) : (uint16_t)(h - 1u);
}

/*@ assigns \nothing; */
static uint16_t pattern16_next_up(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x0001u;
    return (h & 0x8000u) ? (uint16_t)(h - 1u) : (uint16_t)((h + 1u) & 0xFFFFu);
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_bits(tahq_meta meta, float v)
{
    /* FP32 tested first: every other meta is a 16-bit type, as in
     * tahq_meta_bytes, which is what the ensures clause states. */
    if (meta == TAHQ_META_FP32)
        return tahq_bits_of(v);
    /* One uint16_t variable for both 16-bit paths: WP keeps its type range,
     * which it loses when each call result is widened separately. */
    uint16_t h16;
    if (meta == TAHQ_META_BF16)
        h16 = tahq_f32_to_bf16(v);
    else
        h16 = tahq_f32_to_f16(v);
    return h16;
}

/*@ assigns \nothing; */
float tahq_meta_value(tahq_meta meta, uint32_t bits)
{
    if (meta == TAHQ_META_FP32) /* same test order as tahq_meta_bits */
        return tahq_float_of(bits);
    if (meta == TAHQ_META_BF16)
        return tahq_bf16_to_f32((uint16_t)(bits & 0xFFFFu));
    return tahq_f16_to_f32((uint16_t)(bits & 0xFFFFu));
}

/*@ assigns \nothing;
  @ ensures \result == (meta == TAHQ_META_FP32 ? 4 : 2); */
uint32_t tahq_meta_bytes(tahq_meta meta)
{
    return meta == TAHQ_META_FP32 ? 4u : 2u;
}

/* Bit patterns of down(x) and up(x) (SPEC §2.2); x is not NaN. */
/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_round_down_bits(tahq_meta meta, float x)
{
    uint32_t h = tahq_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tahq_meta_value(meta, h) > x)
        h = pattern16_next_down((uint16_t)h);
    return h;
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing;
  @ ensures meta != TAHQ_META_FP32 ==> \result <= 0xFFFF; */
uint32_t tahq_meta_round_up_bits(tahq_meta meta, float x)
{
    uint32_t h = tahq_meta_bits(meta, x);
    if (meta != TAHQ_META_FP32 && tahq_meta_value(meta, h) < x)
        h = pattern16_next_up((uint16_t)h);
    return h;
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
float tahq_meta_round_down(tahq_meta meta, float x)
{
    if (x != x)
        return x;
    return tahq_meta_value(meta, tahq_meta_round_down_bits(meta, x));
}

/*@ requires meta <= TAHQ_META_FP32;
  @ assigns \nothing; */
float tahq_meta_round_up(tahq_meta meta, float x)
{
    if (x != x)
        return x;
    return tahq_meta_value(meta, tahq_meta_round_up_bits(meta, x));
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
uint32_t tahq_meta_scale_bits(tahq_meta meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_FP32   ? 0x7F800000u
                              : meta == TAHQ_META_BF16 ? 0x7F80u
                                                       : 0x7C00u;
    uint32_t sb = tahq_meta_round_up_bits(meta, w / L);
    /*@ loop invariant meta != TAHQ_META_FP32 ==> sb <= 0xFFFF;
      @ loop assigns sb;
      @ loop variant inf_bits - sb; */
    while (sb < inf_bits && !(w / tahq_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}
