/* SPDX-License-Identifier: MIT */
/* golden_gen.c - the golden vector sets v1, v2 and v4 (`tahq golden-gen`,
 * golden/README.md) and the order of every set's case families; the cases
 * are written by case_writer.c. Encode cases are tables of descriptors (or
 * grids of axis tables) read by one interpreter, emit_case; the invalid
 * messages are edits of three valid ones. Every tensor is computed from fixed seeds with
 * Philox4x32-10, integer operations and exact binary32 scaling, so the set
 * is byte-identical on every platform where libtahq is correct. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "case_inputs.h"
#include "case_writer.h"
#include "codec_ops.h"
#include "golden_common.h"
#include "golden_gain.h"
#include "golden_paper_v1.h"
#include "llm_tensor.h"
#include "message_reseal.h"
#include "tahq_golden.h"
#include "tahq_paper_v1.h"
#include "tahq_core.h"
#include "tahq_spec.h"
#include "util.h"

/* ---------------------------------------------------------------- tensors */

/* Uniform in [-1, 1) on a 2^-23 grid, times scale (exact for powers of two). */
static void fill_uniform(float *x, uint64_t n, uint64_t seed, float scale)
{
    for (uint64_t i = 0; i < n; ++i)
        x[i] = golden_unif(seed, i) * scale;
}

/* In every `every`-th tile, one element (at a pseudo-random position) is
 * replaced by +-mag times a factor in [1, 2). */
static void add_spikes(float *x, uint64_t n, uint32_t G, uint32_t every, uint64_t seed, float mag)
{
    for (uint64_t t = 0; t * G < n; ++t) {
        if (t % every != 0)
            continue;
        uint32_t w = tahq_random_word(seed ^ 0x5A5A5A5Aull, t);
        uint32_t pos = w % G;
        float f = 1.0f + (float)((w >> 16) & 0xFF) * 0x1p-8f;
        x[t * G + pos] = ((w >> 31) ? -mag : mag) * f;
    }
}

/* Rows scaled by 2^-(r mod 5) and a few zeroed entries: distinct entropies. */
static void fill_rows(float *x, const tahq_shape *s, uint64_t seed)
{
    uint64_t rows = (uint64_t)s->batch * s->seq_len;
    for (uint64_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < s->channels; ++c) {
            uint64_t i = r * s->channels + c;
            float v = golden_unif(seed, i) * ldexpf(1.0f, -(int)(r % 5));
            if ((tahq_random_word(seed + 1, i) & 7u) == 0)
                v = 0.0f;
            if ((r + c) % 37 == 0)
                v *= 24.0f;
            x[i] = v;
        }
}

static const char *tau_name(float tau, char *buf, size_t n)
{
    if (isinf(tau))
        snprintf(buf, n, "inf");
    else {
        snprintf(buf, n, "%g", (double)tau);
        for (char *p = buf; *p; ++p)
            if (*p == '.')
                *p = 'p';
    }
    return buf;
}

/* ---------------------------------------------------------------- kill tables */

/* Cases of golden/v2 beyond v1: each tells at least one mutant of
 * golden/mutation/catalogue.txt apart from the reference, a mutant that no
 * v1 case kills (golden/mutation/RESULTS.md). The inputs are the smallest
 * golden/mutation/distinguish.py found, as binary32 bit patterns. */
typedef struct mut_case {
    const char *id, *kills, *desc;
    int paper_v1; /* 0: format 1 encode case, 1: paper_v1 case */
    uint32_t tile, hi_bits, lo_bits, hi_permille;
    tahq_alloc alloc;
    uint32_t tau_bits;
    tahq_rounding rounding;
    uint64_t seed;
    tahq_meta meta;
    uint32_t B, S, C;
    const uint32_t *words;
} mut_case;

/* A generated table's kill lists: case id -> the mutants it kills, "a,b". */
struct case_kills {
    const char *id, *kills;
};

/* The kill list of case `id` in table t[0..n) (NULL: none listed). */
static const char *case_kills_find(const struct case_kills *t, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].id && strcmp(t[i].id, id) == 0)
            return t[i].kills;
    return NULL;
}

/* the generated table of golden/v2 (golden/mutation/v2_table.py --write) */
#include "mutation_cases_v2.inc"

/* The mutants a case of v2 not in mut_cases kills (decerr-v2-*, dec-v2-*,
 * search-v2-*, cfgerr-v2-*; NULL: none). Every case looks itself up. */
static const char *msg_kills(const char *id)
{
    return case_kills_find(mut_msg_kills, sizeof mut_msg_kills / sizeof mut_msg_kills[0], id);
}

/* ---------------------------------------------------------------- invalid messages */

typedef struct base_msg {
    uint8_t *m;
    size_t len;
    tahq_header h;
    golden_layout L;
} base_msg;

static int make_base(base_msg *b, const tahq_config *c, const tahq_shape *s, uint64_t seed)
{
    float *x = golden_alloc_x(s);
    fill_rows(x, s, seed);
    add_spikes(x, golden_count_of(s), c->tile, 2, seed, 40.0f);
    int st = run_encode(c, s, x, &b->m, &b->len);
    free(x);
    if (st != TAHQ_OK || tahq_parse_header(b->m, b->len, &b->h) != TAHQ_OK)
        return -1;
    golden_layout_of(&b->h, &b->L);
    return 0;
}

static uint8_t *dup_msg(const base_msg *b, size_t extra)
{
    uint8_t *m = calloc(b->len + extra + 1, 1);
    if (!m) {
        fprintf(stderr, "tahq golden-gen: out of memory\n");
        exit(EXIT_RUNTIME);
    }
    memcpy(m, b->m, b->len);
    return m;
}

static void dec_err(golden_writer *g, const char *base, const char *name, const char *flags,
                    const char *desc, uint8_t *m, size_t len, int expect)
{
    char id[96];
    snprintf(id, sizeof id, "decerr-%s-%s", base, name);
    g->kills = msg_kills(id);
    golden_emit_decode_error(g, id, flags, desc, m, len, expect);
    g->kills = NULL;
    free(m);
}

/* An invalid message is a valid base message with up to three edits, the
 * CRC recomputed or not, and a length: one row of a table, read by
 * run_dec_cases. An edit's byte is at off from the message start, from a
 * payload section of the base message or from its end; it writes a
 * little-endian field of `width` bytes or xors, ors or ands one byte; the
 * value is a constant or a header field plus the constant (mod 2^64). */
enum edit_op { E_NONE, E_PUT, E_XOR, E_OR, E_AND };
enum edit_anchor { AT_START, AT_MAP, AT_FLAGS, AT_CODES, AT_END };
enum edit_from { V_CONST, V_N_LOW, V_N_TILES, V_PAYLOAD_BYTES };
/* The message's length: the base's, the base's plus len, or len. */
enum edit_len { LEN_SAME, LEN_PLUS, LEN_CUT };

typedef struct msg_edit {
    uint8_t op, width, at, from;
    int off;
    uint64_t value;
} msg_edit;

typedef struct dec_case {
    unsigned base; /* index into the bases of run_dec_cases */
    const char *name, *flags, *desc;
    msg_edit e[3];
    int reseal;
    int len_mode;
    long len;
    int expect;
} dec_case;

/* clang-format off */
/* A field of width bytes at off set to value; the same field set to a
 * header field plus delta; one byte changed by op. */
#define PUT(w, o, v) {E_PUT, w, AT_START, V_CONST, o, v}
#define PUT_REL(w, o, from, delta) {E_PUT, w, AT_START, from, o, (uint64_t)(delta)}
#define BYTE(op, at, o, v) {op, 1, at, V_CONST, o, v}
/* clang-format on */

static void apply_edit(uint8_t *m, const base_msg *b, const msg_edit *e)
{
    const uint64_t at_of[5] = {0, b->L.map_off, b->L.flags_off, b->L.codes_off, b->len};
    const uint64_t from_of[4] = {0, b->h.n_low, b->L.N, b->h.payload_bytes};
    uint8_t *p = m + at_of[e->at] + e->off;
    const uint64_t v = from_of[e->from] + e->value;
    switch (e->op) {
    case E_PUT:
        for (unsigned q = 0; q < e->width; ++q)
            p[q] = (uint8_t)(v >> (8 * q));
        break;
    case E_XOR:
        *p ^= (uint8_t)v;
        break;
    case E_OR:
        *p |= (uint8_t)v;
        break;
    case E_AND:
        *p &= (uint8_t)v;
        break;
    default:
        break;
    }
}

/* The interpreter of the invalid messages: case ids are decerr-NAME-name,
 * NAME the base's name. */
static void run_dec_cases(golden_writer *g, const base_msg *const *bases, const char *const *names,
                          const dec_case *t, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const dec_case *c = &t[i];
        const base_msg *b = bases[c->base];
        size_t len = b->len;
        if (c->len_mode == LEN_CUT)
            len = (size_t)c->len;
        else if (c->len_mode == LEN_PLUS)
            len = (size_t)((long)b->len + c->len);
        uint8_t *m = dup_msg(b, len > b->len ? len - b->len : 0);
        for (int k = 0; k < 3 && c->e[k].op != E_NONE; ++k)
            apply_edit(m, b, &c->e[k]);
        if (c->reseal)
            message_reseal_stated(m, b->len);
        dec_err(g, names[c->base], c->name, c->flags, c->desc, m, len, c->expect);
    }
}

/* The three valid messages the invalid ones are made from: a (token
 * allocation, fp16 metadata), b (tile, bf16) and c (none, fp32), named in
 * the case ids by dec_base_names. */
typedef struct dec_bases {
    base_msg msg[3];
    const base_msg *all[3];
} dec_bases;
static const char *const dec_base_names[3] = {"a", "b", "c"};
enum { BA, BB, BC };

/* clang-format off */
/* A header field set to a value the SPEC forbids, the CRC recomputed. */
#define HDR(base, name, w, off, v, expect, desc)                                                   \
    {base, name, "header_field", desc, {PUT(w, off, v)}, 1, LEN_SAME, 0, TAHQ_ERR_##expect}

/* Framing (SPEC §8.4 step 1), header fields (step 2) and sizes (step 3),
 * in the order of the set. */
static const dec_case dec_cases_header[] = {
    /* truncation, magic and version */
    {BA, "truncated-0", "truncated", "message cut short", {{0}}, 0, LEN_CUT, 0, TAHQ_ERR_TRUNCATED},
    {BA, "truncated-3", "truncated", "message cut short", {{0}}, 0, LEN_CUT, 3, TAHQ_ERR_TRUNCATED},
    {BA, "truncated-7", "truncated", "message cut short", {{0}}, 0, LEN_CUT, 7, TAHQ_ERR_TRUNCATED},
    {BA, "truncated-71", "truncated", "message cut short", {{0}}, 0, LEN_CUT, 71,
     TAHQ_ERR_TRUNCATED},
    {BA, "truncated-72", "truncated", "message cut short", {{0}}, 0, LEN_CUT, 72,
     TAHQ_ERR_TRUNCATED},
    {BA, "truncated-last-byte", "truncated", "the last payload byte is missing", {{0}}, 0,
     LEN_PLUS, -1, TAHQ_ERR_TRUNCATED},
    {BB, "truncated-last-byte", "truncated", "the last payload byte is missing", {{0}}, 0,
     LEN_PLUS, -1, TAHQ_ERR_TRUNCATED},
    {BC, "truncated-last-byte", "truncated", "the last payload byte is missing", {{0}}, 0,
     LEN_PLUS, -1, TAHQ_ERR_TRUNCATED},
    {BA, "short-bad-magic", "truncated", "3 bytes with a wrong magic: length is checked first",
     {PUT(1, 1, 'X')}, 0, LEN_CUT, 3, TAHQ_ERR_TRUNCATED},
    {BA, "bad-magic", "bad_magic", "magic TAHX", {PUT(1, 3, 'X')}, 0, LEN_SAME, 0,
     TAHQ_ERR_MAGIC},
    {BA, "lowercase-magic", "bad_magic", "magic in lower case",
     {PUT(4, 0, 't' | 'a' << 8 | 'h' << 16 | (uint32_t)'q' << 24)}, 0, LEN_SAME, 0,
     TAHQ_ERR_MAGIC},
    {BA, "bad-magic-short", "bad_magic", "6 bytes with a wrong magic: magic before length",
     {PUT(1, 3, 'X')}, 0, LEN_CUT, 6, TAHQ_ERR_MAGIC},
    {BA, "version-2", "unknown_version", "version 2", {PUT(2, 4, 2)}, 0, LEN_SAME, 0,
     TAHQ_ERR_VERSION},
    {BA, "version-0", "unknown_version", "version 0", {PUT(2, 4, 0)}, 0, LEN_SAME, 0,
     TAHQ_ERR_VERSION},
    {BA, "version-2-short", "unknown_version",
     "8 bytes of a version-2 header: version before length", {PUT(2, 4, 2)}, 0, LEN_CUT, 8,
     TAHQ_ERR_VERSION},
    {BA, "header-bytes-64", "unknown_version", "header_bytes 64", {PUT(2, 6, 64)}, 0, LEN_SAME, 0,
     TAHQ_ERR_VERSION},
    {BA, "header-bytes-73", "unknown_version", "header_bytes 73", {PUT(2, 6, 73)}, 0, LEN_SAME, 0,
     TAHQ_ERR_VERSION},
    /* header fields of base a */
    HDR(BA, "k-2", 1, 8, 2, HEADER, "k = 2 (G = 4)"),
    HDR(BA, "k-9", 1, 8, 9, HEADER, "k = 9 (G = 512)"),
    HDR(BA, "k-5", 1, 8, 5, SIZE,
        "k = 5 (a legal G = 32): the header is consistent, payload_bytes no longer is"),
    HDR(BA, "hi-bits-0", 1, 9, 0, HEADER, "hi_bits 0"),
    HDR(BA, "hi-bits-9", 1, 9, 9, HEADER, "hi_bits 9"),
    HDR(BA, "lo-bits-0", 1, 10, 0, HEADER, "lo_bits 0"),
    HDR(BA, "lo-above-hi", 1, 10, 5, HEADER, "lo_bits 5 > hi_bits 4"),
    HDR(BA, "alloc-3", 1, 11, 3, HEADER, "alloc 3"),
    HDR(BA, "rounding-2", 1, 12, 2, HEADER, "rounding 2"),
    HDR(BA, "meta-3", 1, 13, 3, HEADER, "meta 3"),
    HDR(BA, "permille-1001", 2, 14, 1001, HEADER, "hi_permille 1001"),
    HDR(BA, "tau-negative", 4, 16, 0xC0000000u, HEADER, "tau = -2"),
    HDR(BA, "tau-neg-zero", 4, 16, 0x80000000u, HEADER, "tau = -0 (sign bit set)"),
    HDR(BA, "tau-nan", 4, 16, 0x7FC00000u, HEADER, "tau = NaN"),
    HDR(BA, "tau-neg-inf", 4, 16, 0xFF800000u, HEADER, "tau = -inf"),
    HDR(BA, "batch-0", 4, 20, 0, HEADER, "B = 0"),
    HDR(BA, "seq-0", 4, 24, 0, HEADER, "S = 0"),
    HDR(BA, "channels-0", 4, 28, 0, HEADER, "C = 0"),
    HDR(BA, "channels-not-multiple", 4, 28, 96, HEADER, "C = 96 with G = 64"),
    HDR(BA, "channels-below-tile", 4, 28, 32, HEADER, "C = 32 < G = 64"),
    {BA, "elements-above-2p40", "header_field", "B*S*C = 2^50 > 2^40",
     {PUT(4, 20, 1u << 20), PUT(4, 24, 1u << 20), PUT(4, 28, 1u << 10)}, 1, LEN_SAME, 0,
     TAHQ_ERR_HEADER},
    {BA, "n-low-plus-1", "header_field", "n_low one more than the allocation implies",
     {PUT_REL(8, 40, V_N_LOW, 1)}, 1, LEN_SAME, 0, TAHQ_ERR_HEADER},
    HDR(BC, "n-low-1-alloc-none", 8, 40, 1, HEADER, "n_low 1 with alloc none"),
    {BA, "n-flagged-above-tiles", "header_field", "n_flagged > number of tiles",
     {PUT_REL(8, 48, V_N_TILES, 1)}, 1, LEN_SAME, 0, TAHQ_ERR_HEADER},
    HDR(BA, "reserved-1", 4, 64, 1, HEADER, "reserved field not zero"),
    HDR(BB, "reserved-high-bit", 4, 64, 0x80000000u, HEADER, "reserved field not zero"),
    /* sizes */
#define SIZES(base)                                                                                \
    {base, "payload-bytes-plus-1", "header_field", "payload_bytes one more than the fields imply", \
     {PUT_REL(8, 56, V_PAYLOAD_BYTES, 1)}, 1, LEN_SAME, 0, TAHQ_ERR_SIZE},                         \
    {base, "trailing-byte", "inconsistent_size", "one byte after the payload", {{0}}, 0,           \
     LEN_PLUS, 1, TAHQ_ERR_SIZE}
    SIZES(BA),
    SIZES(BB),
    SIZES(BC),
#undef SIZES
    {BA, "payload-bytes-minus-1", "header_field", "payload_bytes one less than the fields imply",
     {PUT_REL(8, 56, V_PAYLOAD_BYTES, -1)}, 1, LEN_SAME, 0, TAHQ_ERR_SIZE},
};

/* The CRC itself (step 4), then the payload (step 5) with the CRC
 * recomputed. */
static const dec_case dec_cases_crc_payload[] = {
#define CRC(base)                                                                                  \
    {base, "crc-payload-bit", "crc_mismatch", "one code bit flipped, CRC not updated",             \
     {BYTE(E_XOR, AT_CODES, 0, 0x01)}, 0, LEN_SAME, 0, TAHQ_ERR_CRC},                              \
    {base, "crc-field", "crc_mismatch", "the CRC field itself altered",                            \
     {BYTE(E_XOR, AT_START, 68, 0x80)}, 0, LEN_SAME, 0, TAHQ_ERR_CRC}
    CRC(BA),
    CRC(BB),
    CRC(BC),
#undef CRC
    {BA, "crc-seed", "crc_mismatch", "seed changed (any value is legal), CRC not updated",
     {BYTE(E_XOR, AT_START, 32, 0x01)}, 0, LEN_SAME, 0, TAHQ_ERR_CRC},
    {BA, "crc-last-byte", "crc_mismatch", "last payload byte changed, CRC not updated",
     {BYTE(E_XOR, AT_END, -1, 0x40)}, 0, LEN_SAME, 0, TAHQ_ERR_CRC},
    /* row 0 of a's token map: changes the per-sequence count */
    {BA, "map-count", "bad_map", "precision map with one 1 too many or too few in the sequence",
     {BYTE(E_XOR, AT_MAP, 0, 0x01)}, 1, LEN_SAME, 0, TAHQ_ERR_PAYLOAD},
    /* a map bit of b's tile map in token 0 */
    {BB, "map-count", "bad_map", "tile map with a wrong count of low tiles in token 0",
     {BYTE(E_XOR, AT_MAP, 0, 0x01)}, 1, LEN_SAME, 0, TAHQ_ERR_PAYLOAD},
    /* b: the map and the flags have 9 bits, bits 9..15 are padding */
    {BB, "map-padding", "bad_padding", "a padding bit of the precision map set",
     {BYTE(E_OR, AT_MAP, 1, 0x80)}, 1, LEN_SAME, 0, TAHQ_ERR_PAYLOAD},
    {BB, "flags-padding", "bad_padding", "a padding bit of the gate flags set",
     {BYTE(E_OR, AT_FLAGS, 1, 0x40)}, 1, LEN_SAME, 0, TAHQ_ERR_PAYLOAD},
    /* a: 10 map bits */
    {BA, "map-padding", "bad_padding", "a padding bit of the token map set",
     {BYTE(E_OR, AT_MAP, 1, 0x04)}, 1, LEN_SAME, 0, TAHQ_ERR_PAYLOAD},
};

/* clang-format on */

/* n_flagged changed so that the pivot section size disagrees (b: SIZE),
 * and within the same pivot bytes (c: PAYLOAD, the popcount): values the
 * base messages decide. */
static void dec_errors_n_flagged(golden_writer *g, const dec_bases *d)
{
    const base_msg *B = &d->msg[BB];
    const base_msg *C = &d->msg[BC];
    uint64_t nf = B->h.n_flagged;
    uint64_t want = (nf * B->L.k + 7) / 8;
    uint64_t nf2 = nf;
    while (nf2 < B->L.N && (nf2 * B->L.k + 7) / 8 == want)
        ++nf2;
    if (nf2 < B->L.N + 1 && (nf2 * B->L.k + 7) / 8 != want) {
        const dec_case c = {BB,
                            "n-flagged-size",
                            "header_field",
                            "n_flagged changed so that the pivot section size disagrees",
                            {PUT(8, 48, nf2)},
                            1,
                            LEN_SAME,
                            0,
                            TAHQ_ERR_SIZE};
        run_dec_cases(g, d->all, dec_base_names, &c, 1);
    }
    uint64_t nc = C->h.n_flagged;
    for (uint64_t k = 1; k <= nc; ++k) {
        uint64_t n2 = nc - k;
        if ((n2 * C->L.k + 7) / 8 == (nc * C->L.k + 7) / 8) {
            const dec_case c = {BC,
                                "n-flagged-popcount",
                                "header_field",
                                "n_flagged differs from the number of flag bits (same pivot "
                                "bytes)",
                                {PUT(8, 48, n2)},
                                1,
                                LEN_SAME,
                                0,
                                TAHQ_ERR_PAYLOAD};
            run_dec_cases(g, d->all, dec_base_names, &c, 1);
            break;
        }
    }
}

/* Pivot padding and flag counts (step 5), where each base message has
 * them, and the metadata values, the CRC recomputed. */
static void dec_errors_payload(golden_writer *g, const dec_bases *d)
{
    for (int k = 0; k < 3; ++k) {
        const base_msg *b = d->all[k];
        uint64_t pbits = b->h.n_flagged * b->L.k;
        if (pbits % 8) {
            uint8_t *m = dup_msg(b, 0);
            m[b->len - 1] |= (uint8_t)(0x80u);
            message_reseal_stated(m, b->len);
            dec_err(g, dec_base_names[k], "pivot-padding", "bad_padding",
                    "the last padding bit of the pivot section set", m, b->len, TAHQ_ERR_PAYLOAD);
        }
        /* flag bit flipped (n_flagged unchanged) */
        uint8_t *m = dup_msg(b, 0);
        uint64_t t = 0;
        while (t < b->L.N && ((m[b->L.flags_off + t / 8] >> (t % 8)) & 1))
            ++t;
        m[b->L.flags_off + t / 8] ^= (uint8_t)(1u << (t % 8));
        message_reseal_stated(m, b->len);
        dec_err(g, dec_base_names[k], "flag-popcount", "bad_flags",
                "one more flag bit than n_flagged", m, b->len, TAHQ_ERR_PAYLOAD);
    }
    /* metadata values */
    for (int k = 0; k < 3; ++k) {
        const base_msg *b = d->all[k];
        tahq_meta mt = b->h.config.meta;
        uint32_t nan_b = tahq_meta_bits(mt, NAN), inf_b = tahq_meta_bits(mt, INFINITY),
                 nz_b = tahq_meta_bits(mt, -0.0f), neg_b = tahq_meta_bits(mt, -1.0f),
                 ninf_b = tahq_meta_bits(mt, -INFINITY);
        struct {
            const char *name;
            int scale;
            uint32_t bits;
            const char *desc;
        } mv[] = {
            {"zero-point-nan", 0, nan_b, "a zero-point is NaN"},
            {"zero-point-inf", 0, inf_b, "a zero-point is +inf"},
            {"zero-point-neg-inf", 0, ninf_b, "a zero-point is -inf"},
            {"zero-point-neg-zero", 0, nz_b, "a zero-point is -0 (encoders write +0)"},
            {"scale-nan", 1, nan_b, "a scale is NaN"},
            {"scale-inf", 1, inf_b, "a scale is +inf"},
            {"scale-negative", 1, neg_b, "a scale is -1"},
            {"scale-neg-zero", 1, nz_b, "a scale is -0 (sign bit set)"},
        };
        for (size_t j = 0; j < sizeof mv / sizeof mv[0]; ++j) {
            if (k != 0 && j % 2 == 1 && j != 3 && j != 7)
                continue; /* b and c: NaN, -0 and one more per field */
            uint8_t *m = dup_msg(b, 0);
            uint64_t t = b->L.N / 2;
            uint64_t off = (mv[j].scale ? b->L.sc_off : b->L.zp_off) + t * b->L.mb;
            for (uint32_t q = 0; q < b->L.mb; ++q)
                m[off + q] = (uint8_t)(mv[j].bits >> (8 * q));
            message_reseal_stated(m, b->len);
            char dsc[160];
            snprintf(dsc, sizeof dsc, "%s (%s metadata, tile %" PRIu64 ")", mv[j].desc,
                     cli_meta_name(mt), t);
            dec_err(g, dec_base_names[k], mv[j].name, mv[j].scale ? "bad_scale" : "bad_zero_point",
                    dsc, m, b->len, TAHQ_ERR_PAYLOAD);
        }
    }
}

static void fam_decode_errors(golden_writer *g)
{
    dec_bases d;
    base_msg *A = &d.msg[0], *B = &d.msg[1], *C = &d.msg[2];
    tahq_config ca = golden_config(64, 4, 3, TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_META_FP16);
    tahq_config cb = golden_config(8, 4, 2, TAHQ_ALLOC_TILE, 2.0f, TAHQ_META_BF16);
    cb.hi_permille = 700;
    tahq_config cc = golden_config(16, 3, 3, TAHQ_ALLOC_NONE, 1.5f, TAHQ_META_FP32);
    tahq_shape sa = golden_shape(1, 10, 128), sb = golden_shape(1, 3, 24),
               sc = golden_shape(2, 1, 48);
    if (make_base(A, &ca, &sa, 1) || make_base(B, &cb, &sb, 2) || make_base(C, &cc, &sc, 3)) {
        fprintf(stderr, "tahq golden-gen: base messages failed\n");
        g->failed = 1;
        return;
    }
    for (int k = 0; k < 3; ++k)
        d.all[k] = &d.msg[k];
    /* base messages must carry pivots with padding (B, C) and flags */
    if (A->h.n_flagged == 0 || B->h.n_flagged == 0 || C->h.n_flagged == 0) {
        fprintf(stderr, "tahq golden-gen: a base message has no flagged tile\n");
        g->failed = 1;
        return;
    }
    /* in the order of the decoder's checks, SPEC §8.4 */
    run_dec_cases(g, d.all, dec_base_names, dec_cases_header, N_ROWS(dec_cases_header));
    dec_errors_n_flagged(g, &d);
    run_dec_cases(g, d.all, dec_base_names, dec_cases_crc_payload, N_ROWS(dec_cases_crc_payload));
    dec_errors_payload(g, &d);
    for (int k = 0; k < 3; ++k)
        free(d.msg[k].m);
}

/* ---------------------------------------------------------------- folders */

static int mkdir_p1(const char *p)
{
    if (mkdir(p, 0755) == 0)
        return 0;
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    return -1;
}

/* ---------------------------------------------------------------- v2: mutation adequacy */

/* Valid messages whose decoding meets NaN (SPEC §1 rule 6: every NaN a
 * decoder writes is 0x7FC00000). Format 1: every tile flagged (tau = 0), the
 * first tile's scale patched to 2^127 (fp32, bf16) with the CRC fixed, so
 * q*s overflows to +inf and the inverse FWHT meets inf - inf; the second
 * tile is left as encoded. Paper-v1: fp16 NaN metadata with payloads. */
static void fam_nan_messages(golden_writer *g)
{
    static const tahq_meta metas[2] = {TAHQ_META_FP32, TAHQ_META_BF16};
    for (int k = 0; k < 2; ++k) {
        tahq_config c;
        tahq_config_plain(&c, 8, 4);
        c.tau = 0.0f;
        c.meta = metas[k];
        tahq_shape s = golden_shape(1, 1, 16);
        float x[16];
        for (int i = 0; i < 16; i++)
            x[i] = (float)(i % 8 + 1) * (i < 8 ? 1.0f : -0.25f);
        uint8_t *m = NULL;
        size_t len = 0;
        if (run_encode(&c, &s, x, &m, &len) != TAHQ_OK) {
            fprintf(stderr, "tahq golden-gen: NaN base message failed\n");
            g->failed = 1;
            return;
        }
        /* payload (alloc none): flags (1 byte), 2 zero points, 2 scales, codes, pivots */
        if (metas[k] == TAHQ_META_FP32)
            tahq_put_u32(m + 72 + 1 + 8, 0x7F000000u);
        else
            tahq_put_u16(m + 72 + 1 + 4, 0x7F00u);
        message_reseal_stated(m, len);
        char id[64];
        snprintf(id, sizeof id, "dec-v2-nan-flagged-%s", cli_meta_name(metas[k]));
        g->kills = msg_kills(id);
        golden_emit_decode(g, id, "nan_canonical,mutation",
                           "scale 2^127 in a flagged tile: q*s overflows and the inverse transform "
                           "meets inf - inf; every NaN decodes as 0x7FC00000 (SPEC 1 rule 6)",
                           m, len, NULL, NULL);
        g->kills = NULL;
        free(m);
    }
    /* paper-v1: one high token of two tiles at G = 8, 4 bits; codes are
     * bytes 0..7, zero points 8..11, scales 12..15 (A.3) */
    tahq_paper_v1_config pc = {8, 4, 4, 1000};
    tahq_shape ps = golden_shape(1, 1, 16);
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)((i * 5) % 8) - 3.0f;
    size_t cap = 0, wsz = 0, len = 0;
    uint8_t *m = NULL;
    void *ws = NULL;
    tahq_status st = tahq_paper_v1_encode_bound(&pc, &ps, &cap);
    if (st == TAHQ_OK)
        st = tahq_paper_v1_workspace_size(&pc, &ps, &wsz);
    if (st == TAHQ_OK) {
        m = malloc(cap);
        ws = malloc(wsz);
        st = m && ws ? tahq_paper_v1_encode(&pc, &ps, x, ws, wsz, m, cap, &len) : TAHQ_ERR_BUFFER;
    }
    free(ws);
    if (st != TAHQ_OK || len < 16) {
        fprintf(stderr, "tahq golden-gen: paper-v1 NaN base message failed\n");
        free(m);
        g->failed = 1;
        return;
    }
    uint8_t orig[16];
    memcpy(orig, m, sizeof orig);
    m[8] = 0x01; /* tile 0: zero point 0x7E01, quiet NaN with a payload */
    m[9] = 0x7E;
    m[14] = 0x01; /* tile 1: scale 0xFE01, negative quiet NaN with a payload */
    m[15] = 0xFE;
    g->kills = msg_kills("dec-v2-pv1-nan-meta");
    golden_emit_decode(g, "dec-v2-pv1-nan-meta", "nan_canonical,mutation",
                       "paper-v1: fp16 NaN zero point and scale with payloads; every value decodes "
                       "as 0x7FC00000 (SPEC A.4, 1 rule 6)",
                       m, len, &pc, &ps);
    g->kills = NULL;
    if (strcmp(g->set, "v4") == 0) {
        /* golden/v4: a second message for the rule, the metadata otherwise
         * as encoded: tile 0's scale a signaling NaN with a payload (0x7C01,
         * which a conversion quiets to 0x7FC02000 and keeps the payload of) */
        memcpy(m, orig, sizeof orig);
        m[12] = 0x01;
        m[13] = 0x7C;
        golden_emit_decode(g, "bnd-pv1-nan-signaling-scale", "nan_canonical,mutation,boundary",
                           "paper-v1: tile 0's fp16 scale a signaling NaN with a payload (0x7C01); "
                           "tile 0 decodes to NaN, every one 0x7FC00000 (SPEC A.4, 1 rule 6)",
                           m, len, &pc, &ps);
    }
    free(m);
}

/* clang-format off */
/* two checks failing at once, and per-sequence map counts, on base "v2" */
static const dec_case dec_cases_v2[] = {
    /* magic and version both wrong: MAGIC (§8.4 step 1 order) */
    {0, "magic-and-version", "bad_magic,unknown_version,mutation",
     "bad magic and version 2: the magic is checked first",
     {PUT(1, 0, 'X'), PUT(2, 4, 2)}, 0, LEN_SAME, 0, TAHQ_ERR_MAGIC},
    /* reserved field non-zero and the CRC stale: HEADER before CRC */
    {0, "reserved-and-crc", "header_field,crc_mismatch,mutation",
     "reserved = 1 and a stale CRC: the header is checked before the CRC",
     {PUT(1, 64, 1)}, 0, LEN_SAME, 0, TAHQ_ERR_HEADER},
    /* payload_bytes one too many and the message one byte short: SIZE before TRUNCATED */
    {0, "size-and-truncated", "inconsistent_size,truncated,mutation",
     "payload_bytes + 1 and the message one byte short: SIZE is checked first",
     {PUT_REL(8, 56, V_PAYLOAD_BYTES, 1)}, 1, LEN_PLUS, -1, TAHQ_ERR_SIZE},
    /* sequence 0 with two low tokens, sequence 1 with none (total right), CRC fixed */
    {0, "map-counts-per-sequence", "bad_map,mutation",
     "token map with 2 and 0 low tokens in the two sequences (total 2 as required)",
     {BYTE(E_AND, AT_START, 72, 0xF0), BYTE(E_OR, AT_START, 72, 0x03)}, 1, LEN_SAME, 0,
     TAHQ_ERR_PAYLOAD},
};
/* clang-format on */

/* Invalid messages that fail two §8.4 checks at once (the earlier check's
 * status is the SPEC's), and a map whose per-sequence counts are wrong while
 * its total is right. */
static void fam_mutation_messages(golden_writer *g)
{
    base_msg A;
    tahq_config ca = golden_config(8, 4, 3, TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_META_FP16);
    ca.hi_permille = 500;
    tahq_shape sa = golden_shape(2, 2, 16);
    if (make_base(&A, &ca, &sa, 11)) {
        fprintf(stderr, "tahq golden-gen: v2 base message failed\n");
        g->failed = 1;
        return;
    }
    const base_msg *const bases[1] = {&A};
    static const char *const names[1] = {"v2"};
    run_dec_cases(g, bases, names, dec_cases_v2, N_ROWS(dec_cases_v2));
    free(A.m);
    fam_nan_messages(g);
}

/* the generated table of golden/v4 (golden/mutation/v4_table.py --write) */
#include "mutation_cases_v4.inc"

/* golden/v4: the mutants case `id` kills (golden/mutation/kills-v4.json) */
static const char *v4_kills_of(const char *id)
{
    return case_kills_find(v4_kills, sizeof v4_kills / sizeof v4_kills[0], id);
}

/* The encode cases of a table (inputs as binary32 words): an input the SPEC
 * rejects becomes an encode_error case with the status the encoder gives. */
static void emit_table(golden_writer *g, const mut_case *table, size_t n_rows, const char *flags)
{
    for (size_t i = 0; i < n_rows; i++) {
        const mut_case *mc = &table[i];
        if (!mc->id)
            continue;
        tahq_shape s = golden_shape(mc->B, mc->S, mc->C);
        uint64_t n = golden_count_of(&s);
        float *x = golden_alloc_x(&s);
        for (uint64_t j = 0; j < n; j++)
            x[j] = u2f(mc->words[j]);
        g->kills = mc->kills;
        if (mc->paper_v1) {
            tahq_paper_v1_config pc;
            tahq_paper_v1_config_default(&pc);
            pc.tile = mc->tile;
            pc.hi_bits = mc->hi_bits;
            pc.lo_bits = mc->lo_bits;
            pc.hi_permille = mc->hi_permille;
            golden_emit_paper_v1(g, mc->id, flags, mc->desc, &pc, &s, x);
        } else {
            tahq_config c;
            tahq_config_default(&c);
            c.tile = mc->tile;
            c.hi_bits = mc->hi_bits;
            c.lo_bits = mc->lo_bits;
            c.hi_permille = mc->hi_permille;
            c.alloc = mc->alloc;
            c.tau = u2f(mc->tau_bits);
            c.rounding = mc->rounding;
            c.seed = mc->seed;
            c.meta = mc->meta;
            uint8_t *msg = NULL;
            size_t len = 0;
            int st = run_encode(&c, &s, x, &msg, &len);
            free(msg);
            if (st == TAHQ_OK)
                golden_emit_encode(g, mc->id, flags, mc->desc, &c, &s, x);
            else /* an input the SPEC rejects */
                golden_emit_encode_error(g, mc->id, flags, mc->desc, &c, &s, x, st);
        }
        g->kills = NULL;
        free(x);
    }
}

static void fam_mutation(golden_writer *g)
{
    emit_table(g, mut_cases, sizeof mut_cases / sizeof mut_cases[0], "mutation");
    fam_mutation_messages(g);
}

/* golden/v4's own cases: inputs on the boundary where a one-ulp change
 * inside a rounded, truncated, ranked or compared step changes the message
 * (golden/mutation/distinguish.py --boundary) */
static void fam_boundary(golden_writer *g)
{
    emit_table(g, bnd_cases, sizeof bnd_cases / sizeof bnd_cases[0], "mutation,boundary");
    /* invalid messages: the status libtahq gives (a valid one fails generation) */
    for (size_t i = 0; i < sizeof bnd_msgs / sizeof bnd_msgs[0]; i++) {
        if (!bnd_msgs[i].id)
            continue;
        float *y = NULL;
        uint64_t cnt = 0;
        int st = run_decode(bnd_msgs[i].bytes, bnd_msgs[i].len, &y, &cnt);
        free(y);
        if (st == TAHQ_OK) {
            fprintf(stderr, "tahq golden-gen: case %s: the message is valid\n", bnd_msgs[i].id);
            g->failed = 1;
            continue;
        }
        golden_emit_decode_error(g, bnd_msgs[i].id, "mutation,boundary", bnd_msgs[i].desc,
                                 bnd_msgs[i].bytes, bnd_msgs[i].len, st);
    }
}

/* ---------------------------------------------------------------- encode cases as tables */

/* Every encode, encode_error and paper_v1 case is a descriptor that one
 * interpreter (emit_case) turns into its input and its files. A family is
 * either a table of descriptors (adding a case is adding a row) or a grid:
 * axis tables and an expand function that derives the descriptor of each
 * point (adding a case is adding an axis value). */

/* How a case's input is made on a zeroed tensor, in this order: the fill,
 * the spikes of add_spikes (when spike_every > 0, on tiles of the case's G),
 * the case's pattern, then single elements set (pokes). */
enum fill_kind { FILL_ZERO, FILL_UNIFORM, FILL_ROWS, FILL_LLM };

struct enc_case;
typedef void (*pattern_fn)(float *x, uint64_t n, const struct enc_case *c);

typedef struct poke {
    uint32_t at;
    float v;
} poke;

typedef struct enc_case {
    const char *id, *flags, *desc;
    int paper_v1; /* 0: format 1 (cfg); 1: the paper-v1 profile (pcfg) */
    tahq_config cfg;
    tahq_paper_v1_config pcfg;
    tahq_shape shape;
    int fill; /* enum fill_kind */
    uint64_t seed;
    float scale; /* FILL_UNIFORM */
    uint32_t spike_every;
    uint64_t spike_seed;
    float spike_mag;
    pattern_fn pattern;
    uint32_t arg; /* the pattern's parameter */
    float value;  /* the pattern's value */
    unsigned n_pokes;
    poke pokes[3];
    int expect; /* TAHQ_OK: encode (or paper_v1); else encode_error with this status */
} enc_case;

/* A configuration with round-half-even and seed 0 (golden_config with
 * hi_permille r), and one with rounding and seed given. */
#define CFG(G, hi, lo, r, a, tau, m)                                                 \
    {                                                                                \
        G, hi, lo, r, TAHQ_ALLOC_##a, tau, TAHQ_ROUND_NEAREST_EVEN, 0, TAHQ_META_##m \
    }
#define CFG_R(G, hi, lo, r, a, tau, rd, seed, m)                                \
    {                                                                           \
        G, hi, lo, r, TAHQ_ALLOC_##a, tau, TAHQ_ROUND_##rd, seed, TAHQ_META_##m \
    }
#define UNIFORM(s, sc) .fill = FILL_UNIFORM, .seed = (s), .scale = (sc)
#define ROWS(s) .fill = FILL_ROWS, .seed = (s)
#define LLM(s) .fill = FILL_LLM, .seed = (s)
#define SPIKES(every, s, mag) .spike_every = (every), .spike_seed = (s), .spike_mag = (mag)

/* The id and description a grid's expand function writes. */
typedef struct case_text {
    char id[64], desc[240];
} case_text;
typedef void (*expand_fn)(unsigned i, unsigned j, enc_case *c, case_text *t);

typedef struct family {
    const enc_case *rows; /* a table of n_rows cases, or */
    size_t n_rows;
    expand_fn expand; /* a grid of ni x nj points, i the outer axis */
    unsigned ni, nj;
} family;
#define TABLE(t)                              \
    {                                         \
        t, sizeof t / sizeof t[0], NULL, 0, 0 \
    }
#define GRID(f, ni, nj)    \
    {                      \
        NULL, 0, f, ni, nj \
    }

static int make_input(float *x, const enc_case *c)
{
    const tahq_shape *s = &c->shape;
    const uint64_t n = golden_count_of(s);
    switch (c->fill) {
    case FILL_UNIFORM:
        fill_uniform(x, n, c->seed, c->scale);
        break;
    case FILL_ROWS:
        fill_rows(x, s, c->seed);
        break;
    case FILL_LLM:
        if (llm_tensor_fill(x, s->batch, s->seq_len, s->channels, c->seed))
            return -1;
        break;
    default:
        break;
    }
    if (c->spike_every)
        add_spikes(x, n, c->paper_v1 ? c->pcfg.tile : c->cfg.tile, c->spike_every, c->spike_seed,
                   c->spike_mag);
    if (c->pattern)
        c->pattern(x, n, c);
    for (unsigned k = 0; k < c->n_pokes; ++k)
        x[c->pokes[k].at] = c->pokes[k].v;
    return 0;
}

/* The interpreter: one case's input, then its files. A case listed in the
 * v2 kill table (msg_kills) carries its kills. */
static void emit_case(golden_writer *g, const enc_case *c)
{
    const char *flags = c->flags ? c->flags : "";
    float *x = golden_alloc_x(&c->shape);
    if (make_input(x, c) != 0) {
        fprintf(stderr, "tahq golden-gen: case %s: no input\n", c->id);
        golden_writer_fail(g);
    } else if (c->paper_v1) {
        golden_emit_paper_v1(g, c->id, flags, c->desc, &c->pcfg, &c->shape, x);
    } else {
        g->kills = msg_kills(c->id);
        if (c->expect == TAHQ_OK)
            golden_emit_encode(g, c->id, flags, c->desc, &c->cfg, &c->shape, x);
        else
            golden_emit_encode_error(g, c->id, flags, c->desc, &c->cfg, &c->shape, x, c->expect);
        g->kills = NULL;
    }
    free(x);
}

static void run_families(golden_writer *g, const family *f, size_t n)
{
    for (size_t k = 0; k < n; ++k) {
        for (size_t r = 0; r < f[k].n_rows; ++r)
            emit_case(g, &f[k].rows[r]);
        for (unsigned i = 0; i < f[k].ni; ++i)
            for (unsigned j = 0; j < f[k].nj; ++j) {
                case_text t;
                enc_case c;
                memset(&c, 0, sizeof c);
                c.id = t.id;
                c.desc = t.desc;
                f[k].expand(i, j, &c, &t);
                emit_case(g, &c);
            }
    }
}

static void set_uniform(enc_case *c, uint64_t seed, float scale)
{
    c->fill = FILL_UNIFORM;
    c->seed = seed;
    c->scale = scale;
}

static void set_spikes(enc_case *c, uint32_t every, uint64_t seed, float mag)
{
    c->spike_every = every;
    c->spike_seed = seed;
    c->spike_mag = mag;
}

/* ------------------------------------------------ sweep, allocation, gate, rounding, metadata */

static const uint32_t tiles_all[6] = {8, 16, 32, 64, 128, 256};
static const tahq_meta metas[3] = {TAHQ_META_FP16, TAHQ_META_BF16, TAHQ_META_FP32};
static const tahq_alloc allocs[3] = {TAHQ_ALLOC_NONE, TAHQ_ALLOC_TOKEN, TAHQ_ALLOC_TILE};

/* every G (i) with every bit-width b = j + 1 */
static void sweep_case(unsigned gi, unsigned j, enc_case *c, case_text *t)
{
    const uint32_t G = tiles_all[gi], b = j + 1;
    c->cfg =
        golden_config(G, b, b > 1 ? b - 1 : 1, allocs[(gi + b) % 3], 2.0f, metas[(gi + 2 * b) % 3]);
    c->cfg.hi_permille = 600;
    c->shape = golden_shape(2, 5, 2 * G);
    set_uniform(c, 1000u * G + b, 1.0f);
    set_spikes(c, 3, 1000u * G + b, 16.0f);
    c->flags = "sweep";
    snprintf(t->id, sizeof t->id, "sweep-g%03u-b%u", (unsigned)G, (unsigned)b);
    snprintf(t->desc, sizeof t->desc,
             "tile and bit-width sweep: G=%u, %u/%u bits, uniform values with a spike "
             "in every third tile",
             (unsigned)G, (unsigned)c->cfg.hi_bits, (unsigned)c->cfg.lo_bits);
}

static const uint32_t alloc_permilles[7] = {0, 1, 200, 500, 800, 999, 1000};

/* every allocation (i) at every hi_permille (j) */
static void alloc_case(unsigned a, unsigned ri, enc_case *c, case_text *t)
{
    c->cfg = golden_config(32, 4, 3, allocs[a], 2.0f, TAHQ_META_FP16);
    c->cfg.hi_permille = alloc_permilles[ri];
    c->shape = golden_shape(2, 10, 256);
    c->fill = FILL_ROWS;
    c->seed = 77 + (uint64_t)ri;
    c->flags = "allocation";
    snprintf(t->id, sizeof t->id, "alloc-%s-r%04u", cli_alloc_name(allocs[a]),
             (unsigned)alloc_permilles[ri]);
    snprintf(t->desc, sizeof t->desc,
             "allocation %s with hi_permille %u on rows of different entropy",
             cli_alloc_name(allocs[a]), (unsigned)alloc_permilles[ri]);
}

static const uint32_t bit_pairs[8][2] = {{8, 1}, {8, 8}, {5, 2}, {3, 3},
                                         {2, 1}, {7, 6}, {1, 1}, {6, 4}};

/* every hi/lo pair (i) with allocation token and tile (j) */
static void bit_pair_case(unsigned p, unsigned j, enc_case *c, case_text *t)
{
    const tahq_alloc a = allocs[j + 1];
    c->cfg = golden_config(16, bit_pairs[p][0], bit_pairs[p][1], a, 2.0f, TAHQ_META_FP16);
    c->cfg.hi_permille = 700;
    c->shape = golden_shape(1, 10, 128);
    c->fill = FILL_ROWS;
    c->seed = 500 + (uint64_t)p;
    c->flags = "bit_pair";
    snprintf(t->id, sizeof t->id, "bits-%u-%u-%s", (unsigned)bit_pairs[p][0],
             (unsigned)bit_pairs[p][1], cli_alloc_name(a));
    snprintf(t->desc, sizeof t->desc, "bit-width pair %u/%u with %s allocation",
             (unsigned)bit_pairs[p][0], (unsigned)bit_pairs[p][1], cli_alloc_name(a));
}

/* spikes of magnitude 1..32, one per tile: each tau flags a different set */
static void tau_spikes(float *x, uint64_t n, const enc_case *c)
{
    const uint32_t G = c->cfg.tile;
    for (uint64_t t = 0; t * G < n; ++t) {
        uint32_t w = tahq_random_word(99, t);
        x[t * G + w % G] = (float)(1u << (t % 6)) * ((w >> 31) ? -1.0f : 1.0f);
    }
}

static const float tau_taus[9] = {0.0f, 0.25f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 16.0f, INFINITY};
static const uint32_t tau_tiles[3] = {8, 64, 256};

/* every tau (i) at three G (j) */
static void tau_case(unsigned ti, unsigned gi, enc_case *c, case_text *t)
{
    const uint32_t G = tau_tiles[gi];
    char tn[32];
    c->cfg = golden_config(G, 4, 3, TAHQ_ALLOC_TOKEN, tau_taus[ti], TAHQ_META_FP16);
    c->shape = golden_shape(1, 4, 2 * G);
    set_uniform(c, 31 + (uint64_t)gi, 1.0f);
    c->pattern = tau_spikes;
    c->flags = "gate_tau";
    snprintf(t->id, sizeof t->id, "tau-%s-g%03u", tau_name(tau_taus[ti], tn, sizeof tn),
             (unsigned)G);
    snprintf(t->desc, sizeof t->desc,
             "outlier gate tau=%s, G=%u, tiles with spikes of magnitude 1..32", tn, (unsigned)G);
}

/* Tiles built to sit on the gate's decision boundary (SPEC §5.1). */
static void gate_tiles(float *x, uint64_t n, const enc_case *c)
{
    const uint32_t G = c->cfg.tile;
    const float tau = c->cfg.tau;
    (void)n;
    /* 8 tiles; base values 1/8 except where set */
    for (uint32_t i = 0; i < 8 * G; ++i)
        x[i] = (float)((int)(i % 7) - 3) * 0x1p-5f;
    float m2 = 1.0f;
    float *t0 = x, *t1 = x + G, *t2 = x + 2 * G, *t3 = x + 3 * G, *t4 = x + 4 * G, *t5 = x + 5 * G,
          *t6 = x + 6 * G, *t7 = x + 7 * G;
    float thr = isinf(tau) ? 2.0f : tau * m2; /* fl(tau * m2) */
    /* t0: m1 exactly fl(tau*m2): flagged */
    t0[1] = m2;
    t0[G - 1] = thr;
    /* t1: m1 one ulp below: not flagged (unless tau <= 1) */
    t1[0] = -m2;
    t1[3] = -nextafterf(thr, 0.0f);
    /* t2: two equal maxima of opposite sign: pivot is the lower index */
    t2[2] = -1.5f;
    t2[5] = 1.5f;
    /* t3: single non-zero value: flagged for every finite tau */
    for (uint32_t i = 0; i < G; ++i)
        t3[i] = 0.0f;
    t3[G / 2] = -7.0f;
    /* t4: all zero: never flagged */
    for (uint32_t i = 0; i < G; ++i)
        t4[i] = 0.0f;
    /* t5: fl(3 * (1 + 3*2^-23)) rounds down to 3 + 2^-20: with tau = 3 the
     * rounded product decides (real product is larger than m1) */
    t5[0] = 1.0f + 3.0f * 0x1p-23f;
    t5[G - 2] = 3.0f + 0x1p-20f;
    /* t6: constant non-zero tile (m1 = m2) */
    for (uint32_t i = 0; i < G; ++i)
        t6[i] = 0.75f;
    /* t7: pivot at the last position, max repeated later is impossible: max
     * at index G-1 only */
    t7[G - 1] = 5.0f * m2;
    t7[0] = 1.25f;
}

static const float gate_taus[5] = {0.0f, 1.0f, 2.0f, 3.0f, INFINITY};
static const uint32_t gate_G[2] = {8, 256};

/* the gate's boundary tiles at every tau (i) and two G (j) */
static void gate_case(unsigned ti, unsigned gi, enc_case *c, case_text *t)
{
    const uint32_t G = gate_G[gi];
    char tn[32];
    c->cfg = golden_config(G, 4, 3, TAHQ_ALLOC_TILE, gate_taus[ti], TAHQ_META_FP32);
    c->shape = golden_shape(1, 1, 8 * G);
    c->pattern = gate_tiles;
    c->flags = "gate_boundary,single_spike,all_zero_tile,constant_tile";
    snprintf(t->id, sizeof t->id, "gate-boundary-tau%s-g%03u",
             tau_name(gate_taus[ti], tn, sizeof tn), (unsigned)G);
    snprintf(t->desc, sizeof t->desc,
             "gate decision boundary, tau=%s: m1 = fl(tau*m2), one ulp below, equal "
             "maxima, single value, zero tile, rounded product, constant tile",
             tn);
}

static const uint64_t stoch_seeds[5] = {0, 1, 42, UINT64_MAX, UINT64_C(0x0123456789ABCDEF)};
static const uint32_t stoch_bits[5] = {1, 2, 3, 4, 8};

/* stochastic rounding: every seed (i) at every bit-width (j) */
static void stoch_seed_case(unsigned si, unsigned bi, enc_case *c, case_text *t)
{
    const uint32_t b = stoch_bits[bi];
    c->cfg = golden_config(64, b, b > 1 ? b - 1 : 1, TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_META_FP16);
    c->cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    c->cfg.seed = stoch_seeds[si];
    c->shape = golden_shape(1, 3, 256);
    set_uniform(c, 7 + (uint64_t)bi, 1.0f);
    set_spikes(c, 4, 7, 8.0f);
    c->flags = "stochastic_seed";
    snprintf(t->id, sizeof t->id, "stoch-seed%u-b%u", si, (unsigned)b);
    snprintf(t->desc, sizeof t->desc, "stochastic rounding, seed %" PRIu64 ", %u bits",
             stoch_seeds[si], (unsigned)b);
}

/* stochastic rounding with tile allocation at every G (i) */
static void stoch_tile_case(unsigned gi, unsigned j, enc_case *c, case_text *t)
{
    const uint32_t G = tiles_all[gi];
    (void)j;
    c->cfg = golden_config(G, 4, 2, TAHQ_ALLOC_TILE, 2.0f, metas[gi % 3]);
    c->cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    c->cfg.seed = 1234567u + G;
    c->shape = golden_shape(2, 2, 2 * G);
    set_uniform(c, 17 + (uint64_t)G, 4.0f);
    set_spikes(c, 2, 17, 64.0f);
    snprintf(t->id, sizeof t->id, "stoch-g%03u", (unsigned)G);
    snprintf(t->desc, sizeof t->desc, "stochastic rounding with tile allocation, G=%u",
             (unsigned)G);
}

/* the magnitudes of the metadata cases (arg: index in meta_ranges) */
static void meta_magnitude(float *x, uint64_t n, const enc_case *c)
{
    for (uint64_t i = 0; i < n; ++i) {
        switch (c->arg) {
        case 1:
            x[i] *= 0x1p12f;
            break;
        case 2:
            x[i] *= 0x1p-14f;
            break;
        case 3:
            x[i] *= 0x1p-30f;
            break;
        case 4:
            x[i] += 1000.0f;
            break;
        case 5:
            x[i] *= 0x1p60f;
            break;
        default:
            break;
        }
    }
}

static const char *const meta_ranges[6] = {"unit", "large", "small", "tiny", "offset", "huge"};

/* every metadata type (i) on every magnitude (j) */
static void meta_case(unsigned m, unsigned f, enc_case *c, case_text *t)
{
    c->cfg = golden_config(32, 4, 3, TAHQ_ALLOC_TOKEN, 2.0f, metas[m]);
    c->shape = golden_shape(1, 4, 128);
    set_uniform(c, 300 + (uint64_t)f, 1.0f);
    set_spikes(c, 3, 300, 6.0f);
    c->pattern = meta_magnitude;
    c->arg = f;
    if (f == 5 && metas[m] == TAHQ_META_FP16) {
        c->expect = TAHQ_ERR_RANGE;
        c->flags = "meta_overflow";
    } else {
        c->flags = f == 3 ? "tiny_range" : "";
    }
    snprintf(t->id, sizeof t->id, "meta-%s-%s", cli_meta_name(metas[m]), meta_ranges[f]);
    snprintf(t->desc, sizeof t->desc, "%s metadata, %s-magnitude values", cli_meta_name(metas[m]),
             meta_ranges[f]);
}

/* ------------------------------------------------ edge cases */

/* all-zero tensors at G = 8, 32, 128 (i) */
static void all_zero_case(unsigned i, unsigned j, enc_case *c, case_text *t)
{
    const uint32_t G = tiles_all[2 * i];
    (void)j;
    c->cfg = golden_config(G, 4, 3, TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_META_FP16);
    c->shape = golden_shape(1, 3, 2 * G);
    c->flags = "all_zero_tile,tie_entropy";
    snprintf(t->id, sizeof t->id, "edge-all-zero-g%03u", (unsigned)G);
    snprintf(t->desc, sizeof t->desc, "all-zero tensor, G=%u: H=0 everywhere, s=0, nothing flagged",
             (unsigned)G);
}

static const enc_case all_zero_tau0[] = {
    {.id = "edge-all-zero-tau0",
     .flags = "all_zero_tile",
     .desc = "all-zero tensor under tau=0: an all-zero tile is never flagged",
     .cfg = CFG(16, 4, 3, 800, TILE, 0.0f, BF16),
     .shape = {1, 2, 64}},
};

/* every third tile all zero */
static void zero_third_tiles(float *x, uint64_t n, const enc_case *c)
{
    for (uint64_t i = 0; i < n; ++i)
        if ((i / c->cfg.tile) % 3 == 1)
            x[i] = 0.0f;
}

/* zero tiles among others, every metadata type (i); fp32 with stochastic rounding */
static void zero_tiles_case(unsigned m, unsigned j, enc_case *c, case_text *t)
{
    (void)j;
    c->cfg = golden_config(16, 4, 3, TAHQ_ALLOC_TILE, 2.0f, metas[m]);
    if (m == 2)
        c->cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    c->shape = golden_shape(1, 4, 64);
    set_uniform(c, 5, 1.0f);
    c->pattern = zero_third_tiles;
    c->flags = "all_zero_tile";
    c->desc = "every third tile is all zero";
    snprintf(t->id, sizeof t->id, "edge-zero-tiles-%s", cli_meta_name(metas[m]));
}

/* every other tile constant (value) */
static void constant_tiles(float *x, uint64_t n, const enc_case *c)
{
    for (uint64_t i = 0; i < n; ++i)
        if ((i / c->cfg.tile) % 2 == 0)
            x[i] = c->value;
}

static const struct {
    const char *name;
    float v;
    tahq_meta m;
    float tau;
} edge_constants[8] = {
    {"ongrid-fp16", 1.5f, TAHQ_META_FP16, 2.0f},
    {"offgrid-fp16", 0.1f, TAHQ_META_FP16, 2.0f},
    {"offgrid-bf16", 0.1f, TAHQ_META_BF16, 2.0f},
    {"fp32", 0.1f, TAHQ_META_FP32, 2.0f},
    {"negative", -3.25f, TAHQ_META_FP16, 2.0f},
    {"above-fp16-max", 70000.0f, TAHQ_META_FP16, 2.0f},
    {"tau0", 0.75f, TAHQ_META_FP16, 0.0f},
    {"tau0-offgrid", 0.3f, TAHQ_META_BF16, 0.0f},
};

/* constant tiles beside random ones, one row of edge_constants each (i) */
static void constant_case(unsigned k, unsigned j, enc_case *c, case_text *t)
{
    (void)j;
    c->cfg = golden_config(32, 4, 3, TAHQ_ALLOC_TOKEN, edge_constants[k].tau, edge_constants[k].m);
    c->shape = golden_shape(1, 2, 96);
    set_uniform(c, 9, 1.0f);
    c->pattern = constant_tiles;
    c->value = edge_constants[k].v;
    c->flags = "constant_tile";
    snprintf(t->id, sizeof t->id, "edge-constant-%s", edge_constants[k].name);
    snprintf(t->desc, sizeof t->desc, "constant tiles of %.9g beside random ones",
             (double)edge_constants[k].v);
}

static const uint32_t spike_positions[4] = {0, 63, 17, 32};

/* a single spike at every position (i) in small noise or zeros (j) */
static void spike_case(unsigned p, unsigned z, enc_case *c, case_text *t)
{
    const uint32_t pos = spike_positions[p];
    c->cfg = golden_config(64, 4, 3, TAHQ_ALLOC_NONE, 2.0f, TAHQ_META_FP16);
    c->shape = golden_shape(1, 1, 128);
    if (!z)
        set_uniform(c, 11, 0x1p-10f);
    c->n_pokes = 2;
    c->pokes[0] = (poke){pos, p % 2 ? -1000.0f : 1000.0f};
    c->pokes[1] = (poke){64 + pos, 3.0f};
    c->flags = "single_spike";
    snprintf(t->id, sizeof t->id, "edge-spike-pos%02u-%s", (unsigned)pos, z ? "zero" : "noise");
    snprintf(t->desc, sizeof t->desc,
             "a single spike at position %u in a tile of %s (Hadamard spreads it)", (unsigned)pos,
             z ? "zeros" : "small noise");
}

static const enc_case spike_ungated[] = {
    {.id = "edge-spike-ungated",
     .flags = "single_spike",
     .desc = "a spike without the gate (tau=inf): the small values quantize to the zero-point",
     .cfg = CFG(64, 4, 3, 800, NONE, INFINITY, FP16),
     .shape = {1, 1, 128},
     UNIFORM(11, 0x1p-10f),
     .n_pokes = 1,
     .pokes = {{5, 1000.0f}}},
};

/* binary32 subnormal patterns (arg 0: all, 1: a few normals among them,
 * 2: the smallest) */
static void subnormal_values(float *x, uint64_t n, const enc_case *c)
{
    const uint32_t f = c->arg;
    for (uint64_t i = 0; i < n; ++i) {
        uint32_t w = tahq_random_word(600 + (uint64_t)f, i);
        uint32_t mag = f == 0 ? (w & 0x7FFFFFu) : (w & 0xFFu); /* subnormal patterns */
        float v = u2f(mag | (w & 0x80000000u));
        if (f == 1 && i % 5 == 0)
            v = golden_unif(601, i) * 0x1p-120f; /* a few normals */
        x[i] = v;
    }
}

static const char *const subnormal_kinds[3] = {"all", "mixed", "smallest"};

/* subnormal inputs under every metadata type (i), of every kind (j) */
static void subnormal_case(unsigned m, unsigned f, enc_case *c, case_text *t)
{
    c->cfg = golden_config(16, 4, 3, f == 2 ? TAHQ_ALLOC_TILE : TAHQ_ALLOC_TOKEN, 2.0f, metas[m]);
    c->shape = golden_shape(1, 4, 64);
    c->pattern = subnormal_values;
    c->arg = f;
    c->flags = "denormal";
    snprintf(t->id, sizeof t->id, "edge-denormal-%s-%s", subnormal_kinds[f],
             cli_meta_name(metas[m]));
    snprintf(t->desc, sizeof t->desc,
             "binary32 subnormal inputs (%s), %s metadata; the entropy reciprocal "
             "overflows to +inf",
             subnormal_kinds[f], cli_meta_name(metas[m]));
}

static void signed_zeros(float *x, uint64_t n, const enc_case *c)
{
    (void)n;
    (void)c;
    for (uint32_t i = 0; i < 64; ++i)
        x[i] = (i % 3 == 0) ? -0.0f : 0.0f;
    for (uint32_t i = 16; i < 24; ++i)
        x[i] = (i % 2) ? 0.5f : -0.0f; /* min is -0: z must be written as +0 */
    for (uint32_t i = 40; i < 48; ++i)
        x[i] = (i % 2) ? -0.25f : -0.0f; /* max is -0 */
}

/* tiles of signed zeros under every metadata type (i) */
static void signed_zero_case(unsigned m, unsigned j, enc_case *c, case_text *t)
{
    (void)j;
    c->cfg = golden_config(8, 3, 2, TAHQ_ALLOC_TILE, 2.0f, metas[m]);
    c->shape = golden_shape(1, 2, 32);
    c->pattern = signed_zeros;
    c->flags = "signed_zero,all_zero_tile";
    c->desc = "tiles of -0 and +0, and tiles whose min or max is -0";
    snprintf(t->id, sizeof t->id, "edge-signed-zero-%s", cli_meta_name(metas[m]));
}

/* codes exactly halfway between two integers at L = 2^b - 1 */
static void code_ties(float *x, uint64_t n, const enc_case *c)
{
    const float L = (float)((1u << c->cfg.hi_bits) - 1u);
    (void)n;
    for (uint32_t i = 0; i < 16; ++i)
        x[i] = (float)(i % 8) * 0.5f * (i % 8 == 7 ? 0.0f : 1.0f);
    x[7] = L; /* range 0..L: z = 0, s = 1 */
    x[8] = 0.0f;
    x[15] = L;
    for (uint32_t i = 9; i < 15; ++i)
        x[i] = (float)(i - 9) + 0.5f;
}

/* code ties at 2 bits (fp32), 3 bits (fp32) and 3 bits (fp16) (i) */
static void code_tie_case(unsigned k, unsigned j, enc_case *c, case_text *t)
{
    const uint32_t b = k == 0 ? 2 : 3;
    (void)j;
    c->cfg =
        golden_config(8, b, b, TAHQ_ALLOC_NONE, INFINITY, k == 2 ? TAHQ_META_FP16 : TAHQ_META_FP32);
    c->shape = golden_shape(1, 2, 16);
    c->pattern = code_ties;
    c->flags = "tie_round";
    c->desc = "codes exactly halfway between two integers (ties to even)";
    snprintf(t->id, sizeof t->id, "edge-tie-round-b%u-%s", (unsigned)b, cli_meta_name(c->cfg.meta));
}

/* identical tokens of 64 values */
static void identical_tokens(float *x, uint64_t n, const enc_case *c)
{
    (void)c;
    for (uint64_t i = 0; i < n; ++i)
        x[i] = golden_unif(1, i % 64);
}

/* identical tiles of 16 values */
static void identical_tiles(float *x, uint64_t n, const enc_case *c)
{
    (void)c;
    for (uint64_t i = 0; i < n; ++i)
        x[i] = golden_unif(2, i % 16);
}

/* tokens of 64 values holding the same values, rotated by one tile each */
static void rotated_tokens(float *x, uint64_t n, const enc_case *c)
{
    (void)c;
    for (uint64_t r = 0; r * 64 < n; ++r)
        for (uint32_t i = 0; i < 64; ++i)
            x[r * 64 + i] = golden_unif(3, (i + 16u * r) % 64);
}

static const enc_case entropy_ties[] = {
    {.id = "edge-tie-entropy-token",
     .flags = "tie_entropy,multi_batch",
     .desc = "identical tokens: equal entropies, the lower row index gets low precision",
     .cfg = CFG(16, 4, 3, 500, TOKEN, 2.0f, FP16),
     .shape = {2, 6, 64},
     .pattern = identical_tokens},
    {.id = "edge-tie-entropy-tile",
     .flags = "tie_entropy",
     .desc = "identical tiles: equal entropies, the lower tile index gets low precision",
     .cfg = CFG(16, 4, 3, 500, TILE, 2.0f, FP16),
     .shape = {1, 3, 128},
     .pattern = identical_tiles},
    {.id = "edge-tie-entropy-permuted",
     .flags = "tie_entropy",
     .desc = "tokens holding the same values in tile-rotated order",
     .cfg = CFG(16, 4, 3, 500, TOKEN, 2.0f, FP16),
     .shape = {1, 8, 64},
     .pattern = rotated_tokens},
};

/* values just below the input limit 2^64 under bf16 and fp32 metadata (i) */
static void near_limit_case(unsigned i, unsigned j, enc_case *c, case_text *t)
{
    const tahq_meta m = metas[i + 1];
    const float below = 0x1.fffffep63f; /* the largest float below 2^64 */
    (void)j;
    c->cfg = golden_config(8, 4, 3, TAHQ_ALLOC_TOKEN, 2.0f, m);
    c->shape = golden_shape(1, 2, 16);
    set_uniform(c, 8, 0x1p40f);
    c->n_pokes = 3;
    c->pokes[0] = (poke){0, below};
    c->pokes[1] = (poke){9, -below};
    c->pokes[2] = (poke){10, below};
    c->flags = "input_limit,single_spike";
    c->desc = "values of magnitude just below 2^64 (Hadamard outputs near 2^66)";
    snprintf(t->id, sizeof t->id, "edge-near-limit-%s", cli_meta_name(m));
}

static void thousands(float *x, uint64_t n, const enc_case *c)
{
    (void)c;
    for (uint64_t i = 0; i < n; ++i)
        x[i] = (float)i * 1000.0f;
}

/* values at the fp16 limits +-65504 at 1 bit (ERR_RANGE) and 4 bits (i) */
static void fp16_max_case(unsigned i, unsigned j, enc_case *c, case_text *t)
{
    const uint32_t b = 1 + 3 * i;
    (void)j;
    c->cfg = golden_config(8, b, b, TAHQ_ALLOC_NONE, INFINITY, TAHQ_META_FP16);
    c->shape = golden_shape(1, 1, 8);
    c->pattern = thousands;
    c->n_pokes = 2;
    c->pokes[0] = (poke){0, -65504.0f};
    c->pokes[1] = (poke){7, 65504.0f};
    if (b == 1) {
        c->expect = TAHQ_ERR_RANGE;
        c->flags = "meta_overflow";
        c->desc = "range 131008 with L=1: the fp16 scale overflows";
    } else {
        c->flags = "meta_boundary";
        c->desc = "values at the fp16 limits +-65504";
    }
    snprintf(t->id, sizeof t->id, "edge-fp16-max-b%u", (unsigned)b);
}

/* ranges whose w/L is an fp16 subnormal */
static void tiny_ranges(float *x, uint64_t n, const enc_case *c)
{
    (void)c;
    for (uint32_t i = 0; i < n; ++i)
        x[i] = (float)(tahq_random_word(71, i) % 1000u) * 0x1p-30f * (float)(1u + i / 8);
}

static const enc_case subnormal_scale[] = {
    {.id = "edge-subnormal-scale-fp16",
     .flags = "tiny_range,meta_boundary",
     .desc = "ranges whose w/L is an fp16 subnormal: the scale search takes several steps",
     .cfg = CFG(8, 8, 8, 800, NONE, INFINITY, FP16),
     .shape = {1, 4, 8},
     .pattern = tiny_ranges},
};

/* ------------------------------------------------ sizes, random configurations, LLM-like */

static const enc_case sizes[] = {
#define SIZE(name, G, b, s, c, r, a, k, desc_)                                                     \
    {                                                                                              \
        .id = "size-" name, .flags = "size", .desc = desc_, .cfg = CFG(G, 4, 3, r, a, 2.0f, FP16), \
        .shape = {b, s, c}, ROWS(40 + k), SPIKES(5, 40, 10.0f)                                     \
    }
    SIZE("one-tile-g8", 8, 1, 1, 8, 800, TOKEN, 0, "shape [1,1,8], G=8, token allocation, r=800"),
    SIZE("one-tile-g64", 64, 1, 1, 64, 800, TILE, 1,
         "shape [1,1,64], G=64, tile allocation, r=800"),
    SIZE("one-tile-g256", 256, 1, 1, 256, 0, TOKEN, 2,
         "shape [1,1,256], G=256, token allocation, r=0"),
    SIZE("one-row-g8", 8, 1, 1, 1024, 800, TILE, 3,
         "shape [1,1,1024], G=8, tile allocation, r=800"),
    SIZE("one-column-g8", 8, 1, 64, 8, 800, TOKEN, 4,
         "shape [1,64,8], G=8, token allocation, r=800"),
    SIZE("seq1-r800", 64, 8, 1, 64, 800, TOKEN, 5, "shape [8,1,64], G=64, token allocation, r=800"),
    SIZE("seq1-r0", 64, 8, 1, 64, 0, TOKEN, 6, "shape [8,1,64], G=64, token allocation, r=0"),
    SIZE("batch16-g16", 16, 16, 3, 32, 667, TOKEN, 7,
         "shape [16,3,32], G=16, token allocation, r=667"),
#undef SIZE
};

static const float random_taus[6] = {0.0f, 1.0f, 1.5f, 2.0f, 4.0f, INFINITY};

/* configuration k (i) drawn from a fixed Philox key: combinations */
static void random_case(unsigned k, unsigned j, enc_case *c, case_text *t)
{
    uint32_t w[4];
    uint32_t ctr[4] = {k, 0, 0, 0}, key[2] = {0x60DEu, 0x1u};
    (void)j;
    tahq_philox4x32_10(ctr, key, w);
    uint32_t G = tiles_all[w[0] % 6];
    uint32_t hi = 1 + (w[0] >> 8) % 8;
    uint32_t lo = 1 + (w[0] >> 16) % hi;
    c->cfg = golden_config(G, hi, lo, allocs[w[1] % 3], random_taus[(w[1] >> 8) % 6],
                           metas[(w[1] >> 16) % 3]);
    c->cfg.hi_permille = (w[2] >> 8) % 1001;
    c->cfg.rounding = (w[2] & 1) ? TAHQ_ROUND_STOCHASTIC : TAHQ_ROUND_NEAREST_EVEN;
    c->cfg.seed = (uint64_t)w[3] << 32 | w[2];
    uint32_t maxc = G >= 128 ? 2 : 4;
    c->shape = golden_shape(1 + (w[3] % 3), 1 + (w[3] >> 8) % 6, G * (1 + (w[3] >> 16) % maxc));
    c->fill = FILL_ROWS;
    c->seed = 900 + (uint64_t)k;
    set_spikes(c, 1 + (w[3] >> 24) % 4, 900 + (uint64_t)k, (float)(1u << ((w[2] >> 4) % 8)));
    c->flags = "random_config";
    snprintf(t->id, sizeof t->id, "random-%03u", k);
    cli_config_text(&c->cfg, t->desc, 200);
}

static const enc_case llm_cases[] = {
#define LLM_512(name, G, hi, lo, r, a, tau, rd, m)                                  \
    {                                                                               \
        .id = "llm-1x16x512-" name, .flags = "llm_like,massive_activation",         \
        .desc = "LLM-like activations [1,16,512] (seed 3), " name,                  \
        .cfg = CFG_R(G, hi, lo, r, a, tau, rd, 7, m), .shape = {1, 16, 512}, LLM(3) \
    }
    LLM_512("default", 64, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("tile-alloc", 64, 4, 3, 800, TILE, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("tau-inf", 64, 4, 3, 800, TOKEN, INFINITY, NEAREST_EVEN, FP16),
    LLM_512("tau0", 64, 4, 3, 800, TOKEN, 0.0f, NEAREST_EVEN, FP16),
    LLM_512("stochastic", 64, 4, 3, 800, TOKEN, 2.0f, STOCHASTIC, FP16),
    LLM_512("bf16", 64, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, BF16),
    LLM_512("fp32", 64, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, FP32),
    LLM_512("g8", 8, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("g32", 32, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("g128", 128, 4, 3, 800, TOKEN, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("g256", 256, 4, 3, 800, TILE, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("plain4", 64, 4, 4, 800, NONE, INFINITY, NEAREST_EVEN, FP16),
    LLM_512("bits8-4", 64, 8, 4, 500, TOKEN, 2.0f, NEAREST_EVEN, FP16),
    LLM_512("bits2-1", 64, 2, 1, 800, TILE, 2.0f, NEAREST_EVEN, BF16),
#undef LLM_512
#define LLM_DEFAULT(b, s, c, seed, flags_, desc_)                                   \
    {                                                                               \
        .id = "llm-" #b "x" #s "x" #c "-default", .flags = flags_, .desc = desc_,   \
        .cfg = CFG(64, 4, 3, 800, TOKEN, 2.0f, FP16), .shape = {b, s, c}, LLM(seed) \
    }
    LLM_DEFAULT(2, 32, 256, 11, "llm_like,massive_activation",
                "LLM-like activations [2,32,256], paper operating point"),
    LLM_DEFAULT(4, 8, 128, 12, "llm_like,massive_activation",
                "LLM-like activations [4,8,128], paper operating point"),
    LLM_DEFAULT(3, 5, 1536, 13, "llm_like,massive_activation",
                "LLM-like activations [3,5,1536], paper operating point"),
    LLM_DEFAULT(1, 1024, 1600, 1, "llm_like,massive_activation,large",
                "the paper's worked size [1,1024,1600] (GPT2-XL hidden size), G=64, paper "
                "operating point"),
#undef LLM_DEFAULT
};

/* ------------------------------------------------ invalid inputs and configurations */

static const enc_case encode_errors[] = {
#define ENCERR(name, expect_, desc_, n, ...)                                               \
    {                                                                                      \
        .id = "encerr-" name, .desc = desc_, .cfg = CFG(16, 4, 3, 800, TOKEN, 2.0f, FP16), \
        .shape = {1, 2, 32}, UNIFORM(3, 1.0f), .n_pokes = n, .pokes = {__VA_ARGS__},       \
        .expect = TAHQ_ERR_##expect_                                                       \
    }
    ENCERR("nan-first", NONFINITE, "NaN at element 0", 1, {0, NAN}),
    ENCERR("nan-last", NONFINITE, "NaN at the last element", 1, {63, NAN}),
    ENCERR("pos-inf", NONFINITE, "+inf in the input", 1, {20, INFINITY}),
    ENCERR("neg-inf", NONFINITE, "-inf in the input", 1, {33, -INFINITY}),
    ENCERR("two-pow-64", RANGE, "|x| = 2^64 (limit is |x| < 2^64)", 1, {7, 0x1p64f}),
    ENCERR("neg-two-pow-64", RANGE, "x = -2^64", 1, {7, -0x1p64f}),
    ENCERR("range-before-nan", RANGE, "2^70 at element 3 precedes a NaN at element 10: index order",
           2, {3, 0x1p70f}, {10, NAN}),
    ENCERR("nan-before-range", NONFINITE,
           "NaN at element 3 precedes 2^70 at element 10: index order", 2, {3, NAN}, {10, 0x1p70f}),
    ENCERR("max-float", RANGE, "FLT_MAX in the input", 1, {12, 0x1.fffffep127f}),
#undef ENCERR
    {.id = "encerr-shape-c96-g64",
     .desc = "C not a multiple of G",
     .cfg = CFG(64, 4, 3, 800, TOKEN, 2.0f, FP16),
     .shape = {1, 2, 96},
     UNIFORM(3, 1.0f),
     .expect = TAHQ_ERR_SHAPE},
    {.id = "encerr-shape-c32-g64",
     .desc = "C smaller than G",
     .cfg = CFG(64, 4, 3, 800, TOKEN, 2.0f, FP16),
     .shape = {1, 2, 32},
     UNIFORM(3, 1.0f),
     .expect = TAHQ_ERR_SHAPE},
};

/* Configurations SPEC §3.3 refuses (ERR_CONFIG), each one field off by the
 * smallest step a port gets wrong, and two cases that pin §9's order: a bad
 * configuration is reported before a bad shape and before a bad input. The
 * input is always finite and below 2^64 unless the case says otherwise. */
static const enc_case config_errors[] = {
#define CFGERR(name, desc_, G, hi, lo, r, tau, C, ...)                                     \
    {                                                                                      \
        .id = "cfgerr-v2-" name, .flags = "config_check", .desc = desc_,                   \
        .cfg = CFG(G, hi, lo, r, TOKEN, tau, FP16), .shape = {1, 2, C}, UNIFORM(29, 1.0f), \
        .expect = TAHQ_ERR_CONFIG, __VA_ARGS__                                             \
    }
    CFGERR("tile-12", "G = 12: not a power of two", 12, 4, 3, 800, 2.0f, 24),
    CFGERR("tile-4", "G = 4: below the smallest tile (8)", 4, 4, 3, 800, 2.0f, 32),
    CFGERR("tile-512", "G = 512: above the largest tile (256)", 512, 4, 3, 800, 2.0f, 512),
    CFGERR("hi-bits-9", "hi_bits = 9 (at most 8)", 64, 9, 3, 800, 2.0f, 64),
    CFGERR("lo-bits-0", "lo_bits = 0 (at least 1)", 64, 4, 0, 800, 2.0f, 64),
    CFGERR("lo-above-hi", "lo_bits = 4 > hi_bits = 3", 64, 3, 4, 800, 2.0f, 64),
    CFGERR("permille-1001", "hi_permille = 1001 (at most 1000)", 64, 4, 3, 1001, 2.0f, 64),
    CFGERR("tau-negative", "tau = -1", 64, 4, 3, 800, -1.0f, 64),
    CFGERR("tau-neg-zero", "tau = -0: the sign bit must be 0 (a test tau >= 0 accepts it)", 64, 4,
           3, 800, -0.0f, 64),
    CFGERR("tau-nan", "tau = NaN", 64, 4, 3, 800, NAN, 64),
    CFGERR("before-shape", "G = 12 and C = 20 (not a multiple): the configuration is checked first",
           12, 4, 3, 800, 2.0f, 20),
    CFGERR("before-input", "hi_bits = 9 and a NaN input: the configuration is checked first", 64, 9,
           3, 800, 2.0f, 64, .n_pokes = 1, .pokes = {{0, NAN}}),
#undef CFGERR
};

/* one tile of eight values 0, w·1/8, ..., w·6/8 (binary32 products), then w;
 * w's bits in arg */
static void search_range(float *x, uint64_t n, const enc_case *c)
{
    const float w = u2f(c->arg);
    (void)n;
    for (int i = 0; i < 8; i++)
        x[i] = i == 7 ? w : w * ((float)i / 8.0f);
}

/* The §5.3 scale search with 16-bit metadata (golden/mutation/equiv_check.c
 * scale-steps lists every (w, L) where it leaves its start up(fl(w ÷ L))):
 * with fp16 only from a zero start (fl(w ÷ L) = 0, w ≤ L·2^-150), with bf16
 * also where w ÷ L is a binary32 subnormal. Each case is one tile of eight
 * values from 0 to w (so z = +0 and fl(hi − z) = w), alloc none, at the
 * smallest w of its kind. */
static const enc_case scale_search[] = {
#define SEARCH(name, desc_, m, b, w_bits)                                                     \
    {                                                                                         \
        .id = "search-v2-" name, .flags = "scale_search", .desc = desc_,                      \
        .cfg = CFG(8, b, b, 800, NONE, 2.0f, m), .shape = {1, 1, 8}, .pattern = search_range, \
        .arg = w_bits                                                                         \
    }
    SEARCH("bf16-l3",
           "bf16, L = 3: w = 0x1.80008p-132, w / L subnormal, the search steps from up(w / L)",
           BF16, 2, 0x00030001u),
    SEARCH("bf16-l255", "bf16, L = 255: w = 0x1.fe0002p-126, the search steps from up(w / L)", BF16,
           8, 0x00ff0001u),
    SEARCH("fp16-zero-start",
           "fp16, L = 3: w = 2^-149, fl(w / L) = 0, the search steps from a zero start", FP16, 2,
           0x00000001u),
    SEARCH("bf16-zero-start",
           "bf16, L = 255: w = 0x1.fcp-143, fl(w / L) = 0, the search steps from a zero start",
           BF16, 8, 0x0000007fu),
#undef SEARCH
};

/* ------------------------------------------------ paper-v1 */

/* the two tokens of the hand-derived message of ref/test_paper_v1.c */
static void paper_v1_hand(float *x, uint64_t n, const enc_case *c)
{
    static const float v[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 0, 0, 4, 0, 0, 0, 0};
    (void)c;
    for (uint64_t i = 0; i < n; ++i)
        x[i] = v[i];
}

/* all-zero tiles (flagged), equal maxima (not flagged), constant tiles, an
 * fp16-overflowing range (inf scale), entropy ties */
static void paper_v1_edges(float *x, uint64_t n, const enc_case *c)
{
    (void)n;
    (void)c;
    for (int k = 0; k < 64; k++) {
        x[1 * 128 + k] = 0.375f;                 /* constant tile */
        x[2 * 128 + k] = (k % 2) ? 1.5f : -1.5f; /* equal maxima */
        x[2 * 128 + 64 + k] = (float)(k % 7) * 0.25f;
        x[3 * 128 + 64 + k] = (k == 9) ? 1.0e5f : (float)k; /* one large value */
        x[4 * 128 + k] = (float)(k % 5) - 2.0f;             /* token 4 = token 5: tie */
        x[5 * 128 + k] = (float)(k % 5) - 2.0f;
    }
    x[3 * 128 + 5] = -1.0e5f; /* equal maxima, not flagged: zero point */
    x[3 * 128 + 6] = 1.0e5f;  /* -1e5 is sent as fp16 -inf */
}

static const enc_case paper_v1_cases[] = {
    {.id = "paper-v1-hand",
     .flags = "single_spike",
     .paper_v1 = 1,
     .desc = "two tokens whose 12-byte message is derived by hand in ref/test_paper_v1.c",
     .pcfg = {8, 2, 1, 500},
     .shape = {1, 2, 8},
     .pattern = paper_v1_hand},
    {.id = "paper-v1-default",
     .paper_v1 = 1,
     .desc = "the authors' defaults (G=64, 4/3 bits, r=0.8) on rows of different entropy with "
             "outliers",
     .pcfg = {64, 4, 3, 800},
     .shape = {2, 16, 256},
     ROWS(9001),
     SPIKES(3, 9002, 50.0f)},
    /* S = 5, r = 0.8: floor(5 * 0.19999999999999996) = 0 low tokens */
    {.id = "paper-v1-s5-r800",
     .flags = "allocation",
     .paper_v1 = 1,
     .desc = "S=5 at r=0.8: the binary64 floor gives 0 low tokens",
     .pcfg = {64, 4, 3, 800},
     .shape = {2, 5, 64},
     ROWS(9003)},
    {.id = "paper-v1-g32-8-2",
     .flags = "bit_pair",
     .paper_v1 = 1,
     .desc = "G=32 (odd log2: fl(sqrt 32)), 8/2 bits, r=0.333",
     .pcfg = {32, 8, 2, 333},
     .shape = {3, 7, 96},
     UNIFORM(9004, 3.0f),
     SPIKES(2, 9005, 20.0f)},
    {.id = "paper-v1-g256-r0",
     .flags = "allocation",
     .paper_v1 = 1,
     .desc = "G=256, r=0: every token low precision",
     .pcfg = {256, 4, 3, 0},
     .shape = {1, 4, 512},
     UNIFORM(9006, 0.5f),
     SPIKES(1, 9007, 8.0f)},
    {.id = "paper-v1-g8-r1000",
     .flags = "allocation",
     .paper_v1 = 1,
     .desc = "G=8, r=1: every token high precision; lo_bits above hi_bits is allowed",
     .pcfg = {8, 3, 5, 1000},
     .shape = {2, 3, 16},
     UNIFORM(9008, 1.0f)},
    {.id = "paper-v1-edge",
     .flags = "all_zero_tile,constant_tile,tie_entropy,meta_overflow",
     .paper_v1 = 1,
     .desc = "all-zero, constant and equal-maxima tiles, fp16 overflow of zero/scale (sent as "
             "inf), an entropy tie",
     .pcfg = {64, 4, 3, 500},
     .shape = {1, 6, 128},
     .pattern = paper_v1_edges},
};

/* ------------------------------------------------ the families of each set, in order */

/* golden/v1's encode and encode_error cases (its invalid messages and
 * paper-v1 cases follow) */
static const family v1_encode_families[] = {
    GRID(sweep_case, 6, 8),
    GRID(alloc_case, 3, 7),
    GRID(bit_pair_case, 8, 2),
    GRID(tau_case, 9, 3),
    GRID(gate_case, 5, 2),
    GRID(stoch_seed_case, 5, 5),
    GRID(stoch_tile_case, 6, 1),
    GRID(meta_case, 3, 6),
    /* edge-* */
    GRID(all_zero_case, 3, 1),
    TABLE(all_zero_tau0),
    GRID(zero_tiles_case, 3, 1),
    GRID(constant_case, 8, 1),
    GRID(spike_case, 4, 2),
    TABLE(spike_ungated),
    GRID(subnormal_case, 3, 3),
    GRID(signed_zero_case, 3, 1),
    GRID(code_tie_case, 3, 1),
    TABLE(entropy_ties),
    GRID(near_limit_case, 2, 1),
    GRID(fp16_max_case, 2, 1),
    TABLE(subnormal_scale),
    /* size-*, random-*, llm-*, encerr-* */
    TABLE(sizes),
    GRID(random_case, 48, 1),
    TABLE(llm_cases),
    TABLE(encode_errors),
};

static const family v1_paper_v1_families[] = {TABLE(paper_v1_cases)};

/* golden/v2's encode cases after its mutation cases */
static const family v2_encode_families[] = {TABLE(scale_search), TABLE(config_errors)};

int golden_generate(const char *dir, const char *set)
{
    const int v3 = strcmp(set, "v3") == 0, v4 = strcmp(set, "v4") == 0;
    if (!golden_set_known(set))
        return cli_fail(EXIT_USAGE, "--set: unknown set '%s' (v1, v2, v3 or v4)", set);
    char p[4096];
    snprintf(p, sizeof p, "%s/inputs", dir);
    if (mkdir_p1(dir) || mkdir_p1(p))
        return cli_fail(EXIT_RUNTIME, "%s: cannot create directory", p);
    snprintf(p, sizeof p, "%s/expected", dir);
    if (mkdir_p1(p))
        return cli_fail(EXIT_RUNTIME, "%s: cannot create directory", p);

    golden_writer g;
    if (golden_writer_begin(&g, dir, set, v4 ? v4_kills_of : NULL) != 0)
        return cli_fail(EXIT_RUNTIME, "out of memory");

    if (v3) {
        /* golden/v3 holds the gain cases only; golden/v2 everything else */
        golden_gain_cases(&g);
    } else {
        run_families(&g, v1_encode_families, N_ROWS(v1_encode_families));
        fam_decode_errors(&g);
        run_families(&g, v1_paper_v1_families, N_ROWS(v1_paper_v1_families));
    }
    if (strcmp(g.set, "v2") == 0 || v4) {
        fam_mutation(&g);
        run_families(&g, v2_encode_families, N_ROWS(v2_encode_families));
    }
    if (v4) {
        /* golden/v4: v2's cases, v3's (the gain allocation), then its own */
        golden_gain_cases(&g);
        golden_gain_v4_cases(&g);
        fam_boundary(&g);
    }
    /* v3: format 1, every expected message of header version 3 */
    return golden_writer_finish(&g, v3 ? (unsigned)GOLDEN_V3_HEADER_VERSION : 0u);
}

int golden_set_known(const char *set)
{
    return strcmp(set, "v1") == 0 || strcmp(set, "v2") == 0 || strcmp(set, "v3") == 0 ||
           strcmp(set, "v4") == 0;
}
