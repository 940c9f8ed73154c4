/* SPDX-License-Identifier: MIT */
#include "llm_tensor.h"

#include <stdlib.h>

#include "tahq.h"
#include "tahq_spec.h"

/* Philox streams (counter word 2) and domain tag (counter word 3). */
#define STREAM_ELEM 0u         /* idx = row * C + c: base value, spike */
#define STREAM_CHANNEL 1u      /* idx = c: channel scale and bias */
#define STREAM_TOKEN 2u        /* idx = row: token type */
#define STREAM_SEQ 3u          /* idx = b: delimiter position */
#define STREAM_PICK 4u         /* idx = k: choice of outlier / massive channels */
#define STREAM_MASSIVE 5u      /* idx = row * C + c: massive values */
#define DOMAIN_TAG 0x4c4c4d31u /* "LLM1" */

enum { KIND_NORMAL = 0, KIND_OUTLIER = 1, KIND_MASSIVE = 2 };

static void block(uint64_t seed, uint32_t stream, uint64_t idx, uint32_t w[4])
{
    const uint32_t ctr[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), stream, DOMAIN_TAG};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    tahq_philox4x32_10(ctr, key, w);
}

/* Irwin-Hall(4) of 22-bit uniforms, centred, unit variance: |g| <= 2*sqrt(3). */
static float gauss(const uint32_t w[4])
{
    int32_t s = (int32_t)((w[0] >> 10) + (w[1] >> 10) + (w[2] >> 10) + (w[3] >> 10));
    int32_t d = s - 0x7FFFFE; /* 2 * (2^22 - 1); |d| < 2^23, exact in binary32 */
    float f = (float)d * 0x1p-22f;
    return f * 1.7320508f;
}

typedef struct chan {
    float scale; /* base standard deviation of the channel */
    float bias;
    float mag;  /* outlier magnitude (signed) */
    float sign; /* +-1 */
    int kind;
} chan;

int llm_tensor_fill(float *x, uint32_t batch, uint32_t seq, uint32_t channels, uint64_t seed)
{
    if (batch == 0 || seq == 0 || channels == 0)
        return 0;
    chan *ch = calloc(channels, sizeof *ch);
    if (!ch)
        return -1;
    uint32_t w[4];
    for (uint32_t c = 0; c < channels; ++c) {
        block(seed, STREAM_CHANNEL, c, w);
        ch[c].scale = (float)(32u + w[0] % 33u) * 0x1p-7f;           /* 0.25 .. 0.5 */
        ch[c].bias = (float)((int32_t)(w[1] % 129u) - 64) * 0x1p-8f; /* -0.25 .. 0.25 */
        ch[c].sign = (w[2] & 1u) ? -1.0f : 1.0f;
        ch[c].mag = 0.0f;
        ch[c].kind = KIND_NORMAL;
    }
    uint32_t n_out = channels / 256u;
    if (n_out < 1u)
        n_out = 1u;
    uint32_t n_mass = channels - n_out < 2u ? channels - n_out : 2u;
    uint64_t k = 0;
    for (uint32_t j = 0; j < n_out + n_mass; ++j) {
        uint32_t c;
        do {
            block(seed, STREAM_PICK, k++, w);
            c = w[0] % channels;
        } while (ch[c].kind != KIND_NORMAL);
        ch[c].kind = j < n_out ? KIND_OUTLIER : KIND_MASSIVE;
        ch[c].sign = (w[1] & 1u) ? -1.0f : 1.0f;
        /* 20..60 times the mean base standard deviation 0.375 */
        ch[c].mag = ch[c].sign * ((float)(20u + w[2] % 41u) * 0.375f);
    }

    for (uint32_t b = 0; b < batch; ++b) {
        block(seed, STREAM_SEQ, b, w);
        uint32_t delim = seq > 1u ? 1u + w[0] % (seq - 1u) : 0u;
        for (uint32_t t = 0; t < seq; ++t) {
            uint64_t row = (uint64_t)b * seq + t;
            float *xr = x + row * channels;
            int massive_tok = (t == 0u || t == delim);
            block(seed, STREAM_TOKEN, row, w);
            uint32_t type = w[0] & 3u;
            float tokscale = type == 0u ? 0.25f : (type == 3u ? 1.5f : 1.0f);
            int sparse = ((w[0] >> 2) & 7u) == 0u; /* 1 in 8 tokens */
            if (massive_tok)
                tokscale = 0.125f;
            for (uint32_t c = 0; c < channels; ++c) {
                uint64_t idx = row * channels + c;
                const chan *cc = &ch[c];
                if (cc->kind == KIND_MASSIVE && massive_tok) {
                    block(seed, STREAM_MASSIVE, idx, w);
                    xr[c] = cc->sign * (float)(1000u + w[0] % 2001u);
                    continue;
                }
                block(seed, STREAM_ELEM, idx, w);
                float g = gauss(w);
                if ((w[0] & 0x3FFu) < 4u)
                    g = g * 8.0f; /* rare spike */
                if (cc->kind == KIND_OUTLIER) {
                    float noise = (cc->mag * 0.125f) * g;
                    xr[c] = cc->mag + noise;
                    continue;
                }
                if (sparse && g < 0.5f && g > -8.0f)
                    g = 0.0f;
                float s = cc->scale * tokscale; /* exact: small integer times 2^-k */
                float v = g * s;
                xr[c] = v + cc->bias;
            }
        }
    }
    free(ch);
    return 0;
}
