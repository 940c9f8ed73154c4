/* SPDX-License-Identifier: MIT */
/* equiv_check.c - exhaustive checks behind the equivalent mutants of
 * catalogue.txt (golden/mutation). Each mode compares libtahq's own function
 * (the reference) with the mutant's version, written out here, over every
 * input the mode names, and prints the first difference or "equivalent".
 * Built and run by `mutate.py --equiv` against the unmutated libtahq objects
 * (compiled with -ffp-contract=off -fno-fast-math).
 *
 *   clamp        s4.1-no-min-clamp: for every positive binary32 S < 2^104
 *                (every sum §3.2 allows: below 2^40 magnitudes < 2^64) whose
 *                reciprocal fl(1/S) is finite, fl(S * fl(1/S)) <= 1. (Above
 *                2^126 the reciprocal is subnormal and the product can
 *                exceed 1: S = 0x1.001bb8p+126 gives 0x1.000002p+0.)
 *   bf16-trunc   s2.2-bf16-truncate: down(x) and up(x) on the bf16 grid
 *                are the same with a truncating bf16() for every non-NaN x.
 *   scale-down   s5.3-scale-start-down and (16-bit metadata)
 *                s5.3-scale-start-pattern-minus-one: the scale search started
 *                at down(fl(w/L)), or one pattern below up(fl(w/L)), gives
 *                the reference's scale, for every
 *                positive finite binary32 w, fp16 and bf16, and L given
 *                (default 1 and 255; "all" for the eight L = 2^b - 1).
 *   log2-sqrt2   s2.3-sqrt2-threshold-ge (not equivalent): compares log2(x)
 *                with the mantissa halved also at frac = 0x3504F3 with the
 *                SPEC's at every x where the code paths differ, and prints
 *                the first difference (x = 0x1.6a09e6p-1, the p the v2 case
 *                mut-s2-3-sqrt2-threshold-ge carries).
 *   scale-minus-one  s5.3-scale-start-pattern-minus-one, fp32 metadata: the
 *                candidate one pattern below fl(w/L) never passes
 *                fl(w ÷ s) ≤ L, so the search steps back to fl(w/L). Every
 *                w in (0, 2^-99] (where w/L or the candidate can be
 *                subnormal) and in [1, 2), for the eight L; between 2^-99
 *                and the top of the range every value involved is normal and
 *                scaling w by 2^k scales fl(w/L) and its predecessor by 2^k
 *                exactly and leaves fl(w ÷ s) unchanged, so [1, 2) stands for
 *                every other binade. (fp16/bf16: the argument of
 *                s5.3-scale-start-down, and `scale-down` checks the search.)
 *   scale-steps  not a mutant: the (w, L) pairs where the §5.3 scale search
 *                leaves its start up(fl(w/L)), for fp16 and bf16 metadata
 *                (every w that can step, found by the window argument at
 *                check_scale_steps), with fp32 as the control that steps
 *                exist and are found. Exit status 1 if the control finds none
 *                or a step occurs where SPEC 5.3 step 3 says none can (CTest
 *                golden_scale_steps).
 * Exit status 0 when equivalent, 1 on a difference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tahq.h"
#include "tahq_ref_api.h" /* the metadata rounding and scale search of ref/fp16.c */
#include "tahq_spec.h"

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t u_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint16_t next_down16(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x8001u;
    return (h & 0x8000u) ? (uint16_t)(h + 1u) : (uint16_t)(h - 1u);
}

static uint16_t next_up16(uint16_t h)
{
    if ((h & 0x7FFFu) == 0u)
        return 0x0001u;
    return (h & 0x8000u) ? (uint16_t)(h - 1u) : (uint16_t)(h + 1u);
}

static float bf16_val(uint16_t h)
{
    return f_of((uint32_t)h << 16);
}

/* the mutant's bf16(): truncation (NaN as the reference) */
static uint16_t bf16_trunc(float x)
{
    uint32_t w = u_of(x);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((w >> 16) | 0x40u);
    return (uint16_t)(w >> 16);
}

static int check_bf16_trunc(void)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i <= 0xFFFFFFFFu; i++) {
        uint32_t u = (uint32_t)i;
        if ((u & 0x7FFFFFFFu) > 0x7F800000u)
            continue; /* NaN: never a metadata input */
        float x = f_of(u);
        uint16_t h = bf16_trunc(x);
        uint16_t d = bf16_val(h) > x ? next_down16(h) : h;
        uint16_t up = bf16_val(h) < x ? next_up16(h) : h;
        uint32_t rd = tahq_meta_round_down_bits(TAHQ_META_BF16, x);
        uint32_t ru = tahq_meta_round_up_bits(TAHQ_META_BF16, x);
        if (rd != d || ru != up) {
            printf("bf16-trunc: DIFFERENT at x = %a (0x%08x): down %04x/%04x up %04x/%04x\n",
                   (double)x, u, rd, d, ru, up);
            return 1;
        }
        n++;
    }
    printf("bf16-trunc: equivalent on %llu binary32 values\n", (unsigned long long)n);
    return 0;
}

static int check_clamp(void)
{
    uint64_t n = 0;
    for (uint32_t u = 1; u < 0x73800000u; u++) { /* S < 2^104 */
        float s = f_of(u);
        float inv = 1.0f / s;
        if (u_of(inv) == 0x7F800000u)
            continue; /* the division fallback, where p <= 1 exactly */
        float p = s * inv;
        if (p > 1.0f) {
            printf("clamp: DIFFERENT: S = %a gives fl(S * fl(1/S)) = %a\n", (double)s, (double)p);
            return 1;
        }
        n++;
    }
    printf("clamp: fl(S * fl(1/S)) <= 1 for all %llu positive S < 2^104 with a finite reciprocal\n",
           (unsigned long long)n);
    return 0;
}

/* the mutant's search: start at down(fl(w / L)) */
static uint32_t scale_bits_down(tahq_meta meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_BF16 ? 0x7F80u : 0x7C00u;
    uint32_t sb = tahq_meta_round_down_bits(meta, w / L);
    while (sb < inf_bits && !(w / tahq_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}

/* the other mutant's search (s5.3-scale-start-pattern-minus-one) */
static uint32_t scale_bits_minus_one(tahq_meta meta, float w, uint32_t levels)
{
    const float L = (float)levels;
    const uint32_t inf_bits = meta == TAHQ_META_BF16 ? 0x7F80u : 0x7C00u;
    uint32_t sb = tahq_meta_round_up_bits(meta, w / L);
    if (sb > 0u)
        sb--;
    while (sb < inf_bits && !(w / tahq_meta_value(meta, sb) <= L))
        sb++;
    return sb;
}

static int check_scale_down(const uint32_t *levels, int nl)
{
    static const tahq_meta metas[2] = {TAHQ_META_FP16, TAHQ_META_BF16};
    for (int mi = 0; mi < 2; mi++)
        for (int li = 0; li < nl; li++) {
            for (uint32_t u = 1; u < 0x7F800000u; u++) {
                float w = f_of(u);
                uint32_t a = tahq_meta_scale_bits(metas[mi], w, levels[li]);
                uint32_t b = scale_bits_down(metas[mi], w, levels[li]);
                uint32_t c = scale_bits_minus_one(metas[mi], w, levels[li]);
                if (a != b || a != c) {
                    printf("scale-down: DIFFERENT: meta %s, L = %u, w = %a: %04x vs %04x, %04x\n",
                           mi ? "bf16" : "fp16", levels[li], (double)w, a, b, c);
                    return 1;
                }
            }
            printf("scale-down: equivalent for %s, L = %u, every positive finite w\n",
                   mi ? "bf16" : "fp16", levels[li]);
            fflush(stdout);
        }
    return 0;
}

static const float log2_c[9] = {
    0x1.715476p+0f,  -0x1.71547p-1f, 0x1.ec73d4p-2f,  -0x1.715c9cp-2f, 0x1.26d41p-2f,
    -0x1.e94f12p-3f, 0x1.b9b11ep-3f, -0x1.a8cc5cp-3f, 0x1.025a2p-3f,
};

/* SPEC §2.3 step by step, with the comparison of step 3 as the mutant's >= */
static float log2_ge(float x)
{
    uint32_t w = u_of(x);
    int32_t a = 0;
    if ((w >> 23) == 0) {
        x = x * 0x1p23f;
        w = u_of(x);
        a = -23;
    }
    int32_t e = (int32_t)((w >> 23) & 0xFFu) - 127 + a;
    float m = f_of((w & 0x7FFFFFu) | 0x3F800000u);
    if ((w & 0x7FFFFFu) >= 0x3504F3u) {
        m = m * 0.5f;
        e = e + 1;
    }
    float f = m - 1.0f;
    float y = log2_c[8];
    for (int i = 7; i >= 0; i--)
        y = y * f + log2_c[i];
    return (float)e + f * y;
}

static int check_log2_sqrt2(void)
{
    uint64_t n = 0;
    for (uint32_t u = 1; u < 0x7F800000u; u++) {
        uint32_t w = u;
        if ((w >> 23) == 0)
            w = u_of(f_of(u) * 0x1p23f);
        if ((w & 0x7FFFFFu) != 0x3504F3u)
            continue;
        float x = f_of(u);
        float r = tahq_log2(x), m = log2_ge(x);
        if (u_of(r) != u_of(m)) {
            printf("log2-sqrt2: DIFFERENT at x = %a: %a vs %a\n", (double)x, (double)r, (double)m);
            return 1;
        }
        n++;
    }
    printf("log2-sqrt2: equivalent at all %llu x with frac 0x3504F3 (the only inputs it changes)\n",
           (unsigned long long)n);
    return 0;
}

static int minus_one_rejected(uint32_t u, float L)
{
    float w = f_of(u);
    float x = w / L;
    if (u_of(x) == 0u)
        return 1; /* up(0) = 0: no candidate below */
    float sp = f_of(u_of(x) - 1u);
    return !(w / sp <= L);
}

static int check_scale_minus_one(void)
{
    uint64_t n = 0;
    for (int b = 1; b <= 8; b++) {
        const float L = (float)((1u << b) - 1u);
        for (uint32_t u = 1; u <= 0x0E000000u; u++, n++) /* (0, 2^-99] */
            if (!minus_one_rejected(u, L)) {
                printf("scale-minus-one: DIFFERENT: L = %g, w = %a\n", (double)L, (double)f_of(u));
                return 1;
            }
        for (uint32_t u = 0x3F800000u; u < 0x40000000u; u++, n++) /* [1, 2) */
            if (!minus_one_rejected(u, L)) {
                printf("scale-minus-one: DIFFERENT: L = %g, w = %a\n", (double)L, (double)f_of(u));
                return 1;
            }
    }
    printf("scale-minus-one: the candidate below fl(w/L) is rejected in all %llu (w, L) pairs\n",
           (unsigned long long)n);
    return 0;
}

/* scale-steps: where does the §5.3 search leave its start s0 = up(fl(w/L))?
 *
 * A step from a non-zero start s0 = g needs fl(w/g) > L, so w/g > L (L is a
 * binary32 integer and rounding is monotone): w > L*g. And up(fl(w/L)) = g
 * needs fl(w/L) <= g, so w/L < g + ulp(g) (a real w/L at or above the next
 * binary32 after g rounds above g), with ulp(g) <= max(2^-149, g*2^-23):
 * w < L*g + L*max(2^-149, g*2^-23). Both bounds are exact in binary64 (L has
 * 8 bits, g 24). So every step from a non-zero start has w in that window
 * for the g it starts from, and enumerating the window of every positive
 * finite g of the grid finds all of them; each w found is judged by the
 * reference search itself. A zero start (fl(w/L) = 0: w <= L*2^-150) always
 * steps (w / 0 = +inf > L); those w are enumerated directly. fp32 is the
 * control, over its grid values g in [1, 2) (2^23 of them): steps from a
 * non-zero start exist there, so the method finds them where they exist. */
static float next_up(float x)
{
    return f_of(u_of(x) + 1u); /* x positive finite */
}

static int check_scale_steps(void)
{
    static const tahq_meta metas[3] = {TAHQ_META_FP16, TAHQ_META_BF16, TAHQ_META_FP32};
    static const char *names[3] = {"fp16", "bf16", "fp32 (control, g in [1, 2))"};
    int found_control = 0, spec_broken = 0;
    for (int mi = 0; mi < 3; mi++)
        for (uint32_t b = 1; b <= 8; b++) {
            const uint32_t levels = (1u << b) - 1u;
            const float L = (float)levels;
            const uint32_t inf_bits = metas[mi] == TAHQ_META_FP32   ? 0x7F800000u
                                      : metas[mi] == TAHQ_META_BF16 ? 0x7F80u
                                                                    : 0x7C00u;
            uint32_t g_first = 1, g_end = inf_bits;
            if (metas[mi] == TAHQ_META_FP32) {
                g_first = 0x3F800000u; /* [1, 2) */
                g_end = 0x40000000u;
            }
            unsigned long long zero = 0, steps = 0, normal_steps = 0, windows = 0;
            uint32_t zero_max = 0, first_w = 0;
            /* zero starts: every w with fl(w/L) = 0 */
            for (uint32_t u = 1; f_of(u) / L == 0.0f; u++) {
                if (tahq_meta_scale_bits(metas[mi], f_of(u), levels) != 0u)
                    zero++, zero_max = u;
            }
            for (uint32_t gb = g_first; gb < g_end; gb++) {
                const double g = (double)tahq_meta_value(metas[mi], gb);
                const double ulp = g * 0x1p-23 > 0x1p-149 ? g * 0x1p-23 : 0x1p-149;
                const double lo = (double)L * g, hi = (double)L * g + (double)L * ulp;
                if (lo > 0x1.fffffep127)
                    break;
                float w = (float)lo; /* within an ulp of lo: step back twice to be sure */
                if (u_of(w) > 2u)
                    w = f_of(u_of(w) - 2u);
                for (; (double)w < hi && u_of(w) < 0x7F800000u; w = next_up(w)) {
                    if ((double)w <= lo)
                        continue;
                    windows++;
                    const float q = w / L;
                    if (q == 0.0f)
                        continue; /* counted above */
                    const uint32_t start = tahq_meta_round_up_bits(metas[mi], q);
                    if (start != gb)
                        continue;
                    if (tahq_meta_scale_bits(metas[mi], w, levels) != start) {
                        if (steps++ == 0)
                            first_w = u_of(w);
                        normal_steps += q >= 0x1p-126f; /* w / L a normal binary32 */
                    }
                }
            }
            printf("scale-steps: %s L = %3u: %llu w step from a zero start (w <= %a), "
                   "%llu step from a non-zero start",
                   names[mi], levels, zero, zero ? (double)f_of(zero_max) : 0.0, steps);
            if (steps)
                printf(" (first w %a; %llu of them with w / L normal)", (double)f_of(first_w),
                       normal_steps);
            printf(" [%llu window values judged]\n", windows);
            fflush(stdout);
            if (metas[mi] == TAHQ_META_FP32 && steps)
                found_control = 1;
            /* SPEC 5.3 step 3 states: fp16 steps only from a zero start, bf16
             * only from a zero start or where w / L is subnormal */
            if ((metas[mi] == TAHQ_META_FP16 && steps) ||
                (metas[mi] == TAHQ_META_BF16 && normal_steps)) {
                printf("scale-steps: %s L = %u: steps SPEC 5.3 says cannot occur\n", names[mi],
                       levels);
                spec_broken = 1;
            }
        }
    if (!found_control) {
        printf("scale-steps: the fp32 control found no step: the method is blind\n");
        return 1;
    }
    return spec_broken;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr,
                "usage: equiv_check "
                "clamp|bf16-trunc|scale-minus-one|log2-sqrt2|scale-steps|scale-down [all|L...]\n");
        return 2;
    }
    if (!strcmp(argv[1], "clamp"))
        return check_clamp();
    if (!strcmp(argv[1], "scale-minus-one"))
        return check_scale_minus_one();
    if (!strcmp(argv[1], "log2-sqrt2"))
        return check_log2_sqrt2();
    if (!strcmp(argv[1], "scale-steps"))
        return check_scale_steps();
    if (!strcmp(argv[1], "bf16-trunc"))
        return check_bf16_trunc();
    if (!strcmp(argv[1], "scale-down")) {
        uint32_t lv[8] = {1, 255};
        int nl = 2;
        if (argc > 2 && !strcmp(argv[2], "all")) {
            for (int b = 1; b <= 8; b++)
                lv[b - 1] = (1u << b) - 1u;
            nl = 8;
        } else if (argc > 2) {
            nl = 0;
            for (int i = 2; i < argc && nl < 8; i++)
                lv[nl++] = (uint32_t)strtoul(argv[i], NULL, 10);
        }
        return check_scale_down(lv, nl);
    }
    fprintf(stderr, "equiv_check: unknown mode %s\n", argv[1]);
    return 2;
}
