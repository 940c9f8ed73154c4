/* SPDX-License-Identifier: MIT */
/* golden_common.c - see golden_common.h. */
#include "golden_common.h"
#include "tahq_spec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void golden_config_json(char *buf, size_t n, const tahq_config *cfg)
{
    char tau[32];
    if (isinf(cfg->tau))
        snprintf(tau, sizeof tau, "inf");
    else if (isnan(cfg->tau))
        snprintf(tau, sizeof tau, "nan");
    else
        snprintf(tau, sizeof tau, "%.9g", (double)cfg->tau);
    snprintf(buf, n,
             "{\"tile\":%u,\"hi_bits\":%u,\"lo_bits\":%u,\"hi_permille\":%u,\"alloc\":\"%s\","
             "\"tau\":\"%s\",\"tau_bits\":\"0x%08" PRIx32
             "\",\"rounding\":\"%s\",\"seed\":\"%" PRIu64 "\",\"meta\":\"%s\"}",
             (unsigned)cfg->tile, (unsigned)cfg->hi_bits, (unsigned)cfg->lo_bits,
             (unsigned)cfg->hi_permille, cli_alloc_name(cfg->alloc), tau, f2u(cfg->tau),
             cli_rounding_name(cfg->rounding), cfg->seed, cli_meta_name(cfg->meta));
}

/* Deepest nesting of [ and { in text (outside strings), up to limit + 1: so
 * that a document nested too deeply is refused as such, before jansson
 * parses it (and whether or not it is complete). */
static int max_depth(const char *t, size_t len, int limit)
{
    int d = 0, m = 0, in_str = 0;
    for (size_t i = 0; i < len && m <= limit; ++i) {
        char c = t[i];
        if (in_str) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++d > m)
                m = d;
        } else if ((c == ']' || c == '}') && d > 0) {
            --d;
        }
    }
    return m;
}

json_t *golden_json_load(const char *text, size_t len, char *err, size_t errlen)
{
    if (max_depth(text, len, GOLDEN_MAX_DEPTH) > GOLDEN_MAX_DEPTH) {
        snprintf(err, errlen, "nesting too deep (more than %d levels)", GOLDEN_MAX_DEPTH);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "line %d column %d: %s", je.line, je.column, je.text);
        return NULL;
    }
    return root;
}

int golden_json_str(const json_t *obj, const char *key, const char **s)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (!json_is_string(v))
        return -1;
    *s = json_string_value(v);
    return 0;
}

int golden_json_u64(const json_t *obj, const char *key, uint64_t *v)
{
    const json_t *n = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (!json_is_integer(n) || json_integer_value(n) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(n);
    return 0;
}

int golden_config_parse(const json_t *o, tahq_config *cfg, char *err, size_t errlen)
{
    uint64_t tile, hi, lo, r, seed;
    const char *alloc, *tau_bits, *rounding, *seed_s, *meta;
    if (!json_is_object(o) || golden_json_u64(o, "tile", &tile) ||
        golden_json_u64(o, "hi_bits", &hi) || golden_json_u64(o, "lo_bits", &lo) ||
        golden_json_u64(o, "hi_permille", &r) || golden_json_str(o, "alloc", &alloc) ||
        golden_json_str(o, "tau_bits", &tau_bits) || golden_json_str(o, "rounding", &rounding) ||
        golden_json_str(o, "seed", &seed_s) || golden_json_str(o, "meta", &meta)) {
        snprintf(err, errlen, "config: a field is missing or of the wrong type");
        return -1;
    }
    if (tile > UINT32_MAX || hi > UINT32_MAX || lo > UINT32_MAX || r > UINT32_MAX) {
        snprintf(err, errlen, "config: a number is out of range");
        return -1;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->tile = (uint32_t)tile;
    cfg->hi_bits = (uint32_t)hi;
    cfg->lo_bits = (uint32_t)lo;
    cfg->hi_permille = (uint32_t)r;
    if (strcmp(alloc, "none") == 0)
        cfg->alloc = TAHQ_ALLOC_NONE;
    else if (strcmp(alloc, "token") == 0)
        cfg->alloc = TAHQ_ALLOC_TOKEN;
    else if (strcmp(alloc, "tile") == 0)
        cfg->alloc = TAHQ_ALLOC_TILE;
    else if (strcmp(alloc, "gain") == 0)
        cfg->alloc = TAHQ_ALLOC_GAIN;
    else {
        snprintf(err, errlen, "config: alloc '%s'", alloc);
        return -1;
    }
    if (strcmp(rounding, "nearest") == 0)
        cfg->rounding = TAHQ_ROUND_NEAREST_EVEN;
    else if (strcmp(rounding, "stochastic") == 0)
        cfg->rounding = TAHQ_ROUND_STOCHASTIC;
    else {
        snprintf(err, errlen, "config: rounding '%s'", rounding);
        return -1;
    }
    if (strcmp(meta, "fp16") == 0)
        cfg->meta = TAHQ_META_FP16;
    else if (strcmp(meta, "bf16") == 0)
        cfg->meta = TAHQ_META_BF16;
    else if (strcmp(meta, "fp32") == 0)
        cfg->meta = TAHQ_META_FP32;
    else {
        snprintf(err, errlen, "config: meta '%s'", meta);
        return -1;
    }
    char *e = NULL;
    /* exactly "0x" and 8 hex digits (strtoul alone would take a sign,
     * blanks or a second "0x") */
    if (strncmp(tau_bits, "0x", 2) != 0 || strlen(tau_bits) != 10 ||
        strspn(tau_bits + 2, "0123456789abcdefABCDEF") != 8) {
        snprintf(err, errlen, "config: tau_bits '%s'", tau_bits);
        return -1;
    }
    unsigned long tb = strtoul(tau_bits + 2, &e, 16);
    if (!e || *e) {
        snprintf(err, errlen, "config: tau_bits '%s'", tau_bits);
        return -1;
    }
    cfg->tau = u2f((uint32_t)tb);
    if (cli_parse_u64(seed_s, &seed)) {
        snprintf(err, errlen, "config: seed '%s'", seed_s);
        return -1;
    }
    cfg->seed = seed;
    return 0;
}

void golden_layout_of(const tahq_header *h, golden_layout *L)
{
    memset(L, 0, sizeof *L);
    L->G = h->config.tile;
    L->k = 0;
    while ((1u << L->k) < L->G)
        L->k++;
    L->T = h->shape.channels / L->G;
    L->mb = tahq_meta_bytes(h->config.meta);
    L->rows = (uint64_t)h->shape.batch * h->shape.seq_len;
    L->N = L->rows * L->T;
    L->map_bits = cli_alloc_per_row(h->config.alloc)   ? L->rows
                  : h->config.alloc == TAHQ_ALLOC_TILE ? L->N
                                                       : 0;
    L->map_off = TAHQ_HEADER_BYTES;
    L->flags_off = L->map_off + (L->map_bits + 7) / 8;
    L->zp_off = L->flags_off + (L->N + 7) / 8;
    L->sc_off = L->zp_off + L->N * L->mb;
    L->codes_off = L->sc_off + L->N * L->mb;
    uint64_t n_lo_tiles = cli_alloc_per_row(h->config.alloc) ? h->n_low * L->T : h->n_low;
    uint64_t n_hi_tiles = L->N - n_lo_tiles;
    L->piv_off =
        L->codes_off +
        (n_hi_tiles * L->G * h->config.hi_bits + n_lo_tiles * L->G * h->config.lo_bits) / 8;
    L->end = L->piv_off + (h->n_flagged * L->k + 7) / 8;
}

static int bit_at(const uint8_t *base, uint64_t p)
{
    return (base[p / 8] >> (p % 8)) & 1;
}

int golden_tile_is_low(const uint8_t *msg, const tahq_header *h, const golden_layout *L, uint64_t t)
{
    if (cli_alloc_per_row(h->config.alloc))
        return bit_at(msg + L->map_off, t / L->T);
    if (h->config.alloc == TAHQ_ALLOC_TILE)
        return bit_at(msg + L->map_off, t);
    return 0;
}

static const struct {
    unsigned off, size;
    const char *name;
} header_fields[] = {
    {0, 4, "magic"},        {4, 2, "version"},
    {6, 2, "header_bytes"}, {8, 1, "k"},
    {9, 1, "hi_bits"},      {10, 1, "lo_bits"},
    {11, 1, "alloc"},       {12, 1, "rounding"},
    {13, 1, "meta"},        {14, 2, "hi_permille"},
    {16, 4, "tau"},         {20, 4, "B"},
    {24, 4, "S"},           {28, 4, "C"},
    {32, 8, "seed"},        {40, 8, "n_low"},
    {48, 8, "n_flagged"},   {56, 8, "payload_bytes"},
    {64, 4, "reserved"},    {68, 4, "crc"},
};

void golden_locate(const uint8_t *msg, size_t len, uint64_t off, char *buf, size_t n,
                   const char **section, int64_t *tile)
{
    *tile = -1;
    if (off < TAHQ_HEADER_BYTES) {
        for (size_t i = 0; i < sizeof header_fields / sizeof header_fields[0]; ++i)
            if (off >= header_fields[i].off && off < header_fields[i].off + header_fields[i].size) {
                snprintf(buf, n, "header.%s (byte %u of %u)", header_fields[i].name,
                         (unsigned)(off - header_fields[i].off), header_fields[i].size);
                break;
            }
        *section = "header";
        return;
    }
    tahq_header h;
    if (tahq_parse_header(msg, len, &h) != TAHQ_OK) {
        snprintf(buf, n, "payload byte %" PRIu64 " (expected message does not parse)",
                 off - TAHQ_HEADER_BYTES);
        *section = "payload";
        return;
    }
    golden_layout L;
    golden_layout_of(&h, &L);
    if (off >= L.end) {
        snprintf(buf, n, "past the end of the expected message (%" PRIu64 " bytes)", L.end);
        *section = "length";
        return;
    }
    if (off < L.flags_off) {
        uint64_t b0 = (off - L.map_off) * 8;
        if (cli_alloc_per_row(h.config.alloc))
            snprintf(buf, n, "precision_map (rows %" PRIu64 "..%" PRIu64 ")", b0, b0 + 7);
        else
            snprintf(buf, n, "precision_map (tiles %" PRIu64 "..%" PRIu64 ")", b0, b0 + 7);
        *section = "precision_map";
        return;
    }
    if (off < L.zp_off) {
        uint64_t b0 = (off - L.flags_off) * 8;
        snprintf(buf, n, "gate_flags (tiles %" PRIu64 "..%" PRIu64 ")", b0, b0 + 7);
        *section = "gate_flags";
        return;
    }
    if (off < L.codes_off) {
        int zp = off < L.sc_off;
        uint64_t t = (off - (zp ? L.zp_off : L.sc_off)) / L.mb;
        snprintf(buf, n, "%s (tile %" PRIu64 ", row %" PRIu64 ", tile %" PRIu64 " of the row)",
                 zp ? "zero_points" : "scales", t, t / L.T, t % L.T);
        *section = zp ? "zero_points" : "scales";
        *tile = (int64_t)t;
        return;
    }
    if (off < L.piv_off) {
        uint64_t pos = L.codes_off;
        for (uint64_t t = 0; t < L.N; ++t) {
            uint32_t b = golden_tile_is_low(msg, &h, &L, t) ? h.config.lo_bits : h.config.hi_bits;
            uint64_t sz = (uint64_t)L.G * b / 8;
            if (off < pos + sz) {
                uint64_t e0 = (off - pos) * 8 / b, e1 = ((off - pos) * 8 + 7) / b;
                if (e1 > L.G - 1)
                    e1 = L.G - 1;
                snprintf(buf, n,
                         "codes (tile %" PRIu64 ", row %" PRIu64 ", tile %" PRIu64
                         " of the row, %u-bit, elements %" PRIu64 "..%" PRIu64 ")",
                         t, t / L.T, t % L.T, (unsigned)b, e0, e1);
                *section = "codes";
                *tile = (int64_t)t;
                return;
            }
            pos += sz;
        }
    }
    /* pivots */
    uint64_t p0 = (off - L.piv_off) * 8 / L.k;
    uint64_t seen = 0;
    for (uint64_t t = 0; t < L.N; ++t) {
        if (!bit_at(msg + L.flags_off, t))
            continue;
        if (seen == p0) {
            snprintf(buf, n, "pivots (pivot %" PRIu64 ", of tile %" PRIu64 ")", p0, t);
            *tile = (int64_t)t;
            break;
        }
        ++seen;
    }
    if (*tile < 0)
        snprintf(buf, n, "pivots (padding)");
    *section = "pivots";
}
