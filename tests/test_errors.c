/* SPDX-License-Identifier: MIT */
/*
 * test_errors - every error path of SPEC §8.4 / §9 and tahq.h.
 *
 * Encoder: NULL pointers, each configuration field out of range, shapes,
 * non-finite / out-of-range inputs (index order), metadata overflow, small
 * output buffer / workspace, and the tahq.h contract on error: *out_len = 0,
 * out untouched for every error found up front, the first 72 bytes zeroed
 * after a metadata overflow.
 * Decoder: every truncation of a valid message, magic, version, header
 * fields, sizes, trailing bytes, every single-bit flip, and payload
 * corruptions with a recomputed CRC, for a token message (version 1) and a
 * gain message (alloc 3, version 3; §8.1: alloc 3 iff version 3). On every
 * decoder error the output buffer must be untouched (poison pattern
 * unchanged).
 */
#include <float.h>

#include "spec_ref.h"
#include "tutil.h"

static const char *const names[TAHQ_STATUS_COUNT] = {
    "ok",         "err_null",   "err_config",    "err_shape",  "err_nonfinite",
    "err_range",  "err_buffer", "err_truncated", "err_magic",  "err_version",
    "err_header", "err_size",   "err_crc",       "err_payload"};

static const char *sname(int st)
{
    return (st >= 0 && st < TAHQ_STATUS_COUNT) ? names[st] : "?";
}

/* ------------------------------------------------------------------------ */
/* Encoder helpers                                                            */
/* ------------------------------------------------------------------------ */
static uint64_t n_enc_err, n_contract;
/* set by the callers whose expected error is a metadata overflow found tile
 * by tile (the only error that may write to out) */
static int g_meta_overflow;

/* Encode into a poisoned buffer of capacity cap (or the bound if cap = -1);
 * check the status and, on error, the tahq.h contract: *out_len = 0; errors
 * found up front (config, shape, buffers, input values) leave out untouched;
 * a metadata overflow zeroes the first 72 bytes. */
static tahq_status enc(const tahq_config *cfg, const tahq_shape *sh, const float *x, long cap_in,
                       tahq_status want, const char *what)
{
    size_t bound = 0, wsz = 0;
    tahq_config okc;
    tahq_shape oks = {1, 1, 256};
    tahq_config_default(&okc);
    if (tahq_encode_bound(cfg, sh, &bound) != TAHQ_OK)
        tahq_encode_bound(&okc, &oks, &bound);
    if (tahq_encode_workspace_size(cfg, sh, &wsz) != TAHQ_OK)
        wsz = 4096;
    if (bound > (1u << 26))
        bound = 1u << 26; /* huge shapes: never reached */
    size_t cap = cap_in < 0 ? bound : (size_t)cap_in;
    uint8_t *out = malloc(cap + 80);
    void *ws = malloc(wsz + 64);
    if (!out || !ws)
        abort();
    memset(out, 0xAB, cap + 80);
    size_t len = 999;
    tahq_status st = tahq_encode(cfg, sh, x, ws, wsz, out, cap, &len);
    CHECKF(st == want, "encode %s: %s, want %s", what, sname(st), sname(want));
    if (st != TAHQ_OK) {
        n_enc_err++;
        CHECKF(len == 0, "encode %s: error but *out_len = %zu", what, len);
        int ok = 1;
        if (g_meta_overflow && st == TAHQ_ERR_RANGE) {
            for (size_t i = 0; i < 72 && i < cap; i++)
                ok &= out[i] == 0;
            CHECKF(ok, "encode %s: metadata overflow, first 72 bytes of out not zeroed", what);
        } else {
            for (size_t i = 0; i < cap + 80; i++)
                ok &= out[i] == 0xAB;
            CHECKF(ok, "encode %s (%s): up-front error but out was written", what, sname(st));
        }
        n_contract += !ok;
    }
    free(out);
    free(ws);
    return st;
}

static void config_errors(void)
{
    tahq_config base;
    tahq_config_default(&base);
    tahq_shape sh = {1, 4, 256};
    float x[1024];
    for (int i = 0; i < 1024; i++)
        x[i] = (float)(i % 17) - 8.0f;
    CHECK(tahq_check_config(&base) == TAHQ_OK);
    enc(&base, &sh, x, -1, TAHQ_OK, "default config");
    /* valid edges */
    struct {
        const char *what;
        tahq_config c;
    } ok[16];
    int nok = 0;
#define OKC(field, val)                   \
    do {                                  \
        ok[nok].what = #field " = " #val; \
        ok[nok].c = base;                 \
        ok[nok].c.field = val;            \
        nok++;                            \
    } while (0)
    OKC(tile, 8);
    OKC(tile, 256);
    OKC(tau, INFINITY);
    OKC(tau, 0.0f);
    OKC(tau, 0x1p-149f);
    OKC(hi_permille, 0);
    OKC(hi_permille, 1000);
    OKC(lo_bits, 1);
    OKC(seed, UINT64_MAX);
    OKC(rounding, TAHQ_ROUND_STOCHASTIC);
    OKC(meta, TAHQ_META_FP32);
    OKC(alloc, TAHQ_ALLOC_NONE);
    OKC(alloc, TAHQ_ALLOC_TILE);
    OKC(alloc, TAHQ_ALLOC_GAIN);
    for (int i = 0; i < nok; i++) {
        CHECKF(tahq_check_config(&ok[i].c) == TAHQ_OK, "check_config(%s)", ok[i].what);
        enc(&ok[i].c, &sh, x, -1, TAHQ_OK, ok[i].what);
    }
    tahq_config c = base;
    c.hi_bits = c.lo_bits = 8;
    enc(&c, &sh, x, -1, TAHQ_OK, "hi = lo = 8");
    c.hi_bits = c.lo_bits = 1;
    enc(&c, &sh, x, -1, TAHQ_OK, "hi = lo = 1");

    /* each field out of range */
    struct bad {
        const char *what;
        tahq_config c;
    } bad[40];
    int nb = 0;
#define BADC(field, val)                  \
    do {                                  \
        bad[nb].what = #field " = " #val; \
        bad[nb].c = base;                 \
        bad[nb].c.field = val;            \
        nb++;                             \
    } while (0)
    BADC(tile, 0);
    BADC(tile, 4);
    BADC(tile, 7);
    BADC(tile, 12);
    BADC(tile, 24);
    BADC(tile, 512);
    BADC(tile, 0x80000000u);
    BADC(hi_bits, 0);
    BADC(hi_bits, 9);
    BADC(lo_bits, 0);
    BADC(lo_bits, 5); /* > hi_bits = 4 */
    BADC(hi_permille, 1001);
    BADC(hi_permille, 0xFFFFFFFFu);
    BADC(alloc, (tahq_alloc)4);
    BADC(alloc, (tahq_alloc)-1);
    BADC(tau, NAN);
    BADC(tau, -NAN);
    BADC(tau, -1.0f);
    BADC(tau, -0.0f);
    BADC(tau, -INFINITY);
    BADC(tau, -0x1p-149f);
    BADC(rounding, (tahq_rounding)2);
    BADC(rounding, (tahq_rounding)-1);
    BADC(meta, (tahq_meta)3);
    BADC(meta, (tahq_meta)-1);
    /* unused fields are still range-checked (§3.3) */
    bad[nb].what = "alloc none, lo_bits 0";
    bad[nb].c = base;
    bad[nb].c.alloc = TAHQ_ALLOC_NONE;
    bad[nb].c.lo_bits = 0;
    nb++;
    bad[nb].what = "alloc none, hi_permille 1001";
    bad[nb].c = base;
    bad[nb].c.alloc = TAHQ_ALLOC_NONE;
    bad[nb].c.hi_permille = 1001;
    nb++;
    bad[nb].what = "alloc gain, lo_bits 5 > hi_bits 4";
    bad[nb].c = base;
    bad[nb].c.alloc = TAHQ_ALLOC_GAIN;
    bad[nb].c.lo_bits = 5;
    nb++;
    bad[nb].what = "alloc gain, hi_permille 1001";
    bad[nb].c = base;
    bad[nb].c.alloc = TAHQ_ALLOC_GAIN;
    bad[nb].c.hi_permille = 1001;
    nb++;
    for (int i = 0; i < nb; i++) {
        CHECKF(tahq_check_config(&bad[i].c) == TAHQ_ERR_CONFIG, "check_config(%s) = %s",
               bad[i].what, sname(tahq_check_config(&bad[i].c)));
        enc(&bad[i].c, &sh, x, -1, TAHQ_ERR_CONFIG, bad[i].what);
        size_t b;
        CHECKF(tahq_encode_bound(&bad[i].c, &sh, &b) == TAHQ_ERR_CONFIG, "encode_bound(%s)",
               bad[i].what);
        CHECKF(tahq_encode_workspace_size(&bad[i].c, &sh, &b) == TAHQ_ERR_CONFIG,
               "workspace_size(%s)", bad[i].what);
    }
    /* order: CONFIG before SHAPE before BUFFER before input values */
    tahq_shape badsh = {0, 4, 256};
    float nanx[1024];
    for (int i = 0; i < 1024; i++)
        nanx[i] = NAN;
    enc(&bad[1].c, &badsh, nanx, 0, TAHQ_ERR_CONFIG, "bad config + bad shape + no buffer + NaN");
    enc(&base, &badsh, nanx, 0, TAHQ_ERR_SHAPE, "bad shape + no buffer + NaN");
    enc(&base, &sh, nanx, 0, TAHQ_ERR_BUFFER, "no buffer + NaN");
    enc(&base, &sh, nanx, -1, TAHQ_ERR_NONFINITE, "NaN");
}

static void null_errors(void)
{
    tahq_config c;
    tahq_config_default(&c);
    tahq_shape sh = {1, 2, 64};
    float x[128] = {0};
    size_t bound, wsz, len;
    CHECK(tahq_encode_bound(&c, &sh, &bound) == TAHQ_OK);
    CHECK(tahq_encode_workspace_size(&c, &sh, &wsz) == TAHQ_OK);
    uint8_t *out = malloc(bound);
    void *ws = malloc(wsz + 8);
    CHECK(tahq_encode(NULL, &sh, x, ws, wsz, out, bound, &len) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, NULL, x, ws, wsz, out, bound, &len) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, &sh, NULL, ws, wsz, out, bound, &len) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, &sh, x, ws, wsz, NULL, bound, &len) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, &sh, x, ws, wsz, out, bound, NULL) == TAHQ_ERR_NULL);
    if (wsz > 0) {
        tahq_status st = tahq_encode(&c, &sh, x, NULL, wsz, out, bound, &len);
        CHECKF(st == TAHQ_ERR_NULL, "workspace NULL with size %zu > 0: %s", wsz, sname(st));
    }
    CHECK(tahq_check_config(NULL) == TAHQ_ERR_NULL);
    CHECK(tahq_check_shape(&c, NULL) == TAHQ_ERR_NULL);
    CHECK(tahq_check_shape(NULL, &sh) == TAHQ_ERR_NULL);
    CHECK(tahq_encode_bound(&c, &sh, NULL) == TAHQ_ERR_NULL);
    CHECK(tahq_encode_bound(NULL, &sh, &bound) == TAHQ_ERR_NULL);
    CHECK(tahq_encode_workspace_size(&c, &sh, NULL) == TAHQ_ERR_NULL);
    CHECK(tahq_encode_workspace_size(&c, NULL, &wsz) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, &sh, x, ws, wsz, out, bound, &len) == TAHQ_OK);
    float dec[128];
    double bnd[128];
    tahq_header h;
    tahq_tile_info info[2];
    CHECK(tahq_decode(NULL, len, dec, 128) == TAHQ_ERR_NULL);
    CHECK(tahq_decode(out, len, NULL, 128) == TAHQ_ERR_NULL);
    CHECK(tahq_parse_header(NULL, len, &h) == TAHQ_ERR_NULL);
    CHECK(tahq_parse_header(out, len, NULL) == TAHQ_ERR_NULL);
    CHECK(tahq_error_bound(NULL, len, bnd, 128) == TAHQ_ERR_NULL);
    CHECK(tahq_error_bound(out, len, NULL, 128) == TAHQ_ERR_NULL);
    CHECK(tahq_tile_infos(NULL, len, info, 2) == TAHQ_ERR_NULL);
    CHECK(tahq_tile_infos(out, len, NULL, 2) == TAHQ_ERR_NULL);
    /* gain allocation ranks with the same workspace (keys of a sequence) */
    c.alloc = TAHQ_ALLOC_GAIN;
    CHECK(tahq_encode_workspace_size(&c, &sh, &wsz) == TAHQ_OK && wsz > 0);
    CHECK(tahq_encode(&c, &sh, x, NULL, wsz, out, bound, &len) == TAHQ_ERR_NULL);
    CHECK(tahq_encode(&c, &sh, x, ws, wsz, out, bound, &len) == TAHQ_OK);
    c.alloc = TAHQ_ALLOC_TOKEN;
    /* alloc none needs no workspace: NULL and 0 are fine */
    tahq_config pl;
    tahq_config_plain(&pl, 64, 4);
    CHECK(tahq_encode_workspace_size(&pl, &sh, &wsz) == TAHQ_OK);
    if (wsz == 0)
        CHECK(tahq_encode(&pl, &sh, x, NULL, 0, out, bound, &len) == TAHQ_OK);
    /* tahq_config_plain is §7.1: alloc none, tau = +inf, hi = lo = bits */
    CHECK(pl.tile == 64 && pl.hi_bits == 4 && pl.lo_bits == 4 && pl.alloc == TAHQ_ALLOC_NONE &&
          pl.tau == INFINITY && tahq_check_config(&pl) == TAHQ_OK);
    tahq_config_default(&c); /* paper operating point */
    CHECK(c.tile == 64 && c.hi_bits == 4 && c.lo_bits == 3 && c.hi_permille == 800 &&
          c.alloc == TAHQ_ALLOC_TOKEN && c.tau == 2.0f && c.rounding == TAHQ_ROUND_NEAREST_EVEN &&
          c.seed == 0 && c.meta == TAHQ_META_FP16);
    free(out);
    free(ws);
}

static void shape_errors(void)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = 8;
    float x[64] = {0};
    const struct {
        uint32_t B, S, C;
        tahq_status want;
    } cases[] = {
        {0, 4, 64, TAHQ_ERR_SHAPE},
        {1, 0, 64, TAHQ_ERR_SHAPE},
        {1, 4, 0, TAHQ_ERR_SHAPE},
        {1, 4, 4, TAHQ_ERR_SHAPE}, /* C < G */
        {1, 4, 9, TAHQ_ERR_SHAPE}, /* not a multiple */
        {1, 4, 12, TAHQ_ERR_SHAPE},
        {1u << 16, 1u << 16, 512, TAHQ_ERR_SHAPE},               /* 2^41 elements */
        {1u << 16, 1u << 16, 256, TAHQ_OK},                      /* exactly 2^40 */
        {1, 0xFFFFFFFFu, 256, TAHQ_OK},                          /* 2^40 - 256 */
        {1, 0xFFFFFFFFu, 264, TAHQ_ERR_SHAPE},                   /* just above 2^40 */
        {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFF8u, TAHQ_ERR_SHAPE}, /* products overflow 64 bits */
        {2, 3, 8, TAHQ_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tahq_shape sh = {cases[i].B, cases[i].S, cases[i].C};
        tahq_status st = tahq_check_shape(&c, &sh);
        CHECKF(st == cases[i].want, "check_shape(%u, %u, %u) = %s, want %s", sh.batch, sh.seq_len,
               sh.channels, sname(st), sname(cases[i].want));
        if (cases[i].want != TAHQ_OK) {
            char what[80];
            snprintf(what, sizeof what, "shape %ux%ux%u", sh.batch, sh.seq_len, sh.channels);
            enc(&c, &sh, x, 4096, TAHQ_ERR_SHAPE, what); /* x is never read */
            size_t b;
            CHECK(tahq_encode_bound(&c, &sh, &b) == TAHQ_ERR_SHAPE);
        }
    }
}

static void value_errors(void)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = 16;
    tahq_shape sh = {2, 3, 32}; /* 192 elements */
    float x[192];
    trng r = {6};
    for (int i = 0; i < 192; i++)
        x[i] = (float)trng_gauss(&r);
    enc(&c, &sh, x, -1, TAHQ_OK, "finite");
    const float bads[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 4; b++)
        for (int pos = 0; pos < 192; pos += 37) {
            float y[192];
            memcpy(y, x, sizeof y);
            y[pos] = bads[b];
            enc(&c, &sh, y, -1, TAHQ_ERR_NONFINITE, "non-finite value");
        }
    float y[192];
    memcpy(y, x, sizeof y);
    y[191] = 0x1p64f;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "2^64 at the last index");
    y[191] = -0x1p64f;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "-2^64");
    y[191] = 0x1.fffffep63f;
    c.meta = TAHQ_META_BF16;
    enc(&c, &sh, y, -1, TAHQ_OK, "largest value below 2^64 (bf16 meta)");
    c.meta = TAHQ_META_FP16;
    y[191] = FLT_MAX;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "FLT_MAX");
    /* index order: the first offending element decides */
    memcpy(y, x, sizeof y);
    y[3] = 0x1p64f;
    y[5] = NAN;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "2^64 before NaN");
    y[3] = INFINITY;
    y[5] = 0x1p64f;
    enc(&c, &sh, y, -1, TAHQ_ERR_NONFINITE, "inf before 2^64");
    /* metadata overflow (fp16): z = down(-70000) = -inf -> RANGE (after the
     * input checks; the header must be zeroed since tiles were written) */
    memcpy(y, x, sizeof y);
    y[100] = -70000.0f;
    c.tau = INFINITY; /* no transform: the tile minimum itself is the zero-point */
    g_meta_overflow = 1;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "fp16 zero-point overflow");
    c.meta = TAHQ_META_BF16;
    enc(&c, &sh, y, -1, TAHQ_OK, "same with bf16 metadata");
    c.meta = TAHQ_META_FP16;
    c.hi_bits = c.lo_bits = 1;
    c.tau = INFINITY;
    memcpy(y, x, sizeof y);
    y[100] = 65000.0f;
    y[101] = -1000.0f; /* w = 66000 -> s = up(66000) = inf */
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "fp16 scale overflow");
    c.alloc = TAHQ_ALLOC_GAIN;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "fp16 scale overflow, alloc gain, low(3) = 0 (tile loop)");
    c.hi_permille = 500;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "fp16 scale overflow, alloc gain, low(3) = 1 (ranking)");
    /* gain (§4.3): an overflow at lo_bits only. 2/1 bits, tile 6 spans
     * -50000 .. 50000: s >= 100016 at 1 bit (above the fp16 maximum), 33339
     * at 2 bits. Keys are computed when low(S) > 0: ERR_RANGE, header zeroed */
    c.hi_bits = 2;
    c.lo_bits = 1;
    memcpy(y, x, sizeof y);
    y[100] = -50000.0f;
    y[101] = 50000.0f;
    for (uint32_t r = 0; r <= 1000; r += 250) {
        char what[120];
        c.hi_permille = r;
        const int ranks = tahq_low_count(3, r) > 0;
        snprintf(what, sizeof what,
                 "fp16 overflow at lo_bits only, alloc gain, r = %u (low(3) = %u)", (unsigned)r,
                 (unsigned)tahq_low_count(3, r));
        enc(&c, &sh, y, -1, ranks ? TAHQ_ERR_RANGE : TAHQ_OK, what);
    }
    c.hi_permille = 500;
    c.alloc = TAHQ_ALLOC_NONE;
    enc(&c, &sh, y, -1, TAHQ_OK, "the same at 2 bits, alloc none");
    c.alloc = TAHQ_ALLOC_GAIN;
    g_meta_overflow = 0;
    /* the input scan precedes the ranking: a NaN after the overflowing tile
     * is NONFINITE, and out is untouched */
    y[150] = NAN;
    enc(&c, &sh, y, -1, TAHQ_ERR_NONFINITE, "overflow at lo_bits and a NaN, alloc gain");
    y[150] = -0x1p64f;
    enc(&c, &sh, y, -1, TAHQ_ERR_RANGE, "overflow at lo_bits and -2^64, alloc gain (input scan)");
}

static void buffer_errors(tahq_alloc alloc)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = 16;
    c.alloc = alloc;
    tahq_shape sh = {2, 5, 48};
    float x[480];
    trng r = {7};
    for (int i = 0; i < 480; i++)
        x[i] = (float)trng_gauss(&r);
    size_t bound, wsz, len;
    CHECK(tahq_encode_bound(&c, &sh, &bound) == TAHQ_OK);
    CHECK(tahq_encode_workspace_size(&c, &sh, &wsz) == TAHQ_OK);
    /* the bound: every tile flagged */
    c.tau = 0.0f;
    uint8_t *out = malloc(bound + 64);
    uint64_t *ws = malloc(wsz + 64);
    if (!out || !ws)
        abort();
    CHECK(tahq_encode(&c, &sh, x, ws, wsz, out, bound, &len) == TAHQ_OK && len == bound);
    enc(&c, &sh, x, 0, TAHQ_ERR_BUFFER, "capacity 0");
    enc(&c, &sh, x, 71, TAHQ_ERR_BUFFER, "capacity 71");
    enc(&c, &sh, x, (long)bound - 1, TAHQ_ERR_BUFFER, "capacity bound - 1 = len - 1");
    enc(&c, &sh, x, (long)bound, TAHQ_OK, "capacity = bound");
    if (wsz > 0) {
        tahq_status st = tahq_encode(&c, &sh, x, ws, wsz - 1, out, bound, &len);
        CHECKF(st == TAHQ_ERR_BUFFER && len == 0, "workspace one byte short: %s", sname(st));
        st = tahq_encode(&c, &sh, x, ws, 0, out, bound, &len);
        CHECKF(st == TAHQ_ERR_BUFFER, "workspace size 0: %s", sname(st));
        /* tahq.h documents no alignment requirement for the workspace */
        uint8_t *wb = malloc(wsz + 64);
        st = tahq_encode(&c, &sh, x, wb + 1, wsz, out, bound, &len);
        CHECKF(st == TAHQ_OK,
               "workspace at an odd address (size %zu): %s (tahq.h documents no "
               "alignment requirement)",
               wsz, sname(st));
        free(wb);
    }
    free(out);
    free(ws);
}

/* ------------------------------------------------------------------------ */
/* Decoder                                                                    */
/* ------------------------------------------------------------------------ */
static uint64_t n_dec, n_flip, flip_hist[TAHQ_STATUS_COUNT];
static size_t g_count; /* elements of the test message */

/* Every field of two headers equal (tau by its bits); padding is not compared. */
static int header_fields_equal(const tahq_header *a, const tahq_header *b)
{
    const tahq_config *x = &a->config, *y = &b->config;
    return a->version == b->version && x->tile == y->tile && x->hi_bits == y->hi_bits &&
           x->lo_bits == y->lo_bits && x->hi_permille == y->hi_permille && x->alloc == y->alloc &&
           memcmp(&x->tau, &y->tau, sizeof x->tau) == 0 && x->rounding == y->rounding &&
           x->seed == y->seed && x->meta == y->meta && a->shape.batch == b->shape.batch &&
           a->shape.seq_len == b->shape.seq_len && a->shape.channels == b->shape.channels &&
           a->n_low == b->n_low && a->n_flagged == b->n_flagged &&
           a->payload_bytes == b->payload_bytes && a->crc == b->crc;
}

/* Decode with poisoned outputs; check status (want < 0: any error) and
 * that nothing was written on error. Also tahq_error_bound, tahq_tile_infos
 * and, for errors before the payload step, tahq_parse_header (whose header
 * must keep the caller's contents). */
static tahq_status dec(const uint8_t *msg, size_t len, int want, const char *what)
{
    float *out = malloc(g_count * sizeof(float));
    double *bnd = malloc(g_count * sizeof(double));
    tahq_tile_info info[64];
    if (!out || !bnd)
        abort();
    memset(out, 0x7F, g_count * sizeof(float));
    memset(bnd, 0x7F, g_count * sizeof(double));
    memset(info, 0x7F, sizeof info);
    tahq_status st = tahq_decode(msg, len, out, g_count);
    n_dec++;
    if (want >= 0)
        CHECKF((int)st == want, "decode %s: %s, want %s", what, sname(st), sname(want));
    else
        CHECKF(st != TAHQ_OK, "decode %s: accepted", what);
    if (st != TAHQ_OK) {
        int untouched = 1;
        for (size_t i = 0; i < g_count * sizeof(float); i++)
            untouched &= ((uint8_t *)out)[i] == 0x7F;
        CHECKF(untouched, "decode %s: output written on error %s", what, sname(st));
        tahq_status sb = tahq_error_bound(msg, len, bnd, g_count);
        int bu = 1;
        for (size_t i = 0; i < g_count * sizeof(double); i++)
            bu &= ((uint8_t *)bnd)[i] == 0x7F;
        CHECKF(sb == st && bu, "error_bound %s: %s vs decode %s (or bound written)", what,
               sname(sb), sname(st));
        if (g_count % 16 == 0) { /* a count mismatch is decode's alone */
            tahq_status si = tahq_tile_infos(msg, len, info, g_count / 16);
            CHECKF(si == st, "tile_infos %s: %s vs decode %s", what, sname(si), sname(st));
        }
        if (st != TAHQ_ERR_PAYLOAD && g_count == 160) {
            tahq_header h, poison;
            memset(&h, 0x7F, sizeof h);
            memset(&poison, 0x7F, sizeof poison);
            tahq_status sh = tahq_parse_header(msg, len, &h);
            CHECKF(sh == st, "parse_header %s: %s vs decode %s", what, sname(sh), sname(st));
            CHECKF(header_fields_equal(&h, &poison), "parse_header %s: header changed on error %s",
                   what, sname(sh));
        }
    }
    free(out);
    free(bnd);
    return st;
}

static void reseal(uint8_t *m, size_t len)
{
    uint32_t crc = spec_crc(0, m, 68);
    crc = spec_crc(crc, m + 72, len - 72);
    t_put_le(m + 68, crc, 4);
}

/* The message decoder_errors alters, a working copy and its layout. */
typedef struct test_msg {
    uint8_t *m, *w;          /* the valid message, a copy to alter (16 bytes more) */
    size_t n;                /* its length */
    uint64_t nf;             /* flagged tiles */
    size_t zoff, soff, poff; /* zero-points, scales, pivots */
    tahq_alloc alloc;
    int gain;
} test_msg;

/* a small message: G = 16, 1 x 5 x 32 (5 rows, T = 2, N = 10 tiles), token
 * or gain allocation r = 800 (low(5) = 1), tau = 2, fp16 metadata. Map: 5
 * bits (3 padding bits), flags: 10 bits (6 padding bits). The two have
 * the same layout (§8.2); the gain message carries version 3. 0, or -1
 * when it cannot be encoded. */
static int make_test_msg(tahq_alloc alloc, test_msg *t)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = 16;
    c.alloc = alloc;
    const int gain = alloc == TAHQ_ALLOC_GAIN;
    tahq_shape sh = {1, 5, 32};
    g_count = 160;
    float x[160];
    trng r = {99};
    for (int i = 0; i < 160; i++)
        x[i] = (float)trng_gauss(&r);
    x[3] = 40.0f;   /* tile 0 flagged */
    x[70] = -25.0f; /* tile 4 flagged */
    size_t cap, wsz, n;
    tahq_encode_bound(&c, &sh, &cap);
    tahq_encode_workspace_size(&c, &sh, &wsz);
    uint8_t *m = malloc(cap + 16), *w = malloc(cap + 16);
    void *ws = malloc(wsz + 8);
    /* want an odd number of flagged tiles, so that the pivot section (4 bits
     * each) has padding bits: add spikes to further tiles until it is odd */
    for (int tt = 9; tt >= 5; tt--) {
        if (!CHECK(tahq_encode(&c, &sh, x, ws, wsz, m, cap, &n) == TAHQ_OK)) {
            free(m);
            free(w);
            free(ws);
            return -1;
        }
        if (t_get_le(m + 48, 8) % 2 == 1)
            break;
        x[tt * 16 + 5] = 30.0f;
    }
    free(ws);
    const uint64_t nf = t_get_le(m + 48, 8);
    CHECKF(t_get_le(m + 4, 2) == (gain ? 3u : 1u) && m[11] == alloc,
           "test message: version %u alloc %u", (unsigned)t_get_le(m + 4, 2), m[11]);
    CHECKF(nf >= 1 && (nf * 4) % 8 != 0,
           "test message: want an odd number of flagged tiles (%" PRIu64 ")", nf);
    /* layout of the payload (§8.2) */
    const size_t map_b = 1, flag_b = 2;
    t->m = m;
    t->w = w;
    t->n = n;
    t->nf = nf;
    t->zoff = 72 + map_b + flag_b;
    t->soff = t->zoff + 20;
    t->poff = n - (nf * 4 + 7) / 8;
    t->alloc = alloc;
    t->gain = gain;
    return 0;
}

/* Truncation, magic and version (§8.4 step 1). */
static void framing_errors(const test_msg *t)
{
    const uint8_t *m = t->m;
    uint8_t *w = t->w;
    const size_t n = t->n;
    /* every truncation: magic and version are fine, payload_bytes agrees, so
     * every prefix is TRUNCATED (§8.4) */
    for (size_t L = 0; L < n; L++)
        dec(m, L, TAHQ_ERR_TRUNCATED, "truncated");
    /* bad magic: TRUNCATED below 4 bytes, then MAGIC */
    memcpy(w, m, n);
    w[0] = 'X';
    for (size_t L = 0; L <= n; L++)
        dec(w, L, L < 4 ? TAHQ_ERR_TRUNCATED : TAHQ_ERR_MAGIC, "bad magic");
    memcpy(w, m, n);
    w[3] = 'q';
    dec(w, n, TAHQ_ERR_MAGIC, "magic TAHq");
    /* version 2 / header_bytes 64: TRUNCATED below 8, then VERSION */
    memcpy(w, m, n);
    t_put_le(w + 4, 2, 2);
    for (size_t L = 0; L <= n; L++)
        dec(w, L, L < 8 ? TAHQ_ERR_TRUNCATED : TAHQ_ERR_VERSION, "version 2");
    t_put_le(w + 4, 0, 2);
    dec(w, n, TAHQ_ERR_VERSION, "version 0");
    memcpy(w, m, n);
    t_put_le(w + 6, 64, 2);
    for (size_t L = 8; L <= n; L += 9)
        dec(w, L, TAHQ_ERR_VERSION, "header_bytes 64");
    t_put_le(w + 6, 73, 2);
    dec(w, n, TAHQ_ERR_VERSION, "header_bytes 73");
}

/* Header fields out of range -> HEADER (before size and CRC; checked with
 * and without a recomputed CRC, and with the full and an over-long length). */
static void header_errors(const test_msg *t)
{
    const uint8_t *m = t->m;
    uint8_t *w = t->w;
    const size_t n = t->n;
    const int gain = t->gain;
    struct {
        int off, size;
        uint64_t val;
        const char *what;
    } hb[] = {
        {8, 1, 2, "k = 2"},
        {8, 1, 9, "k = 9"},
        {8, 1, 0, "k = 0"},
        {8, 1, 255, "k = 255"},
        {9, 1, 0, "hi_bits 0"},
        {9, 1, 9, "hi_bits 9"},
        {10, 1, 0, "lo_bits 0"},
        {10, 1, 5, "lo_bits > hi"},
        /* §8.1: alloc 3 if and only if version 3 */
        {11, 1, gain ? 1 : 3,
         gain ? "alloc 1 in a version 3 message" : "alloc 3 in a version 1 message"},
        {11, 1, gain ? 2 : 4, gain ? "alloc 2 in a version 3 message" : "alloc 4"},
        {11, 1, gain ? 0 : 255, gain ? "alloc 0 in a version 3 message" : "alloc 255"},
        {11, 1, 4, "alloc 4"},
        {4, 2, gain ? 1 : 3, gain ? "version 1 with alloc 3" : "version 3 with alloc 1"},
        {12, 1, 2, "rounding 2"},
        {13, 1, 3, "meta 3"},
        {14, 2, 1001, "permille 1001"},
        {14, 2, 0xFFFF, "permille 65535"},
        {16, 4, 0x7FC00000, "tau NaN"},
        {16, 4, 0x7F800001, "tau sNaN"},
        {16, 4, 0xBF800000, "tau -1"},
        {16, 4, 0x80000000, "tau -0"},
        {16, 4, 0xFF800000, "tau -inf"},
        {20, 4, 0, "B 0"},
        {24, 4, 0, "S 0"},
        {28, 4, 0, "C 0"},
        {28, 4, 8, "C < G"},
        {28, 4, 40, "C not a multiple of G"},
        {20, 4, 1u << 16, "B S C > 2^40 (B)"},
        {24, 4, 0xFFFFFFFFu, "B S C > 2^40 (S)"},
        {40, 8, 0, "n_low 0 (want 1)"},
        {40, 8, 2, "n_low 2"},
        {40, 8, UINT64_MAX, "n_low max"},
        {48, 8, 11, "n_flagged > N"},
        {48, 8, UINT64_MAX, "n_flagged max"},
        {64, 1, 1, "reserved byte 64"},
        {65, 1, 0x80, "reserved byte 65"},
        {66, 1, 1, "reserved byte 66"},
        {67, 1, 0xFF, "reserved byte 67"},
    };
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) {
        memcpy(w, m, n);
        t_put_le(w + hb[i].off, hb[i].val, hb[i].size);
        if (hb[i].off == 20 && hb[i].val == (1u << 16))
            t_put_le(w + 24, 1u << 16, 4), t_put_le(w + 28, 512, 4);
        dec(w, n, TAHQ_ERR_HEADER, hb[i].what);
        reseal(w, n);
        dec(w, n, TAHQ_ERR_HEADER, hb[i].what);
        dec(w, 72, TAHQ_ERR_HEADER, hb[i].what); /* header check precedes the length check */
    }
}

/* Valid header fields that change the payload size -> SIZE; a valid header
 * of the same size with the CRC not updated -> CRC; every single-bit flip
 * some error. */
static void size_crc_errors(const test_msg *t)
{
    const uint8_t *m = t->m;
    uint8_t *w = t->w;
    const size_t n = t->n;
    memcpy(w, m, n);
    w[9] = 5; /* hi_bits 4 -> 5: more code bytes */
    dec(w, n, TAHQ_ERR_SIZE, "hi_bits 5 (size changes)");
    memcpy(w, m, n);
    w[13] = 2; /* fp32 metadata */
    dec(w, n, TAHQ_ERR_SIZE, "meta fp32 (size changes)");
    memcpy(w, m, n);
    t_put_le(w + 56, t_get_le(m + 56, 8) + 1, 8);
    dec(w, n, TAHQ_ERR_SIZE, "payload_bytes + 1");
    dec(w, n + 1, TAHQ_ERR_SIZE, "payload_bytes + 1 with one more byte");
    t_put_le(w + 56, t_get_le(m + 56, 8) - 1, 8);
    dec(w, n, TAHQ_ERR_SIZE, "payload_bytes - 1");
    t_put_le(w + 56, UINT64_MAX, 8);
    dec(w, n, TAHQ_ERR_SIZE, "payload_bytes 2^64 - 1");
    memcpy(w, m, n);
    w[n] = 0;
    dec(w, n + 1, TAHQ_ERR_SIZE, "one trailing byte");
    /* valid header, same size, CRC not updated -> CRC */
    memcpy(w, m, n);
    w[32] ^= 1; /* seed */
    dec(w, n, TAHQ_ERR_CRC, "seed changed");
    memcpy(w, m, n);
    t_put_le(w + 16, 0x40400000, 4); /* tau 3 */
    dec(w, n, TAHQ_ERR_CRC, "tau changed");

    /* every single-bit flip: some error (CRC or earlier), never accepted */
    for (size_t byte = 0; byte < n; byte++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(w, m, n);
            w[byte] ^= (uint8_t)(1u << bit);
            tahq_status st = dec(w, n, -1, "single bit flip");
            flip_hist[st < TAHQ_STATUS_COUNT ? st : 0]++;
            n_flip++;
        }
}

/* Payload corruptions (§8.4 step 5) with a recomputed CRC -> PAYLOAD
 * (without -> CRC), and a count that does not match. */
static void payload_errors(const test_msg *t)
{
    const uint8_t *m = t->m;
    uint8_t *w = t->w;
    const size_t n = t->n, zoff = t->zoff, soff = t->soff, poff = t->poff;
    const uint64_t nf = t->nf;
    struct {
        size_t off;
        int size;
        uint64_t val; /* xor mask if size < 0 (one byte) */
        const char *what;
    } pc[] = {
        {72, -1, 0x01, "map bit 0 flipped (count)"},
        {72, -1, 0x20, "map padding bit 5"},
        {72, -1, 0x80, "map padding bit 7"},
        {73, -1, 0x02, "flag bit 1 flipped (popcount)"},
        {74, -1, 0x04, "flag padding bit 10"},
        {74, -1, 0x80, "flag padding bit 15"},
        {zoff + 2, 2, 0x7E00, "zero-point NaN"},
        {zoff + 4, 2, 0x7C00, "zero-point +inf"},
        {zoff + 6, 2, 0xFC00, "zero-point -inf"},
        {soff + 0, 2, 0x7E00, "scale NaN"},
        {soff + 2, 2, 0x7C00, "scale +inf"},
        {soff + 4, 2, 0xBC00, "scale -1"},
        {soff + 6, 2, 0x8000, "scale -0"},
        {soff + 8, 2, 0x8001, "scale negative subnormal"},
        {n - 1, -1, 0x80, "pivot padding bit"},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        memcpy(w, m, n);
        if (pc[i].size < 0)
            w[pc[i].off] ^= (uint8_t)pc[i].val;
        else
            t_put_le(w + pc[i].off, pc[i].val, pc[i].size);
        if (memcmp(w, m, n) == 0)
            continue; /* bit already set: nothing to test */
        dec(w, n, TAHQ_ERR_CRC, pc[i].what);
        reseal(w, n);
        dec(w, n, TAHQ_ERR_PAYLOAD, pc[i].what);
    }
    CHECK(poff < n);
    /* n_flagged in the header one higher, size unchanged ((nf+1)*4 bits fit
     * the same bytes when nf is odd), CRC recomputed: header and size are
     * valid, the flag popcount is not -> PAYLOAD */
    memcpy(w, m, n);
    t_put_le(w + 48, nf + 1, 8);
    reseal(w, n);
    dec(w, n, TAHQ_ERR_PAYLOAD, "n_flagged + 1 (same size)");
    /* a zero-point of -0 is rejected: §8.4 step 5 (encoders write +0, §5.3) */
    memcpy(w, m, n);
    t_put_le(w + zoff + 2, 0x8000, 2);
    dec(w, n, TAHQ_ERR_CRC, "zero-point -0");
    reseal(w, n);
    dec(w, n, TAHQ_ERR_PAYLOAD, "zero-point -0 (§8.4: not -0)");
    memcpy(w, m, n);
    t_put_le(w + zoff + 2, 0x0000, 2);
    if (memcmp(w, m, n) != 0) {
        reseal(w, n);
        dec(w, n, TAHQ_OK, "zero-point +0 (valid)");
    }
    /* count mismatch: an error, nothing written */
    g_count = 159;
    dec(m, n, -1, "count 159 for 160 elements");
    g_count = 161;
    dec(m, n, -1, "count 161 for 160 elements");
    g_count = 160;
    dec(m, n, TAHQ_OK, "valid message again");
}

static void decoder_errors(tahq_alloc alloc)
{
    test_msg t;
    if (make_test_msg(alloc, &t) != 0)
        return;
    dec(t.m, t.n, TAHQ_OK, "valid message");
    framing_errors(&t);
    header_errors(&t);
    size_crc_errors(&t);
    payload_errors(&t);
    free(t.m);
    free(t.w);
}

static void status_texts(void)
{
    for (int i = 0; i < TAHQ_STATUS_COUNT; i++) {
        const char *t = tahq_strerror(i), *nm = tahq_status_name(i);
        CHECKF(t && nm, "status %d: NULL text/name", i);
        if (!t || !nm)
            continue;
        CHECKF(strcmp(nm, names[i]) == 0, "status_name(%d) = '%s', §9 says '%s'", i, nm, names[i]);
        CHECKF(t[0] != 0, "strerror(%d) empty", i);
        for (int j = 0; j < i; j++) {
            CHECKF(strcmp(t, tahq_strerror(j)) != 0, "strerror(%d) == strerror(%d)", i, j);
            CHECKF(strcmp(nm, tahq_status_name(j)) != 0, "status_name(%d) == status_name(%d)", i,
                   j);
        }
    }
    const int unknown[] = {-1, 14, 1000, -2147483647 - 1};
    for (int i = 0; i < 4; i++)
        CHECKF(tahq_strerror(unknown[i]) && tahq_status_name(unknown[i]), "unknown status %d",
               unknown[i]);
}

int main(void)
{
    status_texts();
    null_errors();
    config_errors();
    shape_errors();
    value_errors();
    buffer_errors(TAHQ_ALLOC_TOKEN);
    buffer_errors(TAHQ_ALLOC_GAIN);
    decoder_errors(TAHQ_ALLOC_TOKEN);
    decoder_errors(TAHQ_ALLOC_GAIN);
    char hist[200] = "";
    for (int i = 1; i < TAHQ_STATUS_COUNT; i++)
        if (flip_hist[i]) {
            char b[40];
            snprintf(b, sizeof b, " %s:%" PRIu64, names[i] + 4, flip_hist[i]);
            strcat(hist, b);
        }
    char what[400];
    snprintf(what, sizeof what,
             "%" PRIu64 " encoder error cases (%" PRIu64 " breaking the out contract), %" PRIu64
             " decoder cases, %" PRIu64 " single-bit flips all rejected (%s)",
             n_enc_err, n_contract, n_dec, n_flip, hist);
    return t_finish("test_errors", what);
}
