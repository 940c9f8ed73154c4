/* SPDX-License-Identifier: MIT */
/* test_paper_v1.c - the paper-v1 compatibility profile (ref/SPEC.md
 * Appendix A): a hand-derived message, the field layout of a random tensor
 * against the A.1 primitives, the round trip, sizes and decoder errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"
#include "tutil.h"

static uint8_t *encode_alloc(const tahq_paper_v1_config *cfg, const tahq_shape *sh, const float *x,
                             size_t *len)
{
    size_t cap = 0, ws = 0;
    if (tahq_paper_v1_encode_bound(cfg, sh, &cap) != TAHQ_OK ||
        tahq_paper_v1_workspace_size(cfg, sh, &ws) != TAHQ_OK)
        return NULL;
    uint8_t *out = malloc(cap);
    void *w = malloc(ws ? ws : 1);
    tahq_status st = tahq_paper_v1_encode(cfg, sh, x, w, ws, out, cap, len);
    free(w);
    if (st != TAHQ_OK) {
        fprintf(stderr, "encode: %s\n", tahq_status_name(st));
        free(out);
        return NULL;
    }
    return out;
}

/* B=1, S=2, C=G=8, hi/lo = 2/1 bits, r = 500 permille.
 *
 * token 0: 0 1 2 3 0 1 2 3    token 1: 0 0 0 4 0 0 0 0
 *
 * Allocation: n_low = floor(2*(1-0.5)) = 1. Token 1 has one non-zero value:
 * p = 1 there (ln(1 + 1e-30) = ln 1 = 0) and p = 0 elsewhere (0*ln(1e-30) =
 * -0), so H = +0; token 0 has H > 0. Token 1 is the low token (1 bit),
 * token 0 the high one (2 bits). Reordered order: token 1, token 0.
 *
 * Token 1 (low, tile 0' of the reordered order): m1 = 4 at d = 3, m2 = 0,
 * 4 >= 0: flagged, pivot 3. Swap -> 4 0 0 0 0 0 0 0; FWHT -> eight 4s;
 * / fl(sqrt 8) = 2*0x1.6a09e6p+0: 4/2.82842707... = 1.41421358... which
 * rounds to 0x3FB504F3 = 1.41421353816986083984375 =: c. All equal: z = c,
 * s = max(0/1, 1e-30) = 1e-30, codes 0. fp16(c) = 1448/1024 = 0x3DA8;
 * fp16(1e-30) = 0x0000.
 * Token 0 (high, tile 1'): m1 = 3 at d = 3, m2 = 3 (index 7), 3 >= 6 is
 * false: not flagged. z = 0, s = 3/3 = 1, codes 0 1 2 3 0 1 2 3;
 * fp16(0) = 0x0000, fp16(1) = 0x3C00.
 *
 * Bit stream (MSB-first), 95 bits -> 12 bytes:
 *   low codes   token 1: 8 x 1 bit 0                  -> 00
 *   high codes  token 0: 00 01 10 11 00 01 10 11      -> 1B 1B
 *   zeros       tile 0' 0x3DA8 (LE: A8 3D), tile 1' 0  -> A8 3D 00 00
 *   scales      tile 0' 0x0000, tile 1' 0x3C00 (00 3C) -> 00 00 00 3C
 *   bitmap      original order: token 0 high, 1 low     "01"
 *   tile flags  reordered: tile 0' 1, tile 1' 0         "10"
 *   pivots      3 in 3 bits                             "011"
 *   last byte   0110 0110 (one zero padding bit)        -> 66
 */
static void test_hand_case(void)
{
    static const float x[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 0, 0, 4, 0, 0, 0, 0};
    static const uint8_t want[12] = {0x00, 0x1B, 0x1B, 0xA8, 0x3D, 0x00,
                                     0x00, 0x00, 0x00, 0x00, 0x3C, 0x66};
    tahq_paper_v1_config cfg = {.tile = 8, .hi_bits = 2, .lo_bits = 1, .hi_permille = 500};
    tahq_shape sh = {1, 2, 8};
    CHECKF(tahq_paper_v1_entropy(x + 8, 8, 8) == 0.0f, "H(token 1) = %g",
           (double)tahq_paper_v1_entropy(x + 8, 8, 8));
    CHECKF(tahq_paper_v1_entropy(x, 8, 8) > 0.0f, "H(token 0)");
    size_t len = 0;
    uint8_t *msg = encode_alloc(&cfg, &sh, x, &len);
    CHECKF(msg != NULL, "encode");
    if (!msg)
        return;
    CHECKF(len == sizeof want, "length %zu", len);
    for (size_t i = 0; i < len && i < sizeof want; i++)
        CHECKF(msg[i] == want[i], "byte %zu: 0x%02x, expected 0x%02x", i, msg[i], want[i]);
    float y[16];
    CHECKF(tahq_paper_v1_decode(msg, len, &cfg, &sh, y, 16) == TAHQ_OK, "decode");
    /* token 0 exact; token 1: 1.4140625 * 8 / fl(sqrt 8) at index 3 only */
    for (int i = 0; i < 8; i++)
        CHECKF(y[i] == x[i], "y[%d] = %g", i, (double)y[i]);
    float spike = (1.4140625f * 8.0f) / (2.0f * 0x1.6a09e6p+0f);
    for (int i = 8; i < 16; i++)
        CHECKF(y[i] == (i == 11 ? spike : 0.0f), "y[%d] = %.9g", i, (double)y[i]);

    /* decoder errors */
    uint8_t bad[13];
    memcpy(bad, msg, 12);
    bad[12] = 0;
    CHECKF(tahq_paper_v1_decode(bad, 11, &cfg, &sh, y, 16) == TAHQ_ERR_TRUNCATED, "truncated");
    CHECKF(tahq_paper_v1_decode(bad, 13, &cfg, &sh, y, 16) == TAHQ_ERR_SIZE, "long");
    CHECKF(tahq_paper_v1_decode(bad, 12, &cfg, &sh, y, 15) == TAHQ_ERR_BUFFER, "count");
    bad[11] = 0x67; /* padding bit */
    CHECKF(tahq_paper_v1_decode(bad, 12, &cfg, &sh, y, 16) == TAHQ_ERR_PAYLOAD, "padding");
    bad[11] = 0x66 | 0x80; /* bitmap 11: two low tokens */
    CHECKF(tahq_paper_v1_decode(bad, 12, &cfg, &sh, y, 16) == TAHQ_ERR_PAYLOAD, "bitmap");
    /* no flagged tile: 92 bits, still 12 bytes, but the old pivot bits are
     * now padding and not zero */
    bad[11] = 0x66 & ~0x20;
    CHECKF(tahq_paper_v1_decode(bad, 12, &cfg, &sh, y, 16) == TAHQ_ERR_PAYLOAD, "flags");
    bad[11] = 0x40; /* ... and with them cleared it decodes */
    CHECKF(tahq_paper_v1_decode(bad, 12, &cfg, &sh, y, 16) == TAHQ_OK, "no flags");
    free(msg);
}

/* Philox-free deterministic input: an LCG with a few spiky tiles. */
static void fill(float *x, uint64_t n, uint32_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (uint64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int32_t v = (int32_t)(s >> 40) - (1 << 23);
        x[i] = (float)v * 0x1p-22f;
        if (((s >> 20) & 255u) == 7u)
            x[i] *= 64.0f; /* outliers */
    }
}

static void test_roundtrip(uint32_t B, uint32_t S, uint32_t C, const tahq_paper_v1_config *cfg)
{
    tahq_shape sh = {B, S, C};
    uint64_t n = (uint64_t)B * S * C, G = cfg->tile, T = C / G, N = (uint64_t)B * S * T;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    fill(x, n, B * 1000u + S + C);
    /* zero and constant tokens */
    memset(x, 0, C * sizeof *x);
    if (S > 2)
        for (uint32_t c = 0; c < C; c++)
            x[2 * C + c] = 0.75f;
    size_t len = 0;
    uint8_t *msg = encode_alloc(cfg, &sh, x, &len);
    CHECKF(msg != NULL, "encode");
    if (!msg)
        goto out;
    uint8_t *map = malloc(B * S), *flags = malloc(N), *codes = malloc(n);
    uint16_t *piv = malloc(N * 2), *zs = malloc(N * 2), *ss = malloc(N * 2);
    uint64_t nf = 0;
    CHECKF(tahq_paper_v1_unpack(msg, len, cfg, &sh, map, flags, piv, zs, ss, codes, &nf) == TAHQ_OK,
           "unpack");
    size_t want_len = 0;
    tahq_paper_v1_message_size(cfg, &sh, nf, &want_len);
    CHECKF(len == want_len, "length %zu vs %zu", len, want_len);
    uint64_t n_low = tahq_paper_v1_low_count(S, cfg->hi_permille);
    for (uint32_t b = 0; b < B; b++) {
        float max_low = -1.0f, min_high = INFINITY;
        uint64_t ones = 0;
        for (uint32_t s = 0; s < S; s++) {
            float H = tahq_paper_v1_entropy(x + ((uint64_t)b * S + s) * C, C, cfg->tile);
            if (map[b * S + s]) {
                ones++;
                max_low = H > max_low ? H : max_low;
            } else {
                min_high = H < min_high ? H : min_high;
            }
        }
        CHECKF(ones == n_low, "seq %u: %llu low tokens", b, (unsigned long long)ones);
        CHECKF(max_low <= min_high, "seq %u: allocation not by entropy", b);
    }
    uint64_t mismatches = 0;
    double se = 0, sx = 0;
    CHECKF(tahq_paper_v1_decode(msg, len, cfg, &sh, y, n) == TAHQ_OK, "decode");
    for (uint64_t t = 0; t < N; t++) {
        float v[256];
        uint8_t q[256];
        uint32_t d = 0;
        uint64_t row = t / T;
        memcpy(v, x + t * G, G * sizeof *v);
        int f = tahq_paper_v1_gate(v, (uint32_t)G, &d);
        if (f)
            tahq_paper_v1_hadamard(v, (uint32_t)G, d, 0);
        float z, s;
        tahq_paper_v1_quantize_tile(v, (uint32_t)G, map[row] ? cfg->lo_bits : cfg->hi_bits, &z, &s,
                                    q);
        mismatches += (uint64_t)(flags[t] != f) + (uint64_t)(f && piv[t] != d) +
                      (uint64_t)(zs[t] != tahq_f32_to_f16(z)) +
                      (uint64_t)(ss[t] != tahq_f32_to_f16(s)) +
                      (uint64_t)(memcmp(q, codes + t * G, G) != 0);
        /* dequantize as A.4 and compare with decode */
        float zf = tahq_f16_to_f32(zs[t]), sf = tahq_f16_to_f32(ss[t]);
        for (uint64_t i = 0; i < G; i++)
            v[i] = (float)q[i] * sf + zf;
        if (f)
            tahq_paper_v1_hadamard(v, (uint32_t)G, d, 1);
        for (uint64_t i = 0; i < G; i++) {
            if (memcmp(&v[i], &y[t * G + i], sizeof v[i]) != 0)
                mismatches++;
            double e = (double)x[t * G + i] - (double)y[t * G + i];
            se += e * e;
            sx += (double)x[t * G + i] * (double)x[t * G + i];
        }
    }
    CHECKF(mismatches == 0, "%llu field/value mismatches", (unsigned long long)mismatches);
    double rel = se / sx;
    CHECKF(rel < 0.05, "relative MSE %g", rel);
    printf("roundtrip [%u,%u,%u] G=%u %u/%u r=%u: %zu bytes, %llu flagged, rel MSE %.3g\n", B, S, C,
           cfg->tile, cfg->hi_bits, cfg->lo_bits, cfg->hi_permille, len, (unsigned long long)nf,
           rel);
    free(map);
    free(flags);
    free(codes);
    free(piv);
    free(zs);
    free(ss);
    free(msg);
out:
    free(x);
    free(y);
}

static void test_sizes(void)
{
    CHECKF(tahq_paper_v1_low_count(1024, 800) == 204, "n_low(1024, 0.8) = %llu",
           (unsigned long long)tahq_paper_v1_low_count(1024, 800));
    CHECKF(tahq_paper_v1_low_count(5, 800) == 0, "binary64 floor: S=5 gives 0 (integer rule: 1)");
    CHECKF(tahq_paper_v1_low_count(10, 0) == 10 && tahq_paper_v1_low_count(10, 1000) == 0, "ends");
    tahq_paper_v1_config cfg;
    tahq_paper_v1_config_default(&cfg);
    tahq_shape sh = {1, 1024, 1600};
    size_t fixed = 0, bound = 0;
    CHECKF(tahq_paper_v1_message_size(&cfg, &sh, 0, &fixed) == TAHQ_OK && fixed == 884128,
           "worked size %zu", fixed);
    CHECKF(tahq_paper_v1_encode_bound(&cfg, &sh, &bound) == TAHQ_OK &&
               bound == (7073024u + 25600u * 6u) / 8u,
           "bound %zu", bound);
    tahq_paper_v1_config bad = cfg;
    bad.tile = 48;
    CHECKF(tahq_paper_v1_encode_bound(&bad, &sh, &bound) == TAHQ_ERR_CONFIG, "tile 48");
    tahq_shape bs = {1, 4, 100};
    CHECKF(tahq_paper_v1_encode_bound(&cfg, &bs, &bound) == TAHQ_ERR_SHAPE, "C = 100");
    float x[64] = {0};
    x[5] = NAN;
    size_t len = 1;
    uint8_t out[64];
    uint64_t ws[2];
    tahq_shape one = {1, 1, 64};
    CHECKF(tahq_paper_v1_encode(&cfg, &one, x, ws, sizeof ws, out, sizeof out, &len) ==
                   TAHQ_ERR_NONFINITE &&
               len == 0,
           "NaN");
    x[5] = 0x1p64f;
    CHECKF(tahq_paper_v1_encode(&cfg, &one, x, ws, sizeof ws, out, sizeof out, &len) ==
               TAHQ_ERR_RANGE,
           "2^64");
    x[5] = 1.0f;
    CHECKF(tahq_paper_v1_encode(&cfg, &one, x, ws, sizeof ws, out, 10, &len) == TAHQ_ERR_BUFFER,
           "small output");
}

/* SPEC A.2 step 6: z is the first element equal to the minimum, so a zero
 * minimum keeps the sign of the first zero in index order, and the wire
 * carries f16(-0) = 0x8000 or f16(+0) = 0x0000. Tile 0 starts with -0, tile 1
 * with +0; both hold the same values otherwise (unflagged: max 6, next 5),
 * and both decode to the same values. */
static void test_zero_point_sign(void)
{
    tahq_paper_v1_config cfg = {.tile = 8, .hi_bits = 4, .lo_bits = 3, .hi_permille = 1000};
    tahq_shape sh = {1, 1, 16};
    const float x[16] = {-0.0f, 0.0f, 1, 2, 3, 4, 5, 6, 0.0f, -0.0f, 1, 2, 3, 4, 5, 6};
    size_t len = 0;
    uint8_t *msg = encode_alloc(&cfg, &sh, x, &len);
    CHECKF(msg != NULL, "encode");
    if (!msg)
        return;
    uint8_t flags[2], codes[16], map[1];
    uint16_t piv[2], zs[2], ss[2];
    uint64_t nf = 0;
    CHECKF(tahq_paper_v1_unpack(msg, len, &cfg, &sh, map, flags, piv, zs, ss, codes, &nf) ==
               TAHQ_OK,
           "unpack");
    CHECKF(nf == 0 && flags[0] == 0 && flags[1] == 0, "tiles flagged");
    CHECKF(zs[0] == 0x8000u, "tile 0 zero-point 0x%04x, expected 0x8000 (-0 first)", zs[0]);
    CHECKF(zs[1] == 0x0000u, "tile 1 zero-point 0x%04x, expected 0x0000 (+0 first)", zs[1]);
    CHECKF(ss[0] == ss[1], "scales differ");
    float y[16];
    CHECKF(tahq_paper_v1_decode(msg, len, &cfg, &sh, y, 16) == TAHQ_OK, "decode");
    for (int i = 0; i < 8; i++)
        CHECKF(memcmp(&y[i], &y[8 + i], sizeof y[i]) == 0,
               "element %d decodes differently in the two tiles", i);
    free(msg);
}

int main(void)
{
    test_hand_case();
    test_zero_point_sign();
    test_sizes();
    tahq_paper_v1_config cfg;
    tahq_paper_v1_config_default(&cfg);
    test_roundtrip(2, 37, 128, &cfg);
    test_roundtrip(1, 1024, 1600, &cfg);
    tahq_paper_v1_config c2 = {.tile = 32, .hi_bits = 8, .lo_bits = 2, .hi_permille = 333};
    test_roundtrip(3, 5, 96, &c2);
    tahq_paper_v1_config c3 = {.tile = 8, .hi_bits = 1, .lo_bits = 5, .hi_permille = 0};
    test_roundtrip(1, 9, 24, &c3);
    tahq_paper_v1_config c4 = {.tile = 256, .hi_bits = 4, .lo_bits = 3, .hi_permille = 1000};
    test_roundtrip(2, 3, 512, &c4);
    return t_finish("test_paper_v1", "the paper-v1 profile");
}
