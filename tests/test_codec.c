/* SPDX-License-Identifier: MIT */
/*
 * test_codec - whole messages: tahq_encode / tahq_decode / tahq_error_bound /
 * tahq_tile_infos / tahq_parse_header against an independent encoder written
 * from SPEC §4, §5, §8, §10 (spec_ref.h), byte for byte.
 *
 * Per case:
 *   - status equal to the reference (ERR_RANGE on metadata overflow, also
 *     found while the gain keys of §4.3 are computed);
 *   - precision map equal to §4.2 with §4.1 entropies, or §4.3 gain keys
 *     for alloc gain (reported separately;
 *     the rest of the message is then checked against a reference built with
 *     the library's own map so that one allocation difference does not hide
 *     everything else);
 *   - message bytes equal to the reference (header, CRC, every section);
 *   - length = 72 + payload_bytes = §8.2 formula recomputed from tile infos;
 *   - n_low = none 0 / token and gain B low(S) / tile rows low(T); per-group
 *     counts; header version 1, 3 for gain (§8.1);
 *   - tile infos (bits, flag, pivot, zero, scale) equal to the reference;
 *   - decoded values bit-exact with the reference decoder;
 *   - tahq_error_bound equal to §6.2/§6.3 (relative 1e-9) and
 *     |x - x̂| <= bound[i] on EVERY element (binary64);
 *   - encode is deterministic (second run with other workspace/output
 *     garbage gives the same bytes).
 */
#include "spec_ref.h"
#include "tutil.h"

static const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};

/* ------------------------------------------------------------------------ */
/* Reference encoder                                                         */
/* ------------------------------------------------------------------------ */
typedef struct ref_msg {
    tahq_status st;
    uint8_t *bytes;
    size_t len;
    uint8_t *map; /* map bits, one byte per unit (0/1) */
    uint64_t map_bits;
    tahq_tile_info *info;
    float *dec;
    double *bound;
} ref_msg;

static void ref_free(ref_msg *m)
{
    free(m->bytes);
    free(m->map);
    free(m->info);
    free(m->dec);
    free(m->bound);
    memset(m, 0, sizeof *m);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* mark the n_low smallest (bits(H), index) of n entropies */
static void select_low(const float *H, uint64_t n, uint64_t n_low, uint8_t *map)
{
    uint64_t *key = malloc(n * sizeof *key);
    if (!key)
        abort();
    for (uint64_t i = 0; i < n; i++)
        key[i] = ((uint64_t)f2u(H[i]) << 32) | i;
    qsort(key, n, sizeof *key, cmp_u64);
    for (uint64_t i = 0; i < n_low; i++)
        map[key[i] & 0xFFFFFFFFu] = 1;
    free(key);
}

/* map_in: NULL = compute §4.2, else use these map bits (one byte per unit) */
static void ref_encode(const tahq_config *cfg, const tahq_shape *sh, const float *x,
                       const uint8_t *map_in, ref_msg *m)
{
    memset(m, 0, sizeof *m);
    const uint32_t G = cfg->tile, k = (uint32_t)spec_log2u(G);
    const uint64_t S = sh->seq_len, rows = (uint64_t)sh->batch * S, C = sh->channels, T = C / G,
                   N = rows * T;
    const uint32_t mb = cfg->meta == TAHQ_META_FP32 ? 4 : 2;
    const int per_row = cfg->alloc == TAHQ_ALLOC_TOKEN || cfg->alloc == TAHQ_ALLOC_GAIN;
    m->map_bits = per_row ? rows : cfg->alloc == TAHQ_ALLOC_TILE ? N : 0;
    m->map = calloc(m->map_bits + 1, 1);
    if (!m->map)
        abort();
    if (map_in) {
        memcpy(m->map, map_in, m->map_bits);
    } else if (cfg->alloc == TAHQ_ALLOC_TOKEN) {
        float *H = malloc(S * sizeof(float));
        for (uint64_t b = 0; b < sh->batch; b++) {
            for (uint64_t s = 0; s < S; s++)
                H[s] = spec_entropy(x + (b * S + s) * C, (uint32_t)T, G);
            select_low(H, S, spec_low(S, cfg->hi_permille), m->map + b * S);
        }
        free(H);
    } else if (cfg->alloc == TAHQ_ALLOC_TILE) {
        float *H = malloc(T * sizeof(float));
        for (uint64_t r = 0; r < rows; r++) {
            for (uint64_t t = 0; t < T; t++)
                H[t] = spec_entropy(x + r * C + t * G, 1, G);
            select_low(H, T, spec_low(T, cfg->hi_permille), m->map + r * T);
        }
        free(H);
    } else if (cfg->alloc == TAHQ_ALLOC_GAIN) {
        tahq_status st = spec_gain_map(cfg, sh, x, m->map, NULL);
        if (st != TAHQ_OK) {
            m->st = st; /* found while the keys are computed (§4.3) */
            return;
        }
    }
    uint64_t n_low = 0;
    for (uint64_t i = 0; i < m->map_bits; i++)
        n_low += m->map[i];

    m->info = calloc(N, sizeof *m->info);
    m->dec = malloc(N * G * sizeof(float));
    m->bound = malloc(N * G * sizeof(double));
    uint8_t *codes = malloc(N * G);
    if (!m->info || !m->dec || !m->bound || !codes)
        abort();
    uint64_t n_flagged = 0, code_bits = 0;
    float v[256], yh[256];
    for (uint64_t t = 0; t < N; t++) {
        uint64_t r = t / T;
        int low = per_row ? m->map[r] : cfg->alloc == TAHQ_ALLOC_TILE ? m->map[t] : 0;
        tahq_tile_info *ti = &m->info[t];
        ti->bits = low ? cfg->lo_bits : cfg->hi_bits;
        memcpy(v, x + t * G, G * sizeof(float));
        uint32_t piv;
        ti->flagged = (uint32_t)spec_gate(v, G, cfg->tau, &piv);
        ti->pivot = ti->flagged ? piv : 0;
        if (ti->flagged)
            spec_forward(v, G, piv);
        tahq_status st = spec_quant(v, G, ti->bits, cfg->meta, cfg->rounding, cfg->seed, t * G,
                                    &ti->zero, &ti->scale, codes + t * G);
        if (st != TAHQ_OK) {
            m->st = st;
            free(codes);
            return;
        }
        n_flagged += ti->flagged;
        code_bits += (uint64_t)G * ti->bits;
        /* reference decode and bound */
        spec_dequant(codes + t * G, G, ti->zero, ti->scale, yh);
        double B = spec_bound_B(ti->zero, ti->scale, ti->bits, cfg->rounding);
        double E = B;
        memcpy(m->dec + t * G, yh, G * sizeof(float));
        if (ti->flagged) {
            E = spec_bound_E(B, yh, G);
            spec_inverse(m->dec + t * G, G, ti->pivot);
        }
        for (uint32_t i = 0; i < G; i++)
            m->bound[t * G + i] = E * (1 + 0x1p-40);
    }
    /* §8.2 layout */
    const uint64_t map_bytes = (m->map_bits + 7) / 8, flag_bytes = (N + 7) / 8;
    const uint64_t zoff = map_bytes + flag_bytes, soff = zoff + N * mb, coff = soff + N * mb;
    const uint64_t poff = coff + code_bits / 8, payload = poff + (n_flagged * k + 7) / 8;
    m->len = 72 + payload;
    m->bytes = calloc(m->len, 1);
    if (!m->bytes)
        abort();
    uint8_t *P = m->bytes + 72;
    for (uint64_t i = 0; i < m->map_bits; i++)
        spec_put_bits(P, i, m->map[i], 1);
    uint64_t cpos = coff * 8, ppos = poff * 8;
    for (uint64_t t = 0; t < N; t++) {
        const tahq_tile_info *ti = &m->info[t];
        spec_put_bits(P + map_bytes, t, ti->flagged, 1);
        uint32_t zb = tahq_meta_bits(cfg->meta, ti->zero),
                 sb = tahq_meta_bits(cfg->meta, ti->scale);
        t_put_le(P + zoff + t * mb, zb, (int)mb);
        t_put_le(P + soff + t * mb, sb, (int)mb);
        for (uint32_t i = 0; i < G; i++) {
            spec_put_bits(P, cpos, codes[t * G + i], ti->bits);
            cpos += ti->bits;
        }
        if (ti->flagged) {
            spec_put_bits(P, ppos, ti->pivot, k);
            ppos += k;
        }
    }
    /* §8.1 header */
    uint8_t *h = m->bytes;
    memcpy(h, "TAHQ", 4);
    t_put_le(h + 4, cfg->alloc == TAHQ_ALLOC_GAIN ? 3 : 1, 2);
    t_put_le(h + 6, 72, 2);
    h[8] = (uint8_t)k;
    h[9] = (uint8_t)cfg->hi_bits;
    h[10] = (uint8_t)cfg->lo_bits;
    h[11] = (uint8_t)cfg->alloc;
    h[12] = (uint8_t)cfg->rounding;
    h[13] = (uint8_t)cfg->meta;
    t_put_le(h + 14, cfg->hi_permille, 2);
    t_put_le(h + 16, f2u(cfg->tau), 4);
    t_put_le(h + 20, sh->batch, 4);
    t_put_le(h + 24, sh->seq_len, 4);
    t_put_le(h + 28, sh->channels, 4);
    t_put_le(h + 32, cfg->seed, 8);
    t_put_le(h + 40, n_low, 8);
    t_put_le(h + 48, n_flagged, 8);
    t_put_le(h + 56, payload, 8);
    t_put_le(h + 64, 0, 4);
    uint32_t crc = spec_crc(0, h, 68);
    crc = spec_crc(crc, P, payload);
    t_put_le(h + 68, crc, 4);
    m->st = TAHQ_OK;
    free(codes);
}

/* ------------------------------------------------------------------------ */
/* Test tensors                                                               */
/* ------------------------------------------------------------------------ */
enum {
    K_GAUSS,
    K_HEAVY,
    K_LLM,
    K_ADV,
    K_SAME_ROWS,
    K_HUGE,
    K_KINDS,
    K_RANK = K_KINDS,
    K_SUBSPREAD
};
static const char *kind_name[K_KINDS + 2] = {"gauss",          "heavy",           "llm",
                                             "adversarial",    "equal-rows",      "huge",
                                             "rank-sensitive", "subnormal-spread"};

static void make_tensor(float *x, const tahq_shape *sh, int kind, trng *r)
{
    const uint64_t S = sh->seq_len, C = sh->channels, rows = (uint64_t)sh->batch * S;
    for (uint64_t row = 0; row < rows; row++)
        for (uint64_t c = 0; c < C; c++) {
            float *p = &x[row * C + c];
            double g = trng_gauss(r);
            switch (kind) {
            case K_GAUSS:
                *p = (float)g;
                break;
            case K_HEAVY:
                *p = (float)(g / (fabs(trng_gauss(r)) + 0.02));
                break;
            case K_LLM: {
                /* outlier channels, massive activations on the first token of
                 * each sequence and on a few others (attention sinks) */
                double v = 0.3 * g;
                if (c % 97 == 13 || c == 5)
                    v *= 30.0;
                if ((row % S == 0 || row % 37 == 11) && (c == 3 || c == C / 2 + 1))
                    v = (trng_next(r) & 1 ? 1 : -1) * (800.0 + 1200.0 * trng_unit(r));
                *p = (float)v;
                break;
            }
            case K_ADV:
                switch (row % 7) {
                case 0:
                    *p = 0.0f;
                    break;
                case 1:
                    *p = 0.1f;
                    break; /* constant, off the fp16/bf16 grid */
                case 2:
                    *p = (c == (row * 7) % C) ? -77.0f : 0.0f;
                    break; /* single spike */
                case 3:
                    *p = trng_float_exp(r, -149, -127);
                    break; /* subnormals */
                case 4:
                    *p = (trng_next(r) & 1) ? 0.0f : -0.0f;
                    break;
                case 5:
                    *p = (float)((int)trng_below(r, 9) - 4) * 0.5f;
                    break; /* ties */
                default:
                    *p = (c % 16 == 0) ? 2.0f : -2.0f;
                    break; /* m1 = m2 */
                }
                break;
            case K_SAME_ROWS:
                *p = row == 0 ? (float)g : x[c];
                break;
            case K_SUBSPREAD:
                /* tiles {0, ..., 0, 382 2^-149}: with b = 8 and fp32 metadata,
                 * s0 = fl(382/255 2^-149) = 2^-149 */
                *p = (c % 8 == 7) ? 382 * 0x1p-149f : 0.0f;
                break;
            case K_RANK:
                /* tokens whose entropies differ only in the last bits and depend
                 * on how the tile sums are associated (§2.5): one large value
                 * and a few values near 2^-24 of it, one per tile */
                if (c == 0)
                    *p = 1.0f + (float)trng_below(r, 8) * 0x1p-23f;
                else if (c % 8 == 0) /* first element of each 8-wide tile */
                    *p = (float)trng_below(r, 4) * 0x1p-24f;
                else
                    *p = 0.0f;
                break;
            default:
                *p = trng_float_exp(r, 40, 63);
                break; /* |x| < 2^64 */
            }
        }
}

/* ------------------------------------------------------------------------ */
/* One case                                                                   */
/* ------------------------------------------------------------------------ */
static uint64_t n_cases, n_ok_cases, n_range_cases, n_elems, n_alloc_diff;
static double worst_ratio;

static const char *section_of(uint64_t off, const ref_msg *m, const tahq_config *cfg, uint64_t N)
{
    if (off < 68)
        return "header";
    if (off < 72)
        return "crc";
    uint64_t p = off - 72, mb = cfg->meta == TAHQ_META_FP32 ? 4 : 2;
    uint64_t a = (m->map_bits + 7) / 8, f = a + (N + 7) / 8;
    if (p < a)
        return "map";
    if (p < f)
        return "flags";
    if (p < f + N * mb)
        return "zero-points";
    if (p < f + 2 * N * mb)
        return "scales";
    return "codes/pivots";
}

/* The precision map (§4.2 with the §4.1 entropies or §4.3 gains) and its
 * per-group counts; where the map differs, ref is made again on the
 * library's map so that the remaining checks compare the rest. */
static void check_allocation(const tahq_config *cfg, const tahq_shape *sh, const float *x,
                             const uint8_t *out, ref_msg *ref, const char *desc)
{
    const uint64_t S = sh->seq_len, T = sh->channels / cfg->tile;
    const uint8_t *P = out + 72;
    uint8_t *libmap = calloc(ref->map_bits + 1, 1);
    int same = 1;
    for (uint64_t i = 0; i < ref->map_bits; i++) {
        libmap[i] = (uint8_t)spec_get_bits(P, i, 1);
        same &= libmap[i] == ref->map[i];
    }
    if (!CHECKF(same, "%s: precision map differs from §4.2 with §4.1 entropies / §4.3 gains",
                desc)) {
        n_alloc_diff++;
        ref_free(ref);
        ref_encode(cfg, sh, x, libmap, ref);
    }
    /* per-group counts (§4.2) */
    uint64_t grp = cfg->alloc == TAHQ_ALLOC_TILE ? T : S, want = spec_low(grp, cfg->hi_permille);
    int counts = 1;
    for (uint64_t g0 = 0; g0 < ref->map_bits; g0 += grp) {
        uint64_t c = 0;
        for (uint64_t i = 0; i < grp; i++)
            c += libmap[g0 + i];
        counts &= c == want;
    }
    CHECKF(counts, "%s: a group does not have exactly low() = %" PRIu64 " low units", desc, want);
    free(libmap);
}

/* The tile infos against the reference's, the §8.2 size formula
 * recomputed from them, and the low units seen through the tile bits. */
static void check_tile_infos(const tahq_config *cfg, const tahq_shape *sh, const uint8_t *out,
                             size_t len, const tahq_header *hp, const ref_msg *ref,
                             tahq_tile_info *info, const char *desc)
{
    const uint32_t G = cfg->tile;
    const uint64_t S = sh->seq_len, rows = (uint64_t)sh->batch * S, T = sh->channels / G,
                   N = rows * T;
    const tahq_header h = *hp;
    if (CHECKF(tahq_tile_infos(out, len, info, N) == TAHQ_OK, "%s: tile_infos", desc)) {
        uint64_t nf = 0, code_bytes = 0;
        int infos_ok = 1, bits_ok = 1;
        for (uint64_t t = 0; t < N; t++) {
            nf += info[t].flagged;
            code_bytes += (uint64_t)G * info[t].bits / 8;
            const tahq_tile_info *e = &ref->info[t];
            infos_ok &= info[t].bits == e->bits && info[t].flagged == e->flagged &&
                        (!e->flagged || info[t].pivot == e->pivot) &&
                        f2u(info[t].zero) == f2u(e->zero) && f2u(info[t].scale) == f2u(e->scale);
            bits_ok &= info[t].bits == cfg->hi_bits || info[t].bits == cfg->lo_bits;
        }
        CHECKF(infos_ok && bits_ok, "%s: tile infos differ from the reference", desc);
        uint64_t mb = cfg->meta == TAHQ_META_FP32 ? 4 : 2;
        uint64_t formula = (ref->map_bits + 7) / 8 + (N + 7) / 8 + 2 * N * mb + code_bytes +
                           (nf * (uint64_t)spec_log2u(G) + 7) / 8;
        CHECKF(formula == h.payload_bytes && nf == h.n_flagged,
               "%s: §8.2 size %" PRIu64 " vs payload_bytes %" PRIu64, desc, formula,
               h.payload_bytes);
        /* low units seen through the tile bits (distinguishable if lo < hi) */
        if (cfg->lo_bits < cfg->hi_bits &&
            (cfg->alloc == TAHQ_ALLOC_TOKEN || cfg->alloc == TAHQ_ALLOC_GAIN)) {
            int ok = 1;
            for (uint64_t b = 0; b < sh->batch; b++) {
                uint64_t c = 0;
                for (uint64_t s = 0; s < S; s++) {
                    uint64_t r0 = (b * S + s) * T;
                    int lowrow = info[r0].bits == cfg->lo_bits;
                    for (uint64_t j = 0; j < T; j++)
                        ok &= (info[r0 + j].bits == cfg->lo_bits) == lowrow;
                    c += (uint64_t)lowrow;
                }
                ok &= c == spec_low(S, cfg->hi_permille);
            }
            CHECKF(ok, "%s: token/gain mode: not exactly low(S) low tokens per sequence", desc);
        }
        if (cfg->lo_bits < cfg->hi_bits && cfg->alloc == TAHQ_ALLOC_TILE) {
            int ok = 1;
            for (uint64_t r = 0; r < rows; r++) {
                uint64_t c = 0;
                for (uint64_t j = 0; j < T; j++)
                    c += info[r * T + j].bits == cfg->lo_bits;
                ok &= c == spec_low(T, cfg->hi_permille);
            }
            CHECKF(ok, "%s: tile mode: not exactly low(T) low tiles per token", desc);
        }
        if (cfg->alloc == TAHQ_ALLOC_NONE) {
            int ok = 1;
            for (uint64_t t = 0; t < N; t++)
                ok &= info[t].bits == cfg->hi_bits;
            CHECKF(ok, "%s: alloc none: a tile without hi_bits", desc);
        }
    }
}

/* The header of the library's message against the configuration. */
static void check_header(const tahq_config *cfg, const tahq_shape *sh, const uint8_t *out,
                         size_t len, const ref_msg *ref, tahq_tile_info *info, const char *desc)
{
    const uint32_t G = cfg->tile;
    const uint64_t S = sh->seq_len, rows = (uint64_t)sh->batch * S, T = sh->channels / G;
    tahq_header h;
    if (CHECKF(tahq_parse_header(out, len, &h) == TAHQ_OK, "%s: parse_header", desc)) {
        CHECK(h.version == (cfg->alloc == TAHQ_ALLOC_GAIN ? 3 : 1) && h.config.tile == G &&
              h.config.hi_bits == cfg->hi_bits && h.config.lo_bits == cfg->lo_bits &&
              h.config.hi_permille == cfg->hi_permille && h.config.alloc == cfg->alloc &&
              f2u(h.config.tau) == f2u(cfg->tau) && h.config.rounding == cfg->rounding &&
              h.config.seed == cfg->seed && h.config.meta == cfg->meta &&
              h.shape.batch == sh->batch && h.shape.seq_len == sh->seq_len &&
              h.shape.channels == sh->channels);
        CHECKF(len == 72 + h.payload_bytes && t_get_le(out + 56, 8) == h.payload_bytes,
               "%s: len %zu, payload_bytes %" PRIu64, desc, len, h.payload_bytes);
        uint64_t want_low = cfg->alloc == TAHQ_ALLOC_TOKEN || cfg->alloc == TAHQ_ALLOC_GAIN
                                ? sh->batch * spec_low(S, cfg->hi_permille)
                            : cfg->alloc == TAHQ_ALLOC_TILE ? rows * spec_low(T, cfg->hi_permille)
                                                            : 0;
        CHECKF(h.n_low == want_low, "%s: n_low %" PRIu64 ", want %" PRIu64, desc, h.n_low,
               want_low);
        CHECK(h.crc == (uint32_t)t_get_le(out + 68, 4));
        check_tile_infos(cfg, sh, out, len, &h, ref, info, desc);
    }
}

/* decode: bit-exact, and the bound on every element */
static void check_decode(const float *x, const uint8_t *out, size_t len, uint64_t n, float *dec,
                         double *bnd, const ref_msg *ref, const char *desc)
{
    if (CHECKF(tahq_decode(out, len, dec, n) == TAHQ_OK, "%s: decode", desc)) {
        CHECKF(memcmp(dec, ref->dec, n * sizeof(float)) == 0, "%s: decoded values differ from §6.1",
               desc);
        if (CHECKF(tahq_error_bound(out, len, bnd, n) == TAHQ_OK, "%s: error_bound", desc)) {
            uint64_t bad = 0, first = 0, agree = 0;
            for (uint64_t i = 0; i < n; i++) {
                double e = fabs((double)x[i] - (double)dec[i]);
                if (!(e <= bnd[i])) {
                    if (!bad)
                        first = i;
                    bad++;
                }
                if (bnd[i] > 0 && e / bnd[i] > worst_ratio)
                    worst_ratio = e / bnd[i];
                agree += fabs(bnd[i] - ref->bound[i]) <= 1e-9 * ref->bound[i];
            }
            n_elems += n;
            CHECKF(bad == 0,
                   "%s: |x - x̂| > bound on %" PRIu64 " elements (first %" PRIu64
                   ": x %a x̂ %a bound %.3g)",
                   desc, bad, first, (double)x[first], (double)dec[first], bnd[first]);
            CHECKF(agree == n, "%s: error_bound differs from §6.2/§6.3 on %" PRIu64 " elements",
                   desc, n - agree);
        }
    }
}

static void run_case(const tahq_config *cfg, const tahq_shape *sh, const float *x, const char *what)
{
    const uint32_t G = cfg->tile;
    const uint64_t S = sh->seq_len, rows = (uint64_t)sh->batch * S, T = sh->channels / G,
                   N = rows * T, n = N * G;
    char desc[256];
    snprintf(desc, sizeof desc,
             "%s [%ux%ux%u] G=%u hi=%u lo=%u r=%u alloc=%d tau=%g rnd=%d meta=%d seed=%" PRIu64,
             what, sh->batch, sh->seq_len, sh->channels, G, cfg->hi_bits, cfg->lo_bits,
             cfg->hi_permille, cfg->alloc, (double)cfg->tau, cfg->rounding, cfg->meta, cfg->seed);
    n_cases++;
    size_t cap = 0, wsz = 0;
    if (!CHECKF(tahq_encode_bound(cfg, sh, &cap) == TAHQ_OK &&
                    tahq_encode_workspace_size(cfg, sh, &wsz) == TAHQ_OK,
                "%s: size queries", desc))
        return;
    uint8_t *out = malloc(cap + 16), *out2 = malloc(cap + 16);
    void *ws = malloc(wsz + 8), *ws2 = malloc(wsz + 8);
    float *dec = malloc(n * sizeof(float));
    double *bnd = malloc(n * sizeof(double));
    tahq_tile_info *info = malloc(N * sizeof *info);
    if (!out || !out2 || !ws || !ws2 || !dec || !bnd || !info)
        abort();
    memset(out, 0xA5, cap + 16);
    memset(ws, 0x5A, wsz + 8);
    size_t len = 12345;
    tahq_status st = tahq_encode(cfg, sh, x, ws, wsz, out, cap, &len);

    ref_msg ref;
    ref_encode(cfg, sh, x, NULL, &ref);
    if (st != TAHQ_OK || ref.st != TAHQ_OK) {
        CHECKF(st == ref.st, "%s: status %d, reference %d", desc, st, ref.st);
        if (st != TAHQ_OK) {
            int zero = 1;
            for (int i = 0; i < 72; i++)
                zero &= out[i] == 0;
            CHECKF(len == 0 && zero, "%s: error %d but out_len %zu / header not zeroed", desc, st,
                   len);
        }
        n_range_cases += st == TAHQ_ERR_RANGE;
        goto done;
    }
    n_ok_cases++;
    CHECKF(len <= cap, "%s: len %zu > bound %zu", desc, len, cap);
    check_allocation(cfg, sh, x, out, &ref, desc);
    /* bytes */
    if (!CHECKF(len == ref.len && memcmp(out, ref.bytes, len) == 0,
                "%s: message differs from the reference (len %zu vs %zu)", desc, len, ref.len)) {
        size_t m = len < ref.len ? len : ref.len, i = 0;
        while (i < m && out[i] == ref.bytes[i])
            i++;
        fprintf(stderr, "    first difference at byte %zu (%s): %02x vs %02x\n", i,
                section_of(i, &ref, cfg, N), i < len ? out[i] : 0, i < ref.len ? ref.bytes[i] : 0);
    }
    /* header */
    check_header(cfg, sh, out, len, &ref, info, desc);
    check_decode(x, out, len, n, dec, bnd, &ref, desc);
    /* determinism */
    memset(out2, 0x3C, cap + 16);
    memset(ws2, 0xC3, wsz + 8);
    size_t len2 = 0;
    st = tahq_encode(cfg, sh, x, ws2, wsz, out2, cap, &len2);
    CHECKF(st == TAHQ_OK && len2 == len && memcmp(out, out2, len) == 0,
           "%s: encode not deterministic", desc);
done:
    ref_free(&ref);
    free(out);
    free(out2);
    free(ws);
    free(ws2);
    free(dec);
    free(bnd);
    free(info);
}

static void config(tahq_config *c, uint32_t G, uint32_t hi, uint32_t lo, uint32_t r, int alloc,
                   float tau, int rnd, int meta, uint64_t seed)
{
    tahq_config_default(c);
    c->tile = G;
    c->hi_bits = hi;
    c->lo_bits = lo;
    c->hi_permille = r;
    c->alloc = (tahq_alloc)alloc;
    c->tau = tau;
    c->rounding = (tahq_rounding)rnd;
    c->meta = (tahq_meta)meta;
    c->seed = seed;
}

/* all tokens (tiles) of equal entropy, or tokens of equal gain (identical
 * rows, nearest-even rounding): the LOWEST indices get lo bits */
static void tie_rule(void)
{
    tahq_config c;
    for (int alloc = 1; alloc <= 3; alloc++) {
        config(&c, 16, 4, 2, 800, alloc, 2.0f, 0, 0, 0);
        tahq_shape sh = {2, 10, 16 * 10};
        size_t n = 2 * 10 * 160, cap, wsz, len;
        float *x = malloc(n * sizeof(float));
        trng r = {17};
        for (size_t i = 0; i < 16; i++)
            x[i] = (float)trng_gauss(&r);
        for (size_t i = 16; i < n; i++)
            x[i] = x[i % 16]; /* every tile, every row the same */
        tahq_encode_bound(&c, &sh, &cap);
        tahq_encode_workspace_size(&c, &sh, &wsz);
        uint8_t *out = malloc(cap);
        void *ws = malloc(wsz + 8);
        if (!CHECK(tahq_encode(&c, &sh, x, ws, wsz, out, cap, &len) == TAHQ_OK))
            return;
        /* low(10) at r = 800 is 2 */
        uint64_t units = alloc == 2 ? 200 : 20, per = 10;
        int ok = 1;
        for (uint64_t i = 0; i < units; i++)
            ok &= spec_get_bits(out + 72, i, 1) == ((i % per) < 2);
        CHECKF(ok, "tie rule (alloc %d): the lowest indices must get the low bits", alloc);
        free(x);
        free(out);
        free(ws);
    }
}

int main(int argc, char **argv)
{
    double t0 = t_now();
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    trng r = {20240601};
    tie_rule();

    /* product of the configuration space on small shapes */
    /* (hi, lo) bits: together every width 1..8, so the tile packers are
     * compared with the bit-by-bit reference writer at each of them */
    static const uint32_t hilo[][2] = {{4, 3}, {8, 1}, {1, 1}, {5, 2}, {7, 6}};
    static const uint32_t perm[] = {800, 0, 1000, 500, 333};
    static const float taus[] = {0.0f, 2.0f, INFINITY};
    static const uint32_t shp[][3] = {{1, 1, 1}, {1, 5, 3}, {2, 7, 2}, {3, 4, 5}, {2, 3, 25}};
    uint64_t ci = 0;
    for (size_t gi = 0; gi < 6; gi++)
        for (size_t hl = 0; hl < sizeof hilo / sizeof hilo[0]; hl++)
            for (int alloc = 0; alloc < 4; alloc++)
                for (int ti = 0; ti < 3; ti++)
                    for (int rnd = 0; rnd < 2; rnd++)
                        for (int meta = 0; meta < 3; meta++, ci++) {
                            tahq_config c;
                            /* permille, shape and tensor kind drawn at random so
                             * that they are not tied to the loop variables */
                            config(&c, Gs[gi], hilo[hl][0], hilo[hl][1], perm[trng_below(&r, 5)],
                                   alloc, taus[ti], rnd, meta, trng_next(&r));
                            for (int rep = 0; rep < (quick ? 1 : 2); rep++) {
                                const uint32_t *s = shp[trng_below(&r, 5)];
                                tahq_shape sh = {s[0], s[1], s[2] * Gs[gi]};
                                size_t n = (size_t)s[0] * s[1] * sh.channels;
                                float *x = malloc(n * sizeof(float));
                                int kind = (int)trng_below(&r, K_KINDS);
                                make_tensor(x, &sh, kind, &r);
                                run_case(&c, &sh, x, kind_name[kind]);
                                free(x);
                            }
                        }
    /* large shapes: 1x1024x1600 (G=64, T=25) and B>1 */
    struct {
        uint32_t B, S, C, G, hi, lo, r;
        int alloc, rnd, meta, kind;
        float tau;
    } big[] = {
        {1, 1024, 1600, 64, 4, 3, 800, 1, 0, 0, K_LLM, 2.0f},
        {1, 1024, 1600, 64, 4, 3, 800, 2, 1, 1, K_LLM, 2.0f},
        {1, 1024, 1600, 32, 8, 2, 500, 1, 1, 2, K_HEAVY, 0.0f},
        {1, 1024, 1600, 64, 4, 3, 800, 0, 0, 0, K_GAUSS, INFINITY},
        {4, 256, 512, 128, 4, 3, 800, 1, 0, 0, K_LLM, 2.0f},
        {3, 100, 2048, 256, 3, 2, 700, 2, 1, 1, K_ADV, 2.0f},
        /* fp32 metadata and tiles of subnormal spread (see test_quant): the
         * scale search of §5.3 step 3 must step past up(fl(w/L)) */
        {1, 3, 64, 8, 8, 8, 1000, 0, 0, 2, K_SUBSPREAD, INFINITY},
        /* allocation decided by last-bit entropy differences (T = 4, 25) */
        {1, 256, 32, 8, 4, 2, 500, 1, 0, 0, K_RANK, INFINITY},
        {2, 200, 200, 8, 4, 2, 500, 1, 0, 2, K_RANK, INFINITY},
        /* gain allocation (§4.3) on the large shapes */
        {1, 1024, 1600, 64, 4, 3, 800, 3, 0, 0, K_LLM, 2.0f},
        {4, 256, 512, 128, 4, 3, 800, 3, 1, 1, K_LLM, 2.0f},
        {3, 100, 2048, 256, 3, 2, 700, 3, 1, 2, K_ADV, 0.0f},
        {2, 200, 200, 8, 4, 2, 500, 3, 0, 0, K_RANK, INFINITY},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0] && !quick; i++) {
        tahq_config c;
        config(&c, big[i].G, big[i].hi, big[i].lo, big[i].r, big[i].alloc, big[i].tau, big[i].rnd,
               big[i].meta, 0xC0FFEE + i);
        tahq_shape sh = {big[i].B, big[i].S, big[i].C};
        size_t n = (size_t)sh.batch * sh.seq_len * sh.channels;
        float *x = malloc(n * sizeof(float));
        make_tensor(x, &sh, big[i].kind, &r);
        run_case(&c, &sh, x, kind_name[big[i].kind]);
        free(x);
    }
    char what[300];
    snprintf(what, sizeof what,
             "%" PRIu64 " encode cases (%" PRIu64 " ok, %" PRIu64 " ERR_RANGE) byte-exact vs SPEC "
             "encoder, %" PRIu64 " elements within bound (worst err/bound %.3f), %" PRIu64
             " allocation diffs, tie rule; %.1f s",
             n_cases, n_ok_cases, n_range_cases, n_elems, worst_ratio, n_alloc_diff, t_now() - t0);
    return t_finish("test_codec", what);
}
