/* SPDX-License-Identifier: MIT */ /* fixpoint.c - per-channel symmetric quantizer for backward gradients
 * (SPEC §7.2). */
#include "internal.h"

/* Nearest integer, ties to even, of |t| < 2^22: adding and removing 2^23
 * rounds exactly once. Rounding the magnitude keeps the rule symmetric. */
/*@ assigns \nothing;
  @ ensures -2147483647 <= \result <= 2147483647; */
static int32_t round_half_even_signed(float t)
{
    float a = tahq_absf(t);
    float r = (a + 0x1p23f) - 0x1p23f;
    /*@ admit float_to_int: -1 < r < 2147483648; */ /* SPEC §7.2: |t| < L + 1 (tested) */
    int32_t m = (int32_t)r;
    return (tahq_bits_of(t) & 0x80000000u) ? -m : m;
}

/* tahq_fixpoint_encode's argument checks, in its order; the CUDA encoder
 * makes the same ones before its workspace's. */
/*@ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL || \result == TAHQ_ERR_CONFIG ||
  @   \result == TAHQ_ERR_SHAPE;
  @ ensures \result == TAHQ_OK ==> g != \null && codes != \null && steps != \null &&
  @   2 <= bits <= 8 && 0 <= meta <= TAHQ_META_FP32 &&
  @   0 < rows && 0 < channels && rows * channels <= 0x10000000000; */
tahq_status tahq_fixpoint_encode_check(const float *g, uint64_t rows, uint32_t channels,
                                       uint32_t bits, tahq_meta meta, const uint8_t *codes,
                                       const float *steps)
{
    if (!g || !codes || !steps)
        return TAHQ_ERR_NULL;
    if (bits < 2 || bits > 8 || (unsigned)meta > TAHQ_META_FP32)
        return TAHQ_ERR_CONFIG;
    if (rows == 0 || channels == 0 || rows > TAHQ_MAX_ELEMENTS / channels)
        return TAHQ_ERR_SHAPE;
    /*@ assert rows * channels <= 0x10000000000; */
    return TAHQ_OK;
}

/*@ requires buffers: 0 < rows && 0 < channels && rows * channels <= 0x10000000000 ==>
  @   (g == \null || \valid_read(g + (0 .. rows * channels - 1))) &&
  @   (codes == \null || \valid(codes + (0 .. rows * channels - 1))) &&
  @   (steps == \null || \valid(steps + (0 .. channels - 1)));
  @ requires \separated(codes + (0 .. rows * channels - 1), steps + (0 .. channels - 1));
  @ assigns codes[0 .. rows * channels - 1], steps[0 .. channels - 1];
  @ ensures code_range: \result == TAHQ_OK ==> \forall integer i; 0 <= i < rows * channels ==>
  @   1 <= codes[i] <= (1 << bits) - 1; */
tahq_status tahq_fixpoint_encode(const float *g, uint64_t rows, uint32_t channels, uint32_t bits,
                                 tahq_meta meta, uint8_t *codes, float *steps)
{
    tahq_status st = tahq_fixpoint_encode_check(g, rows, channels, bits, meta, codes, steps);
    if (st != TAHQ_OK)
        return st;
    const uint64_t n = rows * channels;
    /*@ loop invariant 0 <= i <= n;
      @ loop assigns i;
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(g[i]) & 0x7FFFFFFFu;
        if (a >= 0x7F800000u)
            return TAHQ_ERR_NONFINITE;
        if (a >= 0x5F800000u)
            return TAHQ_ERR_RANGE;
    }
    const int32_t levels = (1 << (bits - 1)) - 1;
    const int32_t offset = 1 << (bits - 1);
    /*@ assert fix_levels: levels + offset == (1 << bits) - 1 && 1 <= levels <= 127; */
    /* Steps first, so that nothing is written if one overflows the meta type. */
    /*@ loop invariant 0 <= c <= channels;
      @ loop assigns c, steps[0 .. channels - 1];
      @ loop variant channels - c; */
    for (uint32_t c = 0; c < channels; c++) {
        float m = 0.0f;
        /*@ loop invariant 0 <= r <= rows;
          @ loop assigns r, m;
          @ loop variant rows - r; */
        for (uint64_t r = 0; r < rows; r++) {
            /*@ assert r * channels + c < rows * channels; */
            float a = tahq_absf(g[r * channels + c]);
            m = a > m ? a : m;
        }
        float h = 0.0f;
        if (m > 0.0f) {
            h = tahq_meta_value(meta, tahq_meta_scale_bits(meta, m, (uint32_t)levels));
            if (tahq_bits_of(h) == 0x7F800000u)
                return TAHQ_ERR_RANGE;
        }
        steps[c] = h;
    }
    //@ ghost uint64_t k = 0;
    /*@ loop invariant 0 <= r <= rows;
      @ loop invariant fix_k_outer: k == r * channels;
      @ loop invariant fix_outer: \forall integer i; 0 <= i < k ==> 1 <= codes[i] <= (1 << bits) - 1;
      @ loop assigns r, k, codes[0 .. rows * channels - 1];
      @ loop variant rows - r; */
    for (uint64_t r = 0; r < rows; r++)
        /*@ loop invariant 0 <= c <= channels;
          @ loop invariant fix_k_inner: k == r * channels + c;
          @ loop invariant fix_inner: \forall integer i; 0 <= i < k ==> 1 <= codes[i] <= (1 << bits) - 1;
          @ loop assigns c, k, codes[0 .. rows * channels - 1];
          @ loop variant channels - c; */
        for (uint32_t c = 0; c < channels; c++) {
            /*@ assert r * channels + c < rows * channels; */
            int32_t q = 0;
            if (steps[c] > 0.0f) {
                q = round_half_even_signed(g[r * channels + c] / steps[c]);
                q = q > levels ? levels : (q < -levels ? -levels : q);
            }
            /*@ assert fix_q: 1 <= q + offset <= (1 << bits) - 1; */
            codes[r * channels + c] = (uint8_t)(q + offset);
            //@ ghost k++;
        }
    return TAHQ_OK;
}

/* tahq_fixpoint_decode's argument checks, in its order; the CUDA decoder
 * makes the same ones before its workspace's. */
/*@ assigns \nothing;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_NULL || \result == TAHQ_ERR_CONFIG ||
  @   \result == TAHQ_ERR_SHAPE;
  @ ensures \result == TAHQ_OK ==> codes != \null && steps != \null && out != \null &&
  @   2 <= bits <= 8 && 0 < rows && 0 < channels && rows * channels <= 0x10000000000; */
tahq_status tahq_fixpoint_decode_check(const uint8_t *codes, const float *steps, uint64_t rows,
                                       uint32_t channels, uint32_t bits, const float *out)
{
    if (!codes || !steps || !out)
        return TAHQ_ERR_NULL;
    if (bits < 2 || bits > 8)
        return TAHQ_ERR_CONFIG;
    if (rows == 0 || channels == 0 || rows > TAHQ_MAX_ELEMENTS / channels)
        return TAHQ_ERR_SHAPE;
    /*@ assert rows * channels <= 0x10000000000; */
    return TAHQ_OK;
}

/*@ requires buffers: 0 < rows && 0 < channels && rows * channels <= 0x10000000000 ==>
  @   (codes == \null || \valid_read(codes + (0 .. rows * channels - 1))) &&
  @   (steps == \null || \valid_read(steps + (0 .. channels - 1))) &&
  @   (out == \null || \valid(out + (0 .. rows * channels - 1)));
  @ assigns out[0 .. rows * channels - 1]; */
tahq_status tahq_fixpoint_decode(const uint8_t *codes, const float *steps, uint64_t rows,
                                 uint32_t channels, uint32_t bits, float *out)
{
    tahq_status st = tahq_fixpoint_decode_check(codes, steps, rows, channels, bits, out);
    if (st != TAHQ_OK)
        return st;
    const int32_t offset = 1 << (bits - 1);
    /*@ loop invariant 0 <= i <= rows * channels;
      @ loop assigns i;
      @ loop variant rows * channels - i; */
    for (uint64_t i = 0; i < rows * channels; i++)
        if (codes[i] >= (1u << bits) || codes[i] == 0)
            return TAHQ_ERR_PAYLOAD;
    /*@ loop invariant 0 <= c <= channels;
      @ loop assigns c;
      @ loop variant channels - c; */
    for (uint32_t c = 0; c < channels; c++)
        if ((tahq_bits_of(steps[c]) & 0x80000000u) || !(steps[c] - steps[c] == 0.0f))
            return TAHQ_ERR_PAYLOAD;
    /*@ loop invariant 0 <= r <= rows;
      @ loop assigns r, out[0 .. rows * channels - 1];
      @ loop variant rows - r; */
    for (uint64_t r = 0; r < rows; r++)
        /*@ loop invariant 0 <= c <= channels;
          @ loop assigns c, out[0 .. rows * channels - 1];
          @ loop variant channels - c; */
        for (uint32_t c = 0; c < channels; c++) {
            /*@ assert r * channels + c < rows * channels; */
            int32_t q = (int32_t)codes[r * channels + c] - offset;
            out[r * channels + c] = (float)q * steps[c];
        }
    return TAHQ_OK;
}
