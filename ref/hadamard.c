/* SPDX-License-Identifier: MIT */ /* hadamard.c - outlier gate, pivot swap and the Walsh-Hadamard transform
 * (SPEC §5.1, §5.2). */
#include "internal.h"

/* Given m1 = max |x_i| (as bits; |x| of a finite float orders like its
 * bits): how many elements reach it, and the largest magnitude below it.
 * m2 = max over i != d is then m1 if it occurs twice, else `below`. */
/*@ requires tile <= 256 && \valid_read(x + (0 .. tile - 1));
  @ requires \valid(count) && \valid(below) && \separated(count, below);
  @ assigns *count, *below; */
TAHQ_HOT static void magnitude_runner_up(const float *x, uint32_t tile, uint32_t m1,
                                         uint32_t *count, uint32_t *below)
{
    uint32_t n = 0, b = 0;
    /*@ loop invariant 0 <= i <= tile && n <= i;
      @ loop assigns i, n, b;
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        uint32_t is_max = a == m1;
        n += is_max;
        uint32_t other = a & (is_max ? 0u : 0xFFFFFFFFu); /* a mask, not a branch */
        b = other > b ? other : b;
    }
    *count = n;
    *below = b;
}

/* Lowest index whose magnitude has bit pattern m1 (a min reduction). */
/*@ requires tile <= 256 && \valid_read(x + (0 .. tile - 1));
  @ assigns \nothing;
  @ ensures \result <= tile;
  @ ensures found: (\exists integer j; 0 <= j < tile && tahq_mag(x[j]) == m1) ==> \result < tile; */
TAHQ_HOT static uint32_t first_index_of_magnitude(const float *x, uint32_t tile, uint32_t m1)
{
    uint32_t d = tile;
    /*@ loop invariant 0 <= i <= tile && d <= tile;
      @ loop invariant (\exists integer j; 0 <= j < i && tahq_mag(x[j]) == m1) ==> d < tile;
      @ loop assigns i, d;
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++) {
        uint32_t candidate = (tahq_bits_of(x[i]) & 0x7FFFFFFFu) == m1 ? i : tile;
        d = candidate < d ? candidate : d;
    }
    return d;
}

/* SPEC §5.1: m1 = max |x_i| = max(|lo|, |hi|) exactly. */
/*@ assigns \nothing;
  @ ensures \result == tahq_mag(lo) || \result == tahq_mag(hi); */
static uint32_t max_magnitude_bits(float lo, float hi)
{
    uint32_t lo_bits = tahq_bits_of(lo) & 0x7FFFFFFFu, hi_bits = tahq_bits_of(hi) & 0x7FFFFFFFu;
    return lo_bits > hi_bits ? lo_bits : hi_bits;
}

/*@ requires 1 <= tile <= 256 && \valid_read(x + (0 .. tile - 1));
  @ requires \valid(pivot) && \separated(pivot, x + (0 .. tile - 1));
  @ requires lo_attained: \exists integer j; 0 <= j < tile && tahq_f32_bits(x[j]) == tahq_f32_bits(lo);
  @ requires hi_attained: \exists integer j; 0 <= j < tile && tahq_f32_bits(x[j]) == tahq_f32_bits(hi);
  @ assigns *pivot;
  @ ensures \result == 0 || \result == 1;
  @ ensures pivot_in_tile: *pivot < tile; */
int tahq_gate_from_range(const float *x, uint32_t tile, float tau, float lo, float hi,
                         uint32_t *pivot)
{
    uint32_t m1_bits = max_magnitude_bits(lo, hi);
    float m1 = tahq_float_of(m1_bits);
    int flagged = 0;
    if (tahq_bits_of(tau) != 0x7F800000u && m1 > 0.0f) {
        uint32_t count, below;
        magnitude_runner_up(x, tile, m1_bits, &count, &below);
        float m2 = tahq_float_of(count >= 2 ? m1_bits : below);
        flagged = m1 >= tau * m2;
    }
    /* the pivot is only needed (and only searched for) when flagged */
    *pivot = flagged ? first_index_of_magnitude(x, tile, m1_bits) : 0u;
    return flagged;
}

/*@ requires 1 <= tile <= 256 && \valid_read(x + (0 .. tile - 1));
  @ requires not_nan: \forall integer i; 0 <= i < tile ==> tahq_not_nan_bits(tahq_f32_bits(x[i]));
  @ requires \valid(pivot) && \separated(pivot, x + (0 .. tile - 1));
  @ assigns *pivot;
  @ ensures \result == 0 || \result == 1;
  @ ensures pivot_in_tile: *pivot < tile; */
int tahq_gate(const float *x, uint32_t tile, float tau, uint32_t *pivot)
{
    float lo, hi;
    tahq_tile_range(x, tile, &lo, &hi);
    int flagged = tahq_gate_from_range(x, tile, tau, lo, hi, pivot);
    if (!flagged)
        *pivot = first_index_of_magnitude(x, tile, max_magnitude_bits(lo, hi));
    return flagged;
}

/* Reference form of SPEC §5.2 step 2: stage h pairs i and i+h (i & h == 0). */
/*@ requires tahq_valid_tile(tile) && first_h == 1;
  @ requires \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
static inline void fwht_stages(float *x, uint32_t tile, uint32_t first_h)
{
    /*@ loop invariant tahq_pow2_le256(h) && h <= tile;
      @ loop assigns h, x[0 .. tile - 1];
      @ loop variant tile - h; */
    for (uint32_t h = first_h; h < tile; h *= 2)
        /*@ loop invariant 0 <= i <= tile && i % (2 * h) == 0;
          @ loop assigns i, x[0 .. tile - 1];
          @ loop variant tile - i; */
        for (uint32_t i = 0; i < tile; i += 2 * h)
            /*@ loop invariant i <= j <= i + h;
              @ loop assigns j, x[0 .. tile - 1];
              @ loop variant i + h - j; */
            for (uint32_t j = i; j < i + h; j++) {
                float a = x[j];
                float b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
}

/* The forward and inverse transforms' stages; outside the proofs'
 * build the 8-lane form of cpu/ref_accel.c (the same operations). */
/*@ requires tahq_valid_tile(tile) && \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
void tahq_fwht(float *x, uint32_t tile)
{
#ifdef TAHQ_HAVE_V8
    tahq_cpu_fwht8(x, tile);
#else
    fwht_stages(x, tile, 1);
#endif
}

/*@ requires tahq_valid_tile(tile) && \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
void tahq_fwht_scalar(float *x, uint32_t tile)
{
    fwht_stages(x, tile, 1);
}

/* 2^-n for 0 <= n <= 4, exact. */
/*@ requires n <= 4;
  @ assigns \nothing; */
static float pow2_neg(uint32_t n)
{
    return tahq_float_of((127u - n) << 23);
}

/*@ requires tile <= 256 && \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
TAHQ_HOT static void scale_tile(float *x, uint32_t tile, float factor)
{
    /*@ loop invariant 0 <= i <= tile;
      @ loop assigns i, x[0 .. tile - 1];
      @ loop variant tile - i; */
    for (uint32_t i = 0; i < tile; i++)
        x[i] = x[i] * factor;
}

/*@ requires \valid(x + 0) && \valid(x + pivot);
  @ assigns x[0], x[pivot];
  @ ensures x[0] == \old(x[pivot]) && x[pivot] == \old(x[0]); */
static void swap_pivot(float *x, uint32_t pivot)
{
    float t = x[0];
    x[0] = x[pivot];
    x[pivot] = t;
}

/*@ requires tahq_valid_tile(tile) && pivot < tile && \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
void tahq_hadamard_forward(float *x, uint32_t tile, uint32_t pivot)
{
    uint32_t k = tahq_tile_log2(tile);
    swap_pivot(x, pivot);
    tahq_fwht(x, tile);
    scale_tile(x, tile, pow2_neg((k + 1) / 2));
}

/*@ requires tahq_valid_tile(tile) && pivot < tile && \valid(x + (0 .. tile - 1));
  @ assigns x[0 .. tile - 1]; */
void tahq_hadamard_inverse(float *x, uint32_t tile, uint32_t pivot)
{
    uint32_t k = tahq_tile_log2(tile);
    tahq_fwht(x, tile);
    scale_tile(x, tile, pow2_neg(k / 2));
    swap_pivot(x, pivot);
}
