/* SPDX-License-Identifier: MIT */
/* golden_gain.c - golden/v3 (`tahq golden-gen DIR --set v3`): the cases of
 * the gain allocation of ref/SPEC.md §4.3 (alloc 3, messages of header
 * version 3, §8.1), each named after the implementation mistake it catches.
 *
 * The claims are checked while the set is written, against the independent
 * transcription of SPEC §4.2 and §4.3 in golden/oracles/gain_spec.c
 * (gain_spec_map: the tile errors at both widths, the binary64 sums in the
 * orders of §2.5, the x2 of flagged tiles when log2 G is odd, the key, the
 * per-sequence ranking, with a switch for each mistake). For every encode case
 *   - the transcription's map must equal the precision map of the message
 *     libtahq writes (so the two independent readings of §4.3 agree), and
 *   - each mistake the case names must give another map, or another status
 *     (and each equivalence a description states must give the same map).
 * A case whose input is drawn from a seed takes the first seed, from a fixed
 * start, for which its mistakes change the map; the description gives the
 * seed and the maps. Everything is integer operations, Philox words and
 * binary32/binary64 basic operations, so the set is the same on every
 * platform where libtahq is correct. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_inputs.h"
#include "codec_ops.h"
#include "dist_gen.h"
#include "gain_spec.h"
#include "golden_common.h"
#include "golden_gain.h"
#include "llm_tensor.h"
#include "message_reseal.h"
#include "tahq_spec.h"

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* ------------------------------------------------------------ checking */

static uint64_t rows_of(const tahq_shape *s)
{
    return (uint64_t)s->batch * s->seq_len;
}

/* The map as text: per sequence its rows as 0/1 (row 0 first), sequences
 * separated by '/'; a sequence of more than 64 rows as its low rows. */
static void fmt_map(const uint8_t *low, const tahq_shape *s, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t b = 0; b < s->batch && used + 1 < n; b++) {
        const uint8_t *m = low + (uint64_t)b * s->seq_len;
        if (b)
            used += (size_t)snprintf(buf + used, n - used, "/");
        if (s->seq_len <= 64) {
            for (uint32_t i = 0; i < s->seq_len && used + 1 < n; i++)
                buf[used++] = m[i] ? '1' : '0';
            buf[used] = 0;
        } else {
            int first = 1;
            used += (size_t)snprintf(buf + used, n - used, "low rows {");
            for (uint32_t i = 0; i < s->seq_len && used + 1 < n; i++)
                if (m[i]) {
                    used += (size_t)snprintf(buf + used, n - used, "%s%u", first ? "" : ",",
                                             (unsigned)i);
                    first = 0;
                }
            if (used + 1 < n)
                used += (size_t)snprintf(buf + used, n - used, "}");
        }
    }
}

static void append(char *buf, size_t n, const char *fmt, const char *a, const char *b)
{
    size_t l = strlen(buf);
    if (l + 1 < n)
        snprintf(buf + l, n - l, fmt, a, b);
}

static void add_flag(char *flags, size_t n, const char *f)
{
    if (!f || !*f)
        return;
    char key[96];
    snprintf(key, sizeof key, ",%s,", f);
    char probe[1200];
    snprintf(probe, sizeof probe, ",%s,", flags);
    if (strstr(probe, key))
        return;
    size_t l = strlen(flags);
    snprintf(flags + l, n - l, "%s%s", l ? "," : "", f);
}

static size_t n_vars(const int *v)
{
    size_t n = 0;
    while (v && v[n] != GV_END)
        n++;
    return n;
}

/* 1 if every mistake of `differ` gives another map or status than the SPEC
 * (which must succeed with `expect_st`) and every one of `equal` the same. */
static int claims_hold(const tahq_config *c, const tahq_shape *s, const float *x, int expect_st,
                       const int *differ, const int *equal)
{
    const uint64_t rows = rows_of(s);
    uint8_t *m0 = malloc((size_t)rows), *m1 = malloc((size_t)rows);
    int ok = m0 && m1 && gain_spec_map(c, s, x, GV_SPEC, m0) == expect_st;
    for (size_t i = 0; ok && i < n_vars(differ); i++) {
        const int st = gain_spec_map(c, s, x, differ[i], m1);
        ok = st != expect_st || (st == TAHQ_OK && memcmp(m0, m1, (size_t)rows) != 0);
    }
    for (size_t i = 0; ok && i < n_vars(equal); i++)
        ok = gain_spec_map(c, s, x, equal[i], m1) == expect_st &&
             (expect_st != TAHQ_OK || memcmp(m0, m1, (size_t)rows) == 0);
    free(m0);
    free(m1);
    return ok;
}

/* The checks of an encode case (see the top of the file) and its text: the
 * description gets the maps, `flags` the flag of each mistake. 0 or -1. */
static int check_encode(const char *id, const tahq_config *c, const tahq_shape *s, const float *x,
                        const int *differ, const int *equal, char *desc, size_t dn, char *flags,
                        size_t fn)
{
    const uint64_t rows = rows_of(s);
    uint8_t *m0 = calloc((size_t)rows + 1, 1), *m1 = calloc((size_t)rows + 1, 1);
    char *t0 = malloc(4096), *t1 = malloc(4096);
    uint8_t *msg = NULL;
    size_t len = 0;
    int rc = -1;
    if (!m0 || !m1 || !t0 || !t1)
        goto out;
    int st = gain_spec_map(c, s, x, GV_SPEC, m0);
    if (st != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: the transcription of SPEC 4.3 gives %s\n", id,
                tahq_status_name(st));
        goto out;
    }
    st = run_encode(c, s, x, &msg, &len);
    if (st != TAHQ_OK || len < 72 + (rows + 7) / 8) {
        fprintf(stderr, "tahq golden-gen: case %s: encode: %s\n", id, tahq_status_name(st));
        goto out;
    }
    for (uint64_t r = 0; r < rows; r++)
        if (((msg[72 + r / 8] >> (r % 8)) & 1u) != m0[r]) {
            fprintf(stderr,
                    "tahq golden-gen: case %s: row %" PRIu64 ": libtahq's map and the "
                    "transcription of SPEC 4.3 in golden/oracles/gain_spec.c disagree\n",
                    id, r);
            goto out;
        }
    fmt_map(m0, s, t0, 4096);
    append(desc, dn, "%s%s", n_vars(differ) ? " Checked by golden-gen: gain map " : " Gain map ",
           t0);
    for (size_t i = 0; i < n_vars(differ); i++) {
        const int v = differ[i];
        st = gain_spec_map(c, s, x, v, m1);
        if (st == TAHQ_OK && memcmp(m0, m1, (size_t)rows) == 0) {
            fprintf(stderr,
                    "tahq golden-gen: case %s: %s gives the same map: the case does not "
                    "catch it\n",
                    id, gain_spec_mistakes[v].what);
            goto out;
        }
        if (st == TAHQ_OK)
            fmt_map(m1, s, t1, 4096);
        else
            snprintf(t1, 4096, "%s", tahq_status_name(st));
        append(desc, dn, "; %s gives %s", gain_spec_mistakes[v].what, t1);
        add_flag(flags, fn, gain_spec_mistakes[v].flag);
    }
    for (size_t i = 0; i < n_vars(equal); i++) {
        const int v = equal[i];
        st = gain_spec_map(c, s, x, v, m1);
        if (st != TAHQ_OK || memcmp(m0, m1, (size_t)rows) != 0) {
            fprintf(stderr, "tahq golden-gen: case %s: %s was to give the same map\n", id,
                    gain_spec_mistakes[v].what);
            goto out;
        }
        append(desc, dn, "; %s%s gives the same map",
               i ? "" : "equivalent here: ", gain_spec_mistakes[v].what);
    }
    append(desc, dn, "%s%s", ".", "");
    rc = 0;
out:
    free(m0);
    free(m1);
    free(t0);
    free(t1);
    free(msg);
    return rc;
}

/* An encode case: checked as above, then written. */
static void gain_case(golden_writer *g, const char *id, const char *flags0, const char *desc0,
                      const tahq_config *c, const tahq_shape *s, const float *x, const int *differ,
                      const int *equal)
{
    if (golden_writer_failed(g))
        return;
    char desc[4096], flags[1024];
    snprintf(desc, sizeof desc, "%s", desc0);
    snprintf(flags, sizeof flags, "gain%s%s", *flags0 ? "," : "", flags0);
    if (check_encode(id, c, s, x, differ, equal, desc, sizeof desc, flags, sizeof flags)) {
        golden_writer_fail(g);
        return;
    }
    golden_emit_encode(g, id, flags, desc, c, s, x);
}

/* An encode_error case: the SPEC's status from the transcription too, and
 * each mistake of `differ` accepting the input. */
static void gain_error_case(golden_writer *g, const char *id, const char *flags0, const char *desc0,
                            const tahq_config *c, const tahq_shape *s, const float *x, int expect,
                            const int *differ)
{
    if (golden_writer_failed(g))
        return;
    char desc[4096], flags[1024];
    snprintf(desc, sizeof desc, "%s Checked by golden-gen:", desc0);
    snprintf(flags, sizeof flags, "gain%s%s", *flags0 ? "," : "", flags0);
    uint8_t *m = calloc((size_t)rows_of(s) + 1, 1);
    int st = m ? gain_spec_map(c, s, x, GV_SPEC, m) : TAHQ_ERR_BUFFER;
    if (st != expect) {
        fprintf(stderr, "tahq golden-gen: case %s: the transcription of SPEC 4.3 gives %s\n", id,
                tahq_status_name(st));
        free(m);
        golden_writer_fail(g);
        return;
    }
    for (size_t i = 0; i < n_vars(differ); i++) {
        st = gain_spec_map(c, s, x, differ[i], m);
        if (st == expect) {
            fprintf(stderr, "tahq golden-gen: case %s: %s gives %s too\n", id,
                    gain_spec_mistakes[differ[i]].what, tahq_status_name(st));
            free(m);
            golden_writer_fail(g);
            return;
        }
        char t[512];
        if (st == TAHQ_OK)
            fmt_map(m, s, t, sizeof t);
        append(desc, sizeof desc, "%s %s", i ? ";" : "", gain_spec_mistakes[differ[i]].what);
        append(desc, sizeof desc, " accepts it (map %s)%s", st == TAHQ_OK ? t : "?", "");
        add_flag(flags, sizeof flags, gain_spec_mistakes[differ[i]].flag);
    }
    append(desc, sizeof desc, "%s%s", ".", "");
    free(m);
    golden_emit_encode_error(g, id, flags, desc, c, s, x, expect);
}

/* ------------------------------------------------------------ inputs */

/* Uniform values, rows scaled by 2^-(r mod 3), and in about one tile of
 * three a spike of 4 to 11 times the row's scale (a tile the gate flags at
 * tau = 2): tokens with different shares of flagged tiles. */
static void fill_mixed(float *x, const tahq_shape *s, uint32_t G, uint64_t seed)
{
    const uint64_t rows = rows_of(s), C = s->channels, T = C / G;
    for (uint64_t r = 0; r < rows; r++) {
        const float scale = ldexpf(1.0f, -(int)(r % 3));
        for (uint64_t c = 0; c < C; c++)
            x[r * C + c] = golden_unif(seed, r * C + c) * scale;
        for (uint64_t t = 0; t < T; t++) {
            const uint32_t w = tahq_random_word(seed ^ 0xA5A5A5A5A5A5A5A5ull, r * T + t);
            if (w % 3 != 0)
                continue;
            const float mag = (float)(4u + ((w >> 16) & 7u)) * scale;
            x[r * C + t * G + (w >> 8) % G] = (w >> 31) ? -mag : mag;
        }
    }
}

static void fill_gauss(float *x, const tahq_shape *s, uint64_t seed)
{
    dist_fill(DIST_GAUSS, x, s->batch, s->seq_len, s->channels, seed);
}

enum { FILL_MIXED, FILL_GAUSS, FILL_LLM };

static void fill(int kind, float *x, const tahq_shape *s, uint32_t G, uint64_t seed)
{
    if (kind == FILL_MIXED)
        fill_mixed(x, s, G, seed);
    else if (kind == FILL_GAUSS)
        fill_gauss(x, s, seed);
    else if (llm_tensor_fill(x, s->batch, s->seq_len, s->channels, seed)) {
        fprintf(stderr, "tahq golden-gen: out of memory\n");
        exit(1);
    }
}

/* The first seed from seed0 whose input makes every claim hold; x holds it. */
static int find_seed(const tahq_config *c, const tahq_shape *s, float *x, int kind, uint64_t seed0,
                     const int *differ, const int *equal, uint64_t *seed)
{
    for (uint64_t k = 0; k < 400; k++) {
        fill(kind, x, s, c->tile, seed0 + k);
        if (claims_hold(c, s, x, TAHQ_OK, differ, equal)) {
            *seed = seed0 + k;
            return 0;
        }
    }
    return -1;
}

static tahq_config gcfg(uint32_t G, uint32_t hi, uint32_t lo, uint32_t permille, float tau,
                        tahq_meta meta)
{
    tahq_config c = golden_config(G, hi, lo, TAHQ_ALLOC_GAIN, tau, meta);
    c.hi_permille = permille;
    return c;
}

/* A case on an input drawn from a seed (see find_seed). */
static void seeded_case(golden_writer *g, const char *id, const char *flags, const char *what,
                        const tahq_config *c, const tahq_shape *s, int kind, uint64_t seed0,
                        const int *differ, const int *equal)
{
    if (golden_writer_failed(g))
        return;
    float *x = golden_alloc_x(s);
    uint64_t seed = 0;
    if (find_seed(c, s, x, kind, seed0, differ, equal, &seed)) {
        fprintf(stderr,
                "tahq golden-gen: case %s: no seed from %" PRIu64 " on makes its "
                "mistakes change the map\n",
                id, seed0);
        golden_writer_fail(g);
        free(x);
        return;
    }
    static const char *const kinds[3] = {"uniform values with spikes (flagged tiles)",
                                         "i.i.d. standard normal values",
                                         "LLM-like activations (cli/llm_tensor.c)"};
    char desc[1024];
    snprintf(desc, sizeof desc, "%s; %s [%u,%u,%u], input seed %" PRIu64 ".", what, kinds[kind],
             (unsigned)s->batch, (unsigned)s->seq_len, (unsigned)s->channels, seed);
    gain_case(g, id, flags, desc, c, s, x, differ, equal);
    free(x);
}

/* ------------------------------------------------------------ families */

/* A case on an input drawn from a seed (seeded_case): one row. differ and
 * equal list the mistakes the case must tell apart and those it states do
 * not matter there (GV_END-terminated; NULL: none). */
typedef struct gain_seeded {
    const char *id, *flags, *what;
    tahq_config cfg;
    tahq_shape shape;
    int kind; /* FILL_* */
    uint64_t seed0;
    const int *differ, *equal;
} gain_seeded;

/* alloc gain with round-half-even and seed 0, and with rounding and seed */
#define GCFG(G, hi, lo, r, tau, m)                                                    \
    {                                                                                 \
        G, hi, lo, r, TAHQ_ALLOC_GAIN, tau, TAHQ_ROUND_NEAREST_EVEN, 0, TAHQ_META_##m \
    }
#define GCFG_R(G, hi, lo, r, tau, rd, seed, m)                                   \
    {                                                                            \
        G, hi, lo, r, TAHQ_ALLOC_GAIN, tau, TAHQ_ROUND_##rd, seed, TAHQ_META_##m \
    }
#define MISTAKES(...) ((const int[]){__VA_ARGS__, GV_END})

static void seeded_cases(golden_writer *g, const gain_seeded *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        seeded_case(g, t[i].id, t[i].flags, t[i].what, &t[i].cfg, &t[i].shape, t[i].kind,
                    t[i].seed0, t[i].differ, t[i].equal);
}

/* Every G: with log2 G odd (8, 32, 128) the gain of a flagged tile is
 * doubled, and leaving the x2 out changes the map; with log2 G even (16,
 * 64, 256) it is not, and a x2 there changes the map. */
#define TILE_ODD(id, G, k, seed0)                                              \
    {                                                                          \
        id, "sweep",                                                           \
            "G=" #G " (log2 G = " #k                                           \
            ", odd): tokens with different shares of flagged tiles; the gain " \
            "of a flagged tile is doubled (SPEC 4.3 step 2)",                  \
            GCFG(G, 4, 3, 500, 2.0f, FP16), {1, 8, 512}, FILL_MIXED, seed0,    \
            MISTAKES(GV_NO_X2, GV_X2_UNFLAGGED), NULL                          \
    }
#define TILE_EVEN(id, G, k, seed0)                                                                 \
    {                                                                                              \
        id, "sweep",                                                                               \
            "G=" #G " (log2 G = " #k                                                               \
            ", even): tokens with different shares of flagged tiles; no tile "                     \
            "gain is doubled",                                                                     \
            GCFG(G, 4, 3, 500, 2.0f, FP16), {1, 8, 512}, FILL_MIXED, seed0, MISTAKES(GV_X2_ANY_K), \
            NULL                                                                                   \
    }

/* The paper's operating point (G = 64, 4/3 bits, r = 800, tau = 2, fp16):
 * gain and entropy choose different tokens. T is not a power of two, so
 * the tile gains are summed with padding (§2.5). Then every G, and the
 * transformed tile's error. */
static const gain_seeded seeded_paper_tiles[] = {
    {"gain-paper-iid-2x20x320",
     "paper_point",
     "Paper operating point (G=64, 4/3 bits, r=800): the tokens whose low width adds "
     "the least squared error are not those of lowest entropy; T = 5 tiles a token "
     "(the tile gains summed with +0 padding)",
     GCFG(64, 4, 3, 800, 2.0f, FP16),
     {2, 20, 320},
     FILL_GAUSS,
     5,
     MISTAKES(GV_ENTROPY),
     NULL},
    {"gain-paper-llm-2x64x1600",
     "paper_point,llm_like,massive_activation",
     "Paper operating point (G=64, 4/3 bits, r=800) on the GPT2-XL hidden size "
     "C = 1600 (T = 25): gain and entropy choose different tokens",
     GCFG(64, 4, 3, 800, 2.0f, FP16),
     {2, 64, 1600},
     FILL_LLM,
     3,
     MISTAKES(GV_ENTROPY),
     NULL},
    TILE_ODD("gain-g008", 8, 3, 100),
    TILE_EVEN("gain-g016", 16, 4, 110),
    TILE_ODD("gain-g032", 32, 5, 120),
    TILE_EVEN("gain-g064", 64, 6, 130),
    TILE_ODD("gain-g128", 128, 7, 140),
    TILE_EVEN("gain-g256", 256, 8, 150),
    /* flagged tiles: the error is that of the transformed tile */
    {"gain-transform-raw-tile",
     "",
     "Flagged tiles are quantized transformed (SPEC 5.2) in the ranking too: "
     "measuring the error of the raw tile changes the map",
     GCFG(32, 4, 3, 500, 2.0f, FP16),
     {1, 8, 256},
     FILL_MIXED,
     200,
     MISTAKES(GV_RAW_TILE),
     NULL},
};
#undef TILE_ODD
#undef TILE_EVEN

/* tau = 0 and inf; stochastic rounding (the ranking quantizes with the
 * message's codes: seed, global element index); the three metadata types
 * (the message's grid); the low-width share r = 0, 1, 500, 999 (S = 1000:
 * one low token). */
static const gain_seeded seeded_tau_to_share[] = {
    /* tau = 0: every non-zero tile flagged, so the x2 scales every key alike */
    {"gain-tau0",
     "",
     "tau = 0: every tile is flagged and transformed; the x2 of SPEC 4.3 step 2 "
     "then doubles every key alike and cannot change the map",
     GCFG(32, 4, 3, 500, 0.0f, FP16),
     {1, 8, 256},
     FILL_GAUSS,
     220,
     MISTAKES(GV_RAW_TILE),
     MISTAKES(GV_NO_X2)},
    {"gain-tau-inf",
     "",
     "tau = inf: no tile is flagged; gain ranks the raw tiles' errors",
     GCFG(64, 4, 3, 500, INFINITY, FP16),
     {1, 8, 256},
     FILL_MIXED,
     230,
     MISTAKES(GV_ENTROPY),
     MISTAKES(GV_RAW_TILE, GV_NO_X2, GV_DECODED)},
    {"gain-stochastic",
     "",
     "Stochastic rounding (seed 0x9E3779B97F4A7C15): the errors of the ranking are "
     "those of the message's stochastic codes, keyed by the global element index",
     GCFG_R(64, 4, 3, 500, 2.0f, STOCHASTIC, 0x9E3779B97F4A7C15ull, FP16),
     {2, 8, 256},
     FILL_GAUSS,
     300,
     MISTAKES(GV_NEAREST, GV_ROW_INDEX, GV_SEED_ZERO),
     NULL},
    {"gain-stochastic-seed-max",
     "",
     "Stochastic rounding with seed 2^64-1, G=8, bf16: the message's codes in the "
     "ranking",
     GCFG_R(8, 3, 2, 500, 2.0f, STOCHASTIC, UINT64_MAX, BF16),
     {2, 8, 64},
     FILL_MIXED,
     310,
     MISTAKES(GV_NEAREST, GV_ROW_INDEX, GV_SEED_ZERO),
     NULL},
    {"gain-meta-fp16",
     "",
     "fp16 metadata: the ranking quantizes with the message's zero-points and scales",
     GCFG(16, 4, 2, 500, 2.0f, FP16),
     {1, 16, 128},
     FILL_GAUSS,
     400,
     MISTAKES(GV_META_BF16, GV_META_FP32),
     NULL},
    {"gain-meta-bf16",
     "",
     "bf16 metadata: the ranking quantizes with the message's zero-points and scales",
     GCFG(16, 4, 2, 500, 2.0f, BF16),
     {1, 16, 128},
     FILL_GAUSS,
     410,
     MISTAKES(GV_META_FP16, GV_META_FP32),
     NULL},
    {"gain-meta-fp32",
     "",
     "fp32 metadata: the ranking quantizes with the message's zero-points and scales",
     GCFG(16, 4, 2, 500, 2.0f, FP32),
     {1, 16, 128},
     FILL_GAUSS,
     420,
     MISTAKES(GV_META_FP16, GV_META_BF16),
     NULL},
    {"gain-r0000",
     "",
     "r = 0: low(16) = 16, every token low (keys computed, the order irrelevant)",
     GCFG(32, 4, 3, 0, 2.0f, FP16),
     {1, 16, 128},
     FILL_MIXED,
     500,
     NULL,
     NULL},
    {"gain-r0001",
     "",
     "r = 1: low(16) = 15, the one token with the largest key stays high",
     GCFG(32, 4, 3, 1, 2.0f, FP16),
     {1, 16, 128},
     FILL_MIXED,
     510,
     MISTAKES(GV_ENTROPY),
     NULL},
    {"gain-r0500",
     "",
     "r = 500: low(16) = 8",
     GCFG(32, 4, 3, 500, 2.0f, FP16),
     {1, 16, 128},
     FILL_MIXED,
     520,
     MISTAKES(GV_ENTROPY),
     NULL},
    {"gain-r0999-s1000",
     "",
     "r = 999 with S = 1000: low(1000) = 1, the one token with the smallest key",
     GCFG(8, 4, 3, 999, 2.0f, FP16),
     {1, 1000, 8},
     FILL_MIXED,
     530,
     MISTAKES(GV_ENTROPY),
     NULL},
};

/* hi_bits = lo_bits: every gain is +0, every key 0x80000000, the ties go by
 * row: the first low(S) rows are low. */
static const gain_seeded seeded_equal_bits[] = {
    {"gain-equal-bits",
     "tie_gain",
     "hi_bits = lo_bits = 3: every gain is +0, so every key is 0x80000000 and the "
     "first low(S) rows are low (ties by lower row)",
     GCFG(16, 3, 3, 500, 2.0f, FP16),
     {1, 8, 64},
     FILL_MIXED,
     700,
     MISTAKES(GV_ENTROPY, GV_TIE_HIGH),
     NULL},
};

/* Near-tied token pairs: row A and A with one element moved by m ulps. Rows
 * pairs[2j], pairs[2j+1] of the result (B sequences of 2 tokens, low 1
 * each) are pairs whose order mistake v reverses. Returns the number found. */
static int find_flip_pairs(const tahq_config *c, uint32_t C, uint64_t seed, int v, int want,
                           float *out)
{
    tahq_shape one = golden_shape(1, 1, C);
    float *a = golden_alloc_x(&one), *b = golden_alloc_x(&one);
    fill_mixed(a, &one, c->tile, seed);
    const uint32_t T = C / c->tile;
    double sa = 0, sv = 0;
    int found = 0;
    if (gain_spec_token_sigma(c, a, T, 0, GV_SPEC, &sa) ||
        gain_spec_token_sigma(c, a, T, C, v, &sv))
        goto done;
    const uint64_t ka = gain_spec_key(sa, GV_SPEC), kva = gain_spec_key(sv, v);
    for (int m = 1; m <= 48 && found < want; m++)
        for (uint32_t e = 0; e < C && found < want; e++)
            for (int sign = 0; sign < 2 && found < want; sign++) {
                if (a[e] == 0.0f)
                    continue;
                memcpy(b, a, C * sizeof(float));
                b[e] = u2f(f2u(a[e]) + (uint32_t)(sign ? -m : m));
                double sb = 0, svb = 0;
                /* row 1 of a sequence: its global index is (2 found + 1) C;
                 * nearest rounding makes the codes independent of it */
                if (gain_spec_token_sigma(c, b, T, C, GV_SPEC, &sb) ||
                    gain_spec_token_sigma(c, b, T, C, v, &svb))
                    continue;
                const uint64_t kb = gain_spec_key(sb, GV_SPEC), kvb = gain_spec_key(svb, v);
                const int spec_b_low = kb < ka, v_b_low = kvb < kva;
                if (spec_b_low != v_b_low) {
                    memcpy(out + (uint64_t)(2 * found) * C, a, C * sizeof(float));
                    memcpy(out + (uint64_t)(2 * found + 1) * C, b, C * sizeof(float));
                    found++;
                }
            }
done:
    free(a);
    free(b);
    return found;
}

/* The error is measured in the transformed domain (SPEC 4.3 step 1),
 * doubled where log2 G is odd, not after the inverse transform: pairs of
 * nearly tied tokens whose order the decoded-domain error reverses. */
static void fam_decoded_domain(golden_writer *g)
{
    const int differ[] = {GV_DECODED, GV_END};
    tahq_config c = gcfg(32, 4, 3, 500, 2.0f, TAHQ_META_FP16);
    tahq_shape s = golden_shape(2, 2, 128);
    float *x = golden_alloc_x(&s);
    uint64_t seed = 210;
    for (; seed < 260; seed++)
        if (find_flip_pairs(&c, 128, seed, GV_DECODED, 2, x) == 2 &&
            claims_hold(&c, &s, x, TAHQ_OK, differ, NULL))
            break;
    if (seed == 260) {
        fprintf(stderr, "tahq golden-gen: gain-transform-decoded-domain: no pair found\n");
        golden_writer_fail(g);
    } else {
        char desc[512];
        snprintf(desc, sizeof desc,
                 "The error is measured in the transformed domain, doubled for log2 G odd "
                 "(SPEC 4.3 steps 1-2), not after the inverse transform: two sequences of "
                 "two nearly tied tokens (a token with flagged tiles, seed %" PRIu64
                 ", and the same token with one value moved by a few ulps) whose order the "
                 "decoded-domain error reverses.",
                 seed);
        gain_case(g, "gain-transform-decoded-domain", "near_tie", desc, &c, &s, x, differ, NULL);
    }
    free(x);
}

/* An input where the ranking overflows fp16 metadata at the low width: row
 * 5 holds a tile of 0, 6250, ..., 93750 (one bit: the scale would be 93750 >
 * 65504). Its entropy is above that of the other rows (one spike each), so
 * alloc token would give it hi_bits and succeed. */
static void fill_overflow(float *x, const tahq_shape *s)
{
    const uint64_t rows = rows_of(s), C = s->channels;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < C; c++)
            x[r * C + c] = golden_unif(600, r * C + c) * 0x1p-6f;
    for (uint64_t r = 0; r < rows; r++)
        x[r * C + (r * 7) % C] = 1.0f + (float)r * 0.125f;
    for (uint64_t i = 0; i < 16; i++)
        x[5 * C + i] = 6250.0f * (float)i;
}

static void fam_low_zero(golden_writer *g)
{
    tahq_config c = gcfg(16, 4, 1, 1000, 2.0f, TAHQ_META_FP16);
    tahq_shape s = golden_shape(1, 16, 32);
    float *x = golden_alloc_x(&s);
    fill_overflow(x, &s);
    const int differ[] = {GV_ALWAYS_RANK, GV_END};
    gain_case(g, "gain-r1000-low-overflow", "low_zero",
              "r = 1000: low(S) = 0, no key is computed; ranking row 5 at 1 bit would overflow "
              "fp16 metadata (its tile 0 is 0, 6250, ..., 93750: scale 93750 > 65504), but the "
              "encode succeeds.",
              &c, &s, x, differ, NULL);
    c.hi_permille = 999;
    gain_case(g, "gain-r0999-low-overflow", "low_zero",
              "r = 999 with S = 16: low(16) = 0, no key is computed, on the input of "
              "gain-r1000-low-overflow; the encode succeeds.",
              &c, &s, x, differ, NULL);
    c.hi_permille = 500;
    {
        /* alloc token gives row 5 hi_bits and succeeds: the error comes from the ranking */
        tahq_config ct = c;
        ct.alloc = TAHQ_ALLOC_TOKEN;
        uint8_t *msg = NULL;
        size_t len = 0;
        const int st = run_encode(&ct, &s, x, &msg, &len);
        free(msg);
        if (st != TAHQ_OK) {
            fprintf(stderr, "tahq golden-gen: gain-encerr-range-r0500: alloc token gives %s\n",
                    tahq_status_name(st));
            golden_writer_fail(g);
        }
    }
    const int accept[] = {GV_RANGE_IGNORED, GV_ENTROPY, GV_END};
    gain_error_case(g, "gain-encerr-range-r0500", "low_zero,meta_overflow",
                    "r = 500 on the input of gain-r1000-low-overflow: ranking row 5 at 1 bit "
                    "overflows fp16 metadata, so the encode fails with ERR_RANGE (SPEC 4.3), "
                    "although the tile loop alone would succeed: the final map gives row 5 "
                    "hi_bits.",
                    &c, &s, x, TAHQ_ERR_RANGE, accept);
    free(x);
}

/* Identical rows: equal keys, the lower row goes low. */
static void fam_ties(golden_writer *g)
{
    const int differ[] = {GV_TIE_HIGH, GV_END};
    tahq_config c = gcfg(16, 4, 3, 800, 2.0f, TAHQ_META_FP16);
    tahq_shape s = golden_shape(1, 6, 32);
    float *x = golden_alloc_x(&s);
    fill_gauss(x, &s, 710);
    /* rows 1 and 4 identical and quiet: the two smallest keys, low(6) = 1 */
    for (uint32_t i = 0; i < 32; i++) {
        x[32 + i] = x[32 + i] * 0.25f;
        x[4 * 32 + i] = x[32 + i];
    }
    gain_case(g, "gain-tie-identical-rows", "tie_gain",
              "Rows 1 and 4 are identical (i.i.d. normal values of seed 710 times 1/4, the "
              "others times 1) and have the smallest key; low(6) = 1: the lower row, 1, is "
              "low.",
              &c, &s, x, differ, NULL);
    free(x);
}

/* G = 8, 3/2 bits, tau = inf, fp16: tiles on the integer lattice with
 * w = 21, so that the 2-bit scale is 7 and the 3-bit scale 3, every value
 * exact. X = (6,0,0,0,0,21,0,0): 6 is on the 3-bit grid and 1 off the
 * 2-bit one, gain +1. Y = (7,0,0,0,0,21,0,0): 7 is on the 2-bit grid and 1
 * off the 3-bit one (2.33 rounds to 2: 6), gain -1: more bits, larger error. */
static const float lat_x[8] = {6, 0, 0, 0, 0, 21, 0, 0};
static const float lat_y[8] = {7, 0, 0, 0, 0, 21, 0, 0};

static void put_tile(float *x, const float *t, float scale)
{
    for (int i = 0; i < 8; i++)
        x[i] = t[i] * scale;
}

/* A case of tiles of 8 values placed in a zero tensor (3/2 bits, r = 500,
 * tau = inf): one row. */
typedef struct gain_lattice {
    const char *id, *flags, *desc;
    uint32_t G, S, C;
    tahq_meta meta;
    struct {
        uint32_t row, col;
        const float *tile; /* NULL: no tile */
        float scale;
    } part[4];
    const int *differ, *equal;
} gain_lattice;

static void lattice_case(golden_writer *g, const gain_lattice *L)
{
    tahq_config c = gcfg(L->G, 3, 2, 500, INFINITY, L->meta);
    tahq_shape s = golden_shape(1, L->S, L->C);
    float *x = golden_alloc_x(&s);
    for (int p = 0; p < 4; p++)
        if (L->part[p].tile)
            put_tile(x + (size_t)L->part[p].row * L->C + L->part[p].col, L->part[p].tile,
                     L->part[p].scale);
    gain_case(g, L->id, L->flags, L->desc, &c, &s, x, L->differ, L->equal);
    free(x);
}

/* the row -2 of gain-negative; the tile whose squares the orders sum apart */
static const float lat_y2[8] = {7, 14, 0, 0, 0, 21, 0, 0};
static const float lat_tsum[8] = {6, 0x1p-27f, 0x1p-27f, 0x1p-27f, 7, 21, 0, 0};

/* G = 8 lattice cases: negative gains, binary64 sums and squares, the §2.5
 * orders between and within tiles. */
static const gain_lattice lattice_cases[] = {
    /* negative gains: +1, -1, -2; the smallest, -2 (row 2), goes low */
    {"gain-negative",
     "negative_gain",
     "Negative gains: 3/2 bits on tiles of the integer lattice with max 21 (2-bit "
     "scale 7, 3-bit scale 3). Row 0 (6,0,0,0,0,21,0,0): 6 is exact at 3 bits and "
     "1 off at 2 bits, gain +1; row 1 (7,0,0,0,0,21,0,0): exact at 2 bits, 1 off "
     "at 3 bits, gain -1; row 2 (7,14,0,0,0,21,0,0): gain -2. The key orders them "
     "as numbers (SPEC 4.3 step 4): row 2 is low.",
     8,
     3,
     8,
     TAHQ_META_FP16,
     {{0, 0, lat_x, 1.0f}, {1, 0, lat_y, 1.0f}, {2, 0, lat_y2, 1.0f}, {0, 0, NULL, 0}},
     MISTAKES(GV_KEY_PLAIN, GV_KEY_SIGNFLIP),
     NULL},
    /* binary32 accumulation: (1 + 2^-30) - 1 is 2^-30 in binary64, 0 in binary32 */
    {"gain-sum-binary64-cancel",
     "lattice",
     "Sums in binary64: row 0 has tiles of gain +1, 2^-30, -1 and 0 (the lattice "
     "tiles of gain-negative, the second scaled by 2^-15), sigma = (1 + 2^-30) + "
     "(-1 + 0) = 2^-30 in binary64 and 0 in binary32; row 1 is zero (sigma = 0). "
     "Row 1 is low; with binary32 sums the keys tie and row 0 would be.",
     8,
     2,
     32,
     TAHQ_META_FP16,
     {{0, 0, lat_x, 1.0f}, {0, 8, lat_x, 0x1p-15f}, {0, 16, lat_y, 1.0f}, {0, 0, NULL, 0}},
     MISTAKES(GV_F32),
     MISTAKES(GV_SEQ_PSUM)},
    /* binary32 squares underflow: d = 2^-83, d^2 = 2^-166 */
    {"gain-sum-binary64-underflow",
     "lattice,tiny_range",
     "Squares in binary64: row 0 is the lattice tile of gain-negative times 2^-83 "
     "(fp32 metadata), its one error 2^-83 squares to 2^-166, which binary32 "
     "flushes to 0; row 1 is zero. Row 1 is low; with binary32 squares the keys "
     "tie and row 0 would be.",
     8,
     2,
     8,
     TAHQ_META_FP32,
     {{0, 0, lat_x, 0x1p-83f}, {0, 0, NULL, 0}, {0, 0, NULL, 0}, {0, 0, NULL, 0}},
     MISTAKES(GV_F32),
     NULL},
    /* the order of the tile gains: (1 + t) + (-1 + t) = 0, left to right t */
    {"gain-sum-order-tiles",
     "lattice,sum_order",
     "The pairwise order of the tile gains (SPEC 2.5 psum): row 0 has gains 1, "
     "2^-60, -1, 2^-60 (bf16 metadata), psum = (1 + 2^-60) + (-1 + 2^-60) = 0, a "
     "left-to-right sum 2^-60; row 1 is zero. Keys tie, row 0 is low; summed left "
     "to right, row 1 would be.",
     8,
     2,
     32,
     TAHQ_META_BF16,
     {{0, 0, lat_x, 1.0f}, {0, 8, lat_x, 0x1p-30f}, {0, 16, lat_y, 1.0f}, {0, 24, lat_x, 0x1p-30f}},
     MISTAKES(GV_SEQ_PSUM),
     MISTAKES(GV_F32)},
    /* the order within a tile: the squares of (6, e, e, e, 7, 21, 0, 0),
     * e = 2^-27, are (1, 2^-54 x3, 0, ...) at 2 bits and (0, 2^-54 x3, 1,
     * 0, ...) at 3 bits: the tree gives 1 for both, a left-to-right sum 1
     * and 1 + 2^-52 */
    {"gain-sum-order-tile",
     "lattice,sum_order",
     "The halving tree over a tile's squared errors (SPEC 2.5 tsum): row 1 is "
     "(6, e, e, e, 7, 21, 0, 0), e = 2^-27; its squares are (1, 2^-54 x3, 0, 0, 0, "
     "0) at 2 bits and (0, 2^-54 x3, 1, 0, 0, 0) at 3 bits, which the tree sums "
     "both to 1 (gain 0) and a left-to-right sum to 1 and 1 + 2^-52 (gain "
     "-2^-52). Row 0 is zero: keys tie, row 0 is low.",
     8,
     2,
     8,
     TAHQ_META_FP16,
     {{1, 0, lat_tsum, 1.0f}, {0, 0, NULL, 0}, {0, 0, NULL, 0}, {0, 0, NULL, 0}},
     MISTAKES(GV_SEQ_TILE, GV_ADJ_TILE),
     NULL},
};

/* Two tokens whose sigma share the high 32 bits (tie by row) and two whose
 * high words are adjacent, found among one token moved by a few ulps. */
typedef struct cand {
    uint64_t o;
    double sigma;
    uint32_t e;
    int m;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->o != y->o)
        return x->o < y->o ? -1 : 1;
    if (x->e != y->e)
        return x->e < y->e ? -1 : 1;
    return x->m < y->m ? -1 : x->m > y->m;
}

/* A normal binary64 value as C99 hexadecimal text, all 13 digits (the same
 * text on every platform, unlike printf's %a). */
static void hexfloat(double d, char *buf, size_t n)
{
    const uint64_t w = d2u(d);
    snprintf(buf, n, "%s0x1.%013" PRIx64 "p%d", (w >> 63) ? "-" : "",
             (uint64_t)(w & 0xFFFFFFFFFFFFFu), (int)((w >> 52) & 0x7FFu) - 1023);
}

static void fam_keys(golden_writer *g)
{
    tahq_config c = gcfg(16, 4, 3, 500, 2.0f, TAHQ_META_FP16);
    tahq_shape one = golden_shape(1, 1, 16), s = golden_shape(1, 2, 16);
    float *a = golden_alloc_x(&one), *b = golden_alloc_x(&one);
    fill_gauss(a, &one, 800);
    enum { M = 40 };
    cand *cs = malloc(16 * 2 * M * sizeof *cs + sizeof *cs);
    size_t n = 0;
    for (uint32_t e = 0; e < 16; e++)
        for (int m = -M; m <= M; m++) {
            if (m == 0 && e > 0)
                continue;
            memcpy(b, a, sizeof(float) * 16);
            b[e] = u2f(f2u(a[e]) + (uint32_t)m);
            double sg = 0;
            if (gain_spec_token_sigma(&c, b, 1, 0, GV_SPEC, &sg) == TAHQ_OK) {
                cs[n].o = gain_spec_order_word(sg);
                cs[n].sigma = sg;
                cs[n].e = e;
                cs[n].m = m;
                n++;
            }
        }
    qsort(cs, n, sizeof *cs, cmp_cand);
    /* tie: same high word, bit 31 differs, binary32 values differ;
     * near: high words h+1 and h (h even), low words in the other order */
    long tie = -1, near = -1, tie_q = -1, near_q = -1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && (cs[j].o >> 32) <= (cs[i].o >> 32) + 1; j++) {
            const uint64_t lo = cs[i].o, hi = cs[j].o;
            if (tie < 0 && (lo >> 32) == (hi >> 32) && ((lo >> 31) & 1u) != ((hi >> 31) & 1u) &&
                (float)cs[i].sigma != (float)cs[j].sigma) {
                tie = (long)j;
                tie_q = (long)i;
            }
            if (near < 0 && (hi >> 32) == (lo >> 32) + 1 && ((lo >> 32) & 1u) == 0 &&
                (hi & 0xFFFFFFFFu) < (lo & 0xFFFFFFFFu)) {
                near = (long)j;
                near_q = (long)i;
            }
        }
    float *x = golden_alloc_x(&s);
    const long pairs[2][2] = {{tie, tie_q}, {near, near_q}};
    for (int k = 0; k < 2; k++) {
        if (pairs[k][0] < 0) {
            fprintf(stderr, "tahq golden-gen: gain key pair %d not found\n", k);
            golden_writer_fail(g);
            break;
        }
        for (int r = 0; r < 2; r++) { /* row 0: the larger sigma */
            const cand *q = &cs[pairs[k][r]];
            memcpy(x + 16 * r, a, sizeof(float) * 16);
            x[16 * r + q->e] = u2f(f2u(a[q->e]) + (uint32_t)q->m);
        }
        const cand *p = &cs[pairs[k][0]], *q = &cs[pairs[k][1]];
        char desc[1024], hp[40], hq[40];
        hexfloat(p->sigma, hp, sizeof hp);
        hexfloat(q->sigma, hq, sizeof hq);
        if (k == 0) {
            const int differ[] = {GV_KEY_FULL64, GV_KEY_F32, GV_KEY_SHIFT31, GV_END};
            snprintf(desc, sizeof desc,
                     "The key is the high 32 bits of the ordered binary64 word (SPEC 4.3 step "
                     "4): rows 0 and 1 are i.i.d. normal values of seed 800 with value %u "
                     "moved by %d ulps (row 0) and value %u by %d ulps (row 1); their sigma %s "
                     "and %s have ordered words 0x%016" PRIx64 " and 0x%016" PRIx64
                     ", which share the high word and differ in bit 31 and in binary32: keys "
                     "tie, row 0 is low.",
                     (unsigned)p->e, p->m, (unsigned)q->e, q->m, hp, hq, p->o, q->o);
            gain_case(g, "gain-key-high-word-tie", "near_tie", desc, &c, &s, x, differ, NULL);
        } else {
            const int differ[] = {GV_KEY_LOWWORD, GV_KEY_SHIFT33, GV_END};
            snprintf(desc, sizeof desc,
                     "Keys that differ in the last bit of the high word: rows 0 and 1 are "
                     "i.i.d. normal values of seed 800 with value %u moved by %d ulps (row 0) "
                     "and value %u by %d ulps (row 1); their sigma %s and %s have ordered words "
                     "0x%016" PRIx64 " and 0x%016" PRIx64 " (high words h+1 and h, h even, the "
                     "low words in the other order): row 1 is low.",
                     (unsigned)p->e, p->m, (unsigned)q->e, q->m, hp, hq, p->o, q->o);
            gain_case(g, "gain-key-high-word-differs", "near_tie", desc, &c, &s, x, differ, NULL);
        }
    }
    free(x);
    free(cs);
    free(a);
    free(b);
}

/* Negative gains on ordinary values: G = 8 tiles of i.i.d. uniform values
 * (seed 1100) at the paper's 4/3 bits, searched in order for the first two
 * whose gain is negative; row 0 is the first tile (positive gain). */
static void fam_negative_search(golden_writer *g)
{
    const int differ[] = {GV_KEY_PLAIN, GV_KEY_SIGNFLIP, GV_END};
    tahq_config c = gcfg(8, 4, 3, 500, 2.0f, TAHQ_META_FP16);
    tahq_shape one = golden_shape(1, 1, 8), s = golden_shape(1, 3, 8);
    float *x = golden_alloc_x(&s), *t = golden_alloc_x(&one);
    double sig[3] = {0, 0, 0};
    uint64_t at[3] = {0, 0, 0};
    int found = 0;
    uint64_t k = 0;
    for (; k < 100000 && found < 3; k++) {
        for (uint32_t i = 0; i < 8; i++)
            t[i] = golden_unif(1100, k * 8 + i);
        double sg = 0;
        if (gain_spec_token_sigma(&c, t, 1, 0, GV_SPEC, &sg) != TAHQ_OK)
            continue;
        if ((found == 0 && sg > 0) || (found > 0 && sg < 0 && sg != sig[1])) {
            memcpy(x + 8 * found, t, 8 * sizeof(float));
            sig[found] = sg;
            at[found] = k;
            found++;
        }
    }
    if (found < 3) {
        fprintf(stderr, "tahq golden-gen: gain-negative-search: no negative gains found\n");
        golden_writer_fail(g);
    } else {
        char desc[1024], h0[40], h1[40], h2[40];
        hexfloat(sig[0], h0, sizeof h0);
        hexfloat(sig[1], h1, sizeof h1);
        hexfloat(sig[2], h2, sizeof h2);
        snprintf(desc, sizeof desc,
                 "Negative gains on ordinary values: tiles k of 8 i.i.d. uniform values (seed "
                 "1100, elements 8k..8k+7) at the paper's 4/3 bits; tiles %" PRIu64 " and %" PRIu64
                 " are the first two of the %" PRIu64 " searched whose 4-bit error exceeds "
                 "their 3-bit error. Rows: tile %" PRIu64 " (gain %s), tile %" PRIu64
                 " (gain %s), tile %" PRIu64 " (gain %s); the smallest key is the most negative "
                 "gain.",
                 at[1], at[2], k, at[0], h0, at[1], h1, at[2], h2);
        gain_case(g, "gain-negative-search", "negative_gain", desc, &c, &s, x, differ, NULL);
    }
    free(x);
    free(t);
}

/* Per-sequence scope: sequence b scaled by 16^(1-b), so the smallest keys
 * of the batch are all in sequence 2. */
static void fam_scope(golden_writer *g)
{
    const int differ[] = {GV_BATCH, GV_END};
    tahq_config c = gcfg(16, 4, 3, 500, 2.0f, TAHQ_META_FP16);
    tahq_shape s = golden_shape(3, 4, 64);
    float *x = golden_alloc_x(&s);
    fill_gauss(x, &s, 900);
    for (uint32_t b = 0; b < 3; b++)
        for (uint32_t i = 0; i < 4 * 64; i++)
            x[b * 256 + i] *= b == 0 ? 16.0f : b == 1 ? 1.0f : 0.0625f;
    gain_case(g, "gain-scope-per-sequence", "sequence_scope",
              "Per-sequence ranking (SPEC 4.2): three sequences of four tokens (i.i.d. normal "
              "values of seed 900 times 16, 1 and 1/16), low(4) = 2 in each; over the whole "
              "batch the six smallest keys would be sequence 2's and two of sequence 1's.",
              &c, &s, x, differ, NULL);
    free(x);
}

/* ------------------------------------------------------------ messages */

typedef struct edit {
    unsigned off, size;
    uint64_t val;
} edit;

/* A decode_error case: `base` with the edits applied, the CRC recomputed
 * if `crc`. */
static void dec_case(golden_writer *g, const char *id, const char *flags, const char *desc,
                     const uint8_t *base, size_t len, const edit *ed, int n_ed, int crc, int expect)
{
    uint8_t *m = malloc(len + 1);
    if (!m) {
        golden_writer_fail(g);
        return;
    }
    memcpy(m, base, len);
    for (int k = 0; k < n_ed; k++)
        for (unsigned i = 0; i < ed[k].size; i++)
            m[ed[k].off + i] = (uint8_t)(ed[k].val >> (8 * i));
    if (crc)
        message_reseal_stated(m, len);
    char fl[256];
    snprintf(fl, sizeof fl, "gain,%s", flags);
    golden_emit_decode_error(g, id, fl, desc, m, len, expect);
    free(m);
}

/* Invalid messages: the version/alloc rule of SPEC 8.1 and the map counts
 * of a gain message (SPEC 8.4). Bases: a gain and a token message of
 * [2,3,32], G=16, r=500 (one low token a sequence; 6 map bits, 2 padding),
 * and the token message of r=1000. */
static void fam_messages(golden_writer *g)
{
    if (golden_writer_failed(g))
        return;
    tahq_config cg = gcfg(16, 4, 3, 500, 2.0f, TAHQ_META_FP16), ct = cg;
    ct.alloc = TAHQ_ALLOC_TOKEN;
    tahq_shape s = golden_shape(2, 3, 32);
    float *x = golden_alloc_x(&s);
    fill_mixed(x, &s, 16, 1000);
    /* and a token message at r = 1000: n_low = 0, as every alloc would
     * require, so that a changed alloc breaks no other header rule */
    tahq_config c0 = ct;
    c0.hi_permille = 1000;
    uint8_t *mg = NULL, *mt = NULL, *m0 = NULL;
    size_t lg = 0, lt = 0, l0 = 0;
    if (run_encode(&cg, &s, x, &mg, &lg) != TAHQ_OK ||
        run_encode(&ct, &s, x, &mt, &lt) != TAHQ_OK ||
        run_encode(&c0, &s, x, &m0, &l0) != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: gain base messages failed\n");
        golden_writer_fail(g);
        free(x);
        free(mg);
        free(mt);
        free(m0);
        return;
    }
    free(x);
    const uint8_t map = mg[72];
    uint8_t extra = 0; /* a row of sequence 0 that is not low */
    for (unsigned r = 0; r < 3; r++)
        if (!((map >> r) & 1u)) {
            extra = (uint8_t)(1u << r);
            break;
        }
    const edit v1[] = {{4, 2, 1}}, v2[] = {{4, 2, 2}}, v3[] = {{4, 2, 3}}, v4[] = {{4, 2, 4}};
    const edit v3a0[] = {{4, 2, 3}, {11, 1, 0}}, v3a2[] = {{4, 2, 3}, {11, 1, 2}};
    const edit a4[] = {{11, 1, 4}}, nlow[] = {{40, 8, 3}};
    const edit per_seq[] = {{72, 1, 0x03}}, more[] = {{72, 1, (uint64_t)(map | extra)}};
    const edit pad[] = {{72, 1, (uint64_t)(map | 0x40u)}};
    const edit crc[] = {{(unsigned)lg - 1, 1, (uint64_t)(mg[lg - 1] ^ 1u)}};
    dec_case(g, "gain-decerr-version1-alloc3", "header_version,alloc_version",
             "a gain message (alloc 3) with version 1, CRC fixed: alloc 3 if and only if "
             "version 3 (SPEC 8.1)",
             mg, lg, v1, 1, 1, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-version1-alloc3-stale-crc",
             "header_version,alloc_version,crc_mismatch",
             "a gain message with version 1 and its CRC left stale: the header rule is checked "
             "before the CRC (SPEC 8.4 steps 2 and 4)",
             mg, lg, v1, 1, 0, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-version3-alloc1", "header_version,alloc_version",
             "a token message (alloc 1) with version 3, CRC fixed: version 3 goes with alloc 3 "
             "only",
             mt, lt, v3, 1, 1, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-version3-alloc0", "header_version,alloc_version",
             "a token message of r = 1000 (n_low 0, right for every alloc) with version 3 and "
             "alloc 0 (none), CRC fixed: only the alloc/version rule is broken (without it the "
             "payload size would be wrong: SIZE)",
             m0, l0, v3a0, 2, 1, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-version3-alloc2", "header_version,alloc_version",
             "a token message of r = 1000 (n_low 0) with version 3 and alloc 2 (tile), CRC "
             "fixed: only the alloc/version rule is broken (without it: SIZE)",
             m0, l0, v3a2, 2, 1, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-version2-alloc3", "unknown_version",
             "a gain message with version 2, CRC fixed: 2 is not assigned (SPEC 8.1), and the "
             "version is checked before the header rules (SPEC 8.4 step 1)",
             mg, lg, v2, 1, 1, TAHQ_ERR_VERSION);
    dec_case(g, "gain-decerr-version4-alloc3", "unknown_version",
             "a gain message with version 4, CRC fixed", mg, lg, v4, 1, 1, TAHQ_ERR_VERSION);
    dec_case(g, "gain-decerr-alloc4-version3", "header_field",
             "a gain message with alloc 4, CRC fixed: alloc is 0 to 3", mg, lg, a4, 1, 1,
             TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-n-low", "header_field",
             "a gain message with n_low 3 instead of B low(S) = 2, CRC fixed (SPEC 8.1)", mg, lg,
             nlow, 1, 1, TAHQ_ERR_HEADER);
    dec_case(g, "gain-decerr-map-per-sequence", "bad_map",
             "a gain map with 2 low tokens in sequence 0 and none in sequence 1 (the total, 2, as "
             "the header says), CRC fixed: the counts are per sequence (SPEC 8.4 step 5)",
             mg, lg, per_seq, 1, 1, TAHQ_ERR_PAYLOAD);
    dec_case(g, "gain-decerr-map-extra-low", "bad_map",
             "a gain map with one more low token in sequence 0 than low(S), CRC fixed", mg, lg,
             more, 1, 1, TAHQ_ERR_PAYLOAD);
    dec_case(g, "gain-decerr-map-padding", "bad_map,bad_padding",
             "a gain map (6 bits) with padding bit 6 set, CRC fixed", mg, lg, pad, 1, 1,
             TAHQ_ERR_PAYLOAD);
    dec_case(g, "gain-decerr-crc", "crc_mismatch",
             "a gain message with its last payload byte changed and the CRC left stale", mg, lg,
             crc, 1, 0, TAHQ_ERR_CRC);
    free(mg);
    free(mt);
    free(m0);
}

/* golden/v4: second, independent inputs for the §2.5 orders of §4.3 (the
 * constructions of lattice_cases under another tile size, scale and
 * metadata type). Each row places up to four 8-value tiles (row, first
 * column, pattern, power-of-two scale) in a zero tensor; the gain oracle
 * checks that each mistake of `differ` changes the map. */
static const gain_lattice v4_lattice[] = {
    {"bnd-gain-sum-order-tile-g016",
     "lattice,sum_order,boundary",
     "The halving tree over a tile's squared errors (SPEC 2.5 tsum), G = 16, fp32 metadata: "
     "row 1 is (6, e, e, e, 7, 21, 0, ..., 0) x 2^-10, e = 2^-27, whose squares at 2 and 3 "
     "bits the tree sums both to 2^-20 (gain 0) and a left-to-right sum or an adjacent-pair "
     "tree to 2^-20 and 2^-20 + 2^-72 (gain -2^-72, a key below that of row 0). Row 0 is zero: "
     "keys "
     "tie, row 0 is low.",
     16,
     2,
     16,
     TAHQ_META_FP32,
     {{1, 0, lat_tsum, 0x1p-10f}, {0, 0, NULL, 0}, {0, 0, NULL, 0}, {0, 0, NULL, 0}},
     MISTAKES(GV_SEQ_TILE, GV_ADJ_TILE),
     NULL},
    {"bnd-gain-sum-order-tiles-fp32",
     "lattice,sum_order,boundary",
     "The pairwise order of the tile gains (SPEC 2.5 psum), fp32 metadata: row 0 has gains 1, "
     "2^-56, -1, 2^-56 (the lattice tiles of gain-negative, the second and fourth times "
     "2^-28), psum = (1 + 2^-56) + (-1 + 2^-56) = 0, a left-to-right sum 2^-56; row 1 is "
     "zero. Keys tie, row 0 is low; summed left to right, row 1 would be.",
     8,
     2,
     32,
     TAHQ_META_FP32,
     {{0, 0, lat_x, 1.0f}, {0, 8, lat_x, 0x1p-28f}, {0, 16, lat_y, 1.0f}, {0, 24, lat_x, 0x1p-28f}},
     MISTAKES(GV_SEQ_PSUM),
     NULL},
};

void golden_gain_v4_cases(golden_writer *g)
{
    for (size_t i = 0; i < N_ROWS(v4_lattice); i++)
        lattice_case(g, &v4_lattice[i]);
}

void golden_gain_cases(golden_writer *g)
{
    seeded_cases(g, seeded_paper_tiles, N_ROWS(seeded_paper_tiles));
    fam_decoded_domain(g);
    seeded_cases(g, seeded_tau_to_share, N_ROWS(seeded_tau_to_share));
    fam_low_zero(g);
    seeded_cases(g, seeded_equal_bits, N_ROWS(seeded_equal_bits));
    fam_ties(g);
    for (size_t i = 0; i < N_ROWS(lattice_cases); i++)
        lattice_case(g, &lattice_cases[i]);
    fam_negative_search(g);
    fam_keys(g);
    fam_scope(g);
    fam_messages(g);
}
