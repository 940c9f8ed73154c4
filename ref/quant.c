/* quant.c - per-tile asymmetric min/max quantization (SPEC §5.3, §6.1). */
#include "internal.h"

/* Smallest positive value of each metadata type. */
static float meta_min_positive(tahq_meta meta)
{
    switch (meta) {
    case TAHQ_META_FP16: return 0x1p-24f;
    case TAHQ_META_BF16: return 0x1p-133f;
    default: return 0x1p-149f;
    }
}

/* Nearest integer, ties to even, of 0 <= t < 2^23: adding 2^23 leaves no
 * fraction bits, so the addition itself rounds (exactly once, RNE). */
static uint32_t round_half_even(float t)
{
    float r = (t + 0x1p23f) - 0x1p23f;
    return (uint32_t)r;
}

tahq_status tahq_quantize_tile(const float *v, uint32_t tile, uint32_t bits, tahq_meta meta,
                               tahq_rounding rounding, uint64_t seed, uint64_t elem0,
                               float *zero, float *scale, uint8_t *codes)
{
    const uint32_t levels = (1u << bits) - 1u;
    float lo = v[0], hi = v[0];
    for (uint32_t i = 1; i < tile; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    float z = tahq_meta_round_down(meta, lo);
    if (tahq_bits_of(z) == 0xFF800000u)
        return TAHQ_ERR_RANGE;
    if (z == 0.0f)
        z = 0.0f; /* canonical +0 */
    float w = hi - z;
    float s = 0.0f;
    if (w != 0.0f) {
        float s0 = w / (float)levels;
        s = s0 == 0.0f ? meta_min_positive(meta) : tahq_meta_round_up(meta, s0);
        if (tahq_bits_of(s) == 0x7F800000u)
            return TAHQ_ERR_RANGE;
    }
    *zero = z;
    *scale = s;
    if (s == 0.0f) {
        for (uint32_t i = 0; i < tile; i++)
            codes[i] = 0;
        return TAHQ_OK;
    }
    for (uint32_t i = 0; i < tile; i++) {
        float t = (v[i] - z) / s; /* 0 <= t < L + 1/2 (SPEC §5.3) */
        uint32_t q;
        if (rounding == TAHQ_ROUND_STOCHASTIC) {
            float f0 = (float)(uint32_t)t; /* floor, t >= 0 */
            float phi = t - f0;
            float rho = (float)(tahq_random_word(seed, elem0 + i) >> 8) * 0x1p-24f;
            q = (uint32_t)f0 + (rho < phi ? 1u : 0u);
        } else {
            q = round_half_even(t);
        }
        codes[i] = (uint8_t)(q < levels ? q : levels);
    }
    return TAHQ_OK;
}

void tahq_dequantize_tile(const uint8_t *codes, uint32_t tile, float zero, float scale,
                          float *out)
{
    for (uint32_t i = 0; i < tile; i++)
        out[i] = zero + (float)codes[i] * scale;
}
