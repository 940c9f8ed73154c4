/* SPDX-License-Identifier: MIT */
/*
 * test_fp16 - SPEC §2.2: binary16 / bfloat16 conversions, directed rounding
 * onto the metadata grid, metadata wire bits.
 *
 * Usage: test_fp16 [part]   part = rt | f16-lo | f16-hi | bf16-lo | bf16-hi |
 *                                  meta | all (default)
 * The exhaustive parts are split in halves (patterns below / above 2^31) so
 * that CTest can run them in parallel.
 *
 * References (independent of the library):
 *   - binary32 -> binary16 RNE: the x86 F16C instruction (VCVTPS2PH, rounding
 *     immediate "nearest even") where the CPU has it; otherwise, and as a
 *     cross-check of the fallback, an exact rounding done in binary64:
 *     n = |x| / q (q = the binary16 quantum at |x|'s binade, a power of two,
 *     so the division is exact), n rounded to nearest even by the classic
 *     (n + 2^52) - 2^52 (exact for 0 <= n < 2^52 in binary64 RNE).
 *   - binary32 -> bfloat16 RNE: the same binary64 method with the bfloat16
 *     quantum 2^(e-7) (e the binary32 exponent, at least -126).
 */
#include <float.h>

#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

/* ------------------------------------------------------------------------ */
/* Independent references                                                   */
/* ------------------------------------------------------------------------ */

static int f16_is_nan(uint16_t h)
{
    return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
}
static int bf16_is_nan(uint16_t h)
{
    return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0;
}

/* Exact value of a binary16 pattern, built in binary64 from its fields. */
static double f16_value_ref(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, -24);
    else
        v = ldexp((double)(m + 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* binary32 -> binary16 RNE in binary64 (see the file comment). NaN -> 0x7E00. */
static uint16_t f16_ref(float x)
{
    uint32_t w = f2u(x);
    uint16_t sign = (uint16_t)((w >> 16) & 0x8000);
    if (isnan(x))
        return 0x7E00;
    double a = fabs((double)x);
    /* 65520 = 65504 + half a quantum (32/2); the tie goes to the even
     * neighbour 65536, which overflows. */
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7C00);
    if (a == 0.0)
        return sign;
    int e2;
    (void)frexp(a, &e2); /* a = f * 2^e2, 0.5 <= f < 1: binade exponent E = e2 - 1 */
    int E = e2 - 1;
    if (E < -14)
        E = -14;                       /* subnormal binade shares the quantum 2^-24 */
    double n = a / ldexp(1.0, E - 10); /* exact */
    double nr = (n + 0x1p52) - 0x1p52; /* RNE to an integer, 0 <= n < 2^11 */
    /* E = -14: nr in 0..2048 is the pattern itself (0x400 = 2^-14, 0x800 = 2^-13);
     * E > -14: nr in 1024..2048 and ((E+14)<<10) + nr carries into the exponent. */
    return (uint16_t)(sign | (uint16_t)(((E + 14) << 10) + (int)nr));
}

static double bf16_q[256], bf16_invq[256];
static void bf16_ref_init(void)
{
    for (int f = 0; f < 256; f++) {
        int E = f ? f - 127 : -126;
        bf16_q[f] = ldexp(1.0, E - 7);
        bf16_invq[f] = ldexp(1.0, 7 - E);
    }
}
/* binary32 -> bfloat16 RNE in binary64. NaN -> 0x7FC0; self-check flag set if
 * the rebuilt binary32 has nonzero low bits (cannot happen if the reference is
 * right). */
static int bf16_ref_selfcheck_fail;
static uint16_t bf16_ref(float x)
{
    uint32_t w = f2u(x);
    uint16_t sign = (uint16_t)((w >> 16) & 0x8000);
    if (isnan(x))
        return 0x7FC0;
    if (isinf(x))
        return (uint16_t)(sign | 0x7F80);
    int f = (int)((w >> 23) & 0xFF);
    double a = fabs((double)x);
    double n = a * bf16_invq[f];       /* exact, 0 <= n < 2^8 */
    double nr = (n + 0x1p52) - 0x1p52; /* RNE */
    double r = nr * bf16_q[f];         /* exact */
    if (r >= 0x1p128)
        return (uint16_t)(sign | 0x7F80);
    uint32_t rw = f2u((float)r); /* exact: r has <= 8 significant bits */
    if (rw & 0xFFFF)
        bf16_ref_selfcheck_fail = 1;
    return (uint16_t)(sign | (rw >> 16));
}

/* ------------------------------------------------------------------------ */
/* F16C                                                                      */
/* ------------------------------------------------------------------------ */
#if HAVE_X86
__attribute__((target("f16c"))) static void f16c_convert4(const float *in, uint16_t *out)
{
    __m128 v = _mm_loadu_ps(in);
    __m128i h = _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(h);
    for (int i = 0; i < 4; i++)
        out[i] = (uint16_t)(lo >> (16 * i));
}
/* CPUID.1:ECX bit 29 is F16C; its instructions are VEX-encoded, so the OS
 * must also support the AVX state (covered by __builtin_cpu_supports("avx")).
 * Not __builtin_cpu_supports("f16c"): some Clang versions reject that name. */
static int have_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 29)))
        return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") ? 1 : 0;
}
#else
static void f16c_convert4(const float *in, uint16_t *out)
{
    (void)in;
    (void)out;
}
static int have_f16c(void)
{
    return 0;
}
#endif

/* ------------------------------------------------------------------------ */
/* Part rt: all 65536 patterns                                               */
/* ------------------------------------------------------------------------ */
static void part_roundtrip(void)
{
    uint64_t nan16 = 0, nanbf = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        /* binary16 */
        float f = tahq_f16_to_f32(h);
        if (f16_is_nan(h)) {
            nan16++;
            CHECK_QUIET(isnan(f), "f16 %04x -> %08x not NaN", h, f2u(f));
            CHECK_QUIET(f16_is_nan(tahq_f32_to_f16(f)), "f16 NaN %04x -> %04x", h,
                        tahq_f32_to_f16(f));
        } else {
            float ref = (float)f16_value_ref(h); /* exact: value has <= 11 bits */
            CHECK_QUIET(f2u(f) == f2u(ref), "f16_to_f32(%04x) = %08x, want %08x", h, f2u(f),
                        f2u(ref));
            CHECK_QUIET(tahq_f32_to_f16(f) == h, "f16 round trip %04x -> %04x", h,
                        tahq_f32_to_f16(f));
        }
        /* bfloat16: its value is the binary32 with these upper 16 bits */
        float g = tahq_bf16_to_f32(h);
        if (bf16_is_nan(h)) {
            nanbf++;
            CHECK_QUIET(isnan(g), "bf16 %04x -> %08x not NaN", h, f2u(g));
            CHECK_QUIET(bf16_is_nan(tahq_f32_to_bf16(g)), "bf16 NaN %04x -> %04x", h,
                        tahq_f32_to_bf16(g));
        } else {
            CHECK_QUIET(f2u(g) == ((uint32_t)h << 16), "bf16_to_f32(%04x) = %08x", h, f2u(g));
            CHECK_QUIET(tahq_f32_to_bf16(g) == h, "bf16 round trip %04x -> %04x", h,
                        tahq_f32_to_bf16(g));
        }
        /* metadata wire bits: fp16 and bf16 are their 16-bit patterns */
        if (!f16_is_nan(h)) {
            CHECK_QUIET(f2u(tahq_meta_value(TAHQ_META_FP16, h)) == f2u(f), "meta_value fp16 %04x",
                        h);
            CHECK_QUIET(tahq_meta_bits(TAHQ_META_FP16, f) == h, "meta_bits fp16 %04x -> %x", h,
                        tahq_meta_bits(TAHQ_META_FP16, f));
        }
        if (!bf16_is_nan(h)) {
            CHECK_QUIET(f2u(tahq_meta_value(TAHQ_META_BF16, h)) == f2u(g), "meta_value bf16 %04x",
                        h);
            CHECK_QUIET(tahq_meta_bits(TAHQ_META_BF16, g) == h, "meta_bits bf16 %04x -> %x", h,
                        tahq_meta_bits(TAHQ_META_BF16, g));
        }
    }
    CHECK(nan16 == 2 * 1023 && nanbf == 2 * 127);
    CHECK(tahq_meta_bytes(TAHQ_META_FP16) == 2);
    CHECK(tahq_meta_bytes(TAHQ_META_BF16) == 2);
    CHECK(tahq_meta_bytes(TAHQ_META_FP32) == 4);
    /* fp32 metadata: the bits themselves, on a sample of patterns */
    trng r = {11};
    for (int i = 0; i < 1000000; i++) {
        uint32_t w = trng_u32(&r);
        float x = u2f(w);
        if (isnan(x))
            continue;
        CHECK_QUIET(tahq_meta_bits(TAHQ_META_FP32, x) == w, "meta_bits fp32 %08x", w);
        CHECK_QUIET(f2u(tahq_meta_value(TAHQ_META_FP32, w)) == w, "meta_value fp32 %08x", w);
    }
    /* a few hand-derived binary16 values */
    CHECK(tahq_f32_to_f16(1.0f) == 0x3C00);
    CHECK(tahq_f32_to_f16(65504.0f) == 0x7BFF);
    CHECK(tahq_f32_to_f16(65519.99609375f) == 0x7BFF); /* just below the tie 65520 */
    CHECK(tahq_f32_to_f16(65520.0f) == 0x7C00);        /* tie -> even (65536) = inf */
    CHECK(tahq_f32_to_f16(-65520.0f) == 0xFC00);
    CHECK(tahq_f32_to_f16(0x1p-24f) == 0x0001);
    CHECK(tahq_f32_to_f16(0x1p-25f) == 0x0000); /* tie -> even 0 */
    CHECK(tahq_f32_to_f16(-0x1p-25f) == 0x8000);
    CHECK(tahq_f32_to_f16(0x1.000002p-25f) == 0x0001); /* just above the tie */
    CHECK(tahq_f32_to_f16(0x3p-25f) == 0x0002);        /* 1.5 quanta: tie -> even 2 */
    CHECK(tahq_f32_to_f16(0x5p-25f) == 0x0002);        /* 2.5 quanta: tie -> even 2 */
    CHECK(tahq_f32_to_f16(-0.0f) == 0x8000);
    /* normal-range ties (binary16 ulp at 1 is 2^-10): 1 + 2^-11 lies between
     * 1 (0x3C00, even) and 1 + 2^-10 (0x3C01) -> 0x3C00; 1 + 3 2^-11 lies
     * between 0x3C01 (odd) and 0x3C02 (even) -> 0x3C02 */
    CHECK(tahq_f32_to_f16(0x1.002p0f) == 0x3C00);
    CHECK(tahq_f32_to_f16(0x1.006p0f) == 0x3C02);
    CHECK(tahq_f32_to_f16(-0x1.006p0f) == 0xBC02);
    CHECK(tahq_f32_to_f16(0x1.002002p0f) == 0x3C01); /* 1 + 2^-11 + 2^-23: above the tie */
    CHECK(tahq_f32_to_bf16(1.0f) == 0x3F80);
    CHECK(tahq_f32_to_bf16(u2f(0x3F808000)) == 0x3F80); /* tie -> even */
    CHECK(tahq_f32_to_bf16(u2f(0x3F818000)) == 0x3F82); /* tie -> even (up) */
    CHECK(tahq_f32_to_bf16(u2f(0x7F7FFFFF)) == 0x7F80); /* rounds past the max -> inf */
    CHECK(tahq_f32_to_bf16(u2f(0x00008000)) == 0x0000); /* subnormal tie -> even 0 */
    CHECK(tahq_f32_to_bf16(u2f(0x00018000)) == 0x0002); /* subnormal tie -> even up */
}

/* ------------------------------------------------------------------------ */
/* Part f16: binary32 -> binary16 on every pattern of one half               */
/* ------------------------------------------------------------------------ */
static const char *part_f16(uint32_t half, int force_sample)
{
    uint64_t lo = (uint64_t)half << 31, hi = lo + (UINT64_C(1) << 31);
    if (have_f16c() && !force_sample) {
        float in[4];
        uint16_t hw[4];
        for (uint64_t w = lo; w < hi; w += 4) {
            for (int i = 0; i < 4; i++)
                in[i] = u2f((uint32_t)(w + (uint64_t)i));
            f16c_convert4(in, hw);
            for (int i = 0; i < 4; i++) {
                uint16_t got = tahq_f32_to_f16(in[i]);
                if (isnan(in[i])) {
                    CHECK_QUIET(f16_is_nan(got), "f16(%08x) = %04x not NaN", f2u(in[i]), got);
                } else {
                    CHECK_QUIET(got == hw[i], "f16(%08x) = %04x, F16C %04x", f2u(in[i]), got,
                                hw[i]);
                }
            }
        }
        /* validate the binary64 fallback reference against F16C on a sample */
        trng r = {1234 + half};
        for (int i = 0; i < 4000000; i++) {
            uint32_t w = (uint32_t)(lo + trng_below(&r, UINT64_C(1) << 31));
            in[0] = u2f(w);
            in[1] = u2f(w ^ 1);
            in[2] = u2f(w & ~UINT32_C(0x1FFF)); /* on a binary16 tie/grid point in many binades */
            in[3] = u2f((w & ~UINT32_C(0x1FFF)) | 0x1000);
            f16c_convert4(in, hw);
            for (int j = 0; j < 4; j++) {
                if (isnan(in[j]))
                    continue;
                CHECK_QUIET(f16_ref(in[j]) == hw[j], "ref(%08x) = %04x, F16C %04x", f2u(in[j]),
                            f16_ref(in[j]), hw[j]);
            }
        }
        return "all 2^31 patterns vs F16C";
    }
    /* no F16C: every 7th pattern plus every pattern near a binary16 grid point/tie */
    for (uint64_t w = lo; w < hi; w += 7) {
        float x = u2f((uint32_t)w);
        uint16_t got = tahq_f32_to_f16(x);
        if (isnan(x))
            CHECK_QUIET(f16_is_nan(got), "f16(%08x) = %04x not NaN", (uint32_t)w, got);
        else
            CHECK_QUIET(got == f16_ref(x), "f16(%08x) = %04x, ref %04x", (uint32_t)w, got,
                        f16_ref(x));
    }
    for (uint64_t b = lo; b < hi; b += 0x1000) {
        for (int d = -2; d <= 2; d++) {
            uint32_t w = (uint32_t)(b + (uint64_t)(int64_t)d);
            float x = u2f(w);
            if (isnan(x))
                continue;
            CHECK_QUIET(tahq_f32_to_f16(x) == f16_ref(x), "f16(%08x)", w);
        }
    }
    return "1/7 of 2^31 patterns + all near ties vs binary64 reference (NO F16C on this CPU)";
}

/* ------------------------------------------------------------------------ */
/* Part bf16: binary32 -> bfloat16 on every pattern of one half              */
/* ------------------------------------------------------------------------ */
static void part_bf16(uint32_t half)
{
    uint64_t lo = (uint64_t)half << 31, hi = lo + (UINT64_C(1) << 31);
    bf16_ref_init();
    for (uint64_t w = lo; w < hi; w++) {
        float x = u2f((uint32_t)w);
        uint16_t got = tahq_f32_to_bf16(x);
        if (isnan(x)) {
            CHECK_QUIET(bf16_is_nan(got), "bf16(%08x) = %04x not NaN", (uint32_t)w, got);
        } else {
            uint16_t want = bf16_ref(x);
            CHECK_QUIET(got == want, "bf16(%08x) = %04x, ref %04x", (uint32_t)w, got, want);
        }
    }
    CHECK(!bf16_ref_selfcheck_fail);
}

/* ------------------------------------------------------------------------ */
/* Part meta: directed rounding onto the grid                                */
/* ------------------------------------------------------------------------ */
/* next representable value of the 16-bit format above / below a finite grid
 * value given by its pattern (patterns are sign-magnitude). */
static uint16_t next_up16(uint16_t h)
{
    if (h == 0x8000 || h == 0x0000)
        return 0x0001;
    return (h & 0x8000) ? (uint16_t)(h - 1) : (uint16_t)(h + 1);
}
static uint16_t next_down16(uint16_t h)
{
    if (h == 0x8000 || h == 0x0000)
        return 0x8001;
    return (h & 0x8000) ? (uint16_t)(h + 1) : (uint16_t)(h - 1);
}

typedef struct meta_ops {
    tahq_meta meta;
    const char *name;
    float maxv;    /* largest finite */
    uint16_t maxh; /* its pattern */
    uint16_t (*to)(float);
    float (*from)(uint16_t);
} meta_ops;

static uint64_t meta_points;

/* on the grid: finite and converts to the format and back exactly */
static int on_grid(const meta_ops *m, float v)
{
    return isfinite(v) && f2u(m->from(m->to(v))) == f2u(v);
}

static void check_meta_point(const meta_ops *m, float x)
{
    if (!isfinite(x))
        return;
    meta_points++;
    float d = tahq_meta_round_down(m->meta, x);
    float u = tahq_meta_round_up(m->meta, x);
    /* down */
    if (x < -m->maxv) {
        CHECK_QUIET(d == -INFINITY, "%s down(%a) = %a, want -inf", m->name, (double)x, (double)d);
    } else {
        CHECK_QUIET(on_grid(m, d) && d <= x, "%s down(%a) = %a", m->name, (double)x, (double)d);
        if (on_grid(m, d) && d <= x) {
            uint16_t h = m->to(d);
            if (h != m->maxh) { /* not the largest finite */
                float nx = m->from(next_up16(h));
                CHECK_QUIET(nx > x, "%s down(%a) = %a, but %a lies between", m->name, (double)x,
                            (double)d, (double)nx);
            } else {
                CHECK_QUIET(d == m->maxv, "%s", m->name);
            }
        }
    }
    /* up */
    if (x > m->maxv) {
        CHECK_QUIET(u == INFINITY, "%s up(%a) = %a, want +inf", m->name, (double)x, (double)u);
    } else {
        CHECK_QUIET(on_grid(m, u) && u >= x, "%s up(%a) = %a", m->name, (double)x, (double)u);
        if (on_grid(m, u) && u >= x) {
            uint16_t h = m->to(u);
            if (h != (uint16_t)(m->maxh | 0x8000)) {
                float nx = m->from(next_down16(h));
                CHECK_QUIET(nx < x, "%s up(%a) = %a, but %a lies between", m->name, (double)x,
                            (double)u, (double)nx);
            } else {
                CHECK_QUIET(u == -m->maxv, "%s", m->name);
            }
        }
    }
}

static uint16_t bf_to(float x)
{
    return tahq_f32_to_bf16(x);
}
static float bf_from(uint16_t h)
{
    return tahq_bf16_to_f32(h);
}
static uint16_t h_to(float x)
{
    return tahq_f32_to_f16(x);
}
static float h_from(uint16_t h)
{
    return tahq_f16_to_f32(h);
}

static void part_meta(void)
{
    meta_ops ops[2] = {
        {TAHQ_META_FP16, "fp16", 65504.0f, 0x7BFF, h_to, h_from},
        {TAHQ_META_BF16, "bf16", 0x1.FEp127f, 0x7F7F, bf_to, bf_from},
    };
    for (int k = 0; k < 2; k++) {
        const meta_ops *m = &ops[k];
        /* dense sample: one pattern in every 64, the low 6 bits varied */
        for (uint64_t j = 0; j < (UINT64_C(1) << 26); j++) {
            uint32_t w = (uint32_t)((j << 6) | ((j * 0x9E3779B1u) >> 26 & 63));
            check_meta_point(m, u2f(w));
        }
        /* every grid point, its binary32 neighbours, every midpoint and its neighbours */
        for (uint32_t i = 0; i < 65536; i++) {
            uint16_t h = (uint16_t)i;
            float g = m->from(h);
            if (!isfinite(g))
                continue;
            uint32_t w = f2u(g);
            for (int d = -3; d <= 3; d++)
                check_meta_point(m, u2f((uint32_t)((int64_t)w + d)));
            if ((h & 0x7FFF) != m->maxh) {
                float g2 = m->from((uint16_t)(h + 1));               /* next magnitude, same sign */
                float mid = (float)(((double)g + (double)g2) * 0.5); /* exact: <= 13 bits */
                uint32_t mw = f2u(mid);
                for (int d = -2; d <= 2; d++)
                    check_meta_point(m, u2f((uint32_t)((int64_t)mw + d)));
            }
        }
        const float extra[] = {0.0f,         -0.0f,           FLT_MAX,
                               -FLT_MAX,     FLT_MIN,         -FLT_MIN,
                               0x1p-149f,    -0x1p-149f,      65504.0f,
                               -65504.0f,    65505.0f,        -65505.0f,
                               65519.996f,   65520.0f,        -65520.0f,
                               0x1p64f,      -0x1p64f,        0x1.FEp127f,
                               -0x1.FEp127f, 0x1.FF0002p127f, -0x1.FF0002p127f,
                               0x1p-133f,    0x1p-134f,       0x1p-24f,
                               0x1p-25f,     3e-8f,           -3e-8f};
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            check_meta_point(m, extra[i]);
    }
    /* hand-derived values */
    CHECK(tahq_meta_round_down(TAHQ_META_FP16, 0.1f) == 0x1.998p-4f); /* 0.0999755859375 */
    CHECK(tahq_meta_round_up(TAHQ_META_FP16, 0.1f) == 0x1.99Cp-4f);   /* 0.10003662109375 */
    CHECK(tahq_meta_round_down(TAHQ_META_FP16, 65505.0f) == 65504.0f);
    CHECK(tahq_meta_round_up(TAHQ_META_FP16, 65505.0f) == INFINITY);
    CHECK(tahq_meta_round_down(TAHQ_META_FP16, -65505.0f) == -INFINITY);
    CHECK(tahq_meta_round_up(TAHQ_META_FP16, -65505.0f) == -65504.0f);
    CHECK(tahq_meta_round_up(TAHQ_META_FP16, 0x1p-149f) == 0x1p-24f);
    CHECK(tahq_meta_round_down(TAHQ_META_FP16, 0x1p-149f) == 0.0f);
    CHECK(tahq_meta_round_down(TAHQ_META_FP16, -0x1p-149f) == -0x1p-24f);
    CHECK(tahq_meta_round_up(TAHQ_META_BF16, 0x1p-149f) == 0x1p-133f);
    CHECK(tahq_meta_round_up(TAHQ_META_BF16, u2f(0x3F800001)) == u2f(0x3F810000));
    CHECK(tahq_meta_round_down(TAHQ_META_BF16, u2f(0x3F80FFFF)) == 1.0f);
    CHECK(tahq_meta_round_up(TAHQ_META_BF16, u2f(0x7F7F0001)) == INFINITY);
    CHECK(tahq_meta_round_down(TAHQ_META_BF16, u2f(0xFF7F0001)) == -INFINITY);
    /* fp32: identity, bit for bit */
    trng r = {99};
    for (int i = 0; i < 4000000; i++) {
        uint32_t w = trng_u32(&r);
        float x = u2f(w);
        if (!isfinite(x))
            continue;
        CHECK_QUIET(f2u(tahq_meta_round_down(TAHQ_META_FP32, x)) == w, "fp32 down %08x", w);
        CHECK_QUIET(f2u(tahq_meta_round_up(TAHQ_META_FP32, x)) == w, "fp32 up %08x", w);
    }
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "all";
    int all = strcmp(part, "all") == 0;
    int force_sample = getenv("TAHQ_TEST_NO_F16C") != NULL;
    char what[512] = "";
    double t0 = t_now();
    if (all || !strcmp(part, "rt")) {
        part_roundtrip();
        strcat(what, "65536 fp16+bf16 round trips, meta bits; ");
    }
    const char *how = NULL;
    if (all || !strcmp(part, "f16-lo"))
        how = part_f16(0, force_sample);
    if (all || !strcmp(part, "f16-hi"))
        how = part_f16(1, force_sample);
    if (how) {
        strcat(what, "f32->f16 RNE ");
        strcat(what, how);
        strcat(what, "; ");
    }
    if (all || !strcmp(part, "bf16-lo"))
        part_bf16(0);
    if (all || !strcmp(part, "bf16-hi"))
        part_bf16(1);
    if (all || !strncmp(part, "bf16", 4))
        strcat(what, "f32->bf16 RNE on 2^31 patterns/half vs binary64 ref; ");
    if (all || !strcmp(part, "meta")) {
        part_meta();
        char buf[160];
        snprintf(buf, sizeof buf,
                 "meta down/up on %" PRIu64 " points (2^26 dense/meta + all boundaries); ",
                 meta_points);
        strcat(what, buf);
    }
    if (!what[0]) {
        fprintf(stderr, "unknown part '%s'\n", part);
        return 2;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.1f s", t_now() - t0);
    strcat(what, buf);
    return t_finish("test_fp16", what);
}
