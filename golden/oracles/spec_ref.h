/* SPDX-License-Identifier: MIT */
/*
 * spec_ref.h - straightforward transcriptions of ref/SPEC.md for the tests
 * (golden/oracles/README.md: an oracle, independent of ref/ on purpose),
 * written from the SPEC text, step by step and in the order it gives, without
 * looking for speed. They are the independent side of the bit-exact checks.
 *
 * The only library functions used here are the metadata conversions and
 * directed rounding (tahq_meta_round_down/up, tahq_meta_bits/value), which
 * test_fp16 checks against independent references on (nearly) every input.
 *
 * Everything is static inline so that a test including this header but not
 * using a function gets no unused-function warning.
 */
#ifndef TAHQ_ORACLES_SPEC_REF_H
#define TAHQ_ORACLES_SPEC_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"

/* ---- bit views (its own: the oracle includes include/ only) -------------- */
static inline uint32_t spec_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float spec_u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint64_t spec_d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* ---- §2.3 log2 ------------------------------------------------------------ */
static const float spec_log2_c[9] = {0x1.715476p+0f,  -0x1.71547p-1f,  0x1.ec73d4p-2f,
                                     -0x1.715c9cp-2f, 0x1.26d41p-2f,   -0x1.e94f12p-3f,
                                     0x1.b9b11ep-3f,  -0x1.a8cc5cp-3f, 0x1.025a2p-3f};

static inline float spec_log2(float x)
{
    uint32_t w = spec_f2u(x);
    int a = 0;
    if ((w >> 23) == 0) { /* subnormal */
        x = x * 0x1p23f;
        w = spec_f2u(x);
        a = -23;
    }
    int e = (int)((w >> 23) & 0xFF) - 127 + a;
    float m = spec_u2f((w & 0x7FFFFFu) | 0x3F800000u);
    if ((w & 0x7FFFFFu) > 0x3504F3u) {
        m = m * 0.5f;
        e = e + 1;
    }
    float f = m - 1.0f;
    float y = spec_log2_c[8];
    for (int i = 7; i >= 0; i--) {
        float t = y * f;
        y = t + spec_log2_c[i];
    }
    float fy = f * y;
    return (float)e + fy;
}

/* ---- §2.5 tree sums -------------------------------------------------------- */
/* tsum of v[0..n-1], n a power of two; v is overwritten */
static inline float spec_tsum(float *v, uint32_t n)
{
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        for (uint32_t j = 0; j < h; j++)
            v[j] = v[j] + v[j + h];
    return v[0];
}
static inline uint32_t spec_pow2_ceil(uint32_t n)
{
    uint32_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}
/* psum of §2.5: w[0] if P = 1, else fl(psum(first half) + psum(second half)),
 * P a power of two (w already padded with +0) */
static inline float spec_psum(const float *w, uint32_t P)
{
    if (P == 1)
        return w[0];
    float a = spec_psum(w, P / 2), b = spec_psum(w + P / 2, P / 2);
    return a + b;
}
/* unit sum (§2.5): each tile by tsum, then the T tile sums by psum, padded
 * with +0 to the power of two P >= T. v is not modified. */
static inline float spec_unit_sum(const float *v, uint32_t tiles, uint32_t G)
{
    uint32_t P = spec_pow2_ceil(tiles);
    float *w = malloc(((size_t)G + P) * sizeof(float));
    if (!w)
        abort();
    float *sums = w + G;
    for (uint32_t t = 0; t < P; t++) {
        if (t < tiles) {
            memcpy(w, v + (size_t)t * G, G * sizeof(float));
            sums[t] = spec_tsum(w, G);
        } else {
            sums[t] = 0.0f;
        }
    }
    float r = spec_psum(sums, P);
    free(w);
    return r;
}

/* ---- §4.1 entropy of a unit --------------------------------------------------- */
static inline float spec_entropy(const float *x, uint32_t tiles, uint32_t G)
{
    size_t n = (size_t)tiles * G;
    float *a = malloc(n * sizeof(float));
    if (!a)
        abort();
    for (size_t k = 0; k < n; k++)
        a[k] = spec_u2f(spec_f2u(x[k]) & 0x7FFFFFFFu);
    float S = spec_unit_sum(a, tiles, G);
    float H;
    if (S == 0.0f) {
        H = 0.0f;
    } else {
        /* inv = fl(1 / S); if it is +inf (S < 2^-128) p_k = fl(a_k / S),
         * else p_k = min(fl(a_k x inv), 1). */
        float inv = 1.0f / S;
        int divide = isinf(inv);
        for (size_t k = 0; k < n; k++) {
            float p = divide ? a[k] / S : a[k] * inv;
            p = p < 1.0f ? p : 1.0f;
            a[k] = (p == 0.0f) ? 0.0f : p * spec_log2(p);
        }
        H = 0.0f - spec_unit_sum(a, tiles, G);
    }
    free(a);
    return H;
}

/* ---- §4.2 low count ---------------------------------------------------------- */
static inline uint64_t spec_low(uint64_t n, uint32_t r)
{
    uint64_t q = n / 1000, m = n % 1000; /* no overflow for any n */
    return q * (1000 - r) + m * (1000 - r) / 1000;
}

/* ---- §5.1 gate ------------------------------------------------------------------ */
static inline int spec_gate(const float *x, uint32_t G, float tau, uint32_t *pivot)
{
    float m1 = fabsf(x[0]);
    uint32_t d = 0;
    for (uint32_t i = 1; i < G; i++)
        if (fabsf(x[i]) > m1) {
            m1 = fabsf(x[i]);
            d = i;
        }
    float m2 = 0.0f;
    for (uint32_t i = 0; i < G; i++)
        if (i != d && fabsf(x[i]) > m2)
            m2 = fabsf(x[i]);
    *pivot = d;
    if (isinf(tau))
        return 0;
    if (!(m1 > 0.0f))
        return 0;
    float th = tau * m2;
    return m1 >= th;
}

/* ---- §5.2 transform ------------------------------------------------------------- */
static inline int spec_log2u(uint32_t G)
{
    int k = 0;
    while ((1u << k) < G)
        k++;
    return k;
}
static inline void spec_fwht(float *v, uint32_t G)
{
    for (uint32_t h = 1; h < G; h *= 2)
        for (uint32_t i = 0; i < G; i++)
            if ((i & h) == 0) {
                float a = v[i], b = v[i + h];
                v[i] = a + b;
                v[i + h] = a - b;
            }
}
static inline void spec_forward(float *v, uint32_t G, uint32_t d)
{
    float t = v[0];
    v[0] = v[d];
    v[d] = t;
    spec_fwht(v, G);
    int k = spec_log2u(G);
    float sc = ldexpf(1.0f, -((k + 1) / 2));
    for (uint32_t i = 0; i < G; i++)
        v[i] = v[i] * sc;
}
static inline void spec_inverse(float *v, uint32_t G, uint32_t d)
{
    spec_fwht(v, G);
    int k = spec_log2u(G);
    float sc = ldexpf(1.0f, -(k / 2));
    for (uint32_t i = 0; i < G; i++)
        v[i] = v[i] * sc;
    float t = v[0];
    v[0] = v[d];
    v[d] = t;
}

/* ---- §2.4 Philox4x32-10 and word() ------------------------------------------------ */
static inline void spec_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}
static inline uint32_t spec_word(uint64_t seed, uint64_t i)
{
    uint32_t ctr[4] = {(uint32_t)(i >> 2), (uint32_t)(i >> 34), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    spec_philox(ctr, key, out);
    return out[i & 3];
}

/* ---- §5.3 quantization of a tile ------------------------------------------------- */
static inline float spec_minpos(tahq_meta meta)
{
    return meta == TAHQ_META_FP16 ? 0x1p-24f : meta == TAHQ_META_BF16 ? 0x1p-133f : 0x1p-149f;
}
/* the next meta value above a value s >= 0 of the grid (positive patterns
 * order like their values: pattern + 1; the largest finite steps to +inf) */
static inline float spec_meta_next_up(tahq_meta meta, float s)
{
    if (s == 0.0f)
        s = 0.0f; /* +0 */
    return tahq_meta_value(meta, tahq_meta_bits(meta, s) + 1);
}
/* §5.3 step 3 / §7.2: the smallest meta value s with s >= fl(w / L) and
 * fl(w / s) <= L, by the search the SPEC describes (start at up(fl(w / L)),
 * step while fl(w / s) > L; w / 0 = +inf steps off a zero start). w > 0.
 * Returns +inf if there is none (the caller's ERR_RANGE). */
static inline float spec_scale(tahq_meta meta, float w, uint32_t L)
{
    float s = tahq_meta_round_up(meta, w / (float)L);
    while (s != INFINITY && !(w / s <= (float)L))
        s = spec_meta_next_up(meta, s);
    return s;
}

static inline tahq_status spec_quant(const float *v, uint32_t G, uint32_t b, tahq_meta meta,
                                     tahq_rounding rnd, uint64_t seed, uint64_t elem0, float *zo,
                                     float *so, uint8_t *q)
{
    const uint32_t L = (1u << b) - 1;
    float lo = v[0], hi = v[0];
    for (uint32_t i = 1; i < G; i++) {
        if (v[i] < lo)
            lo = v[i];
        if (v[i] > hi)
            hi = v[i];
    }
    float z = tahq_meta_round_down(meta, lo);
    if (z == -INFINITY)
        return TAHQ_ERR_RANGE;
    if (z == 0.0f)
        z = 0.0f;
    float w = hi - z, s;
    if (w == 0.0f) {
        s = 0.0f;
    } else {
        s = spec_scale(meta, w, L);
        if (s == INFINITY)
            return TAHQ_ERR_RANGE;
    }
    for (uint32_t i = 0; i < G; i++) {
        uint32_t qi;
        if (s == 0.0f) {
            qi = 0;
        } else {
            float d = v[i] - z;
            float t = d / s;
            float f0 = floorf(t);
            float phi = t - f0;
            if (rnd == TAHQ_ROUND_NEAREST_EVEN) {
                if (phi > 0.5f)
                    qi = (uint32_t)f0 + 1;
                else if (phi < 0.5f)
                    qi = (uint32_t)f0;
                else
                    qi = (uint32_t)f0 + ((uint32_t)f0 & 1);
            } else {
                float rho = (float)(spec_word(seed, elem0 + i) >> 8) * 0x1p-24f;
                qi = (uint32_t)f0 + (rho < phi ? 1u : 0u);
            }
            if (qi > L)
                qi = L;
        }
        q[i] = (uint8_t)qi;
    }
    *zo = z;
    *so = s;
    return TAHQ_OK;
}
/* §6.1 */
static inline void spec_dequant(const uint8_t *q, uint32_t G, float z, float s, float *out)
{
    for (uint32_t i = 0; i < G; i++) {
        float p = (float)q[i] * s;
        out[i] = z + p;
    }
}

/* ---- §4.3 the gain of a token (alloc 3) ------------------------------------------ */
/* §2.5 tsum in binary64: halving tree over v[0..n-1], n a power of two; v is
 * overwritten */
static inline double spec_tsum64(double *v, uint32_t n)
{
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        for (uint32_t j = 0; j < h; j++)
            v[j] = v[j] + v[j + h];
    return v[0];
}
/* §2.5 psum in binary64 of w[lo .. lo + P) where only w[0 .. n) exist: the
 * rest is the +0 padding, added explicitly (P a power of two) */
static inline double spec_psum64(const double *w, uint32_t n, uint32_t lo, uint32_t P)
{
    if (P == 1)
        return lo < n ? w[lo] : 0.0;
    double a = spec_psum64(w, n, lo, P / 2), b = spec_psum64(w, n, lo + P / 2, P / 2);
    return a + b;
}

/* §4.3 step 1 for one tile x[0..G) whose first element has global index
 * elem0: the gate on the raw values, the forward transform if flagged, then
 * for b = lo_bits (e[0]) and b = hi_bits (e[1]) the quantization of §5.3,
 * v̂_i = fl(z + fl(q_i s)), d_i = fl(v̂_i - v_i) in binary32, D_i = d_i^2 in
 * binary64, e_b = tsum64(D). vhat (may be NULL) receives the G values v̂ of
 * each width, v (may be NULL) the transformed tile. TAHQ_ERR_RANGE if
 * either width cannot be quantized. */
static inline tahq_status spec_gain_tile(const tahq_config *c, const float *x, uint64_t elem0,
                                         int *flagged, double e[2], float vhat[2][256],
                                         float *v_out)
{
    const uint32_t G = c->tile;
    float v[256], yh[256];
    double D[256];
    uint8_t q[256];
    uint32_t piv;
    memcpy(v, x, G * sizeof(float));
    *flagged = spec_gate(v, G, c->tau, &piv);
    if (*flagged)
        spec_forward(v, G, piv);
    if (v_out)
        memcpy(v_out, v, G * sizeof(float));
    const uint32_t widths[2] = {c->lo_bits, c->hi_bits};
    for (int w = 0; w < 2; w++) {
        float z, s;
        tahq_status st =
            spec_quant(v, G, widths[w], c->meta, c->rounding, c->seed, elem0, &z, &s, q);
        if (st != TAHQ_OK)
            return st;
        spec_dequant(q, G, z, s, yh); /* fl(z + fl(q s)), §6.1 before any inverse transform */
        for (uint32_t i = 0; i < G; i++) {
            float d = yh[i] - v[i];
            D[i] = (double)d * (double)d;
        }
        e[w] = spec_tsum64(D, G);
        if (vhat)
            memcpy(vhat[w], yh, G * sizeof(float));
    }
    return TAHQ_OK;
}
/* §4.3 step 2: g = fl64(e_lo - e_hi), doubled for a flagged tile when log2 G is odd */
static inline double spec_tile_gain(const tahq_config *c, int flagged, const double e[2])
{
    double g = e[0] - e[1];
    if (flagged && (spec_log2u(c->tile) & 1))
        g = 2.0 * g;
    return g;
}
/* §4.3 steps 1-3: σ of the token row[0 .. T G), its first element at elem0 */
static inline tahq_status spec_token_sigma(const tahq_config *c, const float *row, uint32_t T,
                                           uint64_t elem0, double *sigma)
{
    double *g = malloc((size_t)T * sizeof(double));
    if (!g)
        abort();
    for (uint32_t t = 0; t < T; t++) {
        int fl;
        double e[2];
        tahq_status st = spec_gain_tile(c, row + (size_t)t * c->tile, elem0 + (uint64_t)t * c->tile,
                                        &fl, e, NULL, NULL);
        if (st != TAHQ_OK) {
            free(g);
            return st;
        }
        g[t] = spec_tile_gain(c, fl, e);
    }
    *sigma = spec_psum64(g, T, 0, spec_pow2_ceil(T));
    free(g);
    return TAHQ_OK;
}
/* §4.3 step 4: o = w xor 2^63 (sign 0) or not w (sign 1); key = o >> 32 */
static inline uint32_t spec_gain_key(double sigma)
{
    uint64_t w = spec_d2u(sigma);
    uint64_t o = (w >> 63) ? ~w : (w ^ (UINT64_C(1) << 63));
    return (uint32_t)(o >> 32);
}
/* §4.2 / §4.3 gain allocation: map[row] = 1 for the low(S) tokens of each
 * sequence with the smallest (key, row index); keys[row] (may be NULL)
 * receives each key. No key is computed when low(S) = 0 (map all 0, keys
 * untouched). TAHQ_ERR_RANGE if a tile cannot be quantized at either width
 * while the keys are computed. */
static inline tahq_status spec_gain_map(const tahq_config *c, const tahq_shape *sh, const float *x,
                                        uint8_t *map, uint32_t *keys)
{
    const uint64_t S = sh->seq_len, C = sh->channels, rows = (uint64_t)sh->batch * S;
    const uint32_t T = (uint32_t)(C / c->tile);
    const uint64_t low = spec_low(S, c->hi_permille);
    memset(map, 0, rows);
    if (low == 0)
        return TAHQ_OK;
    uint32_t *k = malloc(S * sizeof *k);
    if (!k)
        abort();
    for (uint64_t b = 0; b < sh->batch; b++) {
        for (uint64_t s = 0; s < S; s++) {
            double sigma;
            const uint64_t r = b * S + s;
            tahq_status st = spec_token_sigma(c, x + r * C, T, r * C, &sigma);
            if (st != TAHQ_OK) {
                free(k);
                return st;
            }
            k[s] = spec_gain_key(sigma);
            if (keys)
                keys[r] = k[s];
        }
        /* selection by repeated minimum: the smallest (key, index) not yet taken */
        for (uint64_t n = 0; n < low; n++) {
            uint64_t best = S;
            for (uint64_t s = 0; s < S; s++)
                if (!map[b * S + s] && (best == S || k[s] < k[best]))
                    best = s;
            map[b * S + best] = 1;
        }
    }
    free(k);
    return TAHQ_OK;
}

/* ---- §2.6 CRC-32C, bit at a time ------------------------------------------------------ */
static inline uint32_t spec_crc(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* ---- §8.3 LSB-first bit writer / reader ------------------------------------------------ */
static inline void spec_put_bits(uint8_t *buf, uint64_t pos, uint32_t value, uint32_t b)
{
    for (uint32_t j = 0; j < b; j++) {
        uint64_t p = pos + j;
        if ((value >> j) & 1)
            buf[p / 8] |= (uint8_t)(1u << (p % 8));
    }
}
static inline uint32_t spec_get_bits(const uint8_t *buf, uint64_t pos, uint32_t b)
{
    uint32_t v = 0;
    for (uint32_t j = 0; j < b; j++) {
        uint64_t p = pos + j;
        v |= (uint32_t)((buf[p / 8] >> (p % 8)) & 1) << j;
    }
    return v;
}

/* ---- §6.2 / §6.3 bounds in binary64 ------------------------------------------------------ */
static inline double spec_bound_B(float z, float s, uint32_t b, tahq_rounding rnd)
{
    const double u = 0x1p-24, L = (double)((1u << b) - 1);
    const double Eq = rnd == TAHQ_ROUND_NEAREST_EVEN ? 0.5 : 1.0;
    return (double)s * (Eq + (5 * L + 4) * u) + fabs((double)z) * u + 0x1p-148;
}
/* yhat: the decoded transformed-domain values of the tile */
static inline double spec_bound_E(double B, const float *yhat, uint32_t G)
{
    const double u = 0x1p-24;
    int k = spec_log2u(G);
    double gamma = 1.0;
    for (int i = 0; i <= k; i++)
        gamma *= 1 + u;
    gamma -= 1.0;
    double kappa = (k % 2) ? sqrt(2.0) : 1.0;
    double n2 = 0;
    for (uint32_t i = 0; i < G; i++)
        n2 += (double)yhat[i] * yhat[i];
    double sq = sqrt((double)G);
    double X = kappa * (sqrt(n2) + sq * (B + 0x1p-150)) / (1 - gamma);
    return (1 + gamma) * kappa * sq * B + gamma * (2 + gamma) * X + 0x1p-140;
}

#endif
