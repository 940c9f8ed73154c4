/* SPDX-License-Identifier: MIT */
/*
 * test_fast_encode - the fp16 metadata conversions of the encoder's fast
 * path (cpu/fast_encode.c: F16C's VCVTPS2PH with the round-down and round-up
 * immediates, VCVTPH2PS) against the reference's integer code in
 * ref/fp16.c, exhaustively:
 *   down-lo / down-hi: tahq_fast_f16_down_bits(x) ==
 *       tahq_meta_round_down_bits(TAHQ_META_FP16, x) for every binary32 bit
 *       pattern x (the low / high half: positive / negative), NaNs excepted
 *       (the encoder never converts one: the input is checked finite);
 *   up-lo / up-hi: the same for tahq_fast_f16_up_bits and round-up;
 *   meta: tahq_fast_f16_value(h) == tahq_meta_value(TAHQ_META_FP16, h) (bits)
 *       for every binary16 h but the NaNs; tahq_fast_zero_scale against
 *       tahq_quantize_tile_range (zero, scale, their bits and the status) on
 *       edge and random ranges, every width 1..8, fp16, bf16 and fp32;
 *   log2: tahq_fast_log2_8 (the 8-lane SPEC §2.3 log2 of the fast entropy)
 *       against tahq_log2 on every binary32 from +0 to the largest finite;
 *   entropy: tahq_fast_row_entropy against the input check and tahq_entropy
 *       on random rows (every tile size, 1-40 tiles; outliers, zeros, signed
 *       zeros, subnormals, totals below 2^-128, values near 2^64, NaN and
 *       infinities);
 *   encode: tahq_fast_crc32c against tahq_crc32c (every length to 2,100
 *       bytes, three alignments; 1 MiB buffers); whole messages of
 *       tahq_encode_parallel (1, 2, 3 jobs) against
 *       tahq_encode for every tile size, metadata type, rounding and
 *       allocation, data with outliers, constant and all-zero tiles; a tile
 *       whose fp16 scale overflows at both widths (TAHQ_ERR_RANGE in the
 *       tile phase: the same status, the header zeroed) and a NaN;
 *   gain: tahq_fast_gain_key against tahq_token_gain_key (status, key bits)
 *       on random rows (every tile size, widths 1..8, fp16/bf16/fp32, both
 *       roundings, tau 0 / 2 / +inf; Gaussian data with outliers, constant,
 *       all-zero and signed-zero tiles, subnormals, small integers whose
 *       gains are often negative, codes on rounding ties, element indices
 *       where the Philox counter's low word wraps, fp16 overflow at the low
 *       width only); whole gain messages of tahq_encode_parallel against
 *       tahq_encode, with overflow, NaN, +-inf and 2^64 rejections;
 *   gain-control: the key comparison finds keys computed with the wrong
 *       seed (stochastic) and with the gate switched off;
 *   control: the same comparison finds a deliberately wrong conversion:
 *       F16C's truncation (round toward zero) in place of round-down on the
 *       negatives, and in place of round-up on the positives;
 *   path-control: choosing a path (cpu/cpu_path.h) changes which code runs:
 *       a token message encoded and decoded on each path the CPU has moves
 *       that path's run counter only (scalar: neither fast path's), with the
 *       reference's bytes and floats on each;
 *   path-env: TAHQ_CPU_PATH (set by ctest) chose the path at the first use.
 * A second argument (scalar, avx2, avx512) runs the part on that path (exit
 * 77, SKIPPED, where the CPU lacks it) and checks afterwards that the
 * path's code ran (cpu_path_arg.h); on avx512, meta checks the tile phase's
 * 16-lane fp16 metadata search (one range at a time).
 * Without F16C (or in the scalar library) the fast functions are the
 * reference's and the comparisons hold trivially; the control then checks
 * nothing and says so.
 */
#include "tahq.h"
#include "tahq_parallel.h"
#include "tahq_spec.h"
#include "tutil.h"

#include "cpu_path_arg.h"
#include "fast_encode.h"
#include "fast_gain.h"
#include "fast_tile.h"
#include "tahq_ref_api.h" /* library-internal: the reference's metadata rounding and tile quantizer */

typedef uint16_t (*conv_fn)(float);

static uint16_t ref_down(float x)
{
    return (uint16_t)tahq_meta_round_down_bits(TAHQ_META_FP16, x);
}
static uint16_t ref_up(float x)
{
    return (uint16_t)tahq_meta_round_up_bits(TAHQ_META_FP16, x);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_F16C_CONTROL 1
/* the wrong conversion of the control: truncation toward zero */
__attribute__((target("f16c"))) static uint16_t trunc_f16c(float x)
{
    return (uint16_t)_cvtss_sh(x, _MM_FROUND_TO_ZERO);
}
#endif

/* Patterns [first, last] but the NaNs: mismatches of fast against ref
 * (the first few printed when `report`), the first mismatching pattern in
 * *first_bad. */
static uint64_t compared; /* patterns compare_range compared (NaNs left out) */

static uint64_t compare_range(conv_fn fast, conv_fn ref, uint64_t first, uint64_t last, int report,
                              uint32_t *first_bad)
{
    uint64_t bad = 0;
    *first_bad = 0;
    compared = 0;
    for (uint64_t w = first; w <= last; w++) {
        const uint32_t u = (uint32_t)w;
        if ((u & 0x7FFFFFFFu) > 0x7F800000u)
            continue;
        const float x = u2f(u);
        const uint16_t a = fast(x), b = ref(x);
        compared++;
        if (a != b) {
            if (bad == 0)
                *first_bad = u;
            bad++;
            if (report && bad <= 10)
                fprintf(stderr, "x = %08x: fast %04x, reference %04x\n", u, a, b);
        }
    }
    return bad;
}

static int part_exhaustive(conv_fn fast, conv_fn ref, uint64_t first, uint64_t last,
                           const char *name)
{
    uint32_t first_bad;
    const double t0 = t_now();
    const uint64_t bad = compare_range(fast, ref, first, last, 1, &first_bad);
    t_checks += compared;
    t_fails += bad;
    printf("%s: %08" PRIx64 "..%08" PRIx64 ", %" PRIu64 " patterns (NaNs left out), %" PRIu64
           " mismatches, %.1f s (F16C path %s)\n",
           name, first, last, compared, bad, t_now() - t0,
           tahq_fast_encode_active() ? "on" : "off");
    return t_finish("test_fast_encode", name);
}

static void check_zero_scale(float lo, float hi, uint32_t bits, tahq_meta meta)
{
    const uint32_t levels = (1u << bits) - 1u;
    float v[8] = {lo, hi, lo, hi, lo, hi, lo, hi};
    uint8_t codes[8];
    float z0 = -1.0f, s0 = -1.0f, z1 = -1.0f, s1 = -1.0f;
    uint32_t zb0 = 7, sb0 = 7, zb1 = 7, sb1 = 7;
    tahq_status a = tahq_quantize_tile_range(v, 8, lo, hi, bits, meta, TAHQ_ROUND_NEAREST_EVEN, 0,
                                             0, &z0, &s0, &zb0, &sb0, codes);
    tahq_status b = tahq_fast_zero_scale(meta, lo, hi, levels, &z1, &s1, &zb1, &sb1);
    CHECK_QUIET(a == b, "zero_scale(%08x, %08x, L=%u, meta %d): status %d, reference %d", f2u(lo),
                f2u(hi), levels, (int)meta, (int)b, (int)a);
    if (a == TAHQ_OK && b == TAHQ_OK)
        CHECK_QUIET(zb0 == zb1 && sb0 == sb1 && f2u(z0) == f2u(z1) && f2u(s0) == f2u(s1),
                    "zero_scale(%08x, %08x, L=%u, meta %d): z %08x/%x s %08x/%x, reference "
                    "%08x/%x %08x/%x",
                    f2u(lo), f2u(hi), levels, (int)meta, f2u(z1), zb1, f2u(s1), sb1, f2u(z0), zb0,
                    f2u(s0), sb0);
}

static int part_meta(void)
{
    /* every binary16 pattern but the NaNs, widened */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0)
            continue;
        const float a = tahq_fast_f16_value((uint16_t)h), b = tahq_meta_value(TAHQ_META_FP16, h);
        CHECK_QUIET(f2u(a) == f2u(b), "f16 value %04x: fast %08x, reference %08x", h, f2u(a),
                    f2u(b));
    }
    /* ranges: edges of binary16 (subnormals, the largest finite, overflow to
     * +-inf), signed zeros, and random values of every exponent */
    static const float edges[] = {
        0.0f,       -0.0f,       0x1p-24f,       -0x1p-24f,       0x1p-25f,     -0x1p-25f,
        0x1.8p-25f, -0x1.8p-25f, 0x1p-14f,       -0x1p-14f,       0x1.ff8p-15f, -0x1.ff8p-15f,
        65504.0f,   -65504.0f,   65519.0f,       -65519.0f,       65520.0f,     -65520.0f,
        65536.0f,   -65536.0f,   1.0f,           -1.0f,           3.0f,         -3.0f,
        0x1p-149f,  -0x1p-149f,  0x1.fffffep63f, -0x1.fffffep63f, 0x1p-30f,     1e6f,
        -1e6f,      0.1f};
    const uint32_t n_edges = (uint32_t)(sizeof edges / sizeof edges[0]);
    static const tahq_meta metas[3] = {TAHQ_META_FP16, TAHQ_META_BF16, TAHQ_META_FP32};
    for (uint32_t m = 0; m < 3; m++)
        for (uint32_t bits = 1; bits <= 8; bits++)
            for (uint32_t i = 0; i < n_edges; i++)
                for (uint32_t j = 0; j < n_edges; j++)
                    if (edges[i] <= edges[j])
                        check_zero_scale(edges[i], edges[j], bits, metas[m]);
    trng r = {0x5EEDF16Cu};
    for (uint32_t n = 0; n < 400000; n++) {
        float a = trng_float_exp(&r, -40, 20), b = trng_float_exp(&r, -40, 20);
        if (trng_below(&r, 4) == 0)
            b = u2f(f2u(a) + (uint32_t)trng_below(&r, 64)); /* narrow ranges */
        if (trng_below(&r, 2))
            a = -a;
        if (trng_below(&r, 3) == 0)
            b = -b;
        if (a != a || b != b)
            continue;
        const float lo = a < b ? a : b, hi = a < b ? b : a;
        check_zero_scale(lo, hi, 1u + (uint32_t)trng_below(&r, 8), metas[n % 3]);
    }
    return t_finish("test_fast_encode", "meta");
}

static int part_log2(void)
{
    float x[8], y[8];
    uint64_t bad = 0;
    const double t0 = t_now();
    for (uint64_t w = 0; w < 0x7F800000u; w += 8) {
        for (uint32_t i = 0; i < 8; i++)
            x[i] = u2f((uint32_t)(w + i));
        tahq_fast_log2_8(x, y);
        for (uint32_t i = 0; i < 8; i++) {
            const float r = tahq_log2(x[i]);
            if (f2u(y[i]) != f2u(r) && ++bad <= 10)
                fprintf(stderr, "log2(%08x): fast %08x, reference %08x\n", f2u(x[i]), f2u(y[i]),
                        f2u(r));
        }
    }
    t_checks += 0x7F800000u;
    t_fails += bad;
    printf("log2: +0 .. largest finite, %" PRIu64 " mismatches, %.1f s (8-lane path %s)\n", bad,
           t_now() - t0, tahq_fast_encode_active() ? "on" : "off");
    return t_finish("test_fast_encode", "log2");
}

/* SPEC §3.2: finite and |x| < 2^64 */
static int row_ok(const float *x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if ((f2u(x[i]) & 0x7FFFFFFFu) >= 0x5F800000u)
            return 0;
    return 1;
}

static int part_entropy(void)
{
    if (!tahq_fast_encode_active()) {
        printf("entropy: no fast path on this CPU or build; nothing to compare\n");
        t_checks++;
        return t_finish("test_fast_encode", "entropy");
    }
    static float row[40 * 256];
    /* totals below 2^-128 (the reference divides), all zero, a sole value */
    static const float fills[4] = {0x1p-149f, -0x1p-140f, 0.0f, -0.0f};
    for (uint32_t f = 0; f < 4; f++)
        for (uint32_t G = 8; G <= 256; G *= 2)
            for (uint32_t T = 1; T <= 3; T++) {
                for (uint32_t i = 0; i < G * T; i++)
                    row[i] = fills[f];
                for (uint32_t sole = 0; sole < 2; sole++) {
                    if (sole)
                        row[G * T - 1] = 3.0f;
                    float h = -1.0f;
                    const int ok = tahq_fast_row_entropy(row, T, G, &h);
                    const float ref = tahq_entropy(row, T, G);
                    CHECKF(ok && f2u(h) == f2u(ref),
                           "fill %08x G %u T %u sole %u: %08x, reference %08x", f2u(fills[f]), G, T,
                           sole, f2u(h), f2u(ref));
                }
            }
    trng r = {0xE27809u};
    uint32_t kinds[8] = {0};
    for (uint32_t n = 0; n < 6000; n++) {
        const uint32_t G = 8u << trng_below(&r, 6), T = 1u + (uint32_t)trng_below(&r, 40);
        const uint32_t C = G * T, kind = (uint32_t)trng_below(&r, 8);
        kinds[kind]++;
        for (uint32_t i = 0; i < C; i++) {
            float v = (float)trng_gauss(&r);
            switch (kind) {
            case 1:
                v = trng_below(&r, 50) == 0 ? v * 1e4f : v;
                break; /* outliers */
            case 2:
                v = trng_below(&r, 3) ? (trng_below(&r, 2) ? 0.0f : -0.0f) : v;
                break;
            case 3:
                v = v * 0x1p-140f;
                break; /* subnormals */
            case 4:
                v = trng_float_exp(&r, -149, -127);
                break; /* tiny totals */
            case 5:
                v = trng_float_exp(&r, 40, 63);
                break; /* near 2^64 */
            case 6:
                v = i == trng_below(&r, C) ? v : 0.0f;
                break; /* mostly zero */
            default:
                break;
            }
            row[i] = v;
        }
        if (kind == 7) { /* a bad element, sometimes */
            static const uint32_t bad_bits[5] = {0x7FC00000u, 0xFF800000u, 0x7F800000u, 0x5F800000u,
                                                 0xDF800000u};
            if (trng_below(&r, 2))
                row[trng_below(&r, C)] = u2f(bad_bits[trng_below(&r, 5)]);
        }
        float h = -1.0f;
        const int ok = tahq_fast_row_entropy(row, T, G, &h);
        const int want_ok = row_ok(row, C);
        CHECK_QUIET(ok == want_ok, "row %u (G %u, T %u, kind %u): check %d, want %d", n, G, T, kind,
                    ok, want_ok);
        if (ok && want_ok) {
            const float ref = tahq_entropy(row, T, G);
            CHECK_QUIET(f2u(h) == f2u(ref),
                        "row %u (G %u, T %u, kind %u): entropy %08x, reference %08x", n, G, T, kind,
                        f2u(h), f2u(ref));
        }
    }
    return t_finish("test_fast_encode", "entropy");
}

/* Messages of the parallel codec (the fast paths) and of tahq_encode: same
 * status, length and bytes (the whole bound); on TAHQ_ERR_RANGE the header
 * zeroed in both. */
static tahq_status compare_encode(const tahq_config *c, const tahq_shape *s, const float *x,
                                  const char *what)
{
    size_t cap = 0, wsz = 0, pw = 0, len1 = 1;
    tahq_encode_bound(c, s, &cap);
    tahq_encode_workspace_size(c, s, &wsz);
    tahq_encode_parallel_workspace_size(c, s, 3, &pw);
    uint8_t *m1 = malloc(cap), *mp = malloc(cap);
    void *ws = malloc(wsz + 1), *pws = malloc(pw + 1);
    if (!m1 || !mp || !ws || !pws)
        abort();
    memset(m1, 0xA5, cap);
    const tahq_status want = tahq_encode(c, s, x, ws, wsz, m1, cap, &len1);
    for (uint32_t jobs = 1; jobs <= 3; jobs++) {
        tahq_parallel par;
        tahq_parallel_threads(&par, jobs);
        size_t lenp = 1;
        memset(mp, 0xA5, cap);
        const tahq_status got = tahq_encode_parallel(c, s, x, pws, pw, mp, cap, &lenp, &par);
        CHECKF(got == want, "%s, %u jobs: status %d, tahq_encode %d", what, jobs, (int)got,
               (int)want);
        if (want == TAHQ_OK)
            CHECKF(lenp == len1 && memcmp(mp, m1, cap) == 0, "%s, %u jobs: message differs", what,
                   jobs);
        else if (want == TAHQ_ERR_RANGE)
            CHECKF(lenp == 0 && memcmp(mp, m1, TAHQ_HEADER_BYTES) == 0, "%s, %u jobs: header", what,
                   jobs);
        else
            CHECKF(lenp == 0 && memcmp(mp, m1, cap) == 0, "%s, %u jobs: out written", what, jobs);
    }
    free(m1), free(mp), free(ws), free(pws);
    return want;
}

/* tahq_fast_crc32c (the parallel codec's CRC parts: on avx512 the
 * carry-less folds where the CPU has VPCLMULQDQ, on avx2 three crc32
 * streams, else the reference) against tahq_crc32c: every length up to
 * 2,100 bytes at three alignments, random starting registers, and longer
 * buffers; control: one flipped bit in the fast call's copy of the data
 * is seen at every length tried. */
static void compare_crc(trng *r)
{
    const size_t big = (size_t)1 << 20;
    uint8_t *buf = malloc(big + 64), *copy = malloc(big + 64);
    if (!buf || !copy)
        abort();
    for (size_t i = 0; i < big + 64; i++)
        buf[i] = (uint8_t)trng_next(r);
    uint32_t compared = 0, seen = 0;
    for (size_t n = 0; n <= 2100; n++)
        for (size_t off = 0; off < 3; off++) {
            const uint32_t c0 = (uint32_t)trng_next(r);
            const uint32_t want = tahq_crc32c(c0, buf + off, n),
                           got = tahq_fast_crc32c(c0, buf + off, n);
            CHECK_QUIET(got == want, "crc of %zu bytes at offset %zu: %08x, reference %08x", n, off,
                        got, want);
            compared++;
            if (n > 0 && off == 0) { /* control */
                memcpy(copy, buf, n);
                copy[trng_below(r, n)] ^= (uint8_t)(1u << trng_below(r, 8));
                seen += tahq_fast_crc32c(c0, copy, n) != want;
            }
        }
    for (uint32_t k = 0; k < 12; k++) {
        const size_t n = big - (size_t)trng_below(r, 5000), off = (size_t)trng_below(r, 64);
        const uint32_t c0 = (uint32_t)trng_next(r);
        CHECKF(tahq_fast_crc32c(c0, buf + off, n) == tahq_crc32c(c0, buf + off, n),
               "crc of %zu bytes at offset %zu", n, off);
        compared++;
    }
    printf("encode: %u CRC-32C compared with tahq_crc32c; control: %u of 2100 flipped bits seen\n",
           compared, seen);
    CHECKF(seen == 2100, "control: %u of 2100 flipped bits seen", seen);
    free(buf);
    free(copy);
}

static int part_encode(void)
{
    trng r = {0xF00DCAFEu};
    compare_crc(&r);
    static const tahq_alloc allocs[4] = {TAHQ_ALLOC_TOKEN, TAHQ_ALLOC_TILE, TAHQ_ALLOC_NONE,
                                         TAHQ_ALLOC_GAIN};
    char what[160];
    for (uint32_t G = 8; G <= 256; G *= 2)
        for (uint32_t m = 0; m < 3; m++)
            for (uint32_t a = 0; a < 4; a++)
                for (uint32_t rnd = 0; rnd < 2; rnd++) {
                    const tahq_shape s = {2, 5, G * (1u + (uint32_t)trng_below(&r, 4))};
                    tahq_config c = {G,
                                     1u + (uint32_t)trng_below(&r, 8),
                                     1,
                                     600,
                                     allocs[a],
                                     2.0f,
                                     rnd ? TAHQ_ROUND_STOCHASTIC : TAHQ_ROUND_NEAREST_EVEN,
                                     trng_next(&r),
                                     (tahq_meta)m};
                    c.lo_bits = 1u + (uint32_t)trng_below(&r, c.hi_bits);
                    if (trng_below(&r, 4) == 0)
                        c.tau = trng_below(&r, 2) ? 0.0f : INFINITY;
                    const uint64_t n = (uint64_t)s.batch * s.seq_len * s.channels;
                    float *x = malloc(n * sizeof *x);
                    if (!x)
                        abort();
                    for (uint64_t i = 0; i < n; i++) {
                        float v = (float)trng_gauss(&r);
                        if (trng_below(&r, 40) == 0)
                            v *= 300.0f; /* outliers: flagged tiles */
                        x[i] = v;
                    }
                    for (uint32_t i = 0; i < G; i++) { /* a constant and an all-zero tile */
                        x[i] = 0.75f;
                        x[n - 1 - i] = trng_below(&r, 2) ? 0.0f : -0.0f;
                    }
                    snprintf(what, sizeof what, "G %u meta %u alloc %d %s bits %u/%u tau %g", G, m,
                             (int)allocs[a], rnd ? "stochastic" : "nearest", c.hi_bits, c.lo_bits,
                             (double)c.tau);
                    CHECKF(compare_encode(&c, &s, x, what) == TAHQ_OK, "%s: encodes", what);
                    if (m == 0 && a == 0) {
                        /* a tile of row 7 whose fp16 scale overflows at any width */
                        float *row = x + 7u * s.channels + (s.channels - G);
                        for (uint32_t i = 0; i < G; i++)
                            row[i] = 3e7f * (float)i / (float)(G - 1); /* 3e7 / 255 > 65504 */
                        snprintf(what, sizeof what, "G %u fp16 overflow in the tile phase", G);
                        CHECKF(compare_encode(&c, &s, x, what) == TAHQ_ERR_RANGE, "%s: status",
                               what);
                        x[5u * s.channels + 3] = NAN;
                        snprintf(what, sizeof what, "G %u NaN", G);
                        CHECKF(compare_encode(&c, &s, x, what) == TAHQ_ERR_NONFINITE, "%s: status",
                               what);
                    }
                    free(x);
                }
    return t_finish("test_fast_encode", "encode");
}

/* One random row of T tiles of G values of the given kind. */
static void gain_row(trng *r, float *x, uint32_t G, uint32_t T, uint32_t kind)
{
    const uint32_t C = G * T;
    for (uint32_t i = 0; i < C; i++) {
        float v = (float)trng_gauss(r);
        switch (kind) {
        case 1:
            v = trng_below(r, 30) == 0 ? v * 500.0f : v;
            break; /* outliers */
        case 2:
            v = (float)trng_below(r, 8);
            break; /* lattice: g < 0 */
        case 3:
            v = v * 0x1p-140f;
            break; /* subnormals */
        case 4:
            v = trng_below(r, 3) ? (trng_below(r, 2) ? 0.0f : -0.0f) : v;
            break;
        case 5:
            v = 0.5f * (float)trng_below(r, 31);
            break; /* code ties */
        case 6:
            v = trng_float_exp(r, 20, 62);
            break; /* large, fp16 overflow */
        case 7:
            v = 700000.0f * (float)(i % G) / (float)(G - 1);
            break; /* overflow at lo only */
        default:
            break;
        }
        x[i] = v;
    }
    const uint32_t t = (uint32_t)trng_below(r, T);
    switch (trng_below(r, 4)) { /* a constant or zero tile */
    case 0:
        for (uint32_t i = 0; i < G; i++)
            x[t * G + i] = -1.25f;
        break;
    case 1:
        for (uint32_t i = 0; i < G; i++)
            x[t * G + i] = trng_below(r, 2) ? 0.0f : -0.0f;
        break;
    default:
        break;
    }
}

static void gain_config(trng *r, tahq_config *c, uint32_t G)
{
    *c = (tahq_config){G,
                       1u + (uint32_t)trng_below(r, 8),
                       1,
                       500,
                       TAHQ_ALLOC_GAIN,
                       2.0f,
                       trng_below(r, 2) ? TAHQ_ROUND_STOCHASTIC : TAHQ_ROUND_NEAREST_EVEN,
                       trng_next(r),
                       (tahq_meta)trng_below(r, 3)};
    c->lo_bits = 1u + (uint32_t)trng_below(r, c->hi_bits);
    switch (trng_below(r, 6)) {
    case 0:
        c->tau = 0.0f;
        break;
    case 1:
        c->tau = INFINITY;
        break;
    case 2:
        c->tau = 1.0f;
        break;
    default:
        break;
    }
}

/* Rows compared by key: mismatches of `fast` (a modified config, or the
 * same) against the reference; *ok_rows = rows both encoded. */
static uint32_t gain_keys(uint32_t rows, uint64_t seed, int mode, int report, uint32_t *ok_rows,
                          uint32_t *range_rows)
{
    static float x[16 * 256];
    trng r = {seed};
    uint32_t mismatches = 0;
    *ok_rows = 0;
    *range_rows = 0;
    for (uint32_t n = 0; n < rows; n++) {
        const uint32_t G = 8u << trng_below(&r, 6);
        const uint32_t T = 1u + (uint32_t)trng_below(&r, G >= 128 ? 4 : 16);
        const uint32_t kind = (uint32_t)trng_below(&r, 8);
        tahq_config c;
        gain_config(&r, &c, G);
        /* element indices: small, or where the Philox block's low word wraps */
        uint64_t elem0 = (uint64_t)G * trng_below(&r, 1000);
        if (trng_below(&r, 4) == 0)
            elem0 = (UINT64_C(1) << 34) - (uint64_t)G * (1u + trng_below(&r, T + 1));
        gain_row(&r, x, G, T, kind);
        tahq_config f = c;
        if (mode == 1) /* control: another seed */
            f.seed = c.seed + 1;
        if (mode == 2) /* control: no gate */
            f.tau = INFINITY;
        uint32_t key_ref = 0xDEADBEEFu, key_fast = 0xDEADBEEFu;
        const tahq_status want = tahq_token_gain_key(&c, x, T, elem0, &key_ref);
        tahq_tile_meta known[16];
        static uint8_t hi_codes[16 * 256]; /* the message compares them (part encode, below) */
        const tahq_status got =
            tahq_fast_gain_key(&f, x, T, elem0, &key_fast, known, n % 2 ? hi_codes : NULL);
        const int same = got == want && key_fast == key_ref;
        mismatches += !same;
        *ok_rows += want == TAHQ_OK;
        *range_rows += want == TAHQ_ERR_RANGE;
        if (report)
            CHECK_QUIET(same,
                        "row %u (G %u T %u kind %u, %u/%u bits, meta %d, %s, tau %g, elem0 %" PRIu64
                        "): status %d key %08x, reference %d %08x",
                        n, G, T, kind, c.hi_bits, c.lo_bits, (int)c.meta,
                        c.rounding == TAHQ_ROUND_STOCHASTIC ? "stochastic" : "nearest",
                        (double)c.tau, elem0, (int)got, key_fast, (int)want, key_ref);
    }
    return mismatches;
}

/* The fast key's own input check: rows that would encode, with one element
 * made non-finite or too large (SPEC §3.2) at a random place, must give
 * TAHQ_ERR_NONFINITE (the caller then finds the element); the same rows
 * before the change give the reference's key (gain_keys), so the check
 * cannot pass by failing every row. */
static void gain_bad_rows(uint32_t rows, uint64_t seed)
{
    static float x[16 * 256];
    static const uint32_t bad_bits[5] = {0x7FC00000u, 0x7F800000u, 0x5F800000u, 0x71800000u,
                                         0x7F800001u};
    trng r = {seed};
    uint32_t checked = 0;
    for (uint32_t n = 0; n < rows; n++) {
        const uint32_t G = 8u << trng_below(&r, 6);
        const uint32_t T = 1u + (uint32_t)trng_below(&r, G >= 128 ? 4 : 16);
        tahq_config c;
        gain_config(&r, &c, G);
        gain_row(&r, x, G, T, (uint32_t)trng_below(&r, 6)); /* no overflow kinds */
        uint32_t key = 0;
        tahq_tile_meta known[16];
        if (tahq_token_gain_key(&c, x, T, 0, &key) != TAHQ_OK)
            continue;
        const uint64_t at = trng_below(&r, (uint64_t)G * T);
        const uint32_t bits = bad_bits[trng_below(&r, 5)] | (trng_below(&r, 2) ? 0x80000000u : 0u);
        x[at] = u2f(bits);
        const tahq_status got = tahq_fast_gain_key(&c, x, T, 0, &key, known, NULL);
        CHECK_QUIET(got == TAHQ_ERR_NONFINITE,
                    "row %u (G %u T %u): element %" PRIu64 " = %08x gives status %d", n, G, T, at,
                    bits, (int)got);
        checked++;
    }
    printf("gain: %u rows with a bad element, each TAHQ_ERR_NONFINITE from the fast key\n",
           checked);
    CHECKF(checked > rows / 2, "coverage: %u rows with a bad element", checked);
}

static int part_gain(void)
{
    uint32_t ok_rows, range_rows;
    gain_keys(20000, 0x6A1Bu, 0, 1, &ok_rows, &range_rows);
    printf("gain: %u keys compared, %u rows TAHQ_ERR_RANGE\n", ok_rows, range_rows);
    CHECKF(ok_rows > 10000 && range_rows > 100, "coverage: %u keys, %u overflows", ok_rows,
           range_rows);
    gain_bad_rows(3000, 0x6A1B0BADu);
    /* whole gain messages: several sequences, ranked per sequence */
    trng r = {0x6A1C0DEu};
    char what[200];
    static const tahq_status edge_status[4] = {TAHQ_ERR_NONFINITE, TAHQ_ERR_NONFINITE,
                                               TAHQ_ERR_NONFINITE, TAHQ_ERR_RANGE};
    static const uint32_t edge_bits[4] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x5F800000u};
    for (uint32_t m = 0; m < 120; m++) {
        const uint32_t G = 8u << trng_below(&r, 6);
        const uint32_t T = 1u + (uint32_t)trng_below(&r, G >= 128 ? 3 : 6);
        const tahq_shape s = {1u + (uint32_t)trng_below(&r, 3), 1u + (uint32_t)trng_below(&r, 9),
                              G * T};
        tahq_config c;
        gain_config(&r, &c, G);
        c.hi_permille = (uint32_t)trng_below(&r, 1001);
        const uint64_t rows = (uint64_t)s.batch * s.seq_len, C = s.channels;
        float *x = malloc(rows * C * sizeof *x);
        if (!x)
            abort();
        const uint32_t kind = (uint32_t)trng_below(&r, 6); /* no overflow kinds: see below */
        for (uint64_t row = 0; row < rows; row++)
            gain_row(&r, x + row * C, G, T, kind);
        snprintf(what, sizeof what,
                 "gain G %u T %u [%u, %u] kind %u %u/%u bits meta %d %s r %u tau %g", G, T, s.batch,
                 s.seq_len, kind, c.hi_bits, c.lo_bits, (int)c.meta,
                 c.rounding == TAHQ_ROUND_STOCHASTIC ? "stochastic" : "nearest", c.hi_permille,
                 (double)c.tau);
        const tahq_status st = compare_encode(&c, &s, x, what);
        CHECKF(st == TAHQ_OK || st == TAHQ_ERR_RANGE, "%s: status %d", what, (int)st);
        if (m % 4 == 0) { /* a row that overflows at the low width only (fp16) */
            tahq_config o = c;
            o.meta = TAHQ_META_FP16, o.lo_bits = 3, o.hi_bits = 4 + (uint32_t)trng_below(&r, 5);
            o.hi_permille = 500;
            gain_row(&r, x + trng_below(&r, rows) * C, G, T, 7);
            snprintf(what, sizeof what, "gain G %u overflow at 3 bits only", G);
            compare_encode(&o, &s, x, what);
        }
        if (m % 3 == 0) { /* a bad element decides over any key */
            const uint32_t e = (uint32_t)trng_below(&r, 4);
            x[trng_below(&r, rows * C)] =
                u2f(edge_bits[e] | (trng_below(&r, 2) ? 0x80000000u : 0u));
            snprintf(what, sizeof what, "gain G %u bad element %08x", G, edge_bits[e]);
            CHECKF(compare_encode(&c, &s, x, what) == edge_status[e], "%s: status", what);
        }
        free(x);
    }
    return t_finish("test_fast_encode", "gain");
}

/* The key comparison of part_gain sees a wrong key: the fast key computed
 * with another seed (its stochastic codes differ) or without the gate. */
static int part_gain_control(void)
{
    uint32_t ok_rows, range_rows;
    const uint32_t same = gain_keys(4000, 0x6A1Bu, 0, 0, &ok_rows, &range_rows);
    const uint32_t seed = gain_keys(4000, 0x6A1Bu, 1, 0, &ok_rows, &range_rows);
    const uint32_t gate = gain_keys(4000, 0x6A1Bu, 2, 0, &ok_rows, &range_rows);
    printf("gain-control: mismatches of 4000 rows: %u as they are, %u with another seed, %u "
           "without the gate\n",
           same, seed, gate);
    CHECKF(same == 0, "%u mismatches without a change", same);
    CHECKF(seed > 100, "another seed: %u mismatches", seed);
    CHECKF(gate > 100, "no gate: %u mismatches", gate);
    return t_finish("test_fast_encode", "gain-control");
}

static int part_control(void)
{
#ifdef HAVE_F16C_CONTROL
    if (!tahq_fast_encode_active()) {
        printf("control: no F16C path on this CPU or build; nothing to control\n");
        return t_finish("test_fast_encode", "control");
    }
    uint32_t first_bad;
    /* round-down replaced by truncation: wrong exactly on the negatives that
     * are not binary16 values; the positives agree */
    uint64_t pos =
        compare_range(trunc_f16c, ref_down, 0x3F800000u, 0x3F800000u + 0xFFFFFu, 0, &first_bad);
    CHECKF(pos == 0, "truncation = round-down on positives (%" PRIu64 " mismatches)", pos);
    uint64_t neg =
        compare_range(trunc_f16c, ref_down, 0xBF800000u, 0xBF800000u + 0xFFFFFu, 0, &first_bad);
    CHECKF(neg > 0 && (first_bad & 0x80000000u) != 0,
           "the control finds truncation in place of round-down on negatives (%" PRIu64
           " mismatches, first %08x)",
           neg, first_bad);
    /* and in place of round-up on the positives */
    uint64_t up =
        compare_range(trunc_f16c, ref_up, 0x3F800000u, 0x3F800000u + 0xFFFFFu, 0, &first_bad);
    CHECKF(up > 0 && (first_bad & 0x80000000u) == 0,
           "the control finds truncation in place of round-up on positives (%" PRIu64
           " mismatches, first %08x)",
           up, first_bad);
    printf("control: truncation for round-down: %" PRIu64 " mismatches on 2^20 negatives, %" PRIu64
           " on 2^20 positives; for round-up %" PRIu64 " on 2^20 positives\n",
           neg, pos, up);
#else
    printf("control: not an x86-64 GCC/Clang build; nothing to control\n");
#endif
    return t_finish("test_fast_encode", "control");
}

/* A token message (G = 64) encoded and decoded on path p: the reference's
 * bytes and floats, and the runs of each path's code in d. */
static void path_round_trip(tahq_cpu_path p, unsigned long long d[TAHQ_CPU_PATH_COUNT])
{
    const tahq_shape s = {2, 6, 512};
    tahq_config c;
    tahq_config_default(&c);
    const uint64_t n = (uint64_t)s.batch * s.seq_len * s.channels;
    trng r = {0xC0117201u};
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *yr = malloc(n * sizeof *yr);
    size_t cap = 0, wsz = 0, pw = 0, len = 0, lenp = 0;
    tahq_encode_bound(&c, &s, &cap);
    tahq_encode_workspace_size(&c, &s, &wsz);
    tahq_encode_parallel_workspace_size(&c, &s, 2, &pw);
    uint8_t *m = malloc(cap), *mp = malloc(cap);
    void *ws = malloc(wsz + 1), *pws = malloc(pw + 1);
    if (!x || !y || !yr || !m || !mp || !ws || !pws)
        abort();
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)trng_gauss(&r) * (trng_below(&r, 40) == 0 ? 300.0f : 1.0f);
    CHECKF(tahq_encode(&c, &s, x, ws, wsz, m, cap, &len) == TAHQ_OK, "reference encode");
    CHECKF(tahq_decode(m, len, yr, n) == TAHQ_OK, "reference decode");
    CHECKF(tahq_cpu_path_set(p), "path %s", tahq_cpu_path_name(p));
    unsigned long long before[TAHQ_CPU_PATH_COUNT];
    for (int q = 0; q < TAHQ_CPU_PATH_COUNT; q++)
        before[q] = tahq_cpu_path_runs((tahq_cpu_path)q);
    tahq_parallel par;
    tahq_parallel_threads(&par, 2);
    CHECKF(tahq_encode_parallel(&c, &s, x, pws, pw, mp, cap, &lenp, &par) == TAHQ_OK &&
               lenp == len && memcmp(mp, m, len) == 0,
           "%s: the parallel message is the reference's", tahq_cpu_path_name(p));
    CHECKF(tahq_decode_parallel(mp, lenp, y, n, &par) == TAHQ_OK &&
               memcmp(y, yr, n * sizeof *y) == 0,
           "%s: the parallel decode is the reference's", tahq_cpu_path_name(p));
    for (int q = 0; q < TAHQ_CPU_PATH_COUNT; q++)
        d[q] = tahq_cpu_path_runs((tahq_cpu_path)q) - before[q];
    printf("path-control: on %s, runs of scalar %llu, avx2 %llu, avx512 %llu\n",
           tahq_cpu_path_name(p), d[0], d[1], d[2]);
    free(x), free(y), free(yr), free(m), free(mp), free(ws), free(pws);
}

static int part_path_control(void)
{
    const tahq_cpu_path best = tahq_cpu_path_best();
    if (best == TAHQ_CPU_SCALAR) {
        printf("SKIPPED: path-control: only the scalar path on this CPU or build\n");
        return 77;
    }
    unsigned long long d[TAHQ_CPU_PATH_COUNT];
    for (int p = 0; p <= (int)best; p++) {
        path_round_trip((tahq_cpu_path)p, d);
        /* the chosen path's counter moves (the scalar decoder counts too), no other */
        for (int q = 0; q < TAHQ_CPU_PATH_COUNT; q++)
            CHECKF((d[q] != 0) == (q == p), "on %s: %s code ran %llu times",
                   tahq_cpu_path_name((tahq_cpu_path)p), tahq_cpu_path_name((tahq_cpu_path)q),
                   d[q]);
    }
    /* control of the control: the default path is the best one */
    CHECKF(tahq_cpu_path_set(best) && tahq_cpu_path_get() == best, "best path");
    CHECKF(best == TAHQ_CPU_AVX512 || !tahq_cpu_path_set(TAHQ_CPU_AVX512),
           "a path above the best is refused");
    return t_finish("test_fast_encode", "path-control");
}

static int part_path_env(void)
{
    const char *env = getenv("TAHQ_CPU_PATH");
    tahq_cpu_path want;
    CHECKF(env && tahq_cpu_path_parse(env, &want), "TAHQ_CPU_PATH names a path");
    if (t_fails)
        return t_finish("test_fast_encode", "path-env");
    if (want > tahq_cpu_path_best())
        want = tahq_cpu_path_best();
    CHECKF(tahq_cpu_path_get() == want, "path %s, want %s", tahq_cpu_path_name(tahq_cpu_path_get()),
           tahq_cpu_path_name(want));
    printf("path-env: TAHQ_CPU_PATH=%s, path %s (best %s)\n", env,
           tahq_cpu_path_name(tahq_cpu_path_get()), tahq_cpu_path_name(tahq_cpu_path_best()));
    return t_finish("test_fast_encode", "path-env");
}

static int run_part(const char *part)
{
    if (!strcmp(part, "down-lo"))
        return part_exhaustive(tahq_fast_f16_down_bits, ref_down, 0, 0x7FFFFFFFu, "down-lo");
    if (!strcmp(part, "down-hi"))
        return part_exhaustive(tahq_fast_f16_down_bits, ref_down, 0x80000000u, 0xFFFFFFFFu,
                               "down-hi");
    if (!strcmp(part, "up-lo"))
        return part_exhaustive(tahq_fast_f16_up_bits, ref_up, 0, 0x7FFFFFFFu, "up-lo");
    if (!strcmp(part, "up-hi"))
        return part_exhaustive(tahq_fast_f16_up_bits, ref_up, 0x80000000u, 0xFFFFFFFFu, "up-hi");
    if (!strcmp(part, "meta"))
        return part_meta();
    if (!strcmp(part, "log2"))
        return part_log2();
    if (!strcmp(part, "entropy"))
        return part_entropy();
    if (!strcmp(part, "encode"))
        return part_encode();
    if (!strcmp(part, "control"))
        return part_control();
    if (!strcmp(part, "gain"))
        return part_gain();
    if (!strcmp(part, "gain-control"))
        return part_gain_control();
    fprintf(stderr, "usage: test_fast_encode down-lo|down-hi|up-lo|up-hi|meta|log2|entropy|encode|"
                    "control|gain|gain-control|path-control|path-env [scalar|avx2|avx512]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "meta";
    /* before any other call into the library: the first use reads TAHQ_CPU_PATH */
    if (!strcmp(part, "path-env"))
        return part_path_env();
    if (!strcmp(part, "path-control"))
        return part_path_control();
    test_path tp;
    const int chosen = test_path_choose(&tp, argc > 2 ? argv[2] : NULL, "test_fast_encode");
    if (chosen != 0)
        return chosen;
    /* Every part but the whole-message comparison checks the fast path
     * against the reference: without it (no AVX2/BMI2/F16C, the scalar path
     * or TAHQ_SCALAR_ONLY) it would compare the reference with itself, so it
     * reports SKIPPED (exit 77, the tests' SKIP_RETURN_CODE), not passed. */
    if (strcmp(part, "encode") != 0 && !tahq_fast_encode_active()) {
        printf("SKIPPED: %s: the encoder's fast path is not active on this CPU, build or path "
               "(needs AVX2, BMI2 and F16C)\n",
               part);
        return 77;
    }
    const int rc = run_part(part);
    return rc == 0 && !test_path_ran(&tp, "test_fast_encode") ? 1 : rc;
}
