/* SPDX-License-Identifier: MIT */
/*
 * acsl_axioms - an executable cross-check of the ACSL axioms of ref/.
 *
 * The Frama-C WP proofs of ref/ assume, without proof, the `axiom`s of the
 * `axiomatic` blocks of ref/tahq_logic.h (proofs/README.md, "Trusted base").
 * A false axiom would make every proof that uses it meaningless, so this
 * program evaluates each one in exact integer arithmetic:
 *   (a) exhaustively on small ranges (and on the whole domain where the
 *       axiom's own bounds make that affordable),
 *   (b) on a few million values of a fixed-seed generator (SplitMix64,
 *       tutil.h) spread over the full range the axiom quantifies over, with
 *       bit lengths drawn uniformly so that large and small values both
 *       occur,
 *   (c) on boundary values: 0, 1, 2^k - 1, 2^k, 2^k + 1, the maxima.
 *
 * ACSL integers are unbounded: `x << s` is x * 2^s, `x >> s` is
 * floor(x / 2^s), `& | ~` act on the infinite two's-complement expansion and
 * `/ %` truncate toward zero. Every expression is evaluated here in a C type
 * wide enough to hold all its intermediate values exactly (unsigned __int128
 * for the shifts of 64-bit values, __int128 for ~ and negation); lsl()
 * aborts the program if a shift would not be exact. On non-negative values
 * that fit the type, C's & | agree with ACSL's; ~ on __int128 (two's
 * complement in GCC and Clang) agrees with ACSL's for the values tested.
 * The optimizer proves some whole-domain checks by itself (tahq_lor_u16,
 * tahq_top_bit_clear, tahq_f32_bits_range) and drops their loops, which then
 * take no time. It can do that only for a true statement, so the check still
 * counts, and the count it reports is the number of cases the loop stands for.
 *
 * Logic symbols without a C definition are given the meaning their comment
 * in tahq_logic.h states; the axioms are checked against that model:
 *   - tahq_f32_bits(x): the bit pattern of x (SPEC §2.1), i.e. the uint32_t
 *     that memcpy gives (tahq_bits_of). Every one of the 2^32 float
 *     patterns is visited. In this model the range axiom is a fact of the C
 *     types (a 4-byte float, an unsigned 32-bit pattern); the compiler may
 *     fold the loop, which is why it takes no time.
 *   - tahq_is_pow2(n): n == 2^k for some 0 <= k <= 31. The axioms of
 *     TahqPow2 are checked over every pair of its 32 true values (complete),
 *     and over other integers where they hold vacuously. A model satisfying
 *     them also shows the axiomatic block is consistent.
 *   - tahq_popcount(c) has an ACSL definition (recursive on c / 2); it is
 *     transcribed literally (popc_def) and memoized for the exhaustive range.
 *
 * The list of axioms is read from the sources at run time (argv: ref/tahq_logic.h,
 * ref/internal.h and the ref/ sources; also `admit lemma`, which Frama-C treats
 * as an axiom).
 * The test FAILS when a source has an axiom this program does not check, when
 * an axiom it checks is no longer in the sources, or when an axiom's statement
 * (whitespace-normalized) differs from the one transcribed here: edit the
 * check and the expected statement together.
 *
 * Output: one line per axiom: name, cases evaluated, cases where the
 * hypothesis held, PASS/FAIL. Exit status 1 on any failure.
 */
#include <ctype.h>

#include "tutil.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

#define U128_ONE ((u128)1)

/* ---- bookkeeping ---------------------------------------------------------- */
typedef struct ax {
    const char *name;
    uint64_t cases; /* tuples evaluated */
    uint64_t hyp;   /* of which the hypothesis held (the others are vacuous) */
    uint64_t fails;
} ax;

#define AX_MAX_REPORT 5

static void ax_fail(ax *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ax_fail(ax *a, const char *fmt, ...)
{
    a->fails++;
    if (a->fails <= AX_MAX_REPORT) {
        va_list ap;
        fprintf(stderr, "%s: COUNTEREXAMPLE: ", a->name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n");
    }
}

/* One case: hypothesis `h`, conclusion `c` (evaluated only when h holds). */
#define AX(a, h, c, ...)                   \
    do {                                   \
        (a)->cases++;                      \
        if (h) {                           \
            (a)->hyp++;                    \
            if (__builtin_expect(!(c), 0)) \
                ax_fail((a), __VA_ARGS__); \
        }                                  \
    } while (0)

/* Printing 128-bit values: hex, with a sign for signed ones. */
typedef struct hbuf {
    char s[48];
} hbuf;
static hbuf hx(u128 v)
{
    hbuf b;
    uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;
    if (hi)
        snprintf(b.s, sizeof b.s, "0x%" PRIx64 "%016" PRIx64, hi, lo);
    else
        snprintf(b.s, sizeof b.s, "0x%" PRIx64, lo);
    return b;
}
static hbuf hxs(i128 v)
{
    hbuf b;
    if (v < 0) {
        hbuf m = hx((u128)0 - (u128)v);
        snprintf(b.s, sizeof b.s, "-%s", m.s);
        return b;
    }
    return hx((u128)v);
}

/* x << s as ACSL means it (x * 2^s), exact or the program stops. */
static u128 lsl(u128 x, unsigned s)
{
    if (s >= 128 || (s > 0 && (x >> (128 - s)) != 0)) {
        fprintf(stderr, "internal error: %s << %u is not exact in 128 bits\n", hx(x).s, s);
        exit(2);
    }
    return x << s;
}
static u128 pow2(unsigned s)
{
    return lsl(1, s);
}

/* ---- test values ---------------------------------------------------------- */
static trng g_rng = {UINT64_C(0x7A48AC5117A40001)};
static uint64_t rnd64(void)
{
    return trng_next(&g_rng);
}
static uint64_t below(uint64_t n)
{
    return trng_below(&g_rng, n);
}

/* A value of up to `bits` (<= 128) bits: uniform over the range, or one with
 * a uniformly drawn bit length, or 2^k - 1, 2^k, 2^k + 1. */
static u128 rnd_mixed(unsigned bits)
{
    u128 full = ((u128)rnd64() << 64) | rnd64();
    u128 mask = bits == 128 ? ~(u128)0 : pow2(bits) - 1;
    unsigned k = (unsigned)below(bits + 1);
    u128 v;
    switch (below(8)) {
    case 0:
        v = full;
        break;
    case 1:
        v = k == 128 ? ~(u128)0 : pow2(k) - 1;
        break;
    case 2:
        v = k >= 128 ? 0 : pow2(k);
        break;
    case 3:
        v = k >= 128 ? 1 : pow2(k) + 1;
        break;
    default: /* bit length exactly k */
        v = k == 0 ? 0
                   : (k == 128 ? full | (U128_ONE << 127) : (full & (pow2(k) - 1)) | pow2(k - 1));
        break;
    }
    return v & mask;
}

/* Boundary values below 2^bits: 0..3 and 2^k - 1, 2^k, 2^k + 1. */
static size_t boundaries(unsigned bits, u128 *out)
{
    size_t n = 0;
    u128 top = bits == 128 ? ~(u128)0 : pow2(bits) - 1;
    for (u128 v = 0; v <= 3; v++)
        out[n++] = v;
    for (unsigned k = 2; k <= bits; k++) {
        u128 m = k == 128 ? ~(u128)0 : pow2(k) - 1; /* 2^k - 1 */
        out[n++] = m;
        if (m < top)
            out[n++] = m + 1;
        if (m + 1 < top)
            out[n++] = m + 2;
    }
    return n;
}
#define BMAX 400

/* x over [lo, hi] (hi < 2^32, x a uint32_t), in blocks of 2^20: a
 * branch-free count of the failing values (which the compiler can
 * vectorize), then a second pass with reports when it is not 0. */
#define BLOCKED(a, lo, hi, ok_expr, ...)                                           \
    do {                                                                           \
        for (uint64_t b0 = (lo); b0 <= (hi); b0 += UINT64_C(1) << 20) {            \
            uint64_t b1 = b0 + (UINT64_C(1) << 20) - 1;                            \
            if (b1 > (hi))                                                         \
                b1 = (hi);                                                         \
            uint32_t base = (uint32_t)b0, len = (uint32_t)(b1 - b0 + 1), nbad = 0; \
            for (uint32_t i = 0; i < len; i++) {                                   \
                uint32_t x = base + i;                                             \
                nbad += !(ok_expr);                                                \
            }                                                                      \
            if (nbad == 0) {                                                       \
                (a)->cases += len;                                                 \
                (a)->hyp += len;                                                   \
            } else {                                                               \
                for (uint32_t i = 0; i < len; i++) {                               \
                    uint32_t x = base + i;                                         \
                    AX(a, 1, ok_expr, __VA_ARGS__);                                \
                }                                                                  \
            }                                                                      \
        }                                                                          \
    } while (0)

static int f32_bits_in_range(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    uint32_t w; /* tahq_bits_of(x) */
    memcpy(&w, &x, sizeof w);
    int64_t b = w; /* tahq_f32_bits(x) as an integer */
    return 0 <= b && b <= INT64_C(0xFFFFFFFF);
}
/* tahq_f32_bits_range: \forall float x; 0 <= tahq_f32_bits(x) <= 0xFFFFFFFF */
static void ax_f32_bits_range(ax *a)
{
    _Static_assert(sizeof(float) == 4 && sizeof(uint32_t) == 4, "binary32 floats");
    /* the model is SPEC's bits(): a few known patterns */
    AX(a, 1, f2u(1.0f) == 0x3F800000u && f2u(-0.0f) == 0x80000000u && f2u(-2.0f) == 0xC0000000u,
       "bit view is not SPEC bits()");
    /* every float: every one of the 2^32 patterns u; b = tahq_f32_bits(x) */
    BLOCKED(a, 0, UINT64_C(0xFFFFFFFF), f32_bits_in_range(x), "x = pattern 0x%08" PRIx32, x);
}

/* ---- TahqBitwise ------------------------------------------------------------ */
/* tahq_lsl_mono: 0 <= x <= y && 0 <= s ==> (x << s) <= (y << s) */
static void lsl_mono_case(ax *a, u128 x, u128 y, unsigned s)
{
    AX(a, x <= y, lsl(x, s) <= lsl(y, s), "x=%s y=%s s=%u", hx(x).s, hx(y).s, s);
}
static void ax_lsl_mono(ax *a)
{
    for (unsigned y = 0; y < 512; y++) /* exhaustive: x <= y < 2^9, s <= 118 */
        for (unsigned x = 0; x <= y; x++)
            for (unsigned s = 0; s <= 118; s++)
                lsl_mono_case(a, x, y, s);
    u128 b[BMAX];
    size_t nb = boundaries(64, b);
    for (size_t i = 0; i < nb; i++)
        for (size_t j = i; j < nb; j++)
            for (unsigned s = 0; s <= 64; s++)
                lsl_mono_case(a, b[i] < b[j] ? b[i] : b[j], b[i] < b[j] ? b[j] : b[i], s);
    for (int i = 0; i < 2000000; i++) { /* x, y < 2^64, s <= 64: exact in 128 bits */
        u128 x = rnd_mixed(64), y = rnd_mixed(64);
        if (x > y) {
            u128 t = x;
            x = y;
            y = t;
        }
        lsl_mono_case(a, x, y, (unsigned)below(65));
    }
}

/* tahq_pow2_pos: 0 <= s ==> 1 <= (1 << s). Every s whose 2^s fits 128 bits. */
static void ax_pow2_pos(ax *a)
{
    for (unsigned s = 0; s < 128; s++)
        AX(a, 1, 1 <= pow2(s), "s=%u", s);
}

/* tahq_land_le: 0 <= x && 0 <= y ==> 0 <= (x & y) <= x && (x & y) <= y */
static void land_le_case(ax *a, u128 x, u128 y)
{
    u128 r = x & y;
    AX(a, 1, r <= x && r <= y, "x=%s y=%s", hx(x).s, hx(y).s);
}
static void ax_land_le(ax *a)
{
    for (unsigned x = 0; x < 4096; x++)
        for (unsigned y = 0; y < 4096; y++)
            land_le_case(a, x, y);
    u128 b[BMAX];
    size_t nb = boundaries(64, b);
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++)
            land_le_case(a, b[i], b[j]);
    for (int i = 0; i < 2000000; i++)
        land_le_case(a, rnd_mixed(64), rnd_mixed(64));
}

/* tahq_land_low: 0 <= x && 0 <= s ==> (x & ((1 << s) - 1)) == x % (1 << s) */
static void land_low_case(ax *a, u128 x, unsigned s)
{
    u128 p = pow2(s);
    AX(a, 1, (x & (p - 1)) == x % p, "x=%s s=%u", hx(x).s, s);
}
static void ax_land_low(ax *a)
{
    for (unsigned x = 0; x < 65536; x++)
        for (unsigned s = 0; s < 128; s++)
            land_low_case(a, x, s);
    u128 b[BMAX];
    size_t nb = boundaries(128, b);
    for (size_t i = 0; i < nb; i++)
        for (unsigned s = 0; s < 128; s++)
            land_low_case(a, b[i], s);
    for (int i = 0; i < 2000000; i++)
        land_low_case(a, rnd_mixed(128), (unsigned)below(128));
}

/* tahq_land_7 / _1 / _255 / _u32: 0 <= x ==> (x & M) == x % (M + 1).
 * Exhaustive on [0, 2^24) and on 2^20 values either side of 2^32 and 2^64;
 * boundaries and random values below 2^128. */
static void land_mask_all(ax *a, u128 mask, u128 modulus)
{
#define LM_CASE(xv)                                              \
    do {                                                         \
        u128 x_ = (xv);                                          \
        AX(a, 1, (x_ & mask) == x_ % modulus, "x=%s", hx(x_).s); \
    } while (0)
    for (uint64_t x = 0; x < (UINT64_C(1) << 24); x++)
        LM_CASE(x);
    for (unsigned e = 32; e <= 64; e += 32)
        for (u128 x = pow2(e) - pow2(20); x < pow2(e) + pow2(20); x++)
            LM_CASE(x);
    u128 b[BMAX];
    size_t nb = boundaries(128, b);
    for (size_t i = 0; i < nb; i++)
        LM_CASE(b[i]);
    for (int i = 0; i < 2000000; i++)
        LM_CASE(rnd_mixed(128));
#undef LM_CASE
}
static void ax_land_7(ax *a)
{
    land_mask_all(a, 7, 8);
}
static void ax_land_1(ax *a)
{
    land_mask_all(a, 1, 2);
}
static void ax_land_u32(ax *a)
{
    land_mask_all(a, 0xFFFFFFFFu, (u128)0x100000000u);
}
static void ax_land_255(ax *a)
{
    land_mask_all(a, 0xFF, 256);
}

/* tahq_lor_shift: 0 <= x && 0 <= s && 0 <= y < (1 << s) ==>
 *   ((x << s) | y) == (x << s) + y */
static void lor_shift_case(ax *a, u128 x, u128 y, unsigned s)
{
    AX(a, y < pow2(s), (lsl(x, s) | y) == lsl(x, s) + y, "x=%s y=%s s=%u", hx(x).s, hx(y).s, s);
}
static void ax_lor_shift(ax *a)
{
    /* exhaustive: x < 2^8, s <= 64, y in [0, 2^10) and in [2^s - 2^10, 2^s) */
    for (unsigned x = 0; x < 256; x++)
        for (unsigned s = 0; s <= 64; s++) {
            u128 p = pow2(s), w = 1024;
            for (u128 y = 0; y < p && y < w; y++)
                lor_shift_case(a, x, y, s);
            for (u128 y = p > w ? p - w : 0; y < p; y++)
                lor_shift_case(a, x, y, s);
        }
    u128 b[BMAX];
    size_t nb = boundaries(64, b);
    for (size_t i = 0; i < nb; i++)
        for (unsigned s = 0; s <= 64; s++) {
            u128 p = pow2(s);
            u128 ys[4] = {0, p - 1, p / 2, p > 2 ? p - 2 : 0};
            for (int k = 0; k < 4; k++)
                lor_shift_case(a, b[i], ys[k], s);
        }
    for (int i = 0; i < 2000000; i++) { /* x < 2^64, s <= 64, y < 2^s */
        unsigned s = (unsigned)below(65);
        u128 y = rnd_mixed(64) & (pow2(s) - 1);
        lor_shift_case(a, rnd_mixed(64), y, s);
    }
}

/* tahq_lnot: \forall integer x; ~x == -x - 1 (negative x included). */
static void lnot_case(ax *a, i128 x)
{
    AX(a, 1, ~x == -x - 1, "x=%s", hxs(x).s);
}
static void ax_lnot(ax *a)
{
    for (int64_t x = -(INT64_C(1) << 23); x < (INT64_C(1) << 23); x++)
        lnot_case(a, x);
    for (unsigned k = 0; k <= 125; k++) /* +-2^k, +-(2^k - 1), +-(2^k + 1) */
        for (int d = -1; d <= 1; d++) {
            i128 v = (i128)pow2(k) + d;
            lnot_case(a, v);
            lnot_case(a, -v);
        }
    lnot_case(a, INT64_MIN);
    lnot_case(a, INT64_MAX);
    for (int i = 0; i < 2000000; i++) { /* full int64 range, and mixed magnitudes with a sign */
        lnot_case(a, (int64_t)rnd64());
        i128 m = (i128)rnd_mixed(64);
        lnot_case(a, (rnd64() & 1) ? -m : m);
    }
}

/* tahq_lor_le: 0 <= x && 0 <= y ==> x <= (x | y) && y <= (x | y) && (x | y) <= x + y */
static void lor_le_case(ax *a, u128 x, u128 y)
{
    u128 r = x | y;
    AX(a, 1, x <= r && y <= r && r <= x + y, "x=%s y=%s", hx(x).s, hx(y).s);
}
static void ax_lor_le(ax *a)
{
    for (unsigned x = 0; x < 4096; x++)
        for (unsigned y = 0; y < 4096; y++)
            lor_le_case(a, x, y);
    u128 b[BMAX];
    size_t nb = boundaries(64, b);
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++)
            lor_le_case(a, b[i], b[j]);
    for (int i = 0; i < 2000000; i++)
        lor_le_case(a, rnd_mixed(64), rnd_mixed(64));
}

/* tahq_lor_u8 / _u16 / _u32: 0 <= x, y <= M ==> (x | y) <= M (M = 2^n - 1).
 * u8 and u16: the whole domain. u32: exhaustive corners, boundaries, random. */
static void lor_bound_case(ax *a, uint64_t x, uint64_t y, uint64_t m)
{
    AX(a, x <= m && y <= m, (x | y) <= m, "x=0x%" PRIx64 " y=0x%" PRIx64, x, y);
}
static void ax_lor_u8(ax *a)
{
    for (uint64_t x = 0; x <= 0xFF; x++)
        for (uint64_t y = 0; y <= 0xFF; y++)
            lor_bound_case(a, x, y, 0xFF);
}
static void ax_lor_u16(ax *a)
{
    for (uint64_t x = 0; x <= 0xFFFF; x++)
        for (uint64_t y = 0; y <= 0xFFFF; y++)
            lor_bound_case(a, x, y, 0xFFFF);
}
static void ax_lor_u32(ax *a)
{
    const uint64_t m = 0xFFFFFFFFu, w = 4096;
    for (uint64_t x = 0; x < w; x++) /* the four corners of [0, 2^32)^2, 2^12 wide */
        for (uint64_t y = 0; y < w; y++) {
            lor_bound_case(a, x, y, m);
            lor_bound_case(a, m - x, y, m);
            lor_bound_case(a, x, m - y, m);
            lor_bound_case(a, m - x, m - y, m);
        }
    u128 b[BMAX];
    size_t nb = boundaries(32, b);
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++)
            lor_bound_case(a, (uint64_t)b[i], (uint64_t)b[j], m);
    for (int i = 0; i < 4000000; i++)
        lor_bound_case(a, (uint64_t)rnd_mixed(32), (uint64_t)rnd_mixed(32), m);
}

/* tahq_top_bit_set: 0x80000000 <= x <= 0xFFFFFFFF ==> x == 0x80000000 + (x & 0x7FFFFFFF)
 * tahq_top_bit_clear: 0 <= x < 0x80000000 ==> (x & 0x7FFFFFFF) == x
 * Both on their whole domain (2^31 values each). */
static void ax_top_bit_set(ax *a)
{
    BLOCKED(a, UINT64_C(0x80000000), UINT64_C(0xFFFFFFFF),
            x == UINT64_C(0x80000000) + (x & UINT64_C(0x7FFFFFFF)), "x=0x%" PRIx32, x);
}
static void ax_top_bit_clear(ax *a)
{
    BLOCKED(a, 0, UINT64_C(0x7FFFFFFF), (x & UINT64_C(0x7FFFFFFF)) == x, "x=0x%" PRIx32, x);
}

/* ---- TahqPow2 ---------------------------------------------------------------- */
/* The model of the comment: n == 2^k for some 0 <= k <= 31. */
static int is_pow2(int64_t n)
{
    for (int k = 0; k <= 31; k++)
        if (n == (INT64_C(1) << k))
            return 1;
    return 0;
}
/* Test integers: [-2^12, 2^12), +-2^k, +-(2^k +- 1) for k <= 62, the int64 extremes. */
static size_t pow2_values(int64_t *out)
{
    size_t n = 0;
    for (int64_t v = -4096; v < 4096; v++)
        out[n++] = v;
    for (int k = 12; k <= 62; k++) /* the smaller ones are in the range above */
        for (int d = -1; d <= 1; d++) {
            out[n++] = (INT64_C(1) << k) + d;
            out[n++] = -((INT64_C(1) << k) + d);
        }
    out[n++] = INT64_MIN;
    out[n++] = INT64_MAX;
    return n;
}
/* tahq_pow2_range: tahq_is_pow2(n) ==> 1 <= n <= 0x80000000 */
static void ax_pow2_range(ax *a)
{
    static int64_t v[8192 + 400];
    size_t nv = pow2_values(v);
    for (size_t i = 0; i < nv; i++)
        AX(a, is_pow2(v[i]), 1 <= v[i] && v[i] <= INT64_C(0x80000000), "n=%" PRId64, v[i]);
    for (int i = 0; i < 1000000; i++) {
        int64_t n = (int64_t)rnd64();
        AX(a, is_pow2(n), 1 <= n && n <= INT64_C(0x80000000), "n=%" PRId64, n);
    }
}
/* tahq_pow2_one: tahq_is_pow2(1) */
static void ax_pow2_one(ax *a)
{
    AX(a, 1, is_pow2(1), "is_pow2(1) is false");
}
/* tahq_pow2_double: tahq_is_pow2(n) && tahq_is_pow2(m) && m < n ==>
 *   2 * m <= n && tahq_is_pow2(2 * m)
 * Every pair of the 32 powers is a case, so the check is complete; the other
 * values of pow2_values() give vacuous cases. */
static void ax_pow2_double(ax *a)
{
    static int64_t v[8192 + 400], w[1024];
    size_t nv = pow2_values(v), nw = 0;
    for (size_t i = 0; i < nv; i++) /* [-64, 64], the powers and their neighbours */
        if ((v[i] >= -64 && v[i] <= 64) || v[i] < -4096 || v[i] >= 4096 || is_pow2(v[i]) ||
            is_pow2(v[i] + 1) || is_pow2(v[i] - 1))
            w[nw++] = v[i];
    for (size_t i = 0; i < nw; i++)
        for (size_t j = 0; j < nw; j++) {
            int64_t n = w[i], m = w[j];
            int h = is_pow2(n) && is_pow2(m) && m < n;
            /* 2 * m cannot overflow when h holds (m <= 2^31) */
            AX(a, h, 2 * m <= n && is_pow2(2 * m), "n=%" PRId64 " m=%" PRId64, n, m);
        }
}

/* ---- TahqPopcount ------------------------------------------------------------- */
/* ACSL: tahq_popcount(c) = c <= 0 ? 0 : c % 2 + tahq_popcount(c / 2) */
static int64_t popc_def(int64_t c)
{
    return c <= 0 ? 0 : c % 2 + popc_def(c / 2);
}

/* tahq_popcount_bound: 0 <= c <= 0xFFFFFFFF ==>
 *   0 <= tahq_popcount(c) <= 32 && (1 <= c ==> 1 <= tahq_popcount(c)) */
static void popc_case(ax *a, int64_t c, int64_t p)
{
    AX(a, 0 <= c && c <= INT64_C(0xFFFFFFFF), 0 <= p && p <= 32 && (!(1 <= c) || 1 <= p),
       "c=%" PRId64 " popcount=%" PRId64, c, p);
}
static void ax_popcount_bound(ax *a)
{
    /* exhaustive [0, 2^24): the definition, memoized (c / 2 < c) */
    const int64_t n = INT64_C(1) << 24;
    uint8_t *memo = malloc((size_t)n);
    if (!memo) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memo[0] = 0;
    for (int64_t c = 1; c < n; c++)
        memo[c] = (uint8_t)(c % 2 + memo[c / 2]);
    for (int64_t c = 0; c < n; c++)
        popc_case(a, c, memo[c]);
    free(memo);
    /* the top 2^20 values, boundaries and random values: the definition itself */
    for (int64_t c = INT64_C(0x100000000) - (1 << 20); c <= INT64_C(0xFFFFFFFF); c++)
        popc_case(a, c, popc_def(c));
    u128 b[BMAX];
    size_t nb = boundaries(32, b);
    for (size_t i = 0; i < nb; i++)
        popc_case(a, (int64_t)b[i], popc_def((int64_t)b[i]));
    for (int i = 0; i < 3000000; i++) {
        int64_t c = (int64_t)rnd_mixed(32);
        popc_case(a, c, popc_def(c));
    }
}

/* tahq_low_mask(b) (abstract in tahq_logic.h) is modelled as 2^b - 1, computed
 * here bit by bit (b ones), not with the shift the definition axiom uses.
 * tahq_low_mask_def: 0 <= b ==> tahq_low_mask(b) == (1 << b) - 1;
 * tahq_mask_bits: 0 <= b && 0 <= k ==> (bit_test(tahq_low_mask(b), k) <==> k < b),
 * with bit_test(x, k) = (x & (1 << k)) != 0. Every b and k below 128 (u128). */
static u128 low_mask_model(unsigned b)
{
    u128 m = 0;
    for (unsigned i = 0; i < b; i++)
        m = (m << 1) | 1;
    return m;
}
static void ax_low_mask_def(ax *a)
{
    for (unsigned b = 0; b < 128; b++)
        AX(a, 1, low_mask_model(b) == ((u128)1 << b) - 1, "b=%u", b);
}
static void ax_mask_bits(ax *a)
{
    for (unsigned b = 0; b < 128; b++) {
        const u128 mask = low_mask_model(b);
        for (unsigned k = 0; k < 128; k++) {
            int set = (mask & ((u128)1 << k)) != 0;
            AX(a, 1, set == (k < b), "b=%u k=%u", b, k);
        }
    }
}

/* ---- the checked axioms and their statements ------------------------------------
 * stmt: the text after "name:" up to the closing ';', with '@' and ACSL
 * comments removed and white space collapsed (see normalize()). */
typedef struct axiom_check {
    const char *name;
    const char *stmt;
    void (*run)(ax *);
} axiom_check;

static const axiom_check k_checks[] = {
    {"tahq_f32_bits_range", "\\forall float x; 0 <= tahq_f32_bits(x) <= 0xFFFFFFFF",
     ax_f32_bits_range},
    {"tahq_lsl_mono", "\\forall integer x, y, s; 0 <= x <= y && 0 <= s ==> (x << s) <= (y << s)",
     ax_lsl_mono},
    {"tahq_pow2_pos", "\\forall integer s; 0 <= s ==> 1 <= (1 << s)", ax_pow2_pos},
    {"tahq_land_le",
     "\\forall integer x, y; 0 <= x && 0 <= y ==> 0 <= (x & y) <= x && (x & y) <= y", ax_land_le},
    {"tahq_land_low",
     "\\forall integer x, s; 0 <= x && 0 <= s ==> (x & ((1 << s) - 1)) == x % (1 << s)",
     ax_land_low},
    {"tahq_land_7", "\\forall integer x; 0 <= x ==> (x & 7) == x % 8", ax_land_7},
    {"tahq_land_1", "\\forall integer x; 0 <= x ==> (x & 1) == x % 2", ax_land_1},
    {"tahq_land_u32", "\\forall integer x; 0 <= x ==> (x & 0xFFFFFFFF) == x % 0x100000000",
     ax_land_u32},
    {"tahq_lor_shift",
     "\\forall integer x, y, s; 0 <= x && 0 <= s && 0 <= y < (1 << s) ==> ((x << s) | y) == (x << "
     "s) + y",
     ax_lor_shift},
    {"tahq_land_255", "\\forall integer x; 0 <= x ==> (x & 0xFF) == x % 256", ax_land_255},
    {"tahq_lnot", "\\forall integer x; ~x == -x - 1", ax_lnot},
    {"tahq_lor_le",
     "\\forall integer x, y; 0 <= x && 0 <= y ==> x <= (x | y) && y <= (x | y) && (x | y) <= x + y",
     ax_lor_le},
    {"tahq_lor_u8", "\\forall integer x, y; 0 <= x <= 0xFF && 0 <= y <= 0xFF ==> (x | y) <= 0xFF",
     ax_lor_u8},
    {"tahq_lor_u16",
     "\\forall integer x, y; 0 <= x <= 0xFFFF && 0 <= y <= 0xFFFF ==> (x | y) <= 0xFFFF",
     ax_lor_u16},
    {"tahq_lor_u32",
     "\\forall integer x, y; 0 <= x <= 0xFFFFFFFF && 0 <= y <= 0xFFFFFFFF ==> (x | y) <= "
     "0xFFFFFFFF",
     ax_lor_u32},
    {"tahq_top_bit_set",
     "\\forall integer x; 0x80000000 <= x <= 0xFFFFFFFF ==> x == 0x80000000 + (x & 0x7FFFFFFF)",
     ax_top_bit_set},
    {"tahq_top_bit_clear", "\\forall integer x; 0 <= x < 0x80000000 ==> (x & 0x7FFFFFFF) == x",
     ax_top_bit_clear},
    {"tahq_low_mask_def", "\\forall integer b; 0 <= b ==> tahq_low_mask(b) == (1 << b) - 1",
     ax_low_mask_def},
    {"tahq_mask_bits",
     "\\forall integer b, k; 0 <= b && 0 <= k ==> (bit_test(tahq_low_mask(b), k) <==> k < b)",
     ax_mask_bits},
    {"tahq_pow2_range", "\\forall integer n; tahq_is_pow2(n) ==> 1 <= n <= 0x80000000",
     ax_pow2_range},
    {"tahq_pow2_one", "tahq_is_pow2(1)", ax_pow2_one},
    {"tahq_pow2_double",
     "\\forall integer n, m; tahq_is_pow2(n) && tahq_is_pow2(m) && m < n ==> 2 * m <= n && "
     "tahq_is_pow2(2 * m)",
     ax_pow2_double},
    {"tahq_popcount_bound",
     "\\forall integer c; 0 <= c <= 0xFFFFFFFF ==> 0 <= tahq_popcount(c) <= 32 && (1 <= c ==> 1 <= "
     "tahq_popcount(c))",
     ax_popcount_bound},
};
#define N_CHECKS (sizeof k_checks / sizeof k_checks[0])

/* ---- reading the axioms from the sources ------------------------------------------ */
typedef struct found_axiom {
    char name[128];
    char *stmt;
    const char *file;
    int line;
} found_axiom;

static found_axiom g_found[256];
static size_t g_nfound;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = 0;
    *len = n;
    return buf;
}

static int is_id(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int line_of(const char *text, size_t pos)
{
    int line = 1;
    for (size_t i = 0; i < pos; i++)
        line += text[i] == '\n';
    return line;
}

/* Collapse white space of s[0..n) into single blanks, trimmed. */
static char *normalize(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    size_t k = 0;
    int blank = 0;
    for (size_t i = 0; i < n; i++) {
        if (isspace((unsigned char)s[i])) {
            blank = 1;
            continue;
        }
        if (blank && k > 0)
            out[k++] = ' ';
        blank = 0;
        out[k++] = s[i];
    }
    out[k] = 0;
    return out;
}

/* An annotation's text (copy, same length as in the file: '@' and the ACSL
 * comments `// ...` blanked), `base` its offset in the file. Finds
 * `axiom NAME : statement ;` and `admit lemma NAME : statement ;`. */
static void scan_annotation(const char *file, const char *text, size_t base, char *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] == '/' && i + 1 < n && a[i + 1] == '/')
            while (i < n && a[i] != '\n')
                a[i++] = ' ';
        else if (a[i] == '@')
            a[i] = ' ';
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_id(a[i]) || (i > 0 && is_id(a[i - 1])))
            continue;
        size_t j = i;
        while (j < n && is_id(a[j]))
            j++;
        size_t wlen = j - i;
        int hit = 0;
        if (wlen == 5 && memcmp(a + i, "axiom", 5) == 0) {
            hit = 1;
        } else if (wlen == 5 && memcmp(a + i, "admit", 5) == 0) {
            size_t k = j;
            while (k < n && isspace((unsigned char)a[k]))
                k++;
            if (k + 5 <= n && memcmp(a + k, "lemma", 5) == 0 && (k + 5 == n || !is_id(a[k + 5]))) {
                hit = 1;
                j = k + 5;
            }
        }
        if (!hit) {
            i = j - 1;
            continue;
        }
        size_t k = j;
        while (k < n && isspace((unsigned char)a[k]))
            k++;
        size_t ns = k;
        while (k < n && is_id(a[k]))
            k++;
        size_t ne = k;
        while (k < n && isspace((unsigned char)a[k]))
            k++;
        found_axiom *fa = &g_found[g_nfound];
        if (g_nfound >= sizeof g_found / sizeof g_found[0]) {
            fprintf(stderr, "too many axioms\n");
            exit(2);
        }
        fa->file = file;
        fa->line = line_of(text, base + i);
        if (ne == ns || k >= n || a[k] != ':') { /* not the form expected: report it as unknown */
            snprintf(fa->name, sizeof fa->name, "<unparsed axiom>");
            fa->stmt = normalize(a + i, (n - i) < 80 ? n - i : 80);
            g_nfound++;
            i = j - 1;
            continue;
        }
        snprintf(fa->name, sizeof fa->name, "%.*s", (int)(ne - ns), a + ns);
        /* the statement ends at the first ';' that closes no binder list */
        size_t s0 = ++k;
        int pending = 0;
        for (; k < n; k++) {
            if (a[k] == '\\') {
                static const char *binders[] = {"forall", "exists", "let", "lambda"};
                for (size_t b = 0; b < 4; b++) {
                    size_t bl = strlen(binders[b]);
                    if (k + 1 + bl <= n && memcmp(a + k + 1, binders[b], bl) == 0 &&
                        (k + 1 + bl == n || !is_id(a[k + 1 + bl])))
                        pending++;
                }
            } else if (a[k] == ';') {
                if (pending == 0)
                    break;
                pending--;
            }
        }
        fa->stmt = normalize(a + s0, k - s0);
        g_nfound++;
        i = k;
    }
}

/* Finds the annotations (/ *@ ... * / and //@ ...) of a C file, skipping other
 * comments and string and character literals. */
static int scan_file(const char *path)
{
    size_t n;
    char *t = read_file(path, &n);
    if (!t) {
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    for (size_t i = 0; i < n;) {
        if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
            const char *end = strstr(t + i + 2, "*/");
            size_t e = end ? (size_t)(end - t) : n;
            if (i + 2 < n && t[i + 2] == '@') {
                size_t len = e - (i + 3);
                char *a = malloc(len + 1);
                memcpy(a, t + i + 3, len);
                a[len] = 0;
                scan_annotation(path, t, i + 3, a, len);
                free(a);
            }
            i = end ? e + 2 : n;
        } else if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
            size_t e = i;
            while (e < n && t[e] != '\n')
                e++;
            if (i + 2 < n && t[i + 2] == '@') {
                size_t len = e - (i + 3);
                char *a = malloc(len + 1);
                memcpy(a, t + i + 3, len);
                a[len] = 0;
                scan_annotation(path, t, i + 3, a, len);
                free(a);
            }
            i = e;
        } else if (t[i] == '"' || t[i] == '\'') {
            char q = t[i++];
            while (i < n && t[i] != q && t[i] != '\n')
                i += (t[i] == '\\') ? 2 : 1;
            i++;
        } else {
            i++;
        }
    }
    /* found_axiom.file points to the argv string; the lines are already counted */
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ref/tahq_logic.h ref/internal.h [ref/*.c ...]\n", argv[0]);
        return 2;
    }
    int bad = 0;
    for (int i = 1; i < argc; i++)
        if (scan_file(argv[i]) != 0)
            bad = 1;
    if (bad)
        return 2;

    /* the axioms of the sources against the checked list */
    int list_ok = 1;
    for (size_t f = 0; f < g_nfound; f++) {
        const found_axiom *fa = &g_found[f];
        size_t c = 0;
        while (c < N_CHECKS && strcmp(k_checks[c].name, fa->name) != 0)
            c++;
        if (c == N_CHECKS) {
            printf("%-22s %s:%d: axiom not checked by this test -> FAIL\n", fa->name, fa->file,
                   fa->line);
            list_ok = 0;
        } else if (strcmp(k_checks[c].stmt, fa->stmt) != 0) {
            printf("%-22s %s:%d: statement differs from the one checked -> FAIL\n  source:  %s\n  "
                   "checked: %s\n",
                   fa->name, fa->file, fa->line, fa->stmt, k_checks[c].stmt);
            list_ok = 0;
        }
    }
    for (size_t c = 0; c < N_CHECKS; c++) {
        size_t f = 0;
        while (f < g_nfound && strcmp(k_checks[c].name, g_found[f].name) != 0)
            f++;
        if (f == g_nfound) {
            printf("%-22s checked here but not found in the sources -> FAIL\n", k_checks[c].name);
            list_ok = 0;
        }
    }

    int all_ok = list_ok;
    clock_t t0 = clock();
    for (size_t c = 0; c < N_CHECKS; c++) {
        ax a = {k_checks[c].name, 0, 0, 0};
        clock_t t1 = clock();
        k_checks[c].run(&a);
        int ok = a.fails == 0 && a.hyp > 0;
        printf("%-22s cases %12" PRIu64 "  hypothesis held %12" PRIu64 "  failed %" PRIu64
               "  %6.2f s  %s\n",
               a.name, a.cases, a.hyp, a.fails, (double)(clock() - t1) / CLOCKS_PER_SEC,
               ok ? "PASS" : "FAIL");
        fflush(stdout);
        if (!ok)
            all_ok = 0;
    }
    printf("acsl_axioms: %zu axioms in the sources, %zu checked, list %s, %.2f s -> %s\n", g_nfound,
           (size_t)N_CHECKS, list_ok ? "matches" : "DIFFERS",
           (double)(clock() - t0) / CLOCKS_PER_SEC, all_ok ? "PASS" : "FAIL");
    return all_ok ? 0 : 1;
}
