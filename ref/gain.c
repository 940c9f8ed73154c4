/* SPDX-License-Identifier: MIT */ /* gain.c - the key of a token in gain allocation (SPEC §4.3): the squared
 * error its tiles gain when quantized at lo_bits instead of hi_bits, summed
 * in binary64, mapped to an unsigned key that orders as the sum.
 *
 * Everything a tile's error depends on (gate, transform, zero-point, scale,
 * codes) is fixed by the tile and its width alone (SPEC §5), so this is the
 * error the encoder's tile loop will make, computed before the map exists.
 * The ranking itself (sort, tie rule, map) is entropy.c's. */
#include "internal.h"

/* SPEC §2.5 halving tree over w[0..n) in binary64; w is overwritten. */
/*@ requires 1 <= n <= 256 && \valid(w + (0 .. n - 1));
  @ assigns w[0 .. n - 1]; */
static double tree_sum64(double *w, uint32_t n)
{
    /*@ loop invariant 0 <= h <= n / 2;
      @ loop assigns h, w[0 .. n - 1];
      @ loop variant h; */
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        /*@ loop invariant 0 <= j <= h;
          @ loop assigns j, w[0 .. n - 1];
          @ loop variant h - j; */
        for (uint32_t j = 0; j < h; j++)
            w[j] = w[j] + w[j + h];
    return w[0];
}

/* e_b of SPEC §4.3 step 1: the tree sum of the squared binary32 errors of the
 * tile v quantized to z, s, codes, reconstructed as the decoder does (§6.1)
 * before any inverse transform. The squares are exact in binary64. */
/*@ requires 1 <= tile <= 256 && \valid_read(v + (0 .. tile - 1)) &&
  @   \valid_read(codes + (0 .. tile - 1));
  @ assigns \nothing; */
static double tile_squared_error(const float *v, uint32_t tile, float z, float s,
                                 const uint8_t *codes)
{
    double sq[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= i <= tile;
      @ loop assigns i, sq[0 .. 255];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        const float decoded = z + (float)codes[i] * s;
        const float d = decoded - v[i];
        sq[i] = (double)d * (double)d;
    }
    return tree_sum64(sq, tile);
}

/* The pairwise (binary-counter) sum of SPEC §2.5 over tile gains, in
 * binary64: entropy.c's tahq_pairwise_acc with double partial sums. */
typedef struct gain_pairwise {
    double sum[64];
    uint64_t count; /* gains pushed; its bits say which subtrees exist */
    uint32_t depth;
} gain_pairwise;

/*@ requires \valid(acc) && acc->count < 0xFFFFFFFF && acc->depth == tahq_popcount(acc->count);
  @ assigns acc->count, acc->depth, acc->sum[0 .. 63];
  @ ensures acc->count == \old(acc->count) + 1 && acc->depth == tahq_popcount(acc->count); */
static void gain_pairwise_push(gain_pairwise *acc, double v)
{
    uint64_t c = acc->count;
    /*@ loop invariant 0 <= c <= \at(acc->count, Pre);
      @ loop invariant acc->depth == tahq_popcount(c);
      @ loop invariant tahq_popcount(c + 1) == tahq_popcount(\at(acc->count, Pre) + 1);
      @ loop assigns c, v, acc->depth;
      @ loop variant c; */
    while (c & 1u) { /* a complete left subtree of the same size exists */
        /*@ assert c % 2 == 1 && (c + 1) % 2 == 0 && (c + 1) / 2 == c / 2 + 1; */
        /*@ assert tahq_popcount(c) == 1 + tahq_popcount(c / 2); */
        /*@ assert tahq_popcount(c + 1) == tahq_popcount(c / 2 + 1); */
        v = acc->sum[--acc->depth] + v;
        c >>= 1;
    }
    /*@ assert c % 2 == 0 && (c + 1) % 2 == 1 && (c + 1) / 2 == c / 2; */
    /*@ assert tahq_popcount(c) == tahq_popcount(c / 2); */
    /*@ assert tahq_popcount(c + 1) == 1 + tahq_popcount(c / 2); */
    acc->sum[acc->depth++] = v;
    acc->count++;
}

/*@ requires \valid_read(acc) && 1 <= acc->depth <= 64;
  @ assigns \nothing; */
static double gain_pairwise_finish(const gain_pairwise *acc)
{
    double v = acc->sum[acc->depth - 1];
    /*@ loop invariant 0 <= i <= acc->depth - 1;
      @ loop assigns i, v;
      @ loop variant i; */
    for (uint32_t i = acc->depth - 1; i > 0; i--)
        v = acc->sum[i - 1] + v;
    return v;
}

/*@ ghost
  /@ requires t < tiles && tiles * tile <= 0x10000000000;
   @ assigns \nothing;
   @ ensures t * tile + tile <= tiles * tile && (t + 1) * tile <= tiles * tile; @/
  static void gain_tile_step(uint64_t t, uint64_t tiles, uint64_t tile)
  {
      /@ assert (t + 1) * tile <= tiles * tile; @/
  }
*/
/*@ ghost
  /@ requires first + len <= n;
   @ requires \forall integer i; 0 <= i < n ==> tahq_mag(x[i]) < 0x5F800000;
   @ assigns \nothing;
   @ ensures \forall integer i; 0 <= i < len ==> tahq_not_nan_bits(tahq_f32_bits(x[first + i])); @/
  static void gain_tile_not_nan(const float *x, uint64_t n, uint64_t first, uint64_t len) { }
*/

/*@ requires \valid_read(cfg) && tahq_config_ok(cfg);
  @ requires 1 <= tiles && tiles * cfg->tile <= 0x10000000000 &&
  @   elem0 + tiles * cfg->tile <= 0x10000000000;
  @ requires \valid_read(row + (0 .. tiles * cfg->tile - 1));
  @ requires finite_row: \forall integer i; 0 <= i < tiles * cfg->tile ==> tahq_mag(row[i]) < 0x5F800000;
  @ requires \valid(key) && \separated(key, cfg);
  @ assigns *key;
  @ ensures \result == TAHQ_OK || \result == TAHQ_ERR_RANGE; */
tahq_status tahq_token_gain_key(const tahq_config *cfg, const float *row, uint32_t tiles,
                                uint64_t elem0, uint32_t *key)
{
    const uint32_t G = cfg->tile;
    const uint32_t odd_log2 = tahq_tile_log2(G) & 1u; /* κ² = 2 for flagged tiles */
    const uint32_t widths[2] = {cfg->lo_bits, cfg->hi_bits};
    gain_pairwise acc;
    acc.count = 0;
    acc.depth = 0;
    /*@ assert tahq_popcount(0) == 0; */
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    /*@ loop invariant 0 <= t <= tiles && acc.count == t && acc.depth == tahq_popcount(t);
      @ loop assigns t, acc, v[0 .. 255], codes[0 .. 255];
      @ loop variant tiles - t; */
    for (uint32_t t = 0; t < tiles; t++) {
        /*@ ghost gain_tile_step(t, tiles, G); */
        /*@ ghost gain_tile_not_nan(row, (uint64_t)tiles * G, (uint64_t)t * G, G); */
        const float *tile_x = row + (uint64_t)t * G;
        float lo, hi;
        uint32_t pivot;
        tahq_tile_range(tile_x, G, &lo, &hi);
        const int flagged = tahq_gate_from_range(tile_x, G, cfg->tau, lo, hi, &pivot);
        /*@ loop invariant 0 <= i <= G;
          @ loop assigns i, v[0 .. 255];
          @ loop variant G - i; */
        for (uint32_t i = 0; i < G; i++) /* (a memcpy) */
            v[i] = tile_x[i];
        if (flagged) {
            tahq_hadamard_forward(v, G, pivot);
            tahq_tile_range(v, G, &lo, &hi);
        }
        double err[2] = {0.0, 0.0}; /* at lo_bits, at hi_bits */
        /*@ loop invariant 0 <= w <= 2;
          @ loop assigns w, err[0 .. 1], codes[0 .. 255];
          @ loop variant 2 - w; */
        for (uint32_t w = 0; w < 2; w++) {
            float z = 0.0f, s = 0.0f;
            uint32_t zero_bits, scale_bits;
            const tahq_status st = tahq_quantize_tile_range(
                v, G, lo, hi, widths[w], cfg->meta, cfg->rounding, cfg->seed,
                elem0 + (uint64_t)t * G, &z, &s, &zero_bits, &scale_bits, codes);
            if (st != TAHQ_OK)
                return st;
            err[w] = tile_squared_error(v, G, z, s, codes);
        }
        double gain = err[0] - err[1];
        if (flagged && odd_log2)
            gain = 2.0 * gain;
        gain_pairwise_push(&acc, gain);
    }
    *key = tahq_gain_key_of(gain_pairwise_finish(&acc)); /* SPEC §4.3 step 4 */
    return TAHQ_OK;
}
