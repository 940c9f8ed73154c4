/* SPDX-License-Identifier: MIT */
/* gain_spec.c - SPEC §4.2/§4.3 transcribed again (gain_spec.h), apart from
 * libtahq's ref/gain.c and cpu/fast_gain.c on purpose: a mistake in one is
 * caught by the other while golden/v3 and v4 are written. */
#include <stdlib.h>
#include <string.h>

#include "gain_spec.h"
#include "tahq_spec.h"

const gain_spec_mistake gain_spec_mistakes[GV_N] = {
    [GV_SPEC] = {"the SPEC", ""},
    [GV_ENTROPY] = {"the entropy ranking of alloc token", "gain_not_entropy"},
    [GV_F32] = {"binary32 sums (squares, e_b, g and sigma)", "sum_binary64"},
    [GV_SEQ_TILE] = {"a left-to-right sum of the squared errors of a tile", "sum_order_tile"},
    [GV_ADJ_TILE] = {"an adjacent-pair tree over the squared errors of a tile", "sum_order_tile"},
    [GV_SEQ_PSUM] = {"a left-to-right sum of the tile gains", "sum_order_tiles"},
    [GV_NO_X2] = {"no x2 for flagged tiles", "x2_odd_k"},
    [GV_X2_ANY_K] = {"x2 for flagged tiles with log2 G even too", "x2_even_k"},
    [GV_X2_UNFLAGGED] = {"x2 for unflagged tiles too", "x2_flagged_only"},
    [GV_KEY_PLAIN] = {"the plain high word of sigma as the key", "key_sign"},
    [GV_KEY_SIGNFLIP] = {"the sign bit flipped for negative sigma too", "key_sign"},
    [GV_KEY_F32] = {"a key from the binary32 value of sigma", "key_truncation"},
    [GV_KEY_FULL64] = {"all 64 bits of the ordered word as the key", "key_truncation"},
    [GV_KEY_SHIFT31] = {"a 33-bit key (o >> 31)", "key_truncation"},
    [GV_KEY_SHIFT33] = {"a 31-bit key (o >> 33)", "key_high_word"},
    [GV_KEY_LOWWORD] = {"the low 32 bits of o as the key", "key_high_word"},
    [GV_TIE_HIGH] = {"ties to the higher row", "tie_gain"},
    [GV_RAW_TILE] = {"flagged tiles quantized without the transform", "transformed_error"},
    [GV_DECODED] = {"the error measured after the inverse transform (no x2)", "transformed_error"},
    [GV_NEAREST] = {"nearest-even codes in the ranking", "stochastic_codes"},
    [GV_ROW_INDEX] = {"stochastic codes keyed by the index within the row", "stochastic_codes"},
    [GV_SEED_ZERO] = {"stochastic codes of seed 0", "stochastic_codes"},
    [GV_BATCH] = {"one ranking over the whole batch", "sequence_scope"},
    [GV_META_FP16] = {"fp16 metadata in the ranking", "meta_in_ranking"},
    [GV_META_BF16] = {"bf16 metadata in the ranking", "meta_in_ranking"},
    [GV_META_FP32] = {"fp32 metadata in the ranking", "meta_in_ranking"},
    [GV_RANGE_IGNORED] = {"a token whose tile overflows the metadata ranked last instead of "
                          "ERR_RANGE",
                          "range_in_ranking"},
    [GV_ALWAYS_RANK] = {"keys computed although low(S) = 0", "low_zero_no_keys"},
};

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* e_b: the squares D[0..n) summed in binary64 (n a power of two), by the
 * halving tree of §2.5 or a mistaken order. D is overwritten. */
static double sum_squares(double *D, uint32_t n, int v)
{
    if (v == GV_SEQ_TILE) {
        double s = D[0];
        for (uint32_t i = 1; i < n; i++)
            s = s + D[i];
        return s;
    }
    if (v == GV_ADJ_TILE) {
        for (uint32_t m = n; m > 1; m /= 2)
            for (uint32_t j = 0; j < m / 2; j++)
                D[j] = D[2 * j] + D[2 * j + 1];
        return D[0];
    }
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        for (uint32_t j = 0; j < h; j++)
            D[j] = D[j] + D[j + h];
    return D[0];
}

static float sum_squares32(float *D, uint32_t n)
{
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        for (uint32_t j = 0; j < h; j++)
            D[j] = D[j] + D[j + h];
    return D[0];
}

/* psum of §2.5 over w[first .. first+n) of T values padded with +0, n a
 * power of two: the two halves, then their sum. */
static double psum64(const double *w, uint32_t first, uint32_t n, uint32_t T)
{
    if (n == 1)
        return first < T ? w[first] : 0.0;
    return psum64(w, first, n / 2, T) + psum64(w, first + n / 2, n / 2, T);
}

static float psum32(const float *w, uint32_t first, uint32_t n, uint32_t T)
{
    if (n == 1)
        return first < T ? w[first] : 0.0f;
    return psum32(w, first, n / 2, T) + psum32(w, first + n / 2, n / 2, T);
}

static uint32_t pow2_at_least(uint32_t T)
{
    uint32_t P = 1;
    while (P < T)
        P *= 2;
    return P;
}

/* sigma of one token: row[T*G], its first element's global index elem0.
 * TAHQ_OK, or the status of a tile that cannot be quantized. */
int gain_spec_token_sigma(const tahq_config *c, const float *row, uint32_t T, uint64_t elem0, int v,
                          double *sigma)
{
    const uint32_t G = c->tile;
    uint32_t k = 0;
    while ((1u << k) < G)
        k++;
    const uint32_t widths[2] = {c->lo_bits, c->hi_bits};
    tahq_meta meta = c->meta;
    if (v == GV_META_FP16)
        meta = TAHQ_META_FP16;
    else if (v == GV_META_BF16)
        meta = TAHQ_META_BF16;
    else if (v == GV_META_FP32)
        meta = TAHQ_META_FP32;
    const tahq_rounding rounding = v == GV_NEAREST ? TAHQ_ROUND_NEAREST_EVEN : c->rounding;
    double *g64 = calloc((size_t)T, sizeof *g64);
    float *g32 = calloc((size_t)T, sizeof *g32);
    if (!g64 || !g32) {
        free(g64);
        free(g32);
        return TAHQ_ERR_BUFFER;
    }
    int st = TAHQ_OK;
    for (uint32_t t = 0; t < T && st == TAHQ_OK; t++) {
        const float *tx = row + (uint64_t)t * G;
        uint32_t pivot = 0;
        const int flagged = tahq_gate(tx, G, c->tau, &pivot);
        float vv[256];
        memcpy(vv, tx, G * sizeof(float));
        if (flagged && v != GV_RAW_TILE)
            tahq_hadamard_forward(vv, G, pivot);
        double e64[2] = {0, 0};
        float e32[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            float z, s, vh[256];
            uint8_t q[256];
            const uint64_t first = (v == GV_ROW_INDEX ? 0 : elem0) + (uint64_t)t * G;
            st = tahq_quantize_tile(vv, G, widths[w], meta, rounding,
                                    v == GV_SEED_ZERO ? 0 : c->seed, first, &z, &s, q);
            if (st != TAHQ_OK)
                break;
            for (uint32_t i = 0; i < G; i++)
                vh[i] = z + (float)q[i] * s; /* §6.1, before any inverse transform */
            const float *ref = vv;
            if (v == GV_DECODED && flagged) {
                tahq_hadamard_inverse(vh, G, pivot);
                ref = tx;
            }
            double D[256] = {0};
            float Df[256] = {0};
            for (uint32_t i = 0; i < G; i++) {
                const float d = vh[i] - ref[i];
                D[i] = (double)d * (double)d;
                Df[i] = d * d;
            }
            e64[w] = sum_squares(D, G, v);
            e32[w] = sum_squares32(Df, G);
        }
        if (st != TAHQ_OK)
            break;
        double g = e64[0] - e64[1];
        float gf = e32[0] - e32[1];
        int x2 = flagged && (k & 1u);
        if (v == GV_NO_X2 || v == GV_DECODED)
            x2 = 0;
        else if (v == GV_X2_ANY_K)
            x2 = flagged;
        else if (v == GV_X2_UNFLAGGED)
            x2 = (int)(k & 1u);
        if (x2) {
            g = 2.0 * g;
            gf = 2.0f * gf;
        }
        g64[t] = g;
        g32[t] = gf;
    }
    if (st == TAHQ_OK) {
        if (v == GV_F32) {
            *sigma = (double)psum32(g32, 0, pow2_at_least(T), T);
        } else if (v == GV_SEQ_PSUM) {
            double s = g64[0];
            for (uint32_t t = 1; t < T; t++)
                s = s + g64[t];
            *sigma = s;
        } else {
            *sigma = psum64(g64, 0, pow2_at_least(T), T);
        }
    }
    free(g64);
    free(g32);
    return st;
}

/* §4.3 step 4: the word that orders as sigma. */
uint64_t gain_spec_order_word(double sigma)
{
    const uint64_t w = d2u(sigma);
    return (w >> 63) ? ~w : w ^ 0x8000000000000000ull;
}

uint64_t gain_spec_key(double sigma, int v)
{
    const uint64_t w = d2u(sigma), o = gain_spec_order_word(sigma);
    switch (v) {
    case GV_KEY_PLAIN:
        return w >> 32;
    case GV_KEY_SIGNFLIP:
        return (w ^ 0x8000000000000000ull) >> 32;
    case GV_KEY_F32: {
        const uint32_t b = f2u((float)sigma);
        return (b >> 31) ? (uint32_t)~b : b ^ 0x80000000u;
    }
    case GV_KEY_FULL64:
        return o;
    case GV_KEY_SHIFT31:
        return o >> 31;
    case GV_KEY_SHIFT33:
        return o >> 33;
    case GV_KEY_LOWWORD:
        return o & 0xFFFFFFFFu;
    default:
        return o >> 32;
    }
}

typedef struct ranked {
    uint64_t key, row;
} ranked;

static int tie_high;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->row == y->row)
        return 0;
    return (x->row < y->row) != tie_high ? -1 : 1;
}

/* The precision map (low[r] = 1: row r gets lo_bits) of alloc gain under
 * mistake v (GV_SPEC: the SPEC). TAHQ_OK or the status of the ranking. */
int gain_spec_map(const tahq_config *c, const tahq_shape *s, const float *x, int v, uint8_t *low)
{
    const uint32_t G = c->tile;
    const uint64_t C = s->channels, S = s->seq_len, rows = (uint64_t)s->batch * S;
    const uint32_t T = (uint32_t)(C / G);
    memset(low, 0, (size_t)rows);
    const uint64_t low_s = tahq_low_count(S, c->hi_permille);
    if (low_s == 0 && v != GV_ALWAYS_RANK)
        return TAHQ_OK; /* no key is computed */
    ranked *rk = malloc((size_t)rows * sizeof *rk);
    if (!rk)
        return TAHQ_ERR_BUFFER;
    for (uint64_t r = 0; r < rows; r++) {
        rk[r].row = r;
        if (v == GV_ENTROPY) {
            rk[r].key = f2u(tahq_entropy(x + r * C, T, G));
            continue;
        }
        double sigma = 0;
        const int st = gain_spec_token_sigma(c, x + r * C, T, r * C, v, &sigma);
        if (st == TAHQ_ERR_RANGE && v == GV_RANGE_IGNORED) {
            rk[r].key = UINT64_MAX;
            continue;
        }
        if (st != TAHQ_OK) {
            free(rk);
            return st;
        }
        rk[r].key = gain_spec_key(sigma, v);
    }
    tie_high = v == GV_TIE_HIGH;
    const uint64_t group = v == GV_BATCH ? rows : S;
    const uint64_t count = v == GV_BATCH ? s->batch * low_s : low_s;
    for (uint64_t first = 0; first < rows; first += group) {
        qsort(rk + first, (size_t)group, sizeof *rk, cmp_ranked);
        for (uint64_t i = 0; i < count; i++)
            low[rk[first + i].row] = 1;
    }
    tie_high = 0;
    free(rk);
    return TAHQ_OK;
}
