/* fixpoint.c - per-channel symmetric quantizer for backward gradients
 * (SPEC §7.2). */
#include "internal.h"

/* Nearest integer, ties to even, of |t| < 2^22: adding and removing 2^23
 * rounds exactly once. Rounding the magnitude keeps the rule symmetric. */
static int32_t round_half_even_signed(float t)
{
    float a = tahq_absf(t);
    int32_t m = (int32_t)((a + 0x1p23f) - 0x1p23f);
    return (tahq_bits_of(t) & 0x80000000u) ? -m : m;
}

tahq_status tahq_fixpoint_encode(const float *g, uint64_t rows, uint32_t channels, uint32_t bits,
                                 tahq_meta meta, uint8_t *codes, float *steps)
{
    if (!g || !codes || !steps)
        return TAHQ_ERR_NULL;
    if (bits < 2 || bits > 8 || (unsigned)meta > TAHQ_META_FP32)
        return TAHQ_ERR_CONFIG;
    if (rows == 0 || channels == 0 || rows > TAHQ_MAX_ELEMENTS / channels)
        return TAHQ_ERR_SHAPE;
    const uint64_t n = rows * channels;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(g[i]) & 0x7FFFFFFFu;
        if (a >= 0x7F800000u)
            return TAHQ_ERR_NONFINITE;
        if (a >= 0x5F800000u)
            return TAHQ_ERR_RANGE;
    }
    const int32_t levels = (1 << (bits - 1)) - 1;
    const int32_t offset = 1 << (bits - 1);
    /* Steps first, so that nothing is written if one overflows the meta type. */
    for (uint32_t c = 0; c < channels; c++) {
        float m = 0.0f;
        for (uint64_t r = 0; r < rows; r++) {
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
    for (uint64_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < channels; c++) {
            int32_t q = 0;
            if (steps[c] > 0.0f) {
                q = round_half_even_signed(g[r * channels + c] / steps[c]);
                q = q > levels ? levels : (q < -levels ? -levels : q);
            }
            codes[r * channels + c] = (uint8_t)(q + offset);
        }
    return TAHQ_OK;
}

tahq_status tahq_fixpoint_decode(const uint8_t *codes, const float *steps, uint64_t rows,
                                 uint32_t channels, uint32_t bits, float *out)
{
    if (!codes || !steps || !out)
        return TAHQ_ERR_NULL;
    if (bits < 2 || bits > 8)
        return TAHQ_ERR_CONFIG;
    if (rows == 0 || channels == 0 || rows > TAHQ_MAX_ELEMENTS / channels)
        return TAHQ_ERR_SHAPE;
    const int32_t offset = 1 << (bits - 1);
    for (uint64_t i = 0; i < rows * channels; i++)
        if (codes[i] >= (1u << bits) || codes[i] == 0)
            return TAHQ_ERR_PAYLOAD;
    for (uint32_t c = 0; c < channels; c++)
        if ((tahq_bits_of(steps[c]) & 0x80000000u) || !(steps[c] - steps[c] == 0.0f))
            return TAHQ_ERR_PAYLOAD;
    for (uint64_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < channels; c++) {
            int32_t q = (int32_t)codes[r * channels + c] - offset;
            out[r * channels + c] = (float)q * steps[c];
        }
    return TAHQ_OK;
}
