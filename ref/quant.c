/* SPDX-License-Identifier: MIT */ /* quant.c - per-tile asymmetric min/max quantization (SPEC §5.3, §6.1). */
#include "internal.h"

/* min and max of the tile. Integer reductions vectorize; the result can
 * differ from a float scan only in the sign of a zero, which §5.3's
 * canonical +0 zero-point makes irrelevant. */
/*@ requires 1 <= tile <= 256 && \valid_read(v + (0 .. tile - 1));
  @ requires \valid(lo) && \valid(hi) && \separated(lo, hi, v + (0 .. tile - 1));
  @ assigns *lo, *hi;
  @ ensures lo_attained: (\forall integer i; 0 <= i < tile ==> tahq_not_nan_bits(tahq_f32_bits(v[i]))) ==>
  @   \exists integer j; 0 <= j < tile && tahq_f32_bits(*lo) == tahq_f32_bits(v[j]);
  @ ensures hi_attained: (\forall integer i; 0 <= i < tile ==> tahq_not_nan_bits(tahq_f32_bits(v[i]))) ==>
  @   \exists integer j; 0 <= j < tile && tahq_f32_bits(*hi) == tahq_f32_bits(v[j]); */
TAHQ_HOT void tahq_tile_range(const float *v, uint32_t tile, float *lo, float *hi)
{
    int32_t kmin = tahq_order_key(v[0]), kmax = kmin;
    /*@ loop invariant 0 <= i <= tile;
      @ loop invariant \exists integer j; 0 <= j < tile && kmin == tahq_okey(tahq_f32_bits(v[j]));
      @ loop invariant \exists integer j; 0 <= j < tile && kmax == tahq_okey(tahq_f32_bits(v[j]));
      @ loop assigns i, kmin, kmax;
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) { /* from 0: a whole number of vectors */
        int32_t k = tahq_order_key(v[i]);
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    *lo = tahq_from_order_key(kmin);
    *hi = tahq_from_order_key(kmax);
}

/* Zero-point and scale of a tile from its range (SPEC §5.3 steps 2-3), as
 * values and as their wire bit patterns. */
/*@ requires meta <= TAHQ_META_FP32;
  @ requires \valid(zero) && \valid(scale) && \valid(zero_bits) && \valid(scale_bits);
  @ requires \separated(zero, scale, zero_bits, scale_bits);
  @ assigns *zero, *scale, *zero_bits, *scale_bits;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_RANGE;
  @ ensures \result == TAHQ_OK && meta != TAHQ_META_FP32 ==> *zero_bits <= 0xFFFF && *scale_bits <= 0xFFFF; */
static tahq_status tile_zero_scale(float lo, float hi, uint32_t levels, tahq_meta meta, float *zero,
                                   float *scale, uint32_t *zero_bits, uint32_t *scale_bits)
{
    uint32_t zb = tahq_meta_round_down_bits(meta, lo);
    float z = tahq_meta_value(meta, zb);
    if (tahq_bits_of(z) == 0xFF800000u)
        return TAHQ_ERR_RANGE;
    if (z == 0.0f) { /* canonical +0 */
        z = 0.0f;
        zb = 0;
    }
    float w = hi - z;
    float s = 0.0f;
    uint32_t sb = 0;
    if (w != 0.0f) {
        sb = tahq_meta_scale_bits(meta, w, levels);
        s = tahq_meta_value(meta, sb);
        if (tahq_bits_of(s) == 0x7F800000u)
            return TAHQ_ERR_RANGE;
    }
    *zero = z;
    *scale = s;
    *zero_bits = zb;
    *scale_bits = sb;
    return TAHQ_OK;
}

/* Nearest-even codes (tahq_nearest_code): 0 <= t <= L by the choice of s
 * (SPEC §5.3). */
/*@ requires tile <= 256 && 1 <= levels <= 255;
  @ requires \valid_read(v + (0 .. tile - 1)) && \valid(codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1];
  @ ensures code_range: \forall integer i; 0 <= i < tile ==> codes[i] <= levels; */
TAHQ_HOT static void codes_nearest(const float *v, uint32_t tile, float z, float s, uint32_t levels,
                                   uint8_t *codes)
{
    /*@ loop invariant 0 <= i <= tile;
      @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] <= levels;
      @ loop assigns i, codes[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        float t = (v[i] - z) / s;
        codes[i] = tahq_nearest_code(t, levels); /* one rounding, ties to even */
    }
}

/* Stochastic codes (tahq_stochastic_code). One Philox call yields the words
 * of four consecutive element indices (SPEC §2.4: counter = index / 4, word =
 * index mod 4), so a new block is generated only when index / 4 changes. */
/*@ requires tile <= 256 && 1 <= levels <= 255 && elem0 + tile <= UINT64_MAX;
  @ requires \valid_read(v + (0 .. tile - 1)) && \valid(codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1];
  @ ensures code_range: \forall integer i; 0 <= i < tile ==> codes[i] <= levels; */
static void codes_stochastic(const float *v, uint32_t tile, float z, float s, uint32_t levels,
                             uint64_t seed, uint64_t elem0, uint8_t *codes)
{
    const uint32_t key[2] = {(uint32_t)(seed & 0xFFFFFFFFu), (uint32_t)(seed >> 32)};
    uint32_t word[4] = {0, 0, 0, 0};
    /*@ loop invariant 0 <= i <= tile;
      @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] <= levels;
      @ loop assigns i, word[0 .. 3], codes[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        uint64_t idx = elem0 + i;
        if (i == 0 || (idx & 3u) == 0) {
            uint64_t block = idx >> 2;
            const uint32_t counter[4] = {(uint32_t)(block & 0xFFFFFFFFu), (uint32_t)(block >> 32),
                                         0u, 0u};
            tahq_philox4x32_10(counter, key, word);
        }
        float t = (v[i] - z) / s;
        codes[i] = tahq_stochastic_code(t, word[idx & 3u], levels);
    }
}

/*@ requires 1 <= tile <= 256 && 1 <= bits <= 8 && elem0 + tile <= UINT64_MAX;
  @ requires meta <= TAHQ_META_FP32;
  @ requires \valid_read(v + (0 .. tile - 1)) && \valid(codes + (0 .. tile - 1));
  @ requires \valid(zero) && \valid(scale) && \valid(zero_bits) && \valid(scale_bits);
  @ requires \separated(zero, scale, zero_bits, scale_bits, codes + (0 .. tile - 1));
  @ assigns *zero, *scale, *zero_bits, *scale_bits, codes[0 .. tile - 1];
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_RANGE;
  @ ensures \result == TAHQ_OK && meta != TAHQ_META_FP32 ==> *zero_bits <= 0xFFFF && *scale_bits <= 0xFFFF;
  @ ensures code_range: \result == TAHQ_OK ==>
  @   \forall integer i; 0 <= i < tile ==> codes[i] <= (1 << bits) - 1; */
tahq_status tahq_quantize_tile_range(const float *v, uint32_t tile, float lo, float hi,
                                     uint32_t bits, tahq_meta meta, tahq_rounding rounding,
                                     uint64_t seed, uint64_t elem0, float *zero, float *scale,
                                     uint32_t *zero_bits, uint32_t *scale_bits, uint8_t *codes)
{
    const uint32_t levels = (1u << bits) - 1u;
    float z, s;
    tahq_status st = tile_zero_scale(lo, hi, levels, meta, &z, &s, zero_bits, scale_bits);
    if (st != TAHQ_OK)
        return st;
    *zero = z;
    *scale = s;
    if (s == 0.0f) {
        /*@ loop invariant 0 <= i <= tile;
          @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] == 0;
          @ loop assigns i, codes[0 .. tile - 1];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i++) /* (a memset) */
            codes[i] = 0;
    } else if (rounding == TAHQ_ROUND_STOCHASTIC) {
        codes_stochastic(v, tile, z, s, levels, seed, elem0, codes);
    } else {
        codes_nearest(v, tile, z, s, levels, codes);
    }
    return TAHQ_OK;
}

/*@ requires 1 <= tile <= 256 && 1 <= bits <= 8 && elem0 + tile <= UINT64_MAX;
  @ requires \valid_read(v + (0 .. tile - 1)) && \valid(codes + (0 .. tile - 1));
  @ requires meta <= TAHQ_META_FP32;
  @ requires \valid(zero) && \valid(scale) && \separated(zero, scale, codes + (0 .. tile - 1));
  @ assigns *zero, *scale, codes[0 .. tile - 1];
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_RANGE;
  @ ensures code_range: \result == TAHQ_OK ==>
  @   \forall integer i; 0 <= i < tile ==> codes[i] <= (1 << bits) - 1; */
tahq_status tahq_quantize_tile(const float *v, uint32_t tile, uint32_t bits, tahq_meta meta,
                               tahq_rounding rounding, uint64_t seed, uint64_t elem0, float *zero,
                               float *scale, uint8_t *codes)
{
    float lo, hi;
    uint32_t zero_bits, scale_bits;
    tahq_tile_range(v, tile, &lo, &hi);
    return tahq_quantize_tile_range(v, tile, lo, hi, bits, meta, rounding, seed, elem0, zero, scale,
                                    &zero_bits, &scale_bits, codes);
}

/*@ requires tile <= 256 && \valid_read(codes + (0 .. tile - 1)) && \valid(out + (0 .. tile - 1));
  @ assigns out[0 .. tile - 1]; */
TAHQ_HOT void tahq_dequantize_tile(const uint8_t *codes, uint32_t tile, float zero, float scale,
                                   float *out)
{
    /*@ loop invariant 0 <= i <= tile;
      @ loop assigns i, out[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++)
        out[i] = zero + (float)codes[i] * scale;
}
