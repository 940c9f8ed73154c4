/* SPDX-License-Identifier: MIT */
/*
 * test_parallel - tahq_encode_parallel / tahq_decode_parallel
 * (include/tahq_parallel.h) against the single-thread tahq_encode /
 * tahq_decode, byte for byte, for 1, 2, 3, 7 and 16 jobs on the built-in
 * thread runner and on a caller's runner (which runs the jobs in reverse
 * order on the calling thread), over shapes and configurations that cover
 * token, tile, gain and no allocation; groups whose map bits do not start
 * on a byte; outlier tiles (flagged, with pivots); stochastic rounding; fp16,
 * bf16 and fp32 metadata; tau 0 and +inf; more jobs than tiles; and gain
 * allocation (SPEC §4.3) over random configurations (tile size, bit pair,
 * ratio including 0 and 1000, tau including 0 and +inf, both roundings, all
 * metadata types, several sequences, row counts that no job count divides).
 *
 * Per case and job count:
 *   - the message has the same length and bytes as tahq_encode's, and the
 *     output buffer past the message too (tahq_encode leaves the parked
 *     pivot area zeroed; the parallel encode must as well);
 *   - decoding it with tahq_decode_parallel gives the same float bits as
 *     tahq_decode;
 *   - tahq_crc32c_combine joins the CRCs of two pieces into the CRC of the
 *     whole (every split point of a 300-byte buffer).
 * Errors: an input with a NaN and a value >= 2^64 in different parts gets
 * tahq_encode's status (that of the first bad element) with out untouched;
 * single-bit payload damage with the CRC recomputed (so that the payload
 * checks, not the CRC, decide) gets tahq_decode's status with out
 * untouched on every rejection.
 * Gain errors: a tensor some of whose tiles overflow the metadata at the low
 * width only (the high width encodes) gets tahq_encode's TAHQ_ERR_RANGE
 * with the header zeroed, whichever parts the failing rows fall in; a bad
 * input element after a failing row still decides the status (tahq_encode
 * checks the whole input first); with ratio 1000 no key is computed and
 * the encode succeeds. Version 1 with alloc 3 and version 3 with alloc 1
 * are rejected as tahq_decode rejects them.
 * Control: a message with one changed byte is reported as different by the
 * comparison used above, and one damaged payload bit is rejected.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_parallel.h"
#include "tahq_spec.h"

#include "message_reseal.h" /* support/: the one re-seal of an edited message */

#include "cpu_path_arg.h"
#include "fast_tile.h"

static int g_fail = 0;
static int g_checks = 0;
static int g_quiet = 0; /* run_case prints no line (the random gain cases) */

#define CHECK(cond, ...)                                         \
    do {                                                         \
        g_checks++;                                              \
        if (!(cond)) {                                           \
            g_fail++;                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
        }                                                        \
    } while (0)

static uint64_t g_rng = 0x9E3779B97F4A7C15u;
static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}
static float urand(void) /* [0, 1) */
{
    return (float)(rnd() >> 8) * 0x1p-24f;
}

/* Activation-like data: a small base, a few loud channels, rare spikes
 * (outlier tiles), some quiet and some all-zero rows. */
static void fill(float *x, const tahq_shape *s)
{
    const uint64_t C = s->channels, rows = (uint64_t)s->batch * s->seq_len;
    for (uint64_t r = 0; r < rows; r++) {
        const uint32_t kind = rnd() % 16u;
        for (uint64_t c = 0; c < C; c++) {
            float v = (urand() + urand() + urand() - 1.5f) * (kind == 0 ? 0.01f : 0.5f);
            if (c % 97u == 5u)
                v *= 40.0f;
            if (rnd() % 500u == 0)
                v = (rnd() & 1u ? 1.0f : -1.0f) * (200.0f + 800.0f * urand());
            if (kind == 1)
                v = 0.0f;
            x[r * C + c] = v;
        }
    }
}

typedef struct tcase {
    const char *name;
    tahq_config cfg;
    tahq_shape shape;
    float gain; /* the data is multiplied by this (0: 1) */
} tcase;

/* A caller's runner: every job on the calling thread, last job first. */
static void reverse_runner(void *ctx, tahq_job_fn fn, void *arg, uint32_t n)
{
    uint32_t *calls = ctx;
    (*calls)++;
    for (uint32_t j = n; j-- > 0;)
        fn(arg, j);
}

static int same_bytes(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static void run_case(const tcase *tc)
{
    const uint64_t n = (uint64_t)tc->shape.batch * tc->shape.seq_len * tc->shape.channels;
    size_t cap = 0, wsz = 0;
    tahq_status st = tahq_encode_bound(&tc->cfg, &tc->shape, &cap);
    CHECK(st == TAHQ_OK, "%s: bound %d", tc->name, st);
    st = tahq_encode_workspace_size(&tc->cfg, &tc->shape, &wsz);
    CHECK(st == TAHQ_OK, "%s: workspace %d", tc->name, st);
    if (cap == 0)
        return;
    float *x = malloc(n * sizeof *x);
    float *y1 = malloc(n * sizeof *y1), *yp = malloc(n * sizeof *yp);
    uint8_t *m1 = malloc(cap), *mp = malloc(cap);
    void *ws = malloc(wsz + 1);
    if (!x || !y1 || !yp || !m1 || !mp || !ws)
        abort();
    fill(x, &tc->shape);
    if (tc->gain != 0.0f)
        for (uint64_t i = 0; i < n; i++)
            x[i] *= tc->gain;
    memset(m1, 0xA5, cap);
    size_t len1 = 0;
    st = tahq_encode(&tc->cfg, &tc->shape, x, ws, wsz, m1, cap, &len1);
    CHECK(st == TAHQ_OK, "%s: tahq_encode %d", tc->name, st);
    st = tahq_decode(m1, len1, y1, (size_t)n);
    CHECK(st == TAHQ_OK, "%s: tahq_decode %d", tc->name, st);
    tahq_header h;
    CHECK(tahq_parse_header(m1, len1, &h) == TAHQ_OK, "%s: header", tc->name);

    static const uint32_t jobs[] = {1, 2, 3, 7, 16};
    for (size_t ji = 0; ji < sizeof jobs / sizeof jobs[0]; ji++) {
        for (int custom = 0; custom < 2; custom++) {
            tahq_parallel par;
            tahq_parallel_threads(&par, jobs[ji]);
            uint32_t calls = 0;
            if (custom) {
                par.run = reverse_runner;
                par.ctx = &calls;
            }
            size_t pw = 0;
            st = tahq_encode_parallel_workspace_size(&tc->cfg, &tc->shape, jobs[ji], &pw);
            CHECK(st == TAHQ_OK, "%s: parallel workspace %d", tc->name, st);
            uint8_t *pws = malloc(pw + 1);
            if (!pws)
                abort();
            memset(pws, 0x5A, pw + 1);
            memset(mp, 0xA5, cap);
            size_t lenp = 0;
            st = tahq_encode_parallel(&tc->cfg, &tc->shape, x, pws + 1, pw, mp, cap, &lenp, &par);
            CHECK(st == TAHQ_OK, "%s jobs %u%s: encode %d", tc->name, jobs[ji],
                  custom ? " (runner)" : "", st);
            size_t first = 0;
            while (first < len1 && mp[first] == m1[first])
                first++;
            CHECK(lenp == len1 && same_bytes(mp, m1, len1),
                  "%s jobs %u%s: message differs (length %zu vs %zu, first byte %zu)", tc->name,
                  jobs[ji], custom ? " (runner)" : "", lenp, len1, first);
            CHECK(same_bytes(mp + len1, m1 + len1, cap - len1),
                  "%s jobs %u%s: bytes past the message differ", tc->name, jobs[ji],
                  custom ? " (runner)" : "");
            memset(yp, 0xEE, n * sizeof *yp);
            st = tahq_decode_parallel(m1, len1, yp, (size_t)n, &par);
            CHECK(st == TAHQ_OK, "%s jobs %u: decode %d", tc->name, jobs[ji], st);
            CHECK(same_bytes(yp, y1, n * sizeof *yp), "%s jobs %u%s: decoded values differ",
                  tc->name, jobs[ji], custom ? " (runner)" : "");
            if (custom)
                CHECK(jobs[ji] == 1 || calls > 0, "%s: the caller's runner was not used", tc->name);
            free(pws);
        }
    }
    if (!g_quiet)
        printf("%-28s [%u, %u, %u] %zu bytes, %llu flagged tiles: same bytes for 1, 2, 3, 7, "
               "16 jobs\n",
               tc->name, (unsigned)tc->shape.batch, (unsigned)tc->shape.seq_len,
               (unsigned)tc->shape.channels, len1, (unsigned long long)h.n_flagged);
    free(x);
    free(y1);
    free(yp);
    free(m1);
    free(mp);
    free(ws);
}

/* Input errors: the status of the first bad element, out untouched. */
static void input_errors(void)
{
    tahq_config cfg;
    tahq_config_default(&cfg);
    tahq_shape s = {4, 16, 128};
    const uint64_t n = (uint64_t)s.batch * s.seq_len * s.channels;
    size_t cap = 0, wsz = 0, pw = 0;
    tahq_encode_bound(&cfg, &s, &cap);
    tahq_encode_workspace_size(&cfg, &s, &wsz);
    tahq_encode_parallel_workspace_size(&cfg, &s, 7, &pw);
    float *x = malloc(n * sizeof *x);
    uint8_t *m1 = malloc(cap), *mp = malloc(cap), *fresh = malloc(cap);
    void *ws = malloc(wsz), *pws = malloc(pw);
    if (!x || !m1 || !mp || !fresh || !ws || !pws)
        abort();
    memset(fresh, 0x3C, cap);
    const struct {
        uint64_t nan_at, big_at;
    } spots[] = {{n - 1, 3}, {5, n - 2}, {n / 2, n / 2 + 1}, {n / 2 + 1, n / 2}, {0, 1}};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        fill(x, &s);
        x[spots[i].nan_at] = NAN;
        x[spots[i].big_at] = -0x1p64f;
        size_t len = 1;
        tahq_status want = tahq_encode(&cfg, &s, x, ws, wsz, m1, cap, &len);
        for (uint32_t jobs = 1; jobs <= 7; jobs += 2) {
            tahq_parallel par;
            tahq_parallel_threads(&par, jobs);
            memset(mp, 0x3C, cap);
            size_t lenp = 1;
            tahq_status got = tahq_encode_parallel(&cfg, &s, x, pws, pw, mp, cap, &lenp, &par);
            CHECK(got == want && lenp == 0, "input error %zu jobs %u: %d, tahq_encode %d", i, jobs,
                  got, want);
            CHECK(same_bytes(mp, fresh, cap), "input error %zu jobs %u: out written", i, jobs);
        }
    }
    /* argument checks */
    tahq_parallel par;
    tahq_parallel_threads(&par, 0);
    size_t len;
    CHECK(tahq_encode_parallel(&cfg, &s, x, pws, pw, mp, cap, &len, &par) == TAHQ_ERR_CONFIG,
          "jobs 0 accepted");
    tahq_parallel_threads(&par, TAHQ_JOBS_MAX + 1);
    CHECK(tahq_encode_parallel(&cfg, &s, x, pws, pw, mp, cap, &len, &par) == TAHQ_ERR_CONFIG,
          "jobs > max accepted");
    tahq_parallel_threads(&par, 7);
    CHECK(tahq_encode_parallel(&cfg, &s, x, pws, pw - 1, mp, cap, &len, &par) == TAHQ_ERR_BUFFER,
          "short workspace accepted");
    CHECK(tahq_encode_parallel(&cfg, &s, x, pws, pw, mp, cap - 1, &len, &par) == TAHQ_ERR_BUFFER,
          "short output accepted");
    CHECK(tahq_encode_parallel(&cfg, &s, x, NULL, pw, mp, cap, &len, &par) == TAHQ_ERR_NULL,
          "NULL workspace accepted");
    free(x);
    free(m1);
    free(mp);
    free(fresh);
    free(ws);
    free(pws);
}

/* Payload damage with a valid CRC: the parallel decoder rejects exactly what
 * tahq_decode rejects, with the same status, and writes nothing then. */
static void decode_errors(const tcase *tc, uint32_t trials)
{
    const uint64_t n = (uint64_t)tc->shape.batch * tc->shape.seq_len * tc->shape.channels;
    size_t cap = 0, wsz = 0;
    tahq_encode_bound(&tc->cfg, &tc->shape, &cap);
    tahq_encode_workspace_size(&tc->cfg, &tc->shape, &wsz);
    float *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *x), *yp = malloc(n * sizeof *x);
    uint8_t *m = malloc(cap), *bad = malloc(cap);
    void *ws = malloc(wsz + 1);
    if (!x || !y1 || !yp || !m || !bad || !ws)
        abort();
    fill(x, &tc->shape);
    size_t len = 0;
    CHECK(tahq_encode(&tc->cfg, &tc->shape, x, ws, wsz, m, cap, &len) == TAHQ_OK, "encode");
    uint32_t rejected = 0;
    tahq_parallel par;
    const uint64_t tiles = n / tc->cfg.tile;
    const uint64_t rows = (uint64_t)tc->shape.batch * tc->shape.seq_len;
    const int per_row = tc->cfg.alloc == TAHQ_ALLOC_TOKEN || tc->cfg.alloc == TAHQ_ALLOC_GAIN;
    const uint64_t map_bits = per_row ? rows : tc->cfg.alloc == TAHQ_ALLOC_TILE ? tiles : 0;
    const uint64_t checked = (map_bits + 7u) / 8u + (tiles + 7u) / 8u +
                             2u * tiles * (tc->cfg.meta == TAHQ_META_FP32 ? 4u : 2u);
    /* every bit of the map and flag sections, then random flips: half in
     * the sections the payload checks read (map, flags, metadata: SPEC §8.2
     * sections 1-4), half anywhere */
    const uint64_t map_flag_bits = ((map_bits + 7u) / 8u + (tiles + 7u) / 8u) * 8u;
    const uint64_t total = map_flag_bits + trials;
    for (uint64_t i = 0; i < total; i++) {
        memcpy(bad, m, len);
        const uint64_t bit =
            TAHQ_HEADER_BYTES * 8u +
            (i < map_flag_bits ? i : rnd() % ((i % 2u ? checked : len - TAHQ_HEADER_BYTES) * 8u));
        bad[bit / 8u] ^= (uint8_t)(1u << (bit % 8u));
        message_reseal(bad, len);
        memset(y1, 0x77, n * sizeof *y1);
        tahq_status want = tahq_decode(bad, len, y1, (size_t)n);
        rejected += want != TAHQ_OK;
        const uint32_t jobs = 1u + rnd() % 7u;
        tahq_parallel_threads(&par, jobs);
        memset(yp, 0x77, n * sizeof *yp);
        tahq_status got = tahq_decode_parallel(bad, len, yp, (size_t)n, &par);
        CHECK(got == want, "%s: bit %llu, jobs %u: %d, tahq_decode %d", tc->name,
              (unsigned long long)bit, jobs, got, want);
        CHECK(same_bytes(yp, y1, n * sizeof *yp), "%s: bit %llu, jobs %u: outputs differ", tc->name,
              (unsigned long long)bit, jobs);
    }
    /* every bit of the header, with the stored CRC and with the CRC
     * recomputed (so that the field checks decide), and truncations: the
     * header parse of the parallel decoder is its own (it computes the CRC
     * in parts) and must give tahq_decode's status for each */
    uint32_t header_rejected = 0, header_cases = 0;
    for (uint32_t bit = 0; bit < TAHQ_HEADER_BYTES * 8u; bit++) {
        for (int reseal = 0; reseal < 2; reseal++) {
            if (reseal && bit >= 68u * 8u)
                continue;
            memcpy(bad, m, len);
            bad[bit / 8u] ^= (uint8_t)(1u << (bit % 8u));
            if (reseal) {
                message_reseal(bad, len);
            }
            tahq_status want = tahq_decode(bad, len, y1, (size_t)n);
            tahq_parallel_threads(&par, 1u + bit % 4u);
            tahq_status got = tahq_decode_parallel(bad, len, yp, (size_t)n, &par);
            header_cases++;
            header_rejected += want != TAHQ_OK;
            CHECK(got == want, "%s: header bit %u%s: %d, tahq_decode %d", tc->name, bit,
                  reseal ? " (CRC recomputed)" : "", got, want);
        }
    }
    for (size_t cut = 0; cut < len; cut += cut < 80 ? 1 : (len - cut > 1 ? len - cut - 1 : 1)) {
        tahq_parallel_threads(&par, 2);
        tahq_status want = tahq_decode(m, cut, y1, (size_t)n);
        tahq_status got = tahq_decode_parallel(m, cut, yp, (size_t)n, &par);
        header_cases++;
        CHECK(got == want, "%s: truncated to %zu: %d, tahq_decode %d", tc->name, cut, got, want);
    }
    printf("%-28s %u header flips and truncations: same status as tahq_decode (%u flips "
           "rejected)\n",
           tc->name, header_cases, header_rejected);
    /* a wrong count: the status of tahq_decode */
    tahq_parallel_threads(&par, 3);
    CHECK(tahq_decode_parallel(m, len, yp, (size_t)n - 1, &par) ==
              tahq_decode(m, len, y1, (size_t)n - 1),
          "%s: count", tc->name);
    CHECK(tahq_decode_parallel(m, len - 1, yp, (size_t)n, &par) ==
              tahq_decode(m, len - 1, y1, (size_t)n),
          "%s: truncated", tc->name);
    printf("%-28s %llu payload bit flips with the CRC recomputed: %u rejected, same status "
           "and output as tahq_decode\n",
           tc->name, (unsigned long long)total, rejected);
    /* control: the flip of map bit 0 in token or gain mode changes a group's
     * count */
    if (per_row) {
        memcpy(bad, m, len);
        bad[TAHQ_HEADER_BYTES] ^= 1u;
        message_reseal(bad, len);
        CHECK(tahq_decode_parallel(bad, len, yp, (size_t)n, &par) == TAHQ_ERR_PAYLOAD,
              "control: a changed map bit was accepted");
    }
    free(x);
    free(y1);
    free(yp);
    free(m);
    free(bad);
    free(ws);
}

/* The fast stochastic codes (cpu/fast_tile.c, not public: cpu/fast_tile.h)
 * at element indices where the Philox block counter's low word wraps, which
 * no test tensor reaches (2^34 elements), against SPEC §5.3 written with
 * tahq_random_word. */

static void stochastic_counter_wrap(void)
{
    float v[256];
    uint8_t fast[256], want[256];
    const uint64_t starts[] = {(UINT64_C(1) << 34) - 64, (UINT64_C(1) << 34) - 256,
                               (UINT64_C(3) << 34) - 128, 0};
    int ran = 0;
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        for (uint32_t tile = 8; tile <= 256; tile *= 2) {
            const uint64_t elem0 = starts[k] / tile * tile;
            const float z = -1.25f, s = 0.0625f;
            const uint32_t levels = 15;
            for (uint32_t i = 0; i < tile; i++)
                v[i] = z + s * (float)(rnd() % 16u) + s * urand() * 0.999f;
            for (uint32_t i = 0; i < tile; i++) {
                float t = (v[i] - z) / s;
                float f0 = (float)(uint32_t)t;
                float phi = t - f0;
                float rho =
                    (float)(tahq_random_word(0x0123456789ABCDEFull, elem0 + i) >> 8) * 0x1p-24f;
                uint32_t q = (uint32_t)f0 + (rho < phi ? 1u : 0u);
                want[i] = (uint8_t)(q < levels ? q : levels);
            }
            if (!tahq_fast_codes_stochastic(v, tile, z, s, levels, 0x0123456789ABCDEFull, elem0,
                                            fast))
                continue;
            ran = 1;
            CHECK(memcmp(fast, want, tile) == 0, "stochastic codes at element %llu, tile %u",
                  (unsigned long long)elem0, tile);
        }
    }
    printf("fast stochastic codes at the block counter's 2^32 wrap: %s\n",
           ran ? "same as SPEC 5.3" : "no fast path on this build/CPU");
}

/* The payload check of the metadata values (SPEC §8.4 step 5: finite,
 * zero-point not -0, scale not negative), which the parallel decoder runs
 * on whole vectors of values and then one at a time: 37 tiles (two vectors
 * of 16 fp16/bf16 values or four of 8 fp32 values, then 5 more), one
 * zero-point or scale at a time set to inf, NaN, -0, -1 (all rejected but
 * -1 as a zero-point), +0 and the largest finite value (accepted), with
 * the CRC fixed: the status and output bytes of tahq_decode for 1, 2 and
 * 3 jobs. */
static void metadata_values(tahq_meta meta)
{
    enum { TILES = 37, N = TILES * 8 };
    tahq_config c;
    tahq_config_plain(&c, 8, 4);
    c.tau = 1.0f;
    c.meta = meta;
    tahq_shape s = {1, 1, N};
    static float x[N], y1[N], yp[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 37) % 19) - 9.0f + (i % 8 == 3 ? 40.0f : 0.0f);
    size_t cap = 0, wsz = 0, len = 0;
    tahq_encode_bound(&c, &s, &cap);
    tahq_encode_workspace_size(&c, &s, &wsz);
    uint8_t *m = malloc(cap), *bad = malloc(cap);
    void *ws = malloc(wsz + 1);
    if (!m || !bad || !ws)
        abort();
    CHECK(tahq_encode(&c, &s, x, ws, wsz, m, cap, &len) == TAHQ_OK, "metadata case: encode");
    const unsigned mb = meta == TAHQ_META_FP32 ? 4 : 2;
    const size_t zero0 = TAHQ_HEADER_BYTES + (TILES + 7) / 8; /* after the flags */
    const uint32_t f32[6] = {0x7F800000u, 0x7FC00000u, 0x80000000u, 0xBF800000u, 0u, 0x7F7FFFFFu};
    const uint32_t f16[6] = {0x7C00u, 0x7E00u, 0x8000u, 0xBC00u, 0u, 0x7BFFu};
    const uint32_t b16[6] = {0x7F80u, 0x7FC0u, 0x8000u, 0xBF80u, 0u, 0x7F7Fu};
    const uint32_t *v = meta == TAHQ_META_FP32 ? f32 : meta == TAHQ_META_BF16 ? b16 : f16;
    const unsigned where[8] = {0, 5, 15, 16, 31, 32, 33, 36};
    unsigned rejected = 0, cases = 0;
    for (unsigned kind = 0; kind < 2; kind++) /* zero-point, scale */
        for (unsigned w = 0; w < 8; w++)
            for (unsigned p = 0; p < 6; p++) {
                memcpy(bad, m, len);
                const size_t at = zero0 + ((size_t)kind * TILES + where[w]) * mb;
                for (unsigned b = 0; b < mb; b++)
                    bad[at + b] = (uint8_t)(v[p] >> (8 * b));
                message_reseal(bad, len);
                memset(y1, 0x55, sizeof y1);
                const tahq_status want = tahq_decode(bad, len, y1, N);
                rejected += want != TAHQ_OK;
                cases++;
                CHECK((want == TAHQ_OK) == (p >= 4 || (kind == 0 && p == 3)),
                      "control: metadata %u/%u/%u gives %d", kind, where[w], p, want);
                for (uint32_t jobs = 1; jobs <= 3; jobs++) {
                    tahq_parallel par;
                    tahq_parallel_threads(&par, jobs);
                    memset(yp, 0x55, sizeof yp);
                    CHECK(tahq_decode_parallel(bad, len, yp, N, &par) == want,
                          "metadata %u/%u/%u (meta %d), jobs %u: status", kind, where[w], p,
                          (int)meta, jobs);
                    CHECK(same_bytes(yp, y1, sizeof yp),
                          "metadata %u/%u/%u (meta %d), jobs %u: output", kind, where[w], p,
                          (int)meta, jobs);
                }
            }
    printf("metadata values (meta %d): %u cases, %u rejected, same as tahq_decode\n", (int)meta,
           cases, rejected);
    free(m);
    free(bad);
    free(ws);
}

/* SPEC §1 rule 6 through the parallel decoder: a valid message (every tile
 * flagged, fp32 / bf16 metadata) whose first tile's scale is patched to
 * 2^127 with the CRC fixed, so that q*s overflows and the inverse FWHT meets
 * inf - inf (as in test_nan.c). Its NaNs must come out with the bits
 * tahq_decode writes (the canonical NaN) for every job count; control: the
 * patched tile does decode to NaNs. */
static void canonical_nans(tahq_meta meta)
{
    tahq_config c;
    tahq_config_plain(&c, 8, 4);
    c.tau = 0.0f;
    c.meta = meta;
    tahq_shape s = {1, 1, 16};
    float x[16], y1[16], yp[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i % 8 + 1) * (i < 8 ? 1.0f : -0.25f);
    size_t cap = 0, wsz = 0, len = 0;
    tahq_encode_bound(&c, &s, &cap);
    tahq_encode_workspace_size(&c, &s, &wsz);
    uint8_t *m = malloc(cap);
    void *ws = malloc(wsz + 1);
    if (!m || !ws)
        abort();
    CHECK(tahq_encode(&c, &s, x, ws, wsz, m, cap, &len) == TAHQ_OK, "nan case: encode");
    const unsigned mb = meta == TAHQ_META_FP32 ? 4 : 2;
    const size_t scale0 = TAHQ_HEADER_BYTES + 1 + 2 * mb; /* flags byte, 2 zero-points */
    const uint32_t big = meta == TAHQ_META_FP32 ? 0x7F000000u : 0x7F00u;
    for (unsigned b = 0; b < mb; b++)
        m[scale0 + b] = (uint8_t)(big >> (8 * b));
    message_reseal(m, len);
    CHECK(tahq_decode(m, len, y1, 16) == TAHQ_OK, "nan case: tahq_decode");
    int nans = 0;
    for (int i = 0; i < 16; i++)
        nans += y1[i] != y1[i];
    CHECK(nans > 0, "control: the patched message decodes without a NaN");
    for (uint32_t jobs = 1; jobs <= 3; jobs++) {
        tahq_parallel par;
        tahq_parallel_threads(&par, jobs);
        memset(yp, 0, sizeof yp);
        CHECK(tahq_decode_parallel(m, len, yp, 16, &par) == TAHQ_OK, "nan case: decode");
        CHECK(same_bytes(yp, y1, sizeof yp), "nan case (meta %d), jobs %u: bits differ", (int)meta,
              jobs);
    }
    printf("NaN canonicalization (meta %d): %d NaNs, same bits as tahq_decode\n", (int)meta, nans);
    free(m);
    free(ws);
}

/* Random configurations in gain allocation, each through run_case (1, 2, 3,
 * 7, 16 jobs, both runners, encode and decode against the reference). */
static void gain_random(uint32_t count)
{
    static const float taus[] = {0.0f, INFINITY, 2.0f, 1.0f, 1.5f, 3.0f, 1.2f};
    static const float scales[] = {0.0f, 0.0f, 0.0f, 0x1p-20f, 0.01f};
    uint32_t by_meta[3] = {0, 0, 0}, by_round[2] = {0, 0}, r_edge = 0, tau_edge = 0;
    uint64_t rows_total = 0;
    g_quiet = 1;
    const int fail_before = g_fail;
    for (uint32_t i = 0; i < count; i++) {
        tcase t;
        memset(&t, 0, sizeof t);
        t.name = "gain random";
        tahq_config_default(&t.cfg);
        t.cfg.alloc = TAHQ_ALLOC_GAIN;
        t.cfg.tile = 8u << (rnd() % 6u);
        t.cfg.hi_bits = 1u + rnd() % 8u;
        t.cfg.lo_bits = 1u + rnd() % t.cfg.hi_bits;
        const uint32_t rk = rnd() % 6u;
        t.cfg.hi_permille = rk == 0 ? 0u : rk == 1 ? 1000u : rk == 2 ? 800u : rnd() % 1001u;
        t.cfg.tau = taus[i % (sizeof taus / sizeof taus[0])];
        t.cfg.rounding = (tahq_rounding)(rnd() % 2u);
        t.cfg.seed = ((uint64_t)rnd() << 32) | rnd();
        t.cfg.meta = (tahq_meta)(i % 3u);
        const uint32_t T = 1u + rnd() % (t.cfg.tile >= 128 ? 2u : 4u);
        t.shape.batch = 1u + rnd() % 4u;
        t.shape.seq_len = 1u + rnd() % 23u;
        t.shape.channels = T * t.cfg.tile;
        t.gain = scales[rnd() % (sizeof scales / sizeof scales[0])];
        by_meta[t.cfg.meta]++;
        by_round[t.cfg.rounding]++;
        r_edge += t.cfg.hi_permille == 0 || t.cfg.hi_permille == 1000;
        tau_edge += t.cfg.tau == 0.0f || isinf(t.cfg.tau);
        rows_total += (uint64_t)t.shape.batch * t.shape.seq_len;
        const int before = g_fail;
        run_case(&t);
        if (g_fail != before)
            fprintf(stderr,
                    "  (gain random %u: G=%u %u/%u r=%u tau=%g %s meta %d seed %llu "
                    "[%u, %u, %u] scale %g)\n",
                    i, t.cfg.tile, t.cfg.hi_bits, t.cfg.lo_bits, t.cfg.hi_permille,
                    (double)t.cfg.tau, t.cfg.rounding ? "stochastic" : "nearest", (int)t.cfg.meta,
                    (unsigned long long)t.cfg.seed, t.shape.batch, t.shape.seq_len,
                    t.shape.channels, (double)t.gain);
    }
    g_quiet = 0;
    printf("gain, %u random configurations (%llu rows; fp16/bf16/fp32 meta %u/%u/%u, "
           "nearest/stochastic %u/%u, r in {0, 1000} %u, tau in {0, inf} %u): %s for 1, 2, 3, "
           "7, 16 jobs\n",
           count, (unsigned long long)rows_total, by_meta[0], by_meta[1], by_meta[2], by_round[0],
           by_round[1], r_edge, tau_edge, g_fail == fail_before ? "same bytes" : "DIFFERENT");
}

/* A gain encode that fails: rows whose tiles overflow fp16 metadata at the
 * low width only. The status and out of the parallel encode against
 * tahq_encode for 1, 2, 3, 7 jobs. */
static void gain_errors(void)
{
    tahq_config cfg;
    tahq_config_default(&cfg); /* G=64, 4/3 bits, r=800, tau=2, fp16 */
    cfg.alloc = TAHQ_ALLOC_GAIN;
    tahq_shape s = {3, 10, 128}; /* 30 rows: parts of 30, 15, 10, 4-5 rows */
    const uint64_t C = s.channels, rows = (uint64_t)s.batch * s.seq_len;
    const uint64_t n = rows * C;
    size_t cap = 0, wsz = 0, pw = 0;
    tahq_config all_hi = cfg;
    all_hi.hi_permille = 1000; /* the largest bound of the ratios below */
    tahq_encode_bound(&all_hi, &s, &cap);
    tahq_encode_workspace_size(&cfg, &s, &wsz);
    tahq_encode_parallel_workspace_size(&cfg, &s, 7, &pw);
    float *x = malloc(n * sizeof *x);
    uint8_t *m1 = malloc(cap), *mp = malloc(cap);
    void *ws = malloc(wsz), *pws = malloc(pw);
    float *y = malloc(n * sizeof *y);
    if (!x || !m1 || !mp || !ws || !pws || !y)
        abort();
    /* a ramp 0 .. 700000 over a tile: scale 700000/15 fits fp16 at 4 bits,
     * 700000/7 = 100000 > 65504 does not at 3 bits */
    const struct {
        const char *what;
        int big_rows[3]; /* -1 ends */
        int64_t nan_at;  /* element, or -1 */
        uint32_t permille;
        tahq_status want;
    } cases[] = {
        {"one row in the last part", {29, -1, -1}, -1, 800, TAHQ_ERR_RANGE},
        {"rows in the first and last parts", {1, 26, -1}, -1, 800, TAHQ_ERR_RANGE},
        {"rows in every part", {2, 14, 22}, -1, 500, TAHQ_ERR_RANGE},
        {"a NaN after the failing row", {3, -1, -1}, 28 * 128 + 5, 800, TAHQ_ERR_NONFINITE},
        {"a NaN before the failing row", {20, -1, -1}, 2 * 128 + 7, 800, TAHQ_ERR_NONFINITE},
        {"ratio 1000 (no key computed)", {5, 17, 29}, -1, 1000, TAHQ_OK},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        fill(x, &s);
        for (int k = 0; k < 3 && cases[ci].big_rows[k] >= 0; k++) {
            float *row = x + (uint64_t)cases[ci].big_rows[k] * C;
            for (uint32_t i = 0; i < 64; i++) /* the row's first tile */
                row[i] = 700000.0f * (float)i / 63.0f;
        }
        if (cases[ci].nan_at >= 0)
            x[cases[ci].nan_at] = NAN;
        tahq_config c = cfg;
        c.hi_permille = cases[ci].permille;
        /* control: every tile at the high width encodes (alloc none) */
        if (cases[ci].nan_at < 0) {
            tahq_config hi = c;
            hi.alloc = TAHQ_ALLOC_NONE;
            size_t hcap = 0, hlen = 0;
            tahq_encode_bound(&hi, &s, &hcap);
            uint8_t *hm = malloc(hcap);
            if (!hm)
                abort();
            CHECK(tahq_encode(&hi, &s, x, NULL, 0, hm, hcap, &hlen) == TAHQ_OK,
                  "gain error %zu: the high width alone fails", ci);
            free(hm);
        }
        memset(m1, 0xA5, cap);
        size_t len1 = 1;
        const tahq_status want = tahq_encode(&c, &s, x, ws, wsz, m1, cap, &len1);
        CHECK(want == cases[ci].want, "gain error %zu (%s): tahq_encode %d, expected %d", ci,
              cases[ci].what, want, cases[ci].want);
        if (want == TAHQ_OK)
            CHECK(tahq_decode(m1, len1, y, (size_t)n) == TAHQ_OK, "gain error %zu: decode", ci);
        static const uint32_t jobs[] = {1, 2, 3, 7};
        for (size_t ji = 0; ji < 4; ji++) {
            for (int custom = 0; custom < 2; custom++) {
                tahq_parallel par;
                tahq_parallel_threads(&par, jobs[ji]);
                uint32_t calls = 0;
                if (custom) {
                    par.run = reverse_runner;
                    par.ctx = &calls;
                }
                memset(mp, 0xA5, cap);
                size_t lenp = 1;
                const tahq_status got =
                    tahq_encode_parallel(&c, &s, x, pws, pw, mp, cap, &lenp, &par);
                CHECK(got == want, "gain error %zu (%s) jobs %u%s: %d, tahq_encode %d", ci,
                      cases[ci].what, jobs[ji], custom ? " (runner)" : "", got, want);
                if (want == TAHQ_OK) {
                    CHECK(lenp == len1 && same_bytes(mp, m1, cap),
                          "gain error %zu jobs %u: message differs", ci, jobs[ji]);
                    continue;
                }
                CHECK(lenp == 0, "gain error %zu jobs %u: length %zu", ci, jobs[ji], lenp);
                if (want == TAHQ_ERR_RANGE) {
                    /* no partial message survives: the header is zeroed, as
                     * tahq_encode's, and the buffer does not decode */
                    uint8_t zero[TAHQ_HEADER_BYTES] = {0};
                    CHECK(same_bytes(mp, zero, TAHQ_HEADER_BYTES) &&
                              same_bytes(m1, zero, TAHQ_HEADER_BYTES),
                          "gain error %zu jobs %u: header not zeroed", ci, jobs[ji]);
                    CHECK(tahq_decode_parallel(mp, cap, y, (size_t)n, &par) == TAHQ_ERR_MAGIC,
                          "gain error %zu jobs %u: the failed buffer decodes", ci, jobs[ji]);
                } else {
                    /* an input error: out untouched, as tahq_encode's */
                    CHECK(same_bytes(mp, m1, cap), "gain error %zu jobs %u: out written", ci,
                          jobs[ji]);
                }
            }
        }
        printf("gain error: %-34s status %d as tahq_encode for 1, 2, 3, 7 jobs\n", cases[ci].what,
               (int)want);
    }
    free(x);
    free(m1);
    free(mp);
    free(ws);
    free(pws);
    free(y);
}

/* The header's version and alloc fields together (SPEC §8.1): version 1
 * with alloc 3 and version 3 with alloc 1 rejected with tahq_decode's
 * status; controls: the unpatched messages decode. */
static void gain_version(void)
{
    tahq_config c;
    tahq_config_default(&c);
    tahq_shape s = {2, 6, 128};
    const uint64_t n = (uint64_t)s.batch * s.seq_len * s.channels;
    float *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *x), *yp = malloc(n * sizeof *x);
    size_t cap = 0, wsz = 0;
    tahq_encode_bound(&c, &s, &cap);
    tahq_encode_workspace_size(&c, &s, &wsz);
    uint8_t *m = malloc(cap);
    void *ws = malloc(wsz);
    if (!x || !y1 || !yp || !m || !ws)
        abort();
    fill(x, &s);
    for (int mode = 0; mode < 2; mode++) {
        c.alloc = mode ? TAHQ_ALLOC_GAIN : TAHQ_ALLOC_TOKEN;
        size_t len = 0;
        CHECK(tahq_encode(&c, &s, x, ws, wsz, m, cap, &len) == TAHQ_OK, "version: encode");
        CHECK(m[4] == (mode ? TAHQ_GAIN_VERSION : TAHQ_FORMAT_VERSION) && m[11] == c.alloc,
              "version: header fields %u %u", m[4], m[11]);
        tahq_parallel par;
        tahq_parallel_threads(&par, 3);
        CHECK(tahq_decode_parallel(m, len, yp, (size_t)n, &par) == TAHQ_OK,
              "version: control decode (alloc %d)", (int)c.alloc);
        for (int patch = 0; patch < 3; patch++) {
            /* 0: the other version; 1: the other alloc (token <-> gain); 2:
             * both (a valid pair: the payload's checks decide) */
            uint8_t save4 = m[4], save11 = m[11];
            if (patch != 1)
                m[4] = (uint8_t)(mode ? TAHQ_FORMAT_VERSION : TAHQ_GAIN_VERSION);
            if (patch != 0)
                m[11] = (uint8_t)(mode ? TAHQ_ALLOC_TOKEN : TAHQ_ALLOC_GAIN);
            uint8_t savecrc[4];
            memcpy(savecrc, m + 68, 4);
            message_reseal(m, len);
            memset(y1, 0x11, n * sizeof *y1);
            memset(yp, 0x11, n * sizeof *yp);
            const tahq_status want = tahq_decode(m, len, y1, (size_t)n);
            const tahq_status got = tahq_decode_parallel(m, len, yp, (size_t)n, &par);
            CHECK(got == want && same_bytes(y1, yp, n * sizeof *yp),
                  "version: alloc %d patch %d: %d, tahq_decode %d", (int)c.alloc, patch, got, want);
            if (patch < 2)
                CHECK(want == TAHQ_ERR_HEADER, "version: alloc %d patch %d accepted (%d)",
                      (int)c.alloc, patch, want);
            printf("version/alloc patch %d of a %s message: status %d as tahq_decode\n", patch,
                   mode ? "gain" : "token", (int)got);
            m[4] = save4;
            m[11] = save11;
            memcpy(m + 68, savecrc, 4);
        }
    }
    free(x);
    free(y1);
    free(yp);
    free(m);
    free(ws);
}

static void crc_combine(void)
{
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rnd();
    const uint32_t whole = tahq_crc32c(0, buf, sizeof buf);
    int ok = 1;
    for (size_t cut = 0; cut <= sizeof buf; cut++) {
        uint32_t a = tahq_crc32c(0, buf, cut), b = tahq_crc32c(0, buf + cut, sizeof buf - cut);
        ok &= tahq_crc32c_combine(a, b, sizeof buf - cut) == whole;
    }
    CHECK(ok, "crc32c combine");
    /* control: a wrong length gives a wrong CRC */
    uint32_t a = tahq_crc32c(0, buf, 100), b = tahq_crc32c(0, buf + 100, 200);
    CHECK(tahq_crc32c_combine(a, b, 199) != whole, "control: crc combine ignores the length");
}

int main(int argc, char **argv)
{
    /* an argument (scalar, avx2, avx512): the CPU path of the parallel codec
     * (cpu/cpu_path.h); 77 (skipped) where this CPU lacks it */
    test_path tp;
    const int chosen = test_path_choose(&tp, argc > 1 ? argv[1] : NULL, "test_parallel");
    if (chosen != 0)
        return chosen;
    tcase cases[24];
    int nc = 0;
    tahq_config d;
    tahq_config_default(&d);

    cases[nc] = (tcase){"paper point, token", d, {4, 32, 512}, 0.0f};
    nc++;
    cases[nc] = (tcase){"token, S=7 (unaligned map)", d, {9, 7, 256}, 0.0f};
    nc++;
    cases[nc] = (tcase){"token, B=1", d, {1, 200, 320}, 0.0f};
    nc++;
    tcase t = {"stochastic, token", d, {3, 21, 384}, 0.0f};
    t.cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    t.cfg.seed = 0xDEADBEEFCAFEull;
    cases[nc++] = t;
    t = (tcase){"tile alloc, G=32, tau=1.5", d, {3, 5, 224}, 0.0f};
    t.cfg.tile = 32;
    t.cfg.alloc = TAHQ_ALLOC_TILE;
    t.cfg.tau = 1.5f;
    cases[nc++] = t;
    t = (tcase){"tile alloc, T=3, stochastic", d, {2, 11, 48}, 0.0f};
    t.cfg.tile = 16;
    t.cfg.alloc = TAHQ_ALLOC_TILE;
    t.cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    t.cfg.seed = 7;
    cases[nc++] = t;
    t = (tcase){"none, G=8, fp32 meta, stoch.", d, {1, 13, 40}, 0.0f};
    t.cfg.tile = 8;
    t.cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    t.cfg.seed = UINT64_MAX;
    t.cfg.alloc = TAHQ_ALLOC_NONE;
    t.cfg.meta = TAHQ_META_FP32;
    t.cfg.hi_bits = t.cfg.lo_bits = 5;
    cases[nc++] = t;
    t = (tcase){"tau=0 (all flagged), bf16", d, {2, 9, 256}, 0.0f};
    t.cfg.tau = 0.0f;
    t.cfg.meta = TAHQ_META_BF16;
    t.cfg.tile = 128;
    cases[nc++] = t;
    t = (tcase){"tau=inf, G=256, 8/2 bits", d, {2, 16, 512}, 0.0f};
    t.cfg.tau = INFINITY;
    t.cfg.tile = 256;
    t.cfg.hi_bits = 8;
    t.cfg.lo_bits = 2;
    t.cfg.hi_permille = 333;
    cases[nc++] = t;
    t = (tcase){"one tile", d, {1, 1, 64}, 0.0f};
    cases[nc++] = t;
    t = (tcase){"7/6 bits, G=16", d, {2, 10, 96}, 0.0f};
    t.cfg.tile = 16;
    t.cfg.hi_bits = 7;
    t.cfg.lo_bits = 6;
    cases[nc++] = t;
    t = (tcase){"2/1 bits, tile alloc", d, {3, 4, 512}, 0.0f};
    t.cfg.alloc = TAHQ_ALLOC_TILE;
    t.cfg.hi_bits = 2;
    t.cfg.lo_bits = 1;
    cases[nc++] = t;
    t = (tcase){"tiny values (fp16 subnormals)", d, {2, 8, 256}, 0x1p-20f};
    cases[nc++] = t;
    t = (tcase){"G=256, tau=1.2 (flagged)", d, {2, 8, 1024}, 0.0f};
    t.cfg.tile = 256;
    t.cfg.tau = 1.2f;
    cases[nc++] = t;
    /* a message above 256 KiB: the CRC is computed in several parts */
    t = (tcase){"large (CRC in parts)", d, {2, 256, 1024}, 0.0f};
    cases[nc++] = t;

    /* gain allocation (SPEC §4.3): fixed cases, then random ones */
    const int gain0 = nc;
    t = (tcase){"paper point, gain", d, {4, 32, 512}, 0.0f};
    t.cfg.alloc = TAHQ_ALLOC_GAIN;
    cases[nc++] = t;
    t = (tcase){"gain, S=7, stochastic, bf16", d, {9, 7, 256}, 0.0f};
    t.cfg.alloc = TAHQ_ALLOC_GAIN;
    t.cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    t.cfg.seed = 0x123456789ull;
    t.cfg.meta = TAHQ_META_BF16;
    cases[nc++] = t;
    t = (tcase){"gain, G=128 (odd log2), tau=0", d, {2, 13, 384}, 0.0f};
    t.cfg.alloc = TAHQ_ALLOC_GAIN;
    t.cfg.tile = 128;
    t.cfg.tau = 0.0f;
    t.cfg.meta = TAHQ_META_FP32;
    cases[nc++] = t;

    for (int i = 0; i < nc; i++)
        run_case(&cases[i]);
    gain_random(60);
    input_errors();
    gain_errors();
    gain_version();
    decode_errors(&cases[1], 300);
    decode_errors(&cases[4], 300);
    decode_errors(&cases[6], 200);
    decode_errors(&cases[gain0 + 1], 300);
    crc_combine();
    stochastic_counter_wrap();
    canonical_nans(TAHQ_META_FP32);
    metadata_values(TAHQ_META_FP16);
    metadata_values(TAHQ_META_BF16);
    metadata_values(TAHQ_META_FP32);
    canonical_nans(TAHQ_META_BF16);

    /* control: the comparison sees a one-byte difference */
    uint8_t a[64] = {0}, b[64] = {0};
    b[63] = 1;
    CHECK(!same_bytes(a, b, sizeof a), "control: comparison blind");

    CHECK(test_path_ran(&tp, "test_parallel"), "the chosen CPU path ran");

    printf("%d checks, %d failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
