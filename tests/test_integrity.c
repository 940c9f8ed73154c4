/* SPDX-License-Identifier: MIT */
/*
 * test_integrity.c - corruption of whole messages (SPEC §2.6, §8.4) and
 * size arithmetic at the 2^40-element limit (SPEC §3.1).
 *
 *   test_integrity flips   DIR  every single bit of each message -> an error
 *   test_integrity trunc   DIR  every truncation (and extensions) -> TRUNCATED/SIZE
 *   test_integrity random  DIR  random multi-bit damage and bursts: detection rate
 *   test_integrity sizes        shapes at and beyond 2^40 elements, 64-bit wrap
 *
 * DIR is golden/v1/expected. Gain-allocation messages (alloc 3, version 3,
 * SPEC §4.3) are encoded here and damaged in the same ways. The messages are
 * copied into buffers of exactly their length, so that a sanitizer build
 * catches any read past the end. On every failed decode the output buffer
 * must be untouched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

/* Small and medium golden messages: every gate/alloc/meta/rounding kind. */
static const char *const k_messages[] = {
    "edge-fp16-max-b4.bin", "tau-0-g008.bin",       "edge-all-zero-tau0.bin", "stoch-seed1-b1.bin",
    "meta-bf16-tiny.bin",   "meta-fp32-offset.bin", "random-000.bin",         "bits-5-2-token.bin",
    "alloc-tile-r0800.bin", "alloc-none-r0200.bin", "llm-1x16x512-bf16.bin",  "sweep-g256-b7.bin",
};
#define N_MESSAGES (sizeof k_messages / sizeof k_messages[0])

/* Gain-allocation messages encoded by the test itself: G, hi, lo, r, tau,
 * rounding, meta, B, S, C. */
static const struct gain_msg {
    const char *name;
    uint32_t G, hi, lo, r;
    float tau;
    tahq_rounding rnd;
    tahq_meta meta;
    uint32_t B, S, C;
} k_gain[] = {
    {"gain-g16-4-3-fp16", 16, 4, 3, 800, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16, 2, 10, 64},
    {"gain-g64-8-2-bf16-stoch", 64, 8, 2, 500, 0.0f, TAHQ_ROUND_STOCHASTIC, TAHQ_META_BF16, 1, 16,
     256},
    {"gain-g8-3-3-fp32", 8, 3, 3, 700, INFINITY, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP32, 3, 7, 24},
    {"gain-g256-4-1-r0", 256, 4, 1, 0, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16, 1, 3, 512},
};
#define N_GAIN (sizeof k_gain / sizeof k_gain[0])

typedef struct msgbuf {
    const char *name;
    uint8_t *bytes;
    size_t len;
    uint64_t count; /* elements */
    float *out;     /* count values, sentinel-filled */
} msgbuf;

static const uint32_t k_sentinel = 0x7FC0BEEFu; /* a NaN no decoder writes */

static int load(const char *dir, const char *name, msgbuf *m)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    m->name = name;
    m->len = (size_t)n;
    m->bytes = malloc(m->len);
    if (!m->bytes || fread(m->bytes, 1, m->len, f) != m->len) {
        fclose(f);
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    fclose(f);
    tahq_header h;
    if (tahq_parse_header(m->bytes, m->len, &h) != TAHQ_OK) {
        fprintf(stderr, "%s: not a valid message\n", path);
        return -1;
    }
    m->count = (uint64_t)h.shape.batch * h.shape.seq_len * h.shape.channels;
    m->out = malloc((size_t)m->count * sizeof(float));
    if (!m->out)
        return -1;
    if (tahq_decode(m->bytes, m->len, m->out, (size_t)m->count) != TAHQ_OK) {
        fprintf(stderr, "%s: does not decode\n", path);
        return -1;
    }
    return 0;
}

/* Encode gain message k into m (exact-length copy) and decode it once. */
static int make_gain(size_t k, msgbuf *m)
{
    const struct gain_msg *g = &k_gain[k];
    tahq_config c;
    tahq_config_default(&c);
    c.tile = g->G;
    c.hi_bits = g->hi;
    c.lo_bits = g->lo;
    c.hi_permille = g->r;
    c.alloc = TAHQ_ALLOC_GAIN;
    c.tau = g->tau;
    c.rounding = g->rnd;
    c.meta = g->meta;
    c.seed = 0x5EED0000u + k;
    tahq_shape sh = {g->B, g->S, g->C};
    m->name = g->name;
    m->count = (uint64_t)g->B * g->S * g->C;
    float *x = malloc((size_t)m->count * sizeof(float));
    m->out = malloc((size_t)m->count * sizeof(float));
    size_t cap = 0, wsz = 0, len = 0;
    if (!x || !m->out || tahq_encode_bound(&c, &sh, &cap) != TAHQ_OK ||
        tahq_encode_workspace_size(&c, &sh, &wsz) != TAHQ_OK) {
        free(x);
        return -1;
    }
    trng r = {0xD1CE + k};
    for (uint64_t i = 0; i < m->count; i++) {
        x[i] = (float)(trng_gauss(&r) * (1.0 + (double)(i / g->C % 5)));
        if (i % 97 == 5)
            x[i] *= 40.0f; /* outliers: some tiles flagged */
    }
    uint8_t *buf = malloc(cap);
    void *ws = malloc(wsz + 8);
    tahq_status st = buf && ws ? tahq_encode(&c, &sh, x, ws, wsz, buf, cap, &len) : TAHQ_ERR_NULL;
    free(x);
    free(ws);
    tahq_header h;
    if (st != TAHQ_OK || tahq_parse_header(buf, len, &h) != TAHQ_OK ||
        h.version != TAHQ_GAIN_VERSION || h.config.alloc != TAHQ_ALLOC_GAIN) {
        fprintf(stderr, "%s: encode %d, not a valid gain message\n", g->name, (int)st);
        free(buf);
        return -1;
    }
    m->len = len;
    m->bytes = malloc(len);
    if (!m->bytes) {
        free(buf);
        return -1;
    }
    memcpy(m->bytes, buf, len);
    free(buf);
    if (tahq_decode(m->bytes, m->len, m->out, (size_t)m->count) != TAHQ_OK) {
        fprintf(stderr, "%s: does not decode\n", g->name);
        return -1;
    }
    return 0;
}

static void fill_sentinel(float *out, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        out[i] = u2f(k_sentinel);
}

static int untouched(const float *out, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (f2u(out[i]) != k_sentinel)
            return 0;
    return 1;
}

/* Decode a damaged copy of exactly len bytes; returns the status. */
static tahq_status decode_copy(const uint8_t *bytes, size_t len, msgbuf *m)
{
    uint8_t *copy = malloc(len ? len : 1u);
    if (!copy)
        abort();
    memcpy(copy, bytes, len);
    fill_sentinel(m->out, m->count);
    tahq_status st = tahq_decode(copy, len, m->out, (size_t)m->count);
    if (st != TAHQ_OK)
        CHECK_QUIET(untouched(m->out, m->count), "%s: output written on error %d", m->name,
                    (int)st);
    free(copy);
    return st;
}

/* ---- every single-bit flip ------------------------------------------------ */
static void part_flips(msgbuf *ms, size_t n)
{
    uint64_t total = 0, detected = 0;
    uint64_t by_status[TAHQ_STATUS_COUNT] = {0};
    for (size_t k = 0; k < n; k++) {
        msgbuf *m = &ms[k];
        uint8_t *d = malloc(m->len);
        if (!d)
            abort();
        for (uint64_t bit = 0; bit < (uint64_t)m->len * 8u; bit++) {
            memcpy(d, m->bytes, m->len);
            d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            fill_sentinel(m->out, m->count);
            tahq_status st = tahq_decode(d, m->len, m->out, (size_t)m->count);
            total++;
            if (st != TAHQ_OK) {
                detected++;
                if ((int)st < TAHQ_STATUS_COUNT)
                    by_status[st]++;
                CHECK_QUIET(untouched(m->out, m->count), "%s bit %" PRIu64 ": output written",
                            m->name, bit);
            }
            CHECK_QUIET(st != TAHQ_OK, "%s: flip of bit %" PRIu64 " decodes", m->name, bit);
        }
        free(d);
    }
    printf("flips: %" PRIu64 " single-bit flips in %zu messages, %" PRIu64 " detected (%.6f%%):",
           total, n, detected, 100.0 * (double)detected / (double)total);
    for (int s = 1; s < TAHQ_STATUS_COUNT; s++)
        if (by_status[s])
            printf(" %s %" PRIu64, tahq_status_name(s), by_status[s]);
    printf("\n");
}

/* ---- truncation and extension ------------------------------------------------ */
static void part_trunc(msgbuf *ms, size_t n)
{
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++) {
        msgbuf *m = &ms[k];
        for (size_t len = 0; len < m->len; len++) {
            tahq_status st = decode_copy(m->bytes, len, m);
            total++;
            CHECK_QUIET(st == TAHQ_ERR_TRUNCATED, "%s cut to %zu bytes: status %d", m->name, len,
                        (int)st);
            /* the header parser, error bound and tile infos agree */
            tahq_header h;
            CHECK_QUIET(tahq_parse_header(m->bytes, len, &h) == TAHQ_ERR_TRUNCATED,
                        "%s cut to %zu: parse_header", m->name, len);
        }
        /* one to 64 extra bytes: SIZE */
        uint8_t *ext = calloc(m->len + 64u, 1);
        if (!ext)
            abort();
        memcpy(ext, m->bytes, m->len);
        for (size_t extra = 1; extra <= 64; extra++) {
            tahq_status st = decode_copy(ext, m->len + extra, m);
            total++;
            CHECK_QUIET(st == TAHQ_ERR_SIZE, "%s + %zu bytes: status %d", m->name, extra, (int)st);
        }
        free(ext);
        /* the intact message still decodes from an exact-size copy */
        CHECK(decode_copy(m->bytes, m->len, m) == TAHQ_OK);
    }
    printf("trunc: %" PRIu64 " truncated or extended messages, all rejected cleanly\n", total);
}

/* ---- random multi-bit damage and bursts ------------------------------------------ */
static void part_random(msgbuf *ms, size_t n, uint64_t trials)
{
    static const unsigned k_bits[] = {2, 3, 4, 5, 6, 8, 16, 64};
    trng r = {UINT64_C(0x7A4D51C0FFEE)};
    printf("random: %" PRIu64 " trials per message and error weight\n", trials);
    uint64_t all_trials = 0, all_undetected = 0;
    for (size_t w = 0; w < sizeof k_bits / sizeof k_bits[0]; w++) {
        unsigned nb = k_bits[w];
        uint64_t tot = 0, undetected = 0;
        for (size_t k = 0; k < n; k++) {
            msgbuf *m = &ms[k];
            uint64_t nbits = (uint64_t)m->len * 8u;
            if (nbits < nb)
                continue;
            uint8_t *d = malloc(m->len);
            if (!d)
                abort();
            for (uint64_t t = 0; t < trials; t++) {
                memcpy(d, m->bytes, m->len);
                uint64_t pos[64];
                for (unsigned i = 0; i < nb; i++) {
                    int fresh;
                    do { /* distinct positions: exactly nb bits flipped */
                        pos[i] = trng_below(&r, nbits);
                        fresh = 1;
                        for (unsigned j = 0; j < i; j++)
                            if (pos[j] == pos[i])
                                fresh = 0;
                    } while (!fresh);
                    d[pos[i] / 8] ^= (uint8_t)(1u << (pos[i] % 8));
                }
                tot++;
                if (tahq_decode(d, m->len, m->out, (size_t)m->count) == TAHQ_OK)
                    undetected++;
            }
            free(d);
        }
        printf("random: %2u-bit errors: %" PRIu64 " trials, %" PRIu64
               " undetected, detection rate %.9f\n",
               nb, tot, undetected, tot ? 1.0 - (double)undetected / (double)tot : 1.0);
        /* CRC-32C detects every error of up to 3 bits in messages below 2^31
         * bits (Hamming distance 4); beyond that, an undetected error needs
         * a CRC match by chance (probability 2^-32 per trial): with these
         * trial counts, more than one such event is statistically excluded. */
        uint64_t allowed = nb <= 3 ? 0 : 1;
        CHECKF(undetected <= allowed, "%u-bit errors: %" PRIu64 " undetected (allowed %" PRIu64 ")",
               nb, undetected, allowed);
        all_trials += tot;
        all_undetected += undetected;
    }
    /* bursts of length 2..32 (first and last bit flipped, random inside):
     * CRC-32C detects every burst of at most 32 bits */
    uint64_t bursts = 0, bursts_undetected = 0;
    for (size_t k = 0; k < n; k++) {
        msgbuf *m = &ms[k];
        uint64_t nbits = (uint64_t)m->len * 8u;
        uint8_t *d = malloc(m->len);
        if (!d)
            abort();
        for (uint64_t t = 0; t < trials; t++) {
            uint64_t blen = 2u + trng_below(&r, 31);
            uint64_t start = trng_below(&r, nbits - blen + 1u);
            memcpy(d, m->bytes, m->len);
            for (uint64_t b = 0; b < blen; b++) {
                int flip = b == 0 || b == blen - 1u || (trng_next(&r) & 1u);
                if (flip)
                    d[(start + b) / 8] ^= (uint8_t)(1u << ((start + b) % 8));
            }
            bursts++;
            if (tahq_decode(d, m->len, m->out, (size_t)m->count) == TAHQ_OK)
                bursts_undetected++;
        }
        free(d);
    }
    printf("random: bursts of 2..32 bits: %" PRIu64 " trials, %" PRIu64 " undetected\n", bursts,
           bursts_undetected);
    CHECK(bursts_undetected == 0);
    printf("random: total %" PRIu64 " damaged messages, %" PRIu64 " undetected\n",
           all_trials + bursts, all_undetected + bursts_undetected);
}

/* ---- size arithmetic at the element limit ------------------------------------ */

/* SPEC §8.2 payload for all tiles flagged (the encode bound), in 128-bit. */
static unsigned __int128 bound128(const tahq_config *c, const tahq_shape *s)
{
    unsigned __int128 rows = (unsigned __int128)s->batch * s->seq_len;
    unsigned __int128 T = s->channels / c->tile, N = rows * T;
    const int per_row = c->alloc == TAHQ_ALLOC_TOKEN || c->alloc == TAHQ_ALLOC_GAIN;
    unsigned __int128 map = per_row ? rows : c->alloc == TAHQ_ALLOC_TILE ? N : 0;
    unsigned __int128 nlow =
        per_row ? (unsigned __int128)s->batch * tahq_low_count(s->seq_len, c->hi_permille) * T
        : c->alloc == TAHQ_ALLOC_TILE ? rows * tahq_low_count(s->channels / c->tile, c->hi_permille)
                                      : 0;
    unsigned k = 0;
    while ((1u << k) < c->tile)
        k++;
    unsigned __int128 mb = tahq_meta_bytes(c->meta);
    return TAHQ_HEADER_BYTES + (map + 7) / 8 + (N + 7) / 8 + 2 * N * mb +
           ((N - nlow) * c->tile * c->hi_bits + nlow * c->tile * c->lo_bits) / 8 + (N * k + 7) / 8;
}

static void put32(uint8_t *p, uint32_t v)
{
    t_put_le(p, v, 4);
}

static void part_sizes(void)
{
    tahq_config c;
    size_t bytes, ws;
    /* shapes with exactly 2^40 elements: accepted, bound exact */
    static const tahq_shape at_limit[] = {
        {1u, 1u << 9, 1u << 31},  {1u << 8, 1u << 8, 1u << 24}, {1u << 20, 1u << 12, 256},
        {1u << 31, 1u << 1, 256}, {1u << 31, 1u << 6, 8},
    };
    for (size_t i = 0; i < sizeof at_limit / sizeof at_limit[0]; i++) {
        for (int alloc = 0; alloc <= 3; alloc++) {
            tahq_config_default(&c);
            c.tile = 8;
            c.alloc = (tahq_alloc)alloc;
            c.meta = TAHQ_META_FP32;
            c.hi_bits = 8;
            tahq_shape s = at_limit[i];
            uint64_t n = (uint64_t)s.batch * s.seq_len * s.channels;
            CHECKF(n == TAHQ_MAX_ELEMENTS, "shape %zu has %" PRIu64 " elements", i, n);
            CHECKF(tahq_check_shape(&c, &s) == TAHQ_OK, "shape %zu", i);
            CHECKF(tahq_encode_bound(&c, &s, &bytes) == TAHQ_OK, "bound of shape %zu", i);
            CHECKF((unsigned __int128)bytes == bound128(&c, &s), "bound of shape %zu alloc %d: %zu",
                   i, alloc, bytes);
            CHECKF(tahq_encode_workspace_size(&c, &s, &ws) == TAHQ_OK, "workspace %zu", i);
        }
    }
    /* one tile beyond the limit, and shapes whose element count wraps a
     * 32- or 64-bit product to something small */
    static const tahq_shape beyond[] = {
        {1u, 1u << 8, (1u << 31) + 8u},
        {(1u << 20) + 1u, 1u << 12, 256},
        {1u << 31, 1u << 31, 8},        /* 2^65: wraps to 0 in 64 bits */
        {1u << 24, 1u << 24, 1u << 16}, /* 2^64: wraps to 0 */
        {1u << 16, 1u << 16, 1u << 8},  /* 2^40: rows*C in 32 bits wraps to 0 */
        {UINT32_MAX, UINT32_MAX, UINT32_MAX - 7u},
        {UINT32_MAX, 1u, 1u << 31},
        {3u, 0x55555556u, 8}, /* 3*0x55555556*8 wraps 32 bits to 16 */
    };
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; i++) {
        tahq_config_default(&c);
        c.tile = 8;
        tahq_shape s = beyond[i];
        unsigned __int128 n = (unsigned __int128)s.batch * s.seq_len * s.channels;
        tahq_status want = n > TAHQ_MAX_ELEMENTS ? TAHQ_ERR_SHAPE : TAHQ_OK;
        CHECKF(tahq_check_shape(&c, &s) == want, "beyond shape %zu", i);
        bytes = 12345;
        CHECKF(tahq_encode_bound(&c, &s, &bytes) == want, "beyond bound %zu", i);
        if (want != TAHQ_OK)
            CHECKF(bytes == 12345, "beyond bound %zu wrote *bytes", i);
        CHECKF(tahq_encode_workspace_size(&c, &s, &ws) == want, "beyond workspace %zu", i);
        /* encode refuses before touching the input: x and out may be tiny */
        float x = 0.0f;
        uint8_t out[TAHQ_HEADER_BYTES];
        size_t out_len = 7;
        if (want != TAHQ_OK) {
            CHECKF(tahq_encode(&c, &s, &x, NULL, 0, out, sizeof out, &out_len) == TAHQ_ERR_SHAPE &&
                       out_len == 0,
                   "encode of beyond shape %zu", i);
        }
        /* a header claiming the shape: HEADER (never SIZE on a wrapped
         * count), for alloc none (version 1) and gain (version 3) */
        for (int gain = 0; gain < 2; gain++) {
            uint8_t msg[TAHQ_HEADER_BYTES + 16];
            memset(msg, 0, sizeof msg);
            memcpy(msg, TAHQ_MAGIC, 4);
            msg[4] = gain ? TAHQ_GAIN_VERSION : 1;
            msg[6] = TAHQ_HEADER_BYTES;
            msg[8] = 3;
            msg[9] = 4;
            msg[10] = 3;
            msg[11] = gain ? TAHQ_ALLOC_GAIN : TAHQ_ALLOC_NONE;
            t_put_le(msg + 14, 800, 2);
            put32(msg + 16, 0x40000000u);
            put32(msg + 20, s.batch);
            put32(msg + 24, s.seq_len);
            put32(msg + 28, s.channels);
            put32(msg + 68, tahq_crc32c(tahq_crc32c(0, msg, 68), msg + TAHQ_HEADER_BYTES, 16));
            tahq_header h;
            tahq_status st = tahq_parse_header(msg, sizeof msg, &h);
            if (want != TAHQ_OK)
                CHECKF(st == TAHQ_ERR_HEADER, "header with beyond shape %zu: %d", i, (int)st);
            float y[8];
            CHECKF(tahq_decode(msg, sizeof msg, y, 8) != TAHQ_OK, "decode of beyond shape %zu", i);
        }
    }
    /* tahq_low_count is exact for every 64-bit n */
    static const uint64_t ns[] = {0,         1, 999, 1000, 1001, UINT64_C(1) << 40, UINT64_MAX - 1,
                                  UINT64_MAX};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (uint32_t r = 0; r <= 1000; r += 37) {
            unsigned __int128 want = (unsigned __int128)ns[i] * (1000u - r) / 1000u;
            CHECK_QUIET((unsigned __int128)tahq_low_count(ns[i], r) == want,
                        "low_count(%" PRIu64 ", %u)", ns[i], (unsigned)r);
        }
    printf("sizes: shapes at 2^40 elements accepted with exact bounds, beyond rejected\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_integrity flips|trunc|random DIR [TRIALS] | sizes\n");
        return 2;
    }
    const char *part = argv[1];
    if (strcmp(part, "sizes") == 0) {
        part_sizes();
        return t_finish("integrity", part);
    }
    if (argc < 3) {
        fprintf(stderr, "test_integrity %s: golden expected/ directory needed\n", part);
        return 2;
    }
    msgbuf ms[N_MESSAGES + N_GAIN];
    const size_t n_ms = N_MESSAGES + N_GAIN;
    memset(ms, 0, sizeof ms);
    for (size_t i = 0; i < N_MESSAGES; i++)
        if (load(argv[2], k_messages[i], &ms[i]) != 0)
            return 1;
    for (size_t i = 0; i < N_GAIN; i++)
        if (make_gain(i, &ms[N_MESSAGES + i]) != 0)
            return 1;
    if (strcmp(part, "flips") == 0) {
        part_flips(ms, n_ms);
    } else if (strcmp(part, "trunc") == 0) {
        part_trunc(ms, n_ms);
    } else if (strcmp(part, "random") == 0) {
        uint64_t trials = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000u;
        part_random(ms, n_ms, trials);
    } else {
        fprintf(stderr, "test_integrity: unknown part '%s'\n", part);
        return 2;
    }
    for (size_t i = 0; i < n_ms; i++) {
        free(ms[i].bytes);
        free(ms[i].out);
    }
    return t_finish("integrity", part);
}
