/* hadamard.c - outlier gate, pivot swap and the Walsh-Hadamard transform
 * (SPEC §5.1, §5.2). */
#include "internal.h"

int tahq_gate(const float *x, uint32_t tile, float tau, uint32_t *pivot)
{
    /* m1 and its lowest index d; m2 = max over i != d. Strict '>' keeps the
     * first occurrence as pivot and sends later equal magnitudes to m2. */
    float m1 = tahq_absf(x[0]);
    float m2 = 0.0f;
    uint32_t d = 0;
    for (uint32_t i = 1; i < tile; i++) {
        float a = tahq_absf(x[i]);
        if (a > m1) {
            m2 = m1;
            m1 = a;
            d = i;
        } else if (a > m2) {
            m2 = a;
        }
    }
    *pivot = d;
    if (tahq_bits_of(tau) == 0x7F800000u || !(m1 > 0.0f))
        return 0;
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
