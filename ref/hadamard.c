/* hadamard.c - outlier gate, pivot swap and the Walsh-Hadamard transform
 * (SPEC §5.1, §5.2). */
#include "internal.h"

/* Largest of |x_i| over the tile with element `skip` counted as 0 (pass
 * skip = tile to count all). |x| of a finite float orders like its bit
 * pattern, and an integer max reduction vectorizes. */
TAHQ_HOT static float max_magnitude(const float *x, uint32_t tile, uint32_t skip)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < tile; i++) {
        uint32_t keep = 0u - (uint32_t)(i != skip); /* a mask, not a branch */
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu & keep;
        m = a > m ? a : m;
    }
    return tahq_float_of(m);
}

/* Lowest index whose magnitude has bit pattern m (a min reduction). */
TAHQ_HOT static uint32_t first_index_of_magnitude(const float *x, uint32_t tile, uint32_t m)
{
    uint32_t d = tile;
    for (uint32_t i = 0; i < tile; i++) {
        uint32_t candidate = (tahq_bits_of(x[i]) & 0x7FFFFFFFu) == m ? i : tile;
        d = candidate < d ? candidate : d;
    }
    return d;
}

int tahq_gate(const float *x, uint32_t tile, float tau, uint32_t *pivot)
{
    /* m1, its lowest index d, then m2 = max over i != d (SPEC §5.1) */
    float m1 = max_magnitude(x, tile, tile);
    uint32_t d = first_index_of_magnitude(x, tile, tahq_bits_of(m1));
    *pivot = d;
    if (tahq_bits_of(tau) == 0x7F800000u || !(m1 > 0.0f))
        return 0;
    float m2 = max_magnitude(x, tile, d);
    return m1 >= tau * m2;
}

void tahq_fwht(float *x, uint32_t tile)
{
    for (uint32_t h = 1; h < tile; h *= 2)
        for (uint32_t i = 0; i < tile; i += 2 * h)
            for (uint32_t j = i; j < i + h; j++) {
                float a = x[j];
                float b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
}

/* 2^-n for 0 <= n <= 4, exact. */
static float pow2_neg(uint32_t n)
{
    return tahq_float_of((127u - n) << 23);
}

static void scale_tile(float *x, uint32_t tile, float factor)
{
    for (uint32_t i = 0; i < tile; i++)
        x[i] = x[i] * factor;
}

static void swap_pivot(float *x, uint32_t pivot)
{
    float t = x[0];
    x[0] = x[pivot];
    x[pivot] = t;
}

void tahq_hadamard_forward(float *x, uint32_t tile, uint32_t pivot)
{
    uint32_t k = tahq_tile_log2(tile);
    swap_pivot(x, pivot);
    tahq_fwht(x, tile);
    scale_tile(x, tile, pow2_neg((k + 1) / 2));
}

void tahq_hadamard_inverse(float *x, uint32_t tile, uint32_t pivot)
{
    uint32_t k = tahq_tile_log2(tile);
    tahq_fwht(x, tile);
    scale_tile(x, tile, pow2_neg(k / 2));
    swap_pivot(x, pivot);
}
