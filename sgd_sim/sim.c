/* SPDX-License-Identifier: MIT */
/* libtahq_sim: codecs at the stage boundaries, the two problems, and the
 * GPipe training step. Random numbers from GSL (mt19937), GEMMs through
 * sim_blas.c (OpenBLAS). */
#include "sim.h"
#include "tahq_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

uint64_t sim_mix64(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* ------------------------------------------------------------------------ */
/* method names                                                             */
/* ------------------------------------------------------------------------ */
int sim_method_parse(const char *spec, sim_method *m)
{
    char base[64];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", spec);
    snprintf(base, sizeof base, "%s", spec);
    char *plus = strchr(base, '+');
    if (plus)
        *plus++ = '\0';
    m->bwd = SIM_BWD_FIXPOINT;
    m->bwd_bits = 6;
    tahq_config_default(&m->bwd_cfg);
    m->aq_bits = 4;
    unsigned a = 0, b = 0;
    if (strcmp(base, "fp32") == 0) {
        m->fwd = SIM_FWD_NONE;
        m->bwd = SIM_BWD_NONE;
    } else if (strcmp(base, "fp16") == 0) {
        m->fwd = SIM_FWD_FP16;
    } else if (strcmp(base, "aqsgd") == 0) {
        m->fwd = SIM_FWD_AQSGD;
    } else if (sscanf(base, "bias%u", &a) == 1 && a >= 1 && a <= 50) {
        char chk[16];
        snprintf(chk, sizeof chk, "bias%u", a);
        if (strcmp(chk, base) != 0)
            return 1;
        m->fwd = SIM_FWD_SCALE_BIAS;
        m->bias_scale = 1.0f + (float)a / 100.0f;
        m->bwd = SIM_BWD_NONE;
    } else if (sscanf(base, "plain%u", &a) == 1 && a >= 1 && a <= 8) {
        m->fwd = SIM_FWD_PLAIN;
        tahq_config_plain(&m->fwd_cfg, 64, a);
    } else if (strncmp(base, "tah", 3) == 0) {
        const char *s = base + 3;
        m->fwd = SIM_FWD_TAH;
        tahq_config_default(&m->fwd_cfg);
        int n = 0;
        if (sscanf(s, "%u/%u%n", &a, &b, &n) == 2 && a >= 1 && a <= 8 && b >= 1 && b <= a) {
            m->fwd_cfg.hi_bits = a;
            m->fwd_cfg.lo_bits = b;
            s += n;
        }
        while (*s) {
            if (strncmp(s, "-tile", 5) == 0) {
                m->fwd_cfg.alloc = TAHQ_ALLOC_TILE;
                s += 5;
            } else if (strncmp(s, "-gain", 5) == 0) {
                m->fwd_cfg.alloc = TAHQ_ALLOC_GAIN;
                s += 5;
            } else if (strncmp(s, "-tau", 4) == 0) {
                /* the outlier gate's threshold: -tauinf never transforms
                 * (plain min/max with the same allocation), -tau0 always */
                char *end;
                double v = strncmp(s + 4, "inf", 3) == 0 ? INFINITY : strtod(s + 4, &end);
                if (strncmp(s + 4, "inf", 3) == 0)
                    end = (char *)s + 7;
                if (end == s + 4 || !(v >= 0))
                    return 1;
                m->fwd_cfg.tau = (float)v;
                s = end;
            } else if (strncmp(s, "-sr", 3) == 0) {
                m->fwd_cfg.rounding = TAHQ_ROUND_STOCHASTIC;
                s += 3;
            } else if (strncmp(s, "-g", 2) == 0 && sscanf(s + 2, "%u%n", &a, &n) == 1 &&
                       a >= TAHQ_TILE_MIN && a <= TAHQ_TILE_MAX && (a & (a - 1)) == 0) {
                m->fwd_cfg.tile = a;
                s += 2 + n;
            } else {
                return 1;
            }
        }
    } else {
        return 1;
    }
    if (plus) {
        if (strcmp(plus, "bwd-none") == 0) {
            m->bwd = SIM_BWD_NONE;
        } else if (strcmp(plus, "bwd-tah") == 0) {
            m->bwd = SIM_BWD_TAH;
        } else if (sscanf(plus, "bwd-fix%u", &a) == 1 && a >= 2 && a <= 8) {
            m->bwd = SIM_BWD_FIXPOINT;
            m->bwd_bits = a;
        } else {
            return 1;
        }
    }
    return 0;
}

/* binary16 -> binary32 is exact, so a table filled once by libtahq's own
 * tahq_f16_to_f32 gives the same values; it removes a library call per
 * element from the fp16 and AQ-SGD codecs (their hot loops). */
static float f16_table[65536];
static pthread_once_t f16_table_once = PTHREAD_ONCE_INIT;

static void f16_table_fill(void)
{
    for (uint32_t h = 0; h < 65536u; h++)
        f16_table[h] = tahq_f16_to_f32((uint16_t)h);
}

static inline float f16_value(uint16_t h)
{
    return f16_table[h];
}

/* ------------------------------------------------------------------------ */
/* codec scratch                                                            */
/* ------------------------------------------------------------------------ */
typedef struct codec_buf {
    uint8_t *msg;
    size_t msg_cap;
    void *ws;
    size_t ws_cap;
    uint8_t *codes;
    float *steps;
    float *tmp, *tmp2;
    size_t elems;
} codec_buf;

static int cbuf_init(codec_buf *cb, uint32_t B, uint32_t S, uint32_t C)
{
    memset(cb, 0, sizeof cb[0]);
    tahq_config cfg;
    tahq_shape sh = {B, S, C};
    size_t best = 0, wbest = 0;
    /* bound over the configurations used: every tile size G = 8..256 that divides C, 8 bits */
    static const uint32_t tiles[] = {8, 16, 32, 64, 128, 256};
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        if (C % tiles[i])
            continue;
        for (int alloc = TAHQ_ALLOC_NONE; alloc <= TAHQ_ALLOC_GAIN; alloc++) {
            tahq_config_plain(&cfg, tiles[i], 8);
            cfg.alloc = (tahq_alloc)alloc;
            cfg.hi_permille = 800;
            cfg.lo_bits = 7;
            cfg.tau = 0.0f;
            size_t bb = 0, ww = 0;
            if (tahq_encode_bound(&cfg, &sh, &bb) == TAHQ_OK && bb > best)
                best = bb;
            if (tahq_encode_workspace_size(&cfg, &sh, &ww) == TAHQ_OK && ww > wbest)
                wbest = ww;
        }
    }
    cb->elems = (size_t)B * S * C;
    cb->msg_cap = best + 64;
    cb->ws_cap = wbest + 64;
    cb->msg = malloc(cb->msg_cap);
    cb->ws = malloc(cb->ws_cap);
    cb->codes = malloc(cb->elems);
    cb->steps = malloc(sizeof(float) * C);
    cb->tmp = malloc(sizeof(float) * cb->elems);
    cb->tmp2 = malloc(sizeof(float) * cb->elems);
    pthread_once(&f16_table_once, f16_table_fill);
    return cb->msg && cb->ws && cb->codes && cb->steps && cb->tmp && cb->tmp2 ? 0 : 1;
}

static void cbuf_free(codec_buf *cb)
{
    free(cb->msg);
    free(cb->ws);
    free(cb->codes);
    free(cb->steps);
    free(cb->tmp);
    free(cb->tmp2);
}

/* TAH / plain round trip; returns bytes or 0 */
static size_t tah_roundtrip(codec_buf *cb, const tahq_config *cfg0, uint32_t B, uint32_t S,
                            uint32_t C, const float *x, float *y, uint64_t key)
{
    tahq_config cfg = *cfg0;
    if (cfg.rounding == TAHQ_ROUND_STOCHASTIC)
        cfg.seed = key;
    tahq_shape sh = {B, S, C};
    size_t len = 0;
    if (tahq_encode(&cfg, &sh, x, cb->ws, cb->ws_cap, cb->msg, cb->msg_cap, &len) != TAHQ_OK)
        return 0;
    if (tahq_decode(cb->msg, len, y, (size_t)B * S * C) != TAHQ_OK)
        return 0;
    return len;
}

static size_t fix_roundtrip(codec_buf *cb, uint32_t bits, uint64_t rows, uint32_t C, const float *g,
                            float *y)
{
    if (rows == 0)
        return 0;
    if (tahq_fixpoint_encode(g, rows, C, bits, TAHQ_META_FP16, cb->codes, cb->steps) != TAHQ_OK)
        return 0;
    if (tahq_fixpoint_decode(cb->codes, cb->steps, rows, C, bits, y) != TAHQ_OK)
        return 0;
    return (size_t)((rows * C * bits + 7) / 8) + (size_t)C * 2u;
}

static inline float f16r(float v)
{
    return f16_value(tahq_f32_to_f16(v));
}

/* AQ-SGD forward: rows of sample s live at x + s*S*C. cache[s] is NULL for a
 * sample not seen yet (full precision send). Returns bytes or 0. */
static size_t aq_roundtrip(codec_buf *cb, uint32_t bits, uint32_t B, uint32_t S, uint32_t C,
                           const float *x, uint16_t *const *cache, uint8_t *const *seen, float *y,
                           uint64_t *full_sends)
{
    size_t per = (size_t)S * C, bytes = 0;
    uint32_t nseen = 0;
    /* deltas of the seen samples, packed */
    for (uint32_t s = 0; s < B; s++) {
        if (*seen[s]) {
            const uint16_t *cs = cache[s];
            float *d = cb->tmp + nseen * per;
            for (size_t i = 0; i < per; i++)
                d[i] = x[s * per + i] - f16_value(cs[i]);
            nseen++;
        }
    }
    if (nseen) {
        float *dbuf = cb->tmp2; /* decoded deltas, packed like cb->tmp */
        size_t nb = fix_roundtrip(cb, bits, (uint64_t)nseen * S, C, cb->tmp, dbuf);
        if (!nb)
            return 0;
        bytes += nb;
        uint32_t j = 0;
        for (uint32_t s = 0; s < B; s++) {
            if (!*seen[s])
                continue;
            uint16_t *cs = cache[s];
            for (size_t i = 0; i < per; i++) {
                uint16_t h = tahq_f32_to_f16(f16_value(cs[i]) + dbuf[j * per + i]);
                cs[i] = h;
                y[s * per + i] = f16_value(h);
            }
            j++;
        }
    }
    for (uint32_t s = 0; s < B; s++) {
        if (*seen[s])
            continue;
        /* first sight: full precision on the wire, cache <- fp16(a) */
        for (size_t i = 0; i < per; i++) {
            y[s * per + i] = x[s * per + i];
            cache[s][i] = tahq_f32_to_f16(x[s * per + i]);
        }
        *seen[s] = 1;
        bytes += per * 4u;
        (*full_sends)++;
    }
    return bytes;
}

static size_t fwd_apply(const sim_method *m, codec_buf *cb, uint32_t B, uint32_t S, uint32_t C,
                        const float *x, float *y, uint64_t key, uint16_t *const *cache,
                        uint8_t *const *seen, uint64_t *full_sends)
{
    size_t n = (size_t)B * S * C;
    switch (m->fwd) {
    case SIM_FWD_NONE:
        memcpy(y, x, n * sizeof(float));
        return n * 4u;
    case SIM_FWD_FP16:
        for (size_t i = 0; i < n; i++)
            y[i] = f16r(x[i]);
        return n * 2u;
    case SIM_FWD_TAH:
    case SIM_FWD_PLAIN:
        return tah_roundtrip(cb, &m->fwd_cfg, B, S, C, x, y, key);
    case SIM_FWD_AQSGD:
        return aq_roundtrip(cb, m->aq_bits, B, S, C, x, cache, seen, y, full_sends);
    case SIM_FWD_SCALE_BIAS:
        for (size_t i = 0; i < n; i++)
            y[i] = m->bias_scale * x[i];
        return n * 4u;
    }
    return 0;
}

uint64_t sim_method_low_units(const sim_method *m, uint32_t B, uint32_t S, uint32_t C,
                              uint64_t *units)
{
    if (units)
        *units = 0;
    if (m->fwd != SIM_FWD_TAH && m->fwd != SIM_FWD_PLAIN)
        return 0;
    const tahq_config *c = &m->fwd_cfg;
    uint64_t n, groups;
    if (c->alloc == TAHQ_ALLOC_TOKEN || c->alloc == TAHQ_ALLOC_GAIN) {
        n = S;
        groups = B;
    } else if (c->alloc == TAHQ_ALLOC_TILE && c->tile > 0) {
        n = C / c->tile;
        groups = (uint64_t)B * S;
    } else {
        return 0;
    }
    if (units)
        *units = n * groups;
    return tahq_low_count(n, c->hi_permille) * groups;
}

static size_t bwd_apply(const sim_method *m, codec_buf *cb, uint32_t B, uint32_t S, uint32_t C,
                        const float *g, float *y, uint64_t key)
{
    size_t n = (size_t)B * S * C;
    switch (m->bwd) {
    case SIM_BWD_NONE:
        memcpy(y, g, n * sizeof(float));
        return n * 4u;
    case SIM_BWD_FIXPOINT:
        return fix_roundtrip(cb, m->bwd_bits, (uint64_t)B * S, C, g, y);
    case SIM_BWD_TAH:
        return tah_roundtrip(cb, &m->bwd_cfg, B, S, C, g, y, key);
    }
    return 0;
}

size_t sim_fwd_roundtrip(const sim_method *m, uint32_t B, uint32_t S, uint32_t C, const float *x,
                         const float *prev, float *y, uint64_t key)
{
    codec_buf cb;
    size_t r = 0;
    if (cbuf_init(&cb, B, S, C) == 0) {
        if (m->fwd == SIM_FWD_AQSGD) {
            size_t per = (size_t)S * C;
            uint16_t **cache = malloc(sizeof(uint16_t *) * B);
            uint8_t **seen = malloc(sizeof(uint8_t *) * B);
            uint16_t *store = malloc(sizeof(uint16_t) * per * B);
            uint8_t *flags = malloc(B);
            uint64_t fs = 0;
            if (cache && seen && store && flags) {
                for (uint32_t s = 0; s < B; s++) {
                    cache[s] = store + s * per;
                    seen[s] = flags + s;
                    flags[s] = 1;
                    for (size_t i = 0; i < per; i++)
                        store[s * per + i] = tahq_f32_to_f16(prev[s * per + i]);
                }
                r = aq_roundtrip(&cb, m->aq_bits, B, S, C, x, cache, seen, y, &fs);
            }
            free(cache);
            free(seen);
            free(store);
            free(flags);
        } else {
            r = fwd_apply(m, &cb, B, S, C, x, y, key, NULL, NULL, NULL);
        }
        cbuf_free(&cb);
    }
    return r;
}

size_t sim_bwd_roundtrip(const sim_method *m, uint32_t B, uint32_t S, uint32_t C, const float *g,
                         float *y, uint64_t key)
{
    codec_buf cb;
    size_t r = 0;
    if (cbuf_init(&cb, B, S, C) == 0) {
        r = bwd_apply(m, &cb, B, S, C, g, y, key);
        cbuf_free(&cb);
    }
    return r;
}

/* ------------------------------------------------------------------------ */
/* problems                                                                 */
/* ------------------------------------------------------------------------ */
static void sym_power(const double *A, uint32_t n, double shift, double *lam)
{
    /* largest eigenvalue of (A - shift I), A symmetric PSD */
    double *v = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    for (uint32_t i = 0; i < n; i++)
        v[i] = 1.0 + 0.01 * i;
    double l = 0;
    for (int it = 0; it < 3000; it++) {
        double nn = 0;
        for (uint32_t i = 0; i < n; i++) {
            double s = -shift * v[i];
            for (uint32_t j = 0; j < n; j++)
                s += A[i * n + j] * v[j];
            w[i] = s;
            nn += s * s;
        }
        nn = sqrt(nn);
        double dot = 0;
        for (uint32_t i = 0; i < n; i++) {
            dot += v[i] * w[i];
            v[i] = w[i] / nn;
        }
        l = dot; /* Rayleigh quotient of the unit vector */
        double vv = 0;
        for (uint32_t i = 0; i < n; i++)
            vv += v[i] * v[i];
        (void)vv;
    }
    *lam = l;
    free(v);
    free(w);
}

/* solve A X = Bm (A SPD n x n, Bm n x m) by Cholesky, in place on copies */
static int chol_solve(const double *A, uint32_t n, const double *Bm, uint32_t m, double *X)
{
    double *Lm = calloc((size_t)n * n, sizeof(double));
    if (!Lm)
        return 1;
    for (uint32_t j = 0; j < n; j++) {
        double s = A[j * n + j];
        for (uint32_t k = 0; k < j; k++)
            s -= Lm[j * n + k] * Lm[j * n + k];
        if (s <= 0) {
            free(Lm);
            return 1;
        }
        Lm[j * n + j] = sqrt(s);
        for (uint32_t i = j + 1; i < n; i++) {
            double t = A[i * n + j];
            for (uint32_t k = 0; k < j; k++)
                t -= Lm[i * n + k] * Lm[j * n + k];
            Lm[i * n + j] = t / Lm[j * n + j];
        }
    }
    for (uint32_t c = 0; c < m; c++) {
        /* forward then backward substitution on column c */
        for (uint32_t i = 0; i < n; i++) {
            double t = Bm[i * m + c];
            for (uint32_t k = 0; k < i; k++)
                t -= Lm[i * n + k] * X[k * m + c];
            X[i * m + c] = t / Lm[i * n + i];
        }
        for (uint32_t ii = n; ii-- > 0;) {
            double t = X[ii * m + c];
            for (uint32_t k = ii + 1; k < n; k++)
                t -= Lm[k * n + ii] * X[k * m + c];
            X[ii * m + c] = t / Lm[ii * n + ii];
        }
    }
    free(Lm);
    return 0;
}

void sim_problem_free(sim_problem *p)
{
    free(p->X);
    free(p->Y);
    free(p->mask);
    free(p->Sxx);
    free(p->Sxt);
    free(p->Wstar);
    memset(p, 0, sizeof *p);
}

int sim_problem_smooth(sim_problem *p, uint32_t K, uint64_t data_seed)
{
    return sim_problem_smooth_n(p, K, data_seed, 64);
}

int sim_problem_smooth_n(sim_problem *p, uint32_t K, uint64_t data_seed, uint32_t n_seq)
{
    if (n_seq < 2 || n_seq % 2 || n_seq > (1u << 20))
        return 1;
    memset(p, 0, sizeof *p);
    p->kind = SIM_SMOOTH;
    p->K = K;
    p->S = 16;
    p->C = 128;
    p->n_out = 16;
    p->d = p->C - p->n_out;
    p->n_seq = n_seq;
    uint32_t d = p->d, c = p->n_out, C = p->C;
    size_t N = (size_t)p->n_seq * p->S;
    p->n_params = (size_t)d * c;
    p->X = calloc(N * C, sizeof(float));
    p->Y = calloc(N * c, sizeof(float));
    p->mask = malloc(N);
    p->Sxx = calloc((size_t)d * d, sizeof(double));
    p->Sxt = calloc((size_t)d * c, sizeof(double));
    p->Wstar = calloc((size_t)d * c, sizeof(double));
    double *Wt = calloc((size_t)d * c, sizeof(double));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!p->X || !p->Y || !p->mask || !p->Sxx || !p->Sxt || !p->Wstar || !Wt || !rng) {
        free(Wt);
        if (rng)
            gsl_rng_free(rng);
        return 1;
    }
    gsl_rng_set(rng, (unsigned long)sim_mix64(data_seed ^ 0x5300));
    for (size_t i = 0; i < (size_t)d * c; i++)
        Wt[i] = gsl_ran_gaussian(rng, 1.0 / sqrt((double)d));
    /* features: unit Gaussian, two outlier channels at 4x, a per-sequence
     * shared component (tokens of one sequence are correlated) */
    for (uint32_t q = 0; q < p->n_seq; q++) {
        double shared[128];
        for (uint32_t j = 0; j < d; j++)
            shared[j] = gsl_ran_gaussian(rng, 0.5);
        for (uint32_t t = 0; t < p->S; t++) {
            size_t r = (size_t)q * p->S + t;
            for (uint32_t j = 0; j < d; j++) {
                double v = shared[j] + gsl_ran_gaussian(rng, 0.866);
                if (j == 5 || j == 77)
                    v *= 4.0;
                p->X[r * C + j] = (float)v;
            }
            for (uint32_t o = 0; o < c; o++) {
                double s = gsl_ran_gaussian(rng, 1.0);
                for (uint32_t j = 0; j < d; j++)
                    s += (double)p->X[r * C + j] * Wt[j * c + o];
                p->Y[r * c + o] = (float)s;
            }
            p->mask[r] = 1;
        }
    }
    gsl_rng_free(rng);
    free(Wt);
    for (size_t r = 0; r < N; r++) {
        const float *x = p->X + r * C;
        for (uint32_t i = 0; i < d; i++) {
            for (uint32_t j = 0; j < d; j++)
                p->Sxx[i * d + j] += (double)x[i] * x[j];
            for (uint32_t o = 0; o < c; o++)
                p->Sxt[i * c + o] += (double)x[i] * p->Y[r * c + o];
        }
        for (uint32_t o = 0; o < c; o++)
            p->Stt += (double)p->Y[r * c + o] * p->Y[r * c + o];
    }
    for (size_t i = 0; i < (size_t)d * d; i++)
        p->Sxx[i] /= (double)N;
    for (size_t i = 0; i < (size_t)d * c; i++)
        p->Sxt[i] /= (double)N;
    p->Stt /= (double)N;
    if (chol_solve(p->Sxx, d, p->Sxt, c, p->Wstar))
        return 1;
    double tr = 0;
    for (size_t i = 0; i < (size_t)d * c; i++)
        tr += p->Sxt[i] * p->Wstar[i];
    p->fstar = 0.5 * (p->Stt - tr);
    sym_power(p->Sxx, d, 0.0, &p->L);
    double top;
    sym_power(p->Sxx, d, p->L, &top); /* most negative of Sxx - L I: mu - L */
    p->mu = p->L + top;
    return 0;
}

double sim_smooth_grad(const sim_problem *p, const float *w, double *g)
{
    uint32_t d = p->d, c = p->n_out;
    double *wd = calloc((size_t)d * c, sizeof(double));
    if (!wd)
        return NAN;
    for (size_t i = 0; i < (size_t)d * c; i++) {
        wd[i] = w[i];
        g[i] = -p->Sxt[i];
    }
    sim_dgemm(0, 0, (int)d, (int)c, (int)d, 1.0, p->Sxx, (int)d, wd, (int)c, 1.0, g, (int)c);
    free(wd);
    double s = 0;
    for (size_t i = 0; i < (size_t)d * c; i++)
        s += g[i] * g[i];
    return s;
}

double sim_smooth_f(const sim_problem *p, const float *w)
{
    uint32_t d = p->d, c = p->n_out;
    double *g = malloc(sizeof(double) * d * c);
    sim_smooth_grad(p, w, g);
    /* f = 1/2 w'Sxx w - w'Sxt + Stt/2 = 1/2 w'(g + Sxt) - w'Sxt + Stt/2 */
    double s = 0.5 * p->Stt;
    for (size_t i = 0; i < (size_t)d * c; i++)
        s += 0.5 * (double)w[i] * (g[i] + p->Sxt[i]) - (double)w[i] * p->Sxt[i];
    free(g);
    return s;
}

int sim_problem_mlp(sim_problem *p, uint32_t K, uint64_t data_seed)
{
    memset(p, 0, sizeof *p);
    p->kind = SIM_MLP;
    p->K = K;
    p->S = 32;
    p->C = 128;
    p->n_out = 16;
    p->d = 128; /* hidden */
    p->n_seq = 128;
    uint32_t C = p->C, c = p->n_out, V = 64, Ht = 64;
    size_t N = (size_t)p->n_seq * p->S;
    p->n_params = (size_t)K * 2u * C * p->d + (size_t)C * c;
    p->X = calloc(N * C, sizeof(float));
    p->Y = calloc(N * c, sizeof(float));
    p->mask = malloc(N);
    float *emb = malloc(sizeof(float) * V * C);
    double *A1 = malloc(sizeof(double) * C * Ht), *A2 = malloc(sizeof(double) * Ht * c);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!p->X || !p->Y || !p->mask || !emb || !A1 || !A2 || !rng) {
        free(emb);
        free(A1);
        free(A2);
        if (rng)
            gsl_rng_free(rng);
        return 1;
    }
    gsl_rng_set(rng, (unsigned long)sim_mix64(data_seed ^ 0x4d4c50));
    for (uint32_t v = 0; v < V; v++)
        for (uint32_t j = 0; j < C; j++)
            emb[v * C + j] = (float)gsl_ran_gaussian(rng, 1.0);
    for (uint32_t i = 0; i < C * Ht; i++)
        A1[i] = gsl_ran_gaussian(rng, 1.0 / sqrt((double)C));
    for (uint32_t i = 0; i < Ht * c; i++)
        A2[i] = gsl_ran_gaussian(rng, 1.5 / sqrt((double)Ht));
    for (uint32_t q = 0; q < p->n_seq; q++) {
        for (uint32_t t = 0; t < p->S; t++) {
            size_t r = (size_t)q * p->S + t;
            float *x = p->X + r * C;
            int massive = (t == 0) || gsl_rng_uniform(rng) < 0.03;
            uint32_t tok = (uint32_t)(V * pow(gsl_rng_uniform(rng), 2.0)); /* skewed */
            double ss = 0;
            for (uint32_t j = 0; j < C; j++) {
                double v = emb[tok * C + j] + gsl_ran_gaussian(rng, 0.3);
                ss += v * v;
                x[j] = (float)v;
            }
            /* teacher on the clean token vector, RMS-normalised */
            double rms = sqrt(ss / C) + 1e-6, hbuf[64];
            for (uint32_t h = 0; h < Ht; h++) {
                double s = 0;
                for (uint32_t j = 0; j < C; j++)
                    s += x[j] / rms * A1[j * Ht + h];
                hbuf[h] = s > 0 ? s : 0;
            }
            for (uint32_t o = 0; o < c; o++) {
                double s = 0;
                for (uint32_t h = 0; h < Ht; h++)
                    s += hbuf[h] * A2[h * c + o];
                p->Y[r * c + o] = (float)tanh(s);
            }
            /* LLM-like structure on the wire: outlier channels 3 and 70 at
             * 10x, massive activations (+-500) on BOS / delimiter tokens */
            x[3] *= 10.0f;
            x[70] *= 10.0f;
            if (massive) {
                x[3] = 500.0f;
                x[70] = -350.0f;
            }
            p->mask[r] = (uint8_t)!massive;
        }
    }
    gsl_rng_free(rng);
    free(emb);
    free(A1);
    free(A2);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* runs                                                                     */
/* ------------------------------------------------------------------------ */
struct sim_run {
    const sim_problem *p;
    sim_method m;
    sim_opts o;
    float *w, *grad, *m1, *m2;
    uint64_t t;
    gsl_rng *rng;
    uint32_t R; /* rows per micro-batch */
    float **ain, **hid, **lastout;
    float *g, *g2, *u, *gu, *pred;
    codec_buf cb;
    uint16_t *aq_store;
    uint8_t *aq_seen;
    uint16_t **aq_cache_ptr;
    uint8_t **aq_seen_ptr;
    sim_traffic tr;
    uint32_t *ids;
    uint64_t step;
    double rows_in_loss;
};

static void stage_range(const sim_problem *p, uint32_t k, size_t *lo, size_t *hi)
{
    if (p->kind == SIM_SMOOTH) {
        *lo = (size_t)(k * p->d / p->K) * p->n_out;
        *hi = (size_t)((k + 1) * p->d / p->K) * p->n_out;
    } else {
        size_t per = 2u * (size_t)p->C * p->d;
        *lo = k * per;
        *hi = (k + 1) * per + (k + 1 == p->K ? (size_t)p->C * p->n_out : 0);
    }
}

sim_run *sim_run_new(const sim_problem *p, const sim_method *m, const sim_opts *o)
{
    if (o->adamw && !(o->beta1 >= 0 && o->beta1 < 1 && o->beta2 >= 0 && o->beta2 < 1 &&
                      o->eps > 0 && o->weight_decay >= 0))
        return NULL;
    sim_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    r->m = *m;
    r->o = *o;
    r->R = o->batch * p->S;
    uint32_t K = p->K, M = o->micro, R = r->R, C = p->C;
    uint32_t H = p->kind == SIM_MLP ? p->d : 1;
    r->w = calloc(p->n_params, sizeof(float));
    r->grad = calloc(p->n_params, sizeof(float));
    r->m1 = calloc(p->n_params, sizeof(float));
    r->m2 = calloc(p->n_params, sizeof(float));
    r->ain = calloc((size_t)K * M, sizeof(float *));
    r->hid = calloc((size_t)K * M, sizeof(float *));
    r->lastout = calloc(M, sizeof(float *));
    r->ids = calloc((size_t)M * o->batch, sizeof(uint32_t));
    for (size_t i = 0; i < (size_t)K * M; i++) {
        r->ain[i] = malloc(sizeof(float) * R * C);
        r->hid[i] = malloc(sizeof(float) * R * H);
    }
    for (uint32_t i = 0; i < M; i++)
        r->lastout[i] = malloc(sizeof(float) * R * C);
    r->g = malloc(sizeof(float) * R * C);
    r->g2 = malloc(sizeof(float) * R * C);
    r->u = malloc(sizeof(float) * R * H);
    r->gu = malloc(sizeof(float) * R * H);
    r->pred = malloc(sizeof(float) * R * p->n_out);
    cbuf_init(&r->cb, o->batch, p->S, C);
    if (m->fwd == SIM_FWD_AQSGD) {
        size_t per = (size_t)p->S * C;
        r->aq_store = calloc((size_t)(K - 1) * p->n_seq * per, sizeof(uint16_t));
        r->aq_seen = calloc((size_t)(K - 1) * p->n_seq, 1);
        r->aq_cache_ptr = calloc(o->batch, sizeof(uint16_t *));
        r->aq_seen_ptr = calloc(o->batch, sizeof(uint8_t *));
        /* sender and receiver hold equal caches; both are counted */
        r->tr.cache_bytes = 2u * (uint64_t)(K - 1) * p->n_seq * per * 2u;
    }
    r->rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r->rng, (unsigned long)sim_mix64(o->seed ^ 0x52554e));
    /* initial parameters */
    if (p->kind == SIM_MLP) {
        gsl_rng *ir = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(ir, (unsigned long)sim_mix64(o->seed ^ 0x494e4954));
        size_t per = 2u * (size_t)C * H;
        for (uint32_t k = 0; k < K; k++) {
            float *W1 = r->w + k * per, *W2 = W1 + (size_t)C * H;
            for (size_t i = 0; i < (size_t)C * H; i++) {
                W1[i] = (float)gsl_ran_gaussian(ir, 1.0 / sqrt((double)C));
                W2[i] = (float)gsl_ran_gaussian(ir, 0.1 / sqrt((double)H));
            }
        }
        float *Wo = r->w + K * per;
        for (size_t i = 0; i < (size_t)C * p->n_out; i++)
            Wo[i] = (float)gsl_ran_gaussian(ir, 0.1 / sqrt((double)C));
        gsl_rng_free(ir);
    } /* smooth: w0 = 0 */
    return r;
}

void sim_run_free(sim_run *r)
{
    if (!r)
        return;
    size_t n = (size_t)r->p->K * r->o.micro;
    for (size_t i = 0; i < n; i++) {
        free(r->ain[i]);
        free(r->hid[i]);
    }
    for (uint32_t i = 0; i < r->o.micro; i++)
        free(r->lastout[i]);
    free(r->ain);
    free(r->hid);
    free(r->lastout);
    free(r->w);
    free(r->grad);
    free(r->m1);
    free(r->m2);
    free(r->ids);
    free(r->g);
    free(r->g2);
    free(r->u);
    free(r->gu);
    free(r->pred);
    free(r->aq_store);
    free(r->aq_seen);
    free(r->aq_cache_ptr);
    free(r->aq_seen_ptr);
    cbuf_free(&r->cb);
    gsl_rng_free(r->rng);
    free(r);
}

float *sim_run_params(sim_run *r)
{
    return r->w;
}

void sim_run_traffic(const sim_run *r, sim_traffic *t)
{
    *t = r->tr;
}

static void stage_forward(sim_run *r, uint32_t k, const float *a, float *z, float *out)
{
    const sim_problem *p = r->p;
    int R = (int)r->R, C = (int)p->C;
    memcpy(out, a, sizeof(float) * (size_t)R * C);
    if (p->kind == SIM_SMOOTH) {
        size_t lo, hi;
        stage_range(p, k, &lo, &hi);
        int s = (int)(lo / p->n_out), e = (int)(hi / p->n_out), c = (int)p->n_out;
        sim_sgemm(0, 0, R, c, e - s, 1.0f, a + s, C, r->w + lo, c, 1.0f, out + p->d, C);
    } else {
        int H = (int)p->d;
        const float *W1 = r->w + (size_t)k * 2u * C * H, *W2 = W1 + (size_t)C * H;
        sim_sgemm(0, 0, R, H, C, 1.0f, a, C, W1, H, 0.0f, z, H);
        for (size_t i = 0; i < (size_t)R * H; i++)
            r->u[i] = z[i] > 0.0f ? z[i] : 0.0f;
        sim_sgemm(0, 0, R, C, H, 1.0f, r->u, H, W2, C, 1.0f, out, C);
    }
}

/* g: gradient w.r.t. the stage output; writes the input gradient into gin */
static void stage_backward(sim_run *r, uint32_t k, const float *a, const float *z, const float *g,
                           float *gin)
{
    const sim_problem *p = r->p;
    int R = (int)r->R, C = (int)p->C;
    memcpy(gin, g, sizeof(float) * (size_t)R * C);
    if (p->kind == SIM_SMOOTH) {
        size_t lo, hi;
        stage_range(p, k, &lo, &hi);
        int s = (int)(lo / p->n_out), e = (int)(hi / p->n_out), c = (int)p->n_out;
        sim_sgemm(1, 0, e - s, c, R, 1.0f, a + s, C, g + p->d, C, 1.0f, r->grad + lo, c);
        sim_sgemm(0, 1, R, e - s, c, 1.0f, g + p->d, C, r->w + lo, c, 1.0f, gin + s, C);
    } else {
        int H = (int)p->d;
        size_t off = (size_t)k * 2u * C * H;
        const float *W1 = r->w + off, *W2 = W1 + (size_t)C * H;
        float *gW1 = r->grad + off, *gW2 = gW1 + (size_t)C * H;
        for (size_t i = 0; i < (size_t)R * H; i++)
            r->u[i] = z[i] > 0.0f ? z[i] : 0.0f;
        sim_sgemm(1, 0, H, C, R, 1.0f, r->u, H, g, C, 1.0f, gW2, C);
        sim_sgemm(0, 1, R, H, C, 1.0f, g, C, W2, C, 0.0f, r->gu, H);
        for (size_t i = 0; i < (size_t)R * H; i++)
            if (!(z[i] > 0.0f))
                r->gu[i] = 0.0f;
        sim_sgemm(1, 0, C, H, R, 1.0f, a, C, r->gu, H, 1.0f, gW1, H);
        sim_sgemm(0, 1, R, C, H, 1.0f, r->gu, H, W1, H, 1.0f, gin, C);
    }
}

static void gather(const sim_run *r, const uint32_t *ids, float *a)
{
    const sim_problem *p = r->p;
    size_t per = (size_t)p->S * p->C;
    for (uint32_t b = 0; b < r->o.batch; b++) {
        memcpy(a + b * per, p->X + (size_t)ids[b] * per, sizeof(float) * per);
        if (p->kind == SIM_SMOOTH) /* y part starts at 0 */
            for (uint32_t t = 0; t < p->S; t++)
                memset(a + b * per + (size_t)t * p->C + p->d, 0, sizeof(float) * p->n_out);
    }
}

/* prediction of micro-batch m from its last-stage output */
static void head(sim_run *r, const float *out, float *pred)
{
    const sim_problem *p = r->p;
    int R = (int)r->R, C = (int)p->C, c = (int)p->n_out;
    if (p->kind == SIM_SMOOTH) {
        for (int i = 0; i < R; i++)
            memcpy(pred + (size_t)i * c, out + (size_t)i * C + p->d, sizeof(float) * c);
    } else {
        const float *Wo = r->w + (size_t)p->K * 2u * C * p->d;
        sim_sgemm(0, 0, R, c, C, 1.0f, out, C, Wo, c, 0.0f, pred, c);
    }
}

static double micro_loss(sim_run *r, const uint32_t *ids, const float *pred, double *rows)
{
    const sim_problem *p = r->p;
    uint32_t c = p->n_out;
    double s = 0;
    for (uint32_t i = 0; i < r->R; i++) {
        size_t row = (size_t)ids[i / p->S] * p->S + i % p->S;
        if (!p->mask[row])
            continue;
        *rows += 1;
        for (uint32_t o = 0; o < c; o++) {
            double e = (double)pred[i * c + o] - p->Y[row * c + o];
            s += 0.5 * e * e;
        }
    }
    return s;
}

static uint64_t msg_key(uint64_t key, uint32_t k, uint32_t m, uint32_t dir)
{
    return sim_mix64(key ^ ((uint64_t)k << 40) ^ ((uint64_t)m << 50) ^ ((uint64_t)dir << 62));
}

/* The backward message at a boundary: r->g2 (gradient w.r.t. the stage
 * input) through the backward codec into r->g. Returns the message bytes, or
 * 0 on a codec error. */
static size_t bwd_boundary(sim_run *r, uint64_t key)
{
    const sim_problem *p = r->p;
    uint32_t R = r->R, C = p->C, c = p->n_out, d = p->d;
    if (p->kind == SIM_SMOOTH && r->m.bwd == SIM_BWD_FIXPOINT) {
        /* In the smooth problem only the y columns of this gradient reach a
         * parameter (every stage reads g[:, d:]; the x columns are carried
         * along and never read), and the fixpoint codec scales each channel
         * on its own. Coding the n_out y columns alone therefore gives the
         * same parameter gradients as coding all C, at 1/8 of the work (it
         * was a third of a TAH run's time). The bytes are those of the whole
         * [R, C] message. The x columns are left uncoded. */
        memcpy(r->g, r->g2, sizeof(float) * (size_t)R * C);
        for (uint32_t i = 0; i < R; i++)
            memcpy(r->cb.tmp + (size_t)i * c, r->g2 + (size_t)i * C + d, sizeof(float) * c);
        if (!fix_roundtrip(&r->cb, r->m.bwd_bits, R, c, r->cb.tmp, r->cb.tmp2))
            return 0;
        for (uint32_t i = 0; i < R; i++)
            memcpy(r->g + (size_t)i * C + d, r->cb.tmp2 + (size_t)i * c, sizeof(float) * c);
        return (size_t)(((uint64_t)R * C * r->m.bwd_bits + 7) / 8) + (size_t)C * 2u;
    }
    return bwd_apply(&r->m, &r->cb, r->o.batch, p->S, C, r->g2, r->g, key);
}

int sim_run_grad(sim_run *r, const uint32_t *ids, uint64_t key, float *grad, double *loss)
{
    const sim_problem *p = r->p;
    uint32_t K = p->K, M = r->o.micro, B = r->o.batch, C = p->C, c = p->n_out;
    double lsum = 0, rows = 0;
    memset(r->grad, 0, sizeof(float) * p->n_params);
    /* all forwards */
    for (uint32_t m = 0; m < M; m++) {
        const uint32_t *mid = ids + (size_t)m * B;
        gather(r, mid, r->ain[m]);
        for (uint32_t k = 0; k < K; k++) {
            float *a = r->ain[(size_t)k * M + m];
            float *out = k + 1 < K ? r->g : r->lastout[m];
            stage_forward(r, k, a, r->hid[(size_t)k * M + m], out);
            if (k + 1 < K) {
                if (r->m.fwd == SIM_FWD_AQSGD) {
                    for (uint32_t b = 0; b < B; b++) {
                        size_t slot = (size_t)k * p->n_seq + mid[b];
                        r->aq_cache_ptr[b] = r->aq_store + slot * p->S * C;
                        r->aq_seen_ptr[b] = r->aq_seen + slot;
                    }
                }
                size_t nb = fwd_apply(&r->m, &r->cb, B, p->S, C, out,
                                      r->ain[(size_t)(k + 1) * M + m], msg_key(key, k, m, 0),
                                      r->aq_cache_ptr, r->aq_seen_ptr, &r->tr.full_sends);
                if (!nb)
                    return 1;
                r->tr.fwd_bytes += nb;
                r->tr.fwd_msgs++;
                r->tr.fwd_elems += (uint64_t)r->R * C;
            }
        }
        head(r, r->lastout[m], r->pred);
        lsum += micro_loss(r, mid, r->pred, &rows);
    }
    r->rows_in_loss = rows;
    double inv = rows > 0 ? 1.0 / rows : 0.0;
    /* all backwards, same order */
    for (uint32_t m = 0; m < M; m++) {
        const uint32_t *mid = ids + (size_t)m * B;
        head(r, r->lastout[m], r->pred);
        for (uint32_t i = 0; i < r->R; i++) {
            size_t row = (size_t)mid[i / p->S] * p->S + i % p->S;
            for (uint32_t o = 0; o < c; o++)
                r->pred[i * c + o] =
                    p->mask[row] ? (float)(((double)r->pred[i * c + o] - p->Y[row * c + o]) * inv)
                                 : 0.0f;
        }
        if (p->kind == SIM_SMOOTH) {
            memset(r->g, 0, sizeof(float) * r->R * C);
            for (uint32_t i = 0; i < r->R; i++)
                memcpy(r->g + (size_t)i * C + p->d, r->pred + (size_t)i * c, sizeof(float) * c);
        } else {
            float *Wo = r->w + (size_t)K * 2u * C * p->d,
                  *gWo = r->grad + (size_t)K * 2u * C * p->d;
            sim_sgemm(1, 0, (int)C, (int)c, (int)r->R, 1.0f, r->lastout[m], (int)C, r->pred, (int)c,
                      1.0f, gWo, (int)c);
            sim_sgemm(0, 1, (int)r->R, (int)C, (int)c, 1.0f, r->pred, (int)c, Wo, (int)c, 0.0f,
                      r->g, (int)C);
        }
        for (uint32_t k = K; k-- > 0;) {
            stage_backward(r, k, r->ain[(size_t)k * M + m], r->hid[(size_t)k * M + m], r->g, r->g2);
            if (k > 0) {
                size_t nb = bwd_boundary(r, msg_key(key, k, m, 1));
                if (!nb)
                    return 1;
                r->tr.bwd_bytes += nb;
                r->tr.bwd_msgs++;
                r->tr.bwd_elems += (uint64_t)r->R * C;
            }
        }
    }
    if (grad)
        memcpy(grad, r->grad, sizeof(float) * p->n_params);
    if (loss)
        *loss = rows > 0 ? lsum / rows : 0.0;
    return 0;
}

/* clip each stage's gradient norm, then the optimizer update, on r->grad */
static void apply_update(sim_run *r)
{
    const sim_problem *p = r->p;
    if (r->o.clip > 0) {
        for (uint32_t k = 0; k < p->K; k++) {
            size_t lo, hi;
            stage_range(p, k, &lo, &hi);
            double s = 0;
            for (size_t i = lo; i < hi; i++)
                s += (double)r->grad[i] * r->grad[i];
            s = sqrt(s);
            if (s > r->o.clip) {
                float f = (float)(r->o.clip / s);
                for (size_t i = lo; i < hi; i++)
                    r->grad[i] *= f;
            }
        }
    }
    float eta = (float)r->o.eta;
    if (!r->o.adamw) {
        for (size_t i = 0; i < p->n_params; i++)
            r->w[i] -= eta * r->grad[i];
    } else {
        r->t++;
        const double b1 = r->o.beta1, b2 = r->o.beta2, eps = r->o.eps;
        double c1 = 1.0 - pow(b1, (double)r->t), c2 = 1.0 - pow(b2, (double)r->t);
        for (size_t i = 0; i < p->n_params; i++) {
            double gi = r->grad[i];
            r->m1[i] = (float)(b1 * r->m1[i] + (1 - b1) * gi);
            r->m2[i] = (float)(b2 * r->m2[i] + (1 - b2) * gi * gi);
            double upd = (r->m1[i] / c1) / (sqrt(r->m2[i] / c2) + eps);
            r->w[i] = (float)(r->w[i] - r->o.eta * (upd + r->o.weight_decay * r->w[i]));
        }
    }
}

void sim_run_apply_grad(sim_run *r, const float *grad)
{
    memcpy(r->grad, grad, sizeof(float) * r->p->n_params);
    apply_update(r);
}

double sim_run_step(sim_run *r)
{
    const sim_problem *p = r->p;
    size_t n = (size_t)r->o.micro * r->o.batch;
    for (size_t i = 0; i < n; i++)
        r->ids[i] = (uint32_t)gsl_rng_uniform_int(r->rng, p->n_seq);
    double loss = 0;
    uint64_t key = sim_mix64(r->o.seed * UINT64_C(0x100000001B3) + r->step);
    r->step++;
    if (sim_run_grad(r, r->ids, key, NULL, &loss))
        return NAN;
    apply_update(r);
    return loss;
}

double sim_run_eval_loss(sim_run *r)
{
    /* forward only, no codec, whole data set in chunks of `batch` sequences */
    const sim_problem *p = r->p;
    uint32_t B = r->o.batch, K = p->K;
    double s = 0, rows = 0;
    uint32_t *ids = malloc(sizeof(uint32_t) * B);
    float *a = malloc(sizeof(float) * r->R * p->C), *b = malloc(sizeof(float) * r->R * p->C);
    for (uint32_t q = 0; q + B <= p->n_seq; q += B) {
        for (uint32_t i = 0; i < B; i++)
            ids[i] = q + i;
        gather(r, ids, a);
        for (uint32_t k = 0; k < K; k++) {
            stage_forward(r, k, a, r->hid[0], b);
            float *t = a;
            a = b;
            b = t;
        }
        head(r, a, r->pred);
        s += micro_loss(r, ids, r->pred, &rows);
    }
    free(ids);
    free(a);
    free(b);
    return rows > 0 ? s / rows : 0.0;
}
