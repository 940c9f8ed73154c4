/* SPDX-License-Identifier: MIT */
/*
 * test_gain - gain allocation (alloc 3, SPEC §4.3; header version 3, §8.1).
 *
 * The expected side is the transcription of §4.3 in spec_ref.h
 * (spec_gain_tile, spec_token_sigma, spec_gain_key, spec_gain_map), written
 * from the SPEC text with the spec_ref.h primitives (gate, transform,
 * quantizer, tree sums). The library is reached through tahq.h; of
 * tahq_spec.h only tahq_crc32c (to re-seal edited messages) and the metadata
 * conversions spec_ref.h builds on (checked by test_fp16) are used.
 *
 *   map       random inputs and configurations (G 8..256, equal and unequal
 *             widths, r in {0, 1, 999, 1000, ...}, tau 0 / finite / +inf,
 *             both roundings, every meta type, B sequences): status, precision
 *             map, n_low, version, alloc and tile widths of tahq_encode's
 *             message equal the transcription's;
 *   range     a tile whose zero-point or scale overflows fp16 at lo_bits but
 *             not at hi_bits: ERR_RANGE with a zeroed header whenever keys
 *             are computed (low(S) > 0), success when low(S) = 0 (r = 1000,
 *             and r = 999 with S < 1000);
 *   optimal   for the count low(S) per sequence, the gain map minimizes the
 *             added squared error: the decoded error of the gain message is
 *             at most that of the token (entropy) message, within a derived
 *             tolerance, with a count of cases where token allocation is
 *             decisively worse (the control: the comparison can fail); the
 *             gain message's error equals the all-high error plus the gains
 *             of its low tokens within a derived tolerance, and exactly the
 *             sum of the uniform encodes' tile errors;
 *   ties      identical rows and hi = lo: the lowest indices get lo_bits;
 *             negative gains rank below zero gains;
 *   header    version / alloc consistency in the decoder (messages edited
 *             and re-sealed with tahq_crc32c).
 *
 * usage: test_gain [quick]
 */
#include <float.h>

#include "spec_ref.h"
#include "tutil.h"

static const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};

/* ------------------------------------------------------------------------ */
/* Encoding helpers                                                           */
/* ------------------------------------------------------------------------ */
typedef struct msg {
    tahq_status st;
    uint8_t *b;
    size_t len;
    int hdr_zero; /* on error: the first 72 bytes of out are 0 */
} msg;

static void msg_free(msg *m)
{
    free(m->b);
    memset(m, 0, sizeof *m);
}

static void encode(const tahq_config *c, const tahq_shape *sh, const float *x, msg *m)
{
    memset(m, 0, sizeof *m);
    size_t cap = 0, wsz = 0;
    if (tahq_encode_bound(c, sh, &cap) != TAHQ_OK ||
        tahq_encode_workspace_size(c, sh, &wsz) != TAHQ_OK) {
        m->st = TAHQ_ERR_CONFIG;
        return;
    }
    m->b = malloc(cap + 16);
    void *ws = malloc(wsz + 8);
    if (!m->b || !ws)
        abort();
    memset(m->b, 0xAB, cap + 16);
    m->len = 777;
    m->st = tahq_encode(c, sh, x, ws, wsz, m->b, cap, &m->len);
    if (m->st != TAHQ_OK) {
        int z = 1;
        for (int i = 0; i < 72; i++)
            z &= m->b[i] == 0;
        m->hdr_zero = z;
    }
    free(ws);
}

static void config(tahq_config *c, uint32_t G, uint32_t hi, uint32_t lo, uint32_t r, tahq_alloc a,
                   float tau, int rnd, int meta, uint64_t seed)
{
    tahq_config_default(c);
    c->tile = G;
    c->hi_bits = hi;
    c->lo_bits = lo;
    c->hi_permille = r;
    c->alloc = a;
    c->tau = tau;
    c->rounding = (tahq_rounding)rnd;
    c->meta = (tahq_meta)meta;
    c->seed = seed;
}

static uint64_t shape_n(const tahq_shape *sh)
{
    return (uint64_t)sh->batch * sh->seq_len * sh->channels;
}

/* The tile loop of §10 step 3 for a given map (one byte per row): the
 * status of quantizing every tile at its width (the only error left once
 * the ranking has succeeded, or when no key was computed). */
static tahq_status tile_loop_status(const tahq_config *c, const tahq_shape *sh, const float *x,
                                    const uint8_t *map)
{
    const uint32_t G = c->tile;
    const uint64_t T = sh->channels / G, N = (uint64_t)sh->batch * sh->seq_len * T;
    float v[256], z, s;
    uint8_t q[256];
    for (uint64_t t = 0; t < N; t++) {
        uint32_t piv;
        memcpy(v, x + t * G, G * sizeof(float));
        if (spec_gate(v, G, c->tau, &piv))
            spec_forward(v, G, piv);
        uint32_t b = map[t / T] ? c->lo_bits : c->hi_bits;
        tahq_status st = spec_quant(v, G, b, c->meta, c->rounding, c->seed, t * G, &z, &s, q);
        if (st != TAHQ_OK)
            return st;
    }
    return TAHQ_OK;
}

/* map bit i of a message (§8.2 section 1, §8.3) */
static int map_bit(const msg *m, uint64_t i)
{
    return (int)spec_get_bits(m->b + 72, i, 1);
}

/* ------------------------------------------------------------------------ */
/* Test tensors                                                               */
/* ------------------------------------------------------------------------ */
enum { K_GAUSS, K_SCALED, K_HEAVY, K_LLM, K_ADV, K_DUP, K_NEAR, K_BIG, K_HUGE, K_KINDS };
static const char *const kind_name[K_KINDS] = {
    "gauss", "scaled", "heavy", "llm", "adversarial", "dup-rows", "near-ties", "big", "huge"};

static void make_tensor(float *x, const tahq_shape *sh, int kind, trng *r)
{
    const uint64_t S = sh->seq_len, C = sh->channels, rows = (uint64_t)sh->batch * S;
    for (uint64_t row = 0; row < rows; row++) {
        /* a per-token scale, so that tokens differ in how much error they add */
        const double scale = exp(6.0 * trng_unit(r) - 3.0);
        const uint64_t big_row = trng_below(r, rows);
        for (uint64_t c = 0; c < C; c++) {
            float *p = &x[row * C + c];
            const double g = trng_gauss(r);
            switch (kind) {
            case K_GAUSS:
                *p = (float)g;
                break;
            case K_SCALED:
                *p = (float)(g * scale);
                break;
            case K_HEAVY:
                *p = (float)(g / (fabs(trng_gauss(r)) + 0.02));
                break;
            case K_LLM: {
                double v = 0.3 * g * scale;
                if (c % 97 == 13 || c == 5)
                    v *= 30.0;
                if ((row % S == 0 || row % 37 == 11) && (c == 3 || c == C / 2 + 1))
                    v = (trng_next(r) & 1 ? 1 : -1) * (800.0 + 1200.0 * trng_unit(r));
                *p = (float)v;
                break;
            }
            case K_ADV:
                switch (row % 8) {
                case 0:
                    *p = 0.0f;
                    break;
                case 1:
                    *p = 0.1f;
                    break; /* constant off the 16-bit grids */
                case 2:
                    *p = (c == (row * 7) % C) ? -77.0f : 0.0f;
                    break; /* one spike */
                case 3:
                    *p = trng_float_exp(r, -149, -127);
                    break; /* subnormals */
                case 4:
                    *p = (float)(c & 1);
                    break; /* two values: often a negative gain */
                case 5:
                    *p = (float)((int)trng_below(r, 9) - 4) * 0.5f;
                    break;
                case 6:
                    *p = (c % 16 == 0) ? 2.0f : -2.0f;
                    break; /* m1 = m2 */
                default:
                    *p = (float)g;
                    break;
                }
                break;
            case K_DUP: /* each row a copy of an earlier row of its sequence, or fresh */
                if (c == 0 && row % S != 0 && (trng_next(r) & 3) != 0) {
                    uint64_t src = row - 1 - trng_below(r, row % S);
                    memcpy(&x[row * C], &x[src * C], C * sizeof(float));
                    c = C; /* row done */
                    break;
                }
                *p = (float)(g * scale);
                break;
            case K_NEAR: /* rows equal but for one element moved by an ulp or two:
                          * gains that agree in their first 20 fraction bits */
                if (row % S != 0 && c == 0) {
                    memcpy(&x[row * C], &x[(row - row % S) * C], C * sizeof(float));
                    uint64_t i = trng_below(r, C);
                    x[row * C + i] = u2f(f2u(x[row * C + i]) + (uint32_t)trng_below(r, 3));
                    c = C;
                    break;
                }
                *p = (float)g;
                break;
            case K_BIG: /* one row with a tile spread near the fp16 limit */
                *p = (float)g;
                if (row == big_row && c < 2)
                    *p = (c == 0 ? -1.0f : 1.0f) * (float)(30000.0 + 40000.0 * trng_unit(r));
                break;
            default:
                *p = trng_float_exp(r, 40, 63);
                break; /* |x| < 2^64 */
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* map: the message's precision map against the transcription                */
/* ------------------------------------------------------------------------ */
static uint64_t a_cases, a_ok, a_range, a_range_rank, a_low0, a_differs_token, a_neg, a_keyties,
    a_equal_widths;

static void map_case(const tahq_config *c, const tahq_shape *sh, const float *x, const char *what)
{
    const uint32_t G = c->tile;
    const uint64_t S = sh->seq_len, rows = (uint64_t)sh->batch * S, T = sh->channels / G,
                   N = rows * T;
    char desc[256];
    snprintf(desc, sizeof desc,
             "%s [%ux%ux%u] G=%u hi=%u lo=%u r=%u tau=%g rnd=%d meta=%d seed=%" PRIu64, what,
             sh->batch, sh->seq_len, sh->channels, G, c->hi_bits, c->lo_bits, c->hi_permille,
             (double)c->tau, c->rounding, c->meta, c->seed);
    a_cases++;
    a_equal_widths += c->hi_bits == c->lo_bits;
    uint8_t *map = malloc(rows);
    uint32_t *keys = malloc(rows * sizeof *keys);
    if (!map || !keys)
        abort();
    const uint64_t low = spec_low(S, c->hi_permille);
    a_low0 += low == 0;
    tahq_status want = spec_gain_map(c, sh, x, map, keys);
    const int rank_range = want != TAHQ_OK;
    if (want == TAHQ_OK)
        want = tile_loop_status(c, sh, x, map);
    msg m;
    encode(c, sh, x, &m);
    if (!CHECKF(m.st == want, "%s: status %d, §4.3 transcription %d", desc, m.st, want) ||
        m.st != TAHQ_OK) {
        if (m.st != TAHQ_OK) {
            CHECKF(m.len == 0 && m.hdr_zero, "%s: error %d: out_len %zu, header zeroed %d", desc,
                   m.st, m.len, m.hdr_zero);
            a_range += m.st == TAHQ_ERR_RANGE;
            a_range_rank += rank_range;
        }
        goto done;
    }
    a_ok++;
    tahq_header h;
    if (CHECKF(tahq_parse_header(m.b, m.len, &h) == TAHQ_OK, "%s: parse_header", desc)) {
        CHECKF(h.version == TAHQ_GAIN_VERSION && h.config.alloc == TAHQ_ALLOC_GAIN &&
                   t_get_le(m.b + 4, 2) == 3 && m.b[11] == 3,
               "%s: version %u alloc %d", desc, h.version, h.config.alloc);
        CHECKF(h.n_low == sh->batch * low, "%s: n_low %" PRIu64 ", want B low(S) = %" PRIu64, desc,
               h.n_low, sh->batch * low);
    }
    uint64_t differ = 0, first = 0;
    for (uint64_t i = 0; i < rows; i++)
        if (map_bit(&m, i) != map[i]) {
            if (!differ)
                first = i;
            differ++;
        }
    CHECKF(differ == 0,
           "%s: %" PRIu64 " map bits differ from §4.3 (first row %" PRIu64 ": %d, want %d)", desc,
           differ, first, map_bit(&m, first), map[first]);
    /* the widths of the tiles follow the map (§4.2: all tiles of a row) */
    tahq_tile_info *info = malloc(N * sizeof *info);
    if (!info)
        abort();
    if (CHECKF(tahq_tile_infos(m.b, m.len, info, N) == TAHQ_OK, "%s: tile_infos", desc)) {
        int ok = 1;
        for (uint64_t t = 0; t < N; t++)
            ok &= info[t].bits == (map[t / T] ? c->lo_bits : c->hi_bits);
        CHECKF(ok, "%s: tile widths do not follow the map", desc);
    }
    free(info);
    float *dec = malloc(rows * sh->channels * sizeof(float));
    if (!dec)
        abort();
    CHECKF(tahq_decode(m.b, m.len, dec, rows * sh->channels) == TAHQ_OK, "%s: decode", desc);
    free(dec);
    /* statistics of what the case exercised */
    if (low > 0) {
        int neg = 0, ties = 0;
        for (uint64_t r = 0; r < rows; r++) {
            neg |= keys[r] < 0x80000000u;
            if (r % S)
                ties |= keys[r] == keys[r - 1];
        }
        a_neg += neg;
        a_keyties += ties;
        tahq_config ct = *c;
        ct.alloc = TAHQ_ALLOC_TOKEN;
        msg mt;
        encode(&ct, sh, x, &mt);
        if (mt.st == TAHQ_OK) {
            int d = 0;
            for (uint64_t i = 0; i < rows; i++)
                d |= map_bit(&mt, i) != map[i];
            a_differs_token += d;
        }
        msg_free(&mt);
    }
done:
    msg_free(&m);
    free(map);
    free(keys);
}

static void part_map(int quick)
{
    trng r = {0x6A1E5EED};
    static const uint32_t hilo[][2] = {{4, 3}, {8, 1}, {1, 1}, {5, 5}, {2, 1},
                                       {8, 7}, {3, 2}, {6, 4}, {8, 8}};
    static const uint32_t perm[] = {0, 1, 999, 1000, 800, 500, 250, 900};
    static const uint32_t seqs[] = {1, 2, 3, 5, 7, 10, 16, 33};
    static const uint32_t Ts[] = {1, 2, 3, 4, 5, 7, 8};
    const int n = quick ? 600 : 3000;
    for (int i = 0; i < n; i++) {
        uint32_t G = Gs[trng_below(&r, 6)];
        const uint32_t *hl = hilo[trng_below(&r, sizeof hilo / sizeof hilo[0])];
        uint32_t pm =
            trng_below(&r, 10) < 8 ? perm[trng_below(&r, 8)] : (uint32_t)trng_below(&r, 1001);
        float tau;
        switch (trng_below(&r, 4)) {
        case 0:
            tau = 0.0f;
            break;
        case 1:
            tau = INFINITY;
            break;
        case 2:
            tau = 2.0f;
            break;
        default:
            tau = (float)(0.5 + 7.5 * trng_unit(&r));
            break;
        }
        tahq_config c;
        config(&c, G, hl[0], hl[1], pm, TAHQ_ALLOC_GAIN, tau, (int)trng_below(&r, 2),
               (int)trng_below(&r, 3), trng_next(&r));
        tahq_shape sh;
        sh.batch = 1 + (uint32_t)trng_below(&r, 3);
        sh.seq_len = seqs[trng_below(&r, 8)];
        uint32_t T = Ts[trng_below(&r, 7)];
        while ((uint64_t)sh.batch * sh.seq_len * T * G > 60000 && T > 1)
            T--;
        if (i % 50 == 7) { /* S = 1000: low(1000) at r = 999 is 1, at r = 1 it is 999 */
            sh.batch = 1;
            sh.seq_len = 1000;
            c.tile = G = 8;
            T = 1 + (uint32_t)trng_below(&r, 2);
            c.hi_permille = (i / 50) % 2 ? 999 : 1;
        }
        sh.channels = T * G;
        float *x = malloc(shape_n(&sh) * sizeof(float));
        if (!x)
            abort();
        int kind = (int)trng_below(&r, K_KINDS);
        make_tensor(x, &sh, kind, &r);
        map_case(&c, &sh, x, kind_name[kind]);
        free(x);
    }
    printf("map: %" PRIu64 " gain encodes vs the §4.3 transcription: %" PRIu64 " ok, %" PRIu64
           " ERR_RANGE (%" PRIu64 " found while ranking), %" PRIu64 " with low(S) = 0, %" PRIu64
           " hi = lo; among those with low tokens: %" PRIu64 " with a negative gain, %" PRIu64
           " with equal keys of adjacent rows, %" PRIu64 " maps unlike the token map\n",
           a_cases, a_ok, a_range, a_range_rank, a_low0, a_equal_widths, a_neg, a_keyties,
           a_differs_token);
    CHECKF(a_range_rank > 0 && a_neg > 0 && a_keyties > 0 && a_differs_token > 0 && a_low0 > 0,
           "map: a case kind was not exercised");
}

/* ------------------------------------------------------------------------ */
/* range: metadata overflow at the low width only                             */
/* ------------------------------------------------------------------------ */
static void part_range(void)
{
    /* G = 16, hi 2 bits (L = 3), lo 1 bit (L = 1), fp16 metadata, no gate.
     * Row 2 (of sequence 0) holds a tile with min -50000 and max 50000:
     * z = down(-50000) = -50016, w = 100016: at 1 bit s >= w / 1 is above
     * the fp16 maximum 65504 (ERR_RANGE), at 2 bits s = up(w / 3) is fine. */
    trng r = {31337};
    uint64_t n_cases = 0;
    static const uint32_t seqs[] = {5, 1000};
    for (int si = 0; si < 2; si++) {
        const uint32_t S = seqs[si];
        for (uint32_t B = 1; B <= 2; B++) {
            tahq_shape sh = {B, S, 32};
            const uint64_t n = shape_n(&sh);
            float *x = malloc(n * sizeof(float));
            if (!x)
                abort();
            for (uint64_t i = 0; i < n; i++)
                x[i] = (float)trng_gauss(&r);
            /* the overflowing tile: in the last sequence, row 2, tile 1 */
            const uint64_t row = (uint64_t)(B - 1) * S + 2;
            x[row * 32 + 16 + 3] = -50000.0f;
            x[row * 32 + 16 + 9] = 50000.0f;
            static const uint32_t perm[] = {0, 1, 500, 800, 999, 1000};
            for (int pi = 0; pi < 6; pi++) {
                for (int tau_inf = 0; tau_inf < 2; tau_inf++) {
                    tahq_config c;
                    config(&c, 16, 2, 1, perm[pi], TAHQ_ALLOC_GAIN, tau_inf ? INFINITY : 1e6f, 0,
                           TAHQ_META_FP16, 0);
                    /* tau = 1e6 flags nothing here either: the spread must
                     * not depend on the transform for this check */
                    const uint64_t low = spec_low(S, perm[pi]);
                    msg m;
                    encode(&c, &sh, x, &m);
                    char what[160];
                    snprintf(what, sizeof what, "range: B=%u S=%u r=%u low(S)=%" PRIu64, B, S,
                             perm[pi], low);
                    if (low > 0) {
                        CHECKF(m.st == TAHQ_ERR_RANGE && m.len == 0 && m.hdr_zero,
                               "%s: status %d len %zu header zeroed %d, want ERR_RANGE", what, m.st,
                               m.len, m.hdr_zero);
                    } else {
                        tahq_status dst = TAHQ_ERR_NULL;
                        if (m.st == TAHQ_OK) {
                            float *y = malloc(n * sizeof(float));
                            dst = tahq_decode(m.b, m.len, y, n);
                            free(y);
                        }
                        CHECKF(m.st == TAHQ_OK && dst == TAHQ_OK && t_get_le(m.b + 40, 8) == 0,
                               "%s: status %d (decode %d), want ok: no key is computed", what, m.st,
                               dst);
                    }
                    /* the transcription agrees, and the same tensor at 2/2 bits
                     * encodes (the high width alone never overflows) */
                    uint8_t *map = malloc(sh.batch * S);
                    tahq_status ws = spec_gain_map(&c, &sh, x, map, NULL);
                    CHECKF((ws == TAHQ_ERR_RANGE) == (low > 0), "%s: transcription %d", what, ws);
                    free(map);
                    tahq_config hh = c;
                    hh.lo_bits = 2;
                    msg m2;
                    encode(&hh, &sh, x, &m2);
                    CHECKF(m2.st == TAHQ_OK, "%s: 2/2 bits: %d", what, m2.st);
                    msg_free(&m2);
                    /* token allocation ranks by entropy: it fails only if the
                     * overflowing row is one of the low tokens */
                    tahq_config tk = c;
                    tk.alloc = TAHQ_ALLOC_TOKEN;
                    msg mt;
                    encode(&tk, &sh, x, &mt);
                    CHECKF(mt.st == TAHQ_OK || mt.st == TAHQ_ERR_RANGE, "%s: token %d", what,
                           mt.st);
                    if (mt.st == TAHQ_OK)
                        CHECKF(map_bit(&mt, row) == 0, "%s: token map", what);
                    msg_free(&mt);
                    msg_free(&m);
                    n_cases++;
                }
            }
            /* the spread so large that hi_bits overflows too: ERR_RANGE at
             * every r (r = 1000 from the tile loop) */
            x[row * 32 + 16 + 3] = -65000.0f;
            x[row * 32 + 16 + 9] = 65000.0f * 3.0f;
            for (int pi = 0; pi < 6; pi++) {
                tahq_config c;
                config(&c, 16, 2, 1, perm[pi], TAHQ_ALLOC_GAIN, INFINITY, 0, TAHQ_META_FP16, 0);
                msg m;
                encode(&c, &sh, x, &m);
                CHECKF(m.st == TAHQ_ERR_RANGE && m.len == 0 && m.hdr_zero,
                       "range (both widths): B=%u S=%u r=%u: %d", B, S, perm[pi], m.st);
                msg_free(&m);
                n_cases++;
            }
            free(x);
        }
    }
    printf("range: %" PRIu64 " encodes: ERR_RANGE with a zeroed header exactly when keys are "
           "computed (low(S) > 0) or hi_bits overflows\n",
           n_cases);
}

/* ------------------------------------------------------------------------ */
/* optimal: the gain map minimizes the added squared error                    */
/* ------------------------------------------------------------------------ */
static const double U32 = 0x1p-24, U64 = 0x1p-53;

/* binary64 squared error of a decoded tile, summed in element order */
static double tile_err(const float *x, const float *y, uint32_t G)
{
    double s = 0.0;
    for (uint32_t i = 0; i < G; i++) {
        double d = (double)x[i] - (double)y[i];
        s += d * d;
    }
    return s;
}

/* Tolerance of |d - κ² c| for one tile at one width, where
 *   c  = e_b of §4.3 step 1 (transformed domain, computed), κ² = 2 for a
 *        flagged tile with log2 G odd, else 1;
 *   d  = the tile's decoded squared error computed by tile_err.
 * Derivation. Let Δ = v̂ - v (exact) and Q = ‖Δ‖². Each D_i = fl32(Δ_i)²
 * exactly, fl32(Δ_i) = Δ_i (1 + ε), |ε| <= u32, and the binary64 tree of
 * depth k = log2 G over non-negative terms adds at most (1 + u64)^k - 1:
 * |c - Q| <= θ1 Q with θ1 = (1 + u32)² (1 + u64)^k - 1 <= 2^-23 + 2^-47 + k 2^-52.
 * Let R = ‖x - x̂‖². An unflagged tile decodes to x̂ = v̂ and has x = v:
 * R = Q. A flagged tile: with x' the swapped tile, v = F x' + e_f and
 * x̂' = I v̂ + e_i (SPEC §6.3: IF = identity, ‖I w‖ = κ ‖w‖, ‖F w‖ = ‖w‖ / κ,
 * ‖e_f‖ <= γ ‖F x'‖ + √G 2^-150, ‖e_i‖ <= γ ‖I v̂‖ + √G 2^-150 with
 * γ = (1 + u32)^(k+1) - 1), so x̂' - x' = I Δ + e_i + I e_f and
 * |√R - κ √Q| <= η = γ (‖x‖ + κ ‖v̂‖) + (κ + 1) √G 2^-150, hence
 * |R - κ² Q| <= η (2 κ √Q + η). tile_err evaluates G differences (exact or
 * rounded by u64), G squares and G - 1 additions of non-negative terms:
 * |d - R| <= θ2 R with θ2 = (1 + u64)^(2G) - 1 <= 2G · 2^-52 (G <= 256).
 * Together |d - κ² c| <= θ2 R + κ² θ1 Q + η (2 κ √Q + η), with
 * Q <= c / (1 - θ1) and R <= (κ √Q + η)². The norms ‖x‖ and ‖v̂‖ are
 * evaluated in binary64 (relative error far below the 2^-20 margin added). */
static double tile_tol(uint32_t G, int flagged, double c, double xnorm, double vhnorm)
{
    const int k = spec_log2u(G);
    const double kap2 = flagged && (k & 1) ? 2.0 : 1.0, kap = sqrt(kap2);
    const double th1 = 0x1p-23 + 0x1p-47 + k * 0x1p-52, th2 = 2.0 * G * 0x1p-52;
    const double gam = (k + 1) * U32 * (1.0 + 0x1p-20); /* >= (1 + u)^(k+1) - 1 */
    const double Q = c / (1.0 - th1);
    const double eta =
        flagged ? gam * (xnorm + kap * vhnorm) + (kap + 1.0) * sqrt((double)G) * 0x1p-150 : 0.0;
    const double R = (kap * sqrt(Q) + eta) * (kap * sqrt(Q) + eta);
    const double t = th2 * R + kap2 * th1 * Q + eta * (2.0 * kap * sqrt(Q) + eta);
    return t * (1.0 + 0x1p-20);
}

static double norm2(const float *v, uint32_t G)
{
    double s = 0.0;
    for (uint32_t i = 0; i < G; i++)
        s += (double)v[i] * (double)v[i];
    return sqrt(s);
}

static uint64_t c_cases, c_token_worse, c_gain_above, c_tiles_equal, c_skipped, c_differ;
static double c_worst_p, c_worst_opt;

/* What optimal_case computes once and its checks read: the decoded
 * tensors of the gain and token messages and of the uniform encodes at lo
 * (0) and hi (1); per tile the §4.3 gain, kappa^2 times the hi error, the
 * decoded errors and their tolerances at each width; per token sigma; the
 * gain and token maps. */
typedef struct opt_data {
    uint32_t G;
    uint64_t S, rows, T, N, n;
    float *yg, *yt, *yu[2];
    double *gt, *tolt[2], *ch, *du[2], *sig;
    uint8_t *lg, *lt;
} opt_data;

static void opt_alloc(opt_data *d, const tahq_config *cg, const tahq_shape *sh)
{
    d->G = cg->tile;
    d->S = sh->seq_len;
    d->rows = (uint64_t)sh->batch * d->S;
    d->T = sh->channels / d->G;
    d->N = d->rows * d->T;
    d->n = d->N * d->G;
    const uint64_t n = d->n, N = d->N, rows = d->rows;
    d->yg = malloc(n * sizeof(float));
    d->yt = malloc(n * sizeof(float));
    d->yu[0] = malloc(n * sizeof(float));
    d->yu[1] = malloc(n * sizeof(float));
    d->gt = malloc(N * sizeof(double));
    d->tolt[0] = malloc(N * sizeof(double));
    d->tolt[1] = malloc(N * sizeof(double));
    d->ch = malloc(N * sizeof(double));
    d->du[0] = malloc(N * sizeof(double));
    d->du[1] = malloc(N * sizeof(double));
    d->sig = malloc(rows * sizeof(double));
    d->lg = malloc(rows);
    d->lt = malloc(rows);
    if (!d->yg || !d->yt || !d->yu[0] || !d->yu[1] || !d->gt || !d->tolt[0] || !d->tolt[1] ||
        !d->ch || !d->du[0] || !d->du[1] || !d->sig || !d->lg || !d->lt)
        abort();
}

static void opt_free(opt_data *d)
{
    free(d->yg);
    free(d->yt);
    free(d->yu[0]);
    free(d->yu[1]);
    free(d->gt);
    free(d->tolt[0]);
    free(d->tolt[1]);
    free(d->ch);
    free(d->du[0]);
    free(d->du[1]);
    free(d->sig);
    free(d->lg);
    free(d->lt);
}

/* Per tile the §4.3 values (transcription) and the decoded errors; per
 * token sigma. 0, or -1 when the transcription fails on a tile. */
static int opt_tiles(const tahq_config *cg, const tahq_shape *sh, const float *x, opt_data *d,
                     const char *desc)
{
    const uint32_t G = d->G;
    const uint64_t rows = d->rows, T = d->T, N = d->N;
    const float *yg = d->yg, *yt = d->yt;
    const uint8_t *lg = d->lg, *lt = d->lt;
    float *const *yu = d->yu;
    double *gt = d->gt, *const *tolt = d->tolt, *ch = d->ch, *const *du = d->du, *sig = d->sig;
    int tiles_equal = 1;
    for (uint64_t t = 0; t < N; t++) {
        int fl;
        double e[2];
        float vh[2][256];
        tahq_status st = spec_gain_tile(cg, x + t * G, t * G, &fl, e, vh, NULL);
        if (!CHECKF(st == TAHQ_OK, "%s: transcription of tile %" PRIu64 ": %d", desc, t, st))
            return -1;
        const double kap2 = fl && (spec_log2u(G) & 1) ? 2.0 : 1.0;
        gt[t] = spec_tile_gain(cg, fl, e);
        ch[t] = kap2 * e[1];
        const double xn = norm2(x + t * G, G);
        for (int w = 0; w < 2; w++) {
            du[w][t] = tile_err(x + t * G, yu[w] + t * G, G);
            tolt[w][t] = tile_tol(G, fl, e[w == 0 ? 0 : 1], xn, norm2(vh[w], G));
        }
        /* the gain and token messages decode each tile exactly as the
         * uniform encode of its width (§4.3: a tile's quantization depends
         * on the tile and its width only) */
        const uint64_t r = t / T;
        tiles_equal &= memcmp(yg + t * G, yu[lg[r] ? 0 : 1] + t * G, G * sizeof(float)) == 0;
        tiles_equal &= memcmp(yt + t * G, yu[lt[r] ? 0 : 1] + t * G, G * sizeof(float)) == 0;
    }
    c_tiles_equal += tiles_equal;
    CHECKF(tiles_equal, "%s: a decoded tile differs from the uniform encode of its width", desc);
    for (uint64_t r = 0; r < rows; r++)
        CHECK_QUIET(spec_token_sigma(cg, x + r * sh->channels, (uint32_t)T, r * sh->channels,
                                     &sig[r]) == TAHQ_OK,
                    "%s: sigma", desc);
    return 0;
}

/* The gain message's decoded error: exactly the sum of the uniform encodes'
 * tile errors at each tile's width, and within rounding of the all-high
 * error plus the gains of the low tokens. *Eg_out gets it. */
static void opt_check_sum(const float *x, const opt_data *d, const char *desc, double *Eg_out,
                          double *Et_out)
{
    const uint32_t G = d->G;
    const uint64_t rows = d->rows, T = d->T, N = d->N;
    const float *yg = d->yg, *yt = d->yt;
    const uint8_t *lg = d->lg;
    const double *gt = d->gt, *ch = d->ch, *sig = d->sig;
    double *const *tolt = d->tolt, *const *du = d->du;
    /* decoded errors of the two messages, tile by tile in tile order */
    double Eg = 0.0, Et = 0.0, Eu = 0.0;
    for (uint64_t t = 0; t < N; t++) {
        Eg += tile_err(x + t * G, yg + t * G, G);
        Et += tile_err(x + t * G, yt + t * G, G);
        Eu += du[lg[t / T] ? 0 : 1][t];
    }
    /* exact: the same per-tile values added in the same order */
    CHECKF(Eg == Eu, "%s: gain error %.17g, from the uniform encodes %.17g", desc, Eg, Eu);

    /* Eg against the all-high error plus the gains σ of the low tokens:
     * P = fl(Σ_t κ² c_hi + Σ_{low s} σ_s). In real arithmetic Σ_t d_{w_t}
     * and Σ_t κ² c_{w_t} differ by at most Σ_t tol_t(w_t) (tile_tol), and
     * Σ_t κ² c_{w_t} = Σ_t κ² c_hi + Σ_{low s} Σ_{t in s} g_t exactly.
     * Rounding: Eg (N G non-negative terms in two nested sums): (N + G) u64
     * Eg; Σ κ² c_hi (N non-negative terms): N u64 H; each g_t = fl(c_lo - c_hi)
     * and the psum of depth ⌈log2 T⌉ over signed terms: (⌈log2 T⌉ + 1) u64
     * Σ|g_t| per token; the sum of the n_low σ: n_low u64 Σ|σ|; the last
     * addition: u64 |P|. Each γ_m = m u64 / (1 - m u64) is covered by 2 m u64. */
    double H = 0.0, Sg = 0.0, absg = 0.0, abss = 0.0, tolw = 0.0;
    uint64_t nlow = 0;
    for (uint64_t t = 0; t < N; t++) {
        H += ch[t];
        tolw += tolt[lg[t / T] ? 0 : 1][t];
        if (lg[t / T])
            absg += fabs(gt[t]);
    }
    for (uint64_t r = 0; r < rows; r++)
        if (lg[r]) {
            Sg += sig[r];
            abss += fabs(sig[r]);
            nlow++;
        }
    const double P = H + Sg;
    const int lgT = spec_log2u(spec_pow2_ceil((uint32_t)T));
    const double tolP = (tolw + 2.0 * U64 *
                                    ((double)(N + G) * Eg + (double)N * H +
                                     (double)(lgT + 1) * absg + (double)nlow * abss + fabs(P))) *
                        (1.0 + 0x1p-20);
    CHECKF(fabs(Eg - P) <= tolP,
           "%s: gain error %.17g vs all-high %.17g + low gains %.17g: |diff| %.3g > tolerance %.3g",
           desc, Eg, H, Sg, fabs(Eg - P), tolP);
    if (tolP > 0 && fabs(Eg - P) / tolP > c_worst_p)
        c_worst_p = fabs(Eg - P) / tolP;
    *Eg_out = Eg;
    *Et_out = Et;
}

/* Optimality against the token message at equal n_low, in decoded error
 * and in sigma. */
static void opt_check_order(const opt_data *d, double Eg, double Et, const char *desc)
{
    const uint32_t G = d->G;
    const uint64_t rows = d->rows, T = d->T, N = d->N;
    const uint8_t *lg = d->lg, *lt = d->lt;
    const double *gt = d->gt, *sig = d->sig;
    double *const *tolt = d->tolt;
    const int lgT = spec_log2u(spec_pow2_ceil((uint32_t)T));
    /* Optimality at equal n_low. Per sequence the gain map takes the low(S)
     * smallest (key, index); keys compare the top 32 bits of σ (sign,
     * exponent, 20 fraction bits), so for a in the gain set and b not in it
     * σ_a <= σ_b + 2^-20 |σ_a| (+ 2^-1040 if subnormal). With δ_s the
     * decoded gain of token s (Σ_t d_lo - d_hi over its tiles),
     * |δ_s - σ_s| <= τ_s = Σ_t (tol_t(lo) + tol_t(hi)) + (⌈log2 T⌉ + 1) 2 u64 Σ_t |g_t|.
     * Tokens low in both maps cancel, so for the exact sums
     * Eg - Et = Σ_{Lg\Lt} δ - Σ_{Lt\Lg} δ
     *        <= Σ_{Lg Δ Lt} τ_s + Σ_{Lg\Lt} (2^-20 |σ_s| + 2^-1040),
     * pairing the equally many elements of Lg\Lt and Lt\Lg; the computed
     * Eg and Et add (N + G) 2 u64 each. */
    double tolO = 0.0, sig_g = 0.0, sig_t = 0.0, slack = 0.0;
    int differ = 0;
    for (uint64_t r = 0; r < rows; r++) {
        if (lg[r] == lt[r])
            continue;
        differ = 1;
        double tau_s = 0.0, ag = 0.0;
        for (uint64_t t = r * T; t < (r + 1) * T; t++) {
            tau_s += tolt[0][t] + tolt[1][t];
            ag += fabs(gt[t]);
        }
        tolO += tau_s + (double)(lgT + 1) * 2.0 * U64 * ag;
        if (lg[r]) {
            tolO += 0x1p-20 * fabs(sig[r]) + 0x1p-1040;
            slack += 0x1p-20 * fabs(sig[r]) + 0x1p-1040;
            sig_g += sig[r];
        } else {
            sig_t += sig[r];
        }
    }
    c_differ += differ;
    tolO = (tolO + 2.0 * U64 * (double)(N + G) * (Eg + Et)) * (1.0 + 0x1p-20);
    CHECKF(Eg <= Et + tolO,
           "%s: gain message error %.17g > token message error %.17g + tolerance %.3g", desc, Eg,
           Et, tolO);
    if (Eg > Et) {
        c_gain_above++;
        if (tolO > 0 && (Eg - Et) / tolO > c_worst_opt)
            c_worst_opt = (Eg - Et) / tolO;
    }
    c_token_worse += Et > Eg + tolO;
    /* the same in σ alone: the symmetric difference, where the maps differ */
    const double ssum = (fabs(sig_g) + fabs(sig_t)) * 2.0 * (double)rows * U64;
    CHECKF(sig_g <= sig_t + slack + ssum, "%s: Σσ of the gain-only tokens %.17g > token-only %.17g",
           desc, sig_g, sig_t);
}

static void optimal_case(const tahq_config *cg, const tahq_shape *sh, const float *x,
                         const char *what)
{
    opt_data d;
    opt_alloc(&d, cg, sh);
    const uint32_t G = d.G;
    const uint64_t rows = d.rows, n = d.n;
    char desc[256];
    snprintf(desc, sizeof desc, "optimal %s [%ux%ux%u] G=%u hi=%u lo=%u r=%u tau=%g rnd=%d meta=%d",
             what, sh->batch, sh->seq_len, sh->channels, G, cg->hi_bits, cg->lo_bits,
             cg->hi_permille, (double)cg->tau, cg->rounding, cg->meta);
    /* four encodes: gain, token, and uniform at hi and at lo (alloc none) */
    tahq_config ct = *cg, cu[2];
    ct.alloc = TAHQ_ALLOC_TOKEN;
    for (int w = 0; w < 2; w++) {
        cu[w] = *cg;
        cu[w].alloc = TAHQ_ALLOC_NONE;
        cu[w].hi_bits = cu[w].lo_bits = w ? cg->hi_bits : cg->lo_bits;
    }
    msg mg, mt, mu[2];
    encode(cg, sh, x, &mg);
    encode(&ct, sh, x, &mt);
    encode(&cu[0], sh, x, &mu[0]);
    encode(&cu[1], sh, x, &mu[1]);
    double Eg = 0.0, Et = 0.0;
    if (mu[0].st != TAHQ_OK ||
        mu[1].st != TAHQ_OK) { /* a width overflows: not this part's subject */
        CHECKF(mg.st == TAHQ_ERR_RANGE || mg.st == TAHQ_OK, "%s: gain status %d", desc, mg.st);
        c_skipped++;
        goto done;
    }
    if (!CHECKF(mg.st == TAHQ_OK && mt.st == TAHQ_OK, "%s: encode gain %d token %d", desc, mg.st,
                mt.st) ||
        !CHECKF(tahq_decode(mg.b, mg.len, d.yg, n) == TAHQ_OK &&
                    tahq_decode(mt.b, mt.len, d.yt, n) == TAHQ_OK &&
                    tahq_decode(mu[0].b, mu[0].len, d.yu[0], n) == TAHQ_OK &&
                    tahq_decode(mu[1].b, mu[1].len, d.yu[1], n) == TAHQ_OK,
                "%s: decode", desc))
        goto done;
    c_cases++;
    for (uint64_t i = 0; i < rows; i++) {
        d.lg[i] = (uint8_t)map_bit(&mg, i);
        d.lt[i] = (uint8_t)map_bit(&mt, i);
    }
    if (opt_tiles(cg, sh, x, &d, desc) != 0)
        goto done;
    opt_check_sum(x, &d, desc, &Eg, &Et);
    opt_check_order(&d, Eg, Et, desc);
done:
    msg_free(&mg);
    msg_free(&mt);
    msg_free(&mu[0]);
    msg_free(&mu[1]);
    opt_free(&d);
}

static void part_optimal(int quick)
{
    trng r = {0x0971A1};
    static const uint32_t hilo[][2] = {{4, 3}, {4, 2}, {8, 4}, {3, 1}, {2, 1}, {6, 5}};
    static const uint32_t perm[] = {800, 500, 250, 900};
    static const int kinds[] = {K_GAUSS, K_SCALED, K_HEAVY, K_LLM, K_ADV, K_DUP};
    const int n = quick ? 150 : 600;
    for (int i = 0; i < n; i++) {
        const uint32_t G = Gs[trng_below(&r, 6)];
        const uint32_t *hl = hilo[trng_below(&r, 6)];
        static const float taus[] = {0.0f, 2.0f, INFINITY};
        tahq_config c;
        config(&c, G, hl[0], hl[1], perm[trng_below(&r, 4)], TAHQ_ALLOC_GAIN,
               taus[trng_below(&r, 3)], (int)trng_below(&r, 2), (int)trng_below(&r, 3),
               trng_next(&r));
        tahq_shape sh = {1 + (uint32_t)trng_below(&r, 3), 4 + (uint32_t)trng_below(&r, 29), 0};
        uint32_t T = 1 + (uint32_t)trng_below(&r, 8);
        while ((uint64_t)sh.batch * sh.seq_len * T * G > 40000 && T > 1)
            T--;
        sh.channels = T * G;
        float *x = malloc(shape_n(&sh) * sizeof(float));
        if (!x)
            abort();
        int kind = kinds[trng_below(&r, 6)];
        make_tensor(x, &sh, kind, &r);
        optimal_case(&c, &sh, x, kind_name[kind]);
        free(x);
    }
    printf(
        "optimal: %" PRIu64 " inputs (%" PRIu64 " skipped: a uniform width overflows): tiles of "
        "the gain and token messages equal the uniform encodes' in %" PRIu64
        "; maps differ in %" PRIu64
        "; token message error > gain message error + tolerance in %" PRIu64
        " (the control); gain error above token error (within tolerance) in %" PRIu64
        ", worst excess/tolerance %.3g; |gain error - (all-high + low gains)| / tolerance at most "
        "%.3g\n",
        c_cases + c_skipped, c_skipped, c_tiles_equal, c_differ, c_token_worse, c_gain_above,
        c_worst_opt, c_worst_p);
    CHECKF(c_token_worse > 0,
           "optimal: token allocation never decisively worse: the check has no power");
    CHECKF(c_cases >= (uint64_t)n / 2, "optimal: too many skipped inputs (%" PRIu64 ")", c_skipped);
}

/* ------------------------------------------------------------------------ */
/* ties                                                                       */
/* ------------------------------------------------------------------------ */
static void part_ties(void)
{
    trng r = {4242};
    uint64_t n_cases = 0;
    /* identical rows in each sequence (nearest-even: the codes depend on the
     * values only): equal keys, the first low(S) rows of each sequence */
    for (int i = 0; i < 60; i++) {
        const uint32_t G = Gs[i % 6];
        tahq_config c;
        config(&c, G, 4 + (uint32_t)(i % 3), 2, (uint32_t)(100 * (i % 10)), TAHQ_ALLOC_GAIN,
               (i % 3) == 0   ? 0.0f
               : (i % 3) == 1 ? 2.0f
                              : INFINITY,
               TAHQ_ROUND_NEAREST_EVEN, i % 3, trng_next(&r));
        tahq_shape sh = {1 + (uint32_t)(i % 3), 3 + (uint32_t)(i % 13),
                         G * (1 + (uint32_t)(i % 4))};
        const uint64_t C = sh.channels, S = sh.seq_len, rows = (uint64_t)sh.batch * S;
        float *x = malloc(shape_n(&sh) * sizeof(float));
        if (!x)
            abort();
        for (uint64_t b = 0; b < sh.batch; b++) {
            for (uint64_t k = 0; k < C; k++)
                x[b * S * C + k] = (float)(trng_gauss(&r) * (1 + b));
            for (uint64_t s = 1; s < S; s++)
                memcpy(x + (b * S + s) * C, x + b * S * C, C * sizeof(float));
        }
        msg m;
        encode(&c, &sh, x, &m);
        const uint64_t low = spec_low(S, c.hi_permille);
        int ok = m.st == TAHQ_OK;
        for (uint64_t k = 0; ok && k < rows; k++)
            ok &= map_bit(&m, k) == ((k % S) < low);
        CHECKF(ok,
               "ties: identical rows G=%u S=%" PRIu64 " r=%u: status %d, want the first %" PRIu64
               " rows low",
               G, S, c.hi_permille, m.st, low);
        msg_free(&m);
        /* hi = lo: every gain is +0 (any rounding, any input) */
        c.lo_bits = c.hi_bits;
        c.rounding = (tahq_rounding)(i & 1);
        for (uint64_t k = 0; k < shape_n(&sh); k++)
            x[k] = (float)(trng_gauss(&r) * exp(3 * trng_gauss(&r)));
        encode(&c, &sh, x, &m);
        ok = m.st == TAHQ_OK;
        for (uint64_t k = 0; ok && k < rows; k++)
            ok &= map_bit(&m, k) == ((k % S) < low);
        CHECKF(ok,
               "ties: hi = lo = %u, G=%u S=%" PRIu64 " r=%u: status %d, want the first %" PRIu64
               " rows low",
               c.hi_bits, G, S, c.hi_permille, m.st, low);
        uint32_t *keys = malloc(rows * sizeof *keys);
        uint8_t *map = malloc(rows);
        if (low > 0 && spec_gain_map(&c, &sh, x, map, keys) == TAHQ_OK) {
            int allzero = 1;
            for (uint64_t k = 0; k < rows; k++)
                allzero &= keys[k] == 0x80000000u; /* key of +0 */
            CHECKF(allzero, "ties: hi = lo: a key other than that of +0");
        }
        free(keys);
        free(map);
        msg_free(&m);
        free(x);
        n_cases += 2;
    }
    /* negative gains: a row of 0 and 1 only, at 2/1 bits with fp16
     * metadata, decodes exactly at 1 bit (z = 0, s = 1) but not at 2 bits
     * (s = up(1/3) = 0x1.558p-2, 3 s = 1 + 2^-11): e_lo - e_hi < 0. Rows:
     * 0 gauss, 1 two-valued, 2 zeros (gain +0), 3 two-valued (same as 1),
     * 4 gauss. low(5) at r = 600 is 2: rows 1 and 3, not row 2 (gain 0,
     * lower index). At r = 400, low(5) = 3: rows 1, 3, then 2. */
    static const uint32_t rs[] = {600, 400, 800};
    static const char *const want[] = {"01010", "01110", "01000"};
    for (int k = 0; k < 3; k++)
        for (int meta = 0; meta < 2; meta++) {
            tahq_config c;
            config(&c, 16, 2, 1, rs[k], TAHQ_ALLOC_GAIN, 2.0f, TAHQ_ROUND_NEAREST_EVEN, meta, 0);
            tahq_shape sh = {1, 5, 32};
            float x[160];
            for (int i = 0; i < 160; i++) {
                int row = i / 32;
                x[i] = row == 1 || row == 3 ? (float)(((i % 32) * 7 / 3) & 1)
                       : row == 2           ? 0.0f
                                            : (float)trng_gauss(&r);
            }
            double sg[5];
            for (int row = 0; row < 5; row++)
                spec_token_sigma(&c, x + row * 32, 2, (uint64_t)row * 32, &sg[row]);
            CHECKF(sg[1] < 0 && sg[3] < 0 && sg[1] == sg[3] && sg[2] == 0 && sg[0] > 0 && sg[4] > 0,
                   "ties: negative-gain rows (meta %d): σ = %g %g %g %g %g", meta, sg[0], sg[1],
                   sg[2], sg[3], sg[4]);
            msg m;
            encode(&c, &sh, x, &m);
            char got[6] = "?????";
            if (m.st == TAHQ_OK)
                for (int row = 0; row < 5; row++)
                    got[row] = (char)('0' + map_bit(&m, (uint64_t)row));
            CHECKF(m.st == TAHQ_OK && strcmp(got, want[k]) == 0,
                   "ties: negative gains, r=%u meta %d: map %s, want %s", rs[k], meta, got,
                   want[k]);
            msg_free(&m);
            n_cases++;
        }
    printf("ties: %" PRIu64 " encodes: equal keys go low in index order, negative gains first\n",
           n_cases);
}

/* ------------------------------------------------------------------------ */
/* header: version and alloc consistency (§8.1, §8.4 steps 1-2)               */
/* ------------------------------------------------------------------------ */
static void reseal(uint8_t *m, size_t len)
{
    uint32_t crc = tahq_crc32c(tahq_crc32c(0, m, 68), m + 72, len - 72);
    t_put_le(m + 68, crc, 4);
}

static uint64_t e_cases;

/* decode, parse_header, tile_infos and error_bound of an edited copy */
static void expect(const uint8_t *src, size_t len, uint64_t count, tahq_status want,
                   const char *what)
{
    uint8_t *w = malloc(len + 1);
    float *y = malloc(count * sizeof(float));
    double *bd = malloc(count * sizeof(double));
    tahq_tile_info info[64];
    if (!w || !y || !bd)
        abort();
    memcpy(w, src, len);
    memset(y, 0x7F, count * sizeof(float));
    tahq_status st = tahq_decode(w, len, y, count);
    CHECKF(st == want, "header: %s: decode %d, want %d", what, st, want);
    if (st != TAHQ_OK) {
        int untouched = 1;
        for (size_t i = 0; i < count * sizeof(float); i++)
            untouched &= ((uint8_t *)y)[i] == 0x7F;
        CHECKF(untouched, "header: %s: output written on error", what);
    }
    tahq_header h;
    tahq_status sp = tahq_parse_header(w, len, &h);
    if (want != TAHQ_ERR_PAYLOAD)
        CHECKF(sp == want, "header: %s: parse_header %d, want %d", what, sp, want);
    CHECKF(tahq_error_bound(w, len, bd, count) == st, "header: %s: error_bound", what);
    if (count / 16 <= 64)
        CHECKF(tahq_tile_infos(w, len, info, count / 16) == st, "header: %s: tile_infos", what);
    e_cases++;
    free(w);
    free(y);
    free(bd);
}

static void part_header(void)
{
    tahq_config c;
    config(&c, 16, 4, 3, 800, TAHQ_ALLOC_GAIN, 2.0f, 0, TAHQ_META_FP16, 0);
    tahq_shape sh = {1, 5, 32};
    const uint64_t n = 160;
    float x[160], yg[160], yt[160], y[160];
    trng r = {77};
    for (int i = 0; i < 160; i++)
        x[i] = (float)(trng_gauss(&r) * (1 + i / 32));
    x[3] = 40.0f;
    msg g, t;
    encode(&c, &sh, x, &g);
    c.alloc = TAHQ_ALLOC_TOKEN;
    encode(&c, &sh, x, &t);
    if (!CHECK(g.st == TAHQ_OK && t.st == TAHQ_OK))
        return;
    CHECK(tahq_decode(g.b, g.len, yg, n) == TAHQ_OK && tahq_decode(t.b, t.len, yt, n) == TAHQ_OK);
    tahq_header h;
    CHECK(tahq_parse_header(g.b, g.len, &h) == TAHQ_OK && h.version == 3 &&
          h.config.alloc == TAHQ_ALLOC_GAIN && h.n_low == 1 && t_get_le(g.b + 4, 2) == 3 &&
          g.b[11] == 3);
    CHECK(tahq_parse_header(t.b, t.len, &h) == TAHQ_OK && h.version == 1 && t.b[11] == 1);
    const size_t L = g.len;
    uint8_t *w = malloc(L + 1);
    if (!w)
        abort();
    /* version / alloc pairs on the gain message: only (3, 3) and (1, 1) pass
     * the header, (1, 1) as a valid token message of the same layout (§8.2:
     * the same map section); (1, 0) and (1, 2) fail on n_low (§8.1) */
    static const struct {
        uint16_t version;
        uint8_t alloc;
        tahq_status want;
    } va[] = {
        {1, 3, TAHQ_ERR_HEADER},
        {3, 1, TAHQ_ERR_HEADER},
        {3, 0, TAHQ_ERR_HEADER},
        {3, 2, TAHQ_ERR_HEADER},
        {3, 4, TAHQ_ERR_HEADER},
        {1, 4, TAHQ_ERR_HEADER},
        {3, 255, TAHQ_ERR_HEADER},
        {1, 0, TAHQ_ERR_HEADER}, /* n_low 1 with alloc none */
        {1, 2, TAHQ_ERR_HEADER}, /* n_low 1, tile mode wants 5 low(2) = 0 */
        {2, 3, TAHQ_ERR_VERSION},
        {2, 1, TAHQ_ERR_VERSION},
        {0, 3, TAHQ_ERR_VERSION},
        {4, 3, TAHQ_ERR_VERSION},
        {0xFFFF, 3, TAHQ_ERR_VERSION},
        {0x0300, 3, TAHQ_ERR_VERSION},
        {0x0103, 3, TAHQ_ERR_VERSION},
        {1, 1, TAHQ_OK},
        {3, 3, TAHQ_OK},
    };
    for (size_t i = 0; i < sizeof va / sizeof va[0]; i++) {
        char what[96];
        for (int sealed = 0; sealed < 2; sealed++) {
            memcpy(w, g.b, L);
            t_put_le(w + 4, va[i].version, 2);
            w[11] = va[i].alloc;
            if (sealed)
                reseal(w, L);
            snprintf(what, sizeof what, "gain message with version %u alloc %u%s", va[i].version,
                     va[i].alloc, sealed ? " (CRC re-sealed)" : "");
            /* without a re-sealed CRC an edit that passes the header is a CRC error */
            tahq_status want = va[i].want;
            int edited = va[i].version != 3 || va[i].alloc != 3;
            if (want == TAHQ_OK && edited && !sealed)
                want = TAHQ_ERR_CRC;
            expect(w, L, n, want, what);
            if (va[i].want == TAHQ_ERR_VERSION)
                for (size_t l = 8; l < 72; l += 9)
                    expect(w, l, n, TAHQ_ERR_VERSION, what);
        }
    }
    /* the gain message read as a token message decodes to the same values */
    memcpy(w, g.b, L);
    t_put_le(w + 4, 1, 2);
    w[11] = 1;
    reseal(w, L);
    CHECKF(tahq_decode(w, L, y, n) == TAHQ_OK && memcmp(y, yg, sizeof y) == 0,
           "header: gain message as version 1 / token: decoded values differ");
    /* and a token message relabelled gain (version 3, alloc 3) decodes too:
     * the decoder does not recompute the ranking (§8.4) */
    memcpy(w, t.b, t.len);
    t_put_le(w + 4, 3, 2);
    expect(w, t.len, n, TAHQ_ERR_HEADER, "token message with version 3");
    w[11] = 3;
    expect(w, t.len, n, TAHQ_ERR_CRC, "token message as version 3 / gain, CRC not re-sealed");
    reseal(w, t.len);
    CHECKF(tahq_decode(w, t.len, y, n) == TAHQ_OK && memcmp(y, yt, sizeof y) == 0,
           "header: token message as version 3 / gain: decoded values differ");
    e_cases++;
    /* other header fields of the gain message */
    memcpy(w, g.b, L);
    t_put_le(w + 40, 0, 8); /* n_low 0, want B low(S) = 1 */
    expect(w, L, n, TAHQ_ERR_HEADER, "gain message with n_low 0");
    reseal(w, L);
    expect(w, L, n, TAHQ_ERR_HEADER, "gain message with n_low 0 (re-sealed)");
    memcpy(w, g.b, L);
    t_put_le(w + 6, 71, 2);
    expect(w, L, n, TAHQ_ERR_VERSION, "gain message with header_bytes 71");
    for (size_t l = 0; l < 8; l++)
        expect(g.b, l, n, TAHQ_ERR_TRUNCATED, "gain message cut below 8 bytes");
    for (size_t l = 8; l < L; l += 7)
        expect(g.b, l, n, TAHQ_ERR_TRUNCATED, "gain message truncated");
    /* the map counts of §8.4 step 5 apply per sequence */
    memcpy(w, g.b, L);
    w[72] ^= 0x1F; /* 5 map bits: 1 low row becomes 4 */
    reseal(w, L);
    expect(w, L, n, TAHQ_ERR_PAYLOAD, "gain message with 4 low rows in its sequence");
    printf("header: %" PRIu64 " edited messages: version 3 iff alloc 3, version 2 refused, "
           "relabelled messages decode as their layout\n",
           e_cases);
    free(w);
    msg_free(&g);
    msg_free(&t);
}

int main(int argc, char **argv)
{
    double t0 = t_now();
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    part_header();
    part_ties();
    part_range();
    part_map(quick);
    part_optimal(quick);
    char what[160];
    snprintf(what, sizeof what, "gain allocation (SPEC §4.3)%s; %.1f s", quick ? ", quick" : "",
             t_now() - t0);
    return t_finish("test_gain", what);
}
