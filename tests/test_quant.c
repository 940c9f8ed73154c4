/* SPDX-License-Identifier: MIT */
/*
 * test_quant - SPEC §5.3 tile quantization, §6.1 tile decoding, §6.2 bound,
 * §5.4 stochastic rounding.
 *
 * The metadata rounding (tahq_meta_round_down/up) and tahq_random_word are
 * checked in test_fp16 / test_rng; here they are trusted to build the
 * transcription of §5.3.
 */
#include "spec_ref.h"
#include "tutil.h"

#define GMAX 256
static const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
static const float minpos[3] = {0x1p-24f, 0x1p-133f, 0x1p-149f}; /* §2.2 */

/* §5.3 transcription (spec_ref.h; its stochastic rounding uses the test's own
 * Philox, not tahq_random_word) */
#define quant_spec spec_quant

static uint64_t n_tiles, n_range, n_elems, n_below_max;
static char worst_desc[200];
static double worst_bound_ratio, worst_t_excess = -1e9;

static int on_grid(tahq_meta meta, float v)
{
    return isfinite(v) && f2u(tahq_meta_round_down(meta, v)) == f2u(v) &&
           f2u(tahq_meta_round_up(meta, v)) == f2u(v);
}

/* Run one tile through the library and check everything. expect: TAHQ_OK,
 * TAHQ_ERR_RANGE, or -1 (whatever the transcription says). */
static void quant_case(const float *v, uint32_t G, uint32_t b, tahq_meta meta, tahq_rounding rnd,
                       uint64_t seed, uint64_t elem0, int expect, const char *what)
{
    float z = 12345.0f, s = 12345.0f, zs = 0.0f, ss = 0.0f;
    uint8_t q[GMAX], qs[GMAX];
    float vcopy[GMAX], out[GMAX];
    memcpy(vcopy, v, G * sizeof(float));
    tahq_status st = tahq_quantize_tile(v, G, b, meta, rnd, seed, elem0, &z, &s, q);
    tahq_status ss_st = quant_spec(v, G, b, meta, rnd, seed, elem0, &zs, &ss, qs);
    CHECKF(memcmp(vcopy, v, G * sizeof(float)) == 0, "%s: input modified", what);
    CHECKF(st == ss_st, "%s (G=%u b=%u meta=%d rnd=%d): status %d, SPEC %d", what, G, b, meta, rnd,
           st, ss_st);
    if (expect >= 0)
        CHECKF((int)st == expect, "%s: status %d, expected %d", what, st, expect);
    n_tiles++;
    if (st != TAHQ_OK || ss_st != TAHQ_OK) {
        n_range += st == TAHQ_ERR_RANGE;
        return;
    }
    const uint32_t L = (1u << b) - 1;
    double lo = v[0], hi = v[0];
    for (uint32_t i = 0; i < G; i++) {
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    /* metadata: exactly §5.3, on the grid, z never -0, s >= +0 */
    CHECKF(f2u(z) == f2u(zs) && f2u(s) == f2u(ss), "%s (G=%u b=%u meta=%d): z %a s %a, SPEC %a %a",
           what, G, b, meta, (double)z, (double)s, (double)zs, (double)ss);
    CHECKF(on_grid(meta, z) && f2u(z) != 0x80000000u, "%s: z = %a", what, (double)z);
    CHECKF(on_grid(meta, s) && (f2u(s) >> 31) == 0, "%s: s = %a", what, (double)s);
    CHECKF((double)z <= lo, "%s: z %a > min %a", what, (double)z, lo);
    /* §5.3 step 3: s is the SMALLEST meta value with s >= fl(w / L) and
     * fl(w / s) <= L. Checked directly (not through the search): s itself
     * qualifies, and the meta value just below it does not. */
    if (s > 0.0f) {
        float w = (float)hi - z, wl = w / (float)L; /* hi is a float value */
        CHECKF(s >= wl && w / s <= (float)L, "%s: s %a does not satisfy s >= fl(w/L), fl(w/s) <= L",
               what, (double)s);
        float prev = tahq_meta_value(meta, tahq_meta_bits(meta, s) - 1);
        CHECKF(!(prev >= wl && w / prev <= (float)L),
               "%s (b=%u meta %d): s %a is not the smallest (%a)", what, b, meta, (double)s,
               (double)prev);
    }
    /* Coverage of [lo, hi] by the decoder's grid up to rounding:
     * fl(w / s) <= L gives w / s <= (L + 2^-150) / (1 - u) (relative error
     * of a normal quotient, absolute 2^-150 of a subnormal one), and
     * hi - z <= w / (1 - u) (a subnormal difference is exact), so
     * hi - z <= s (L + 2^-150) / (1 - u)^2. (z + L s >= hi itself need not
     * hold exactly: w = fl(hi - z) may round down.) */
    {
        const double uu = 0x1p-24;
        double cover = (double)s * (L + 0x1p-150) / ((1 - uu) * (1 - uu)) * (1 + 0x1p-40);
        CHECKF(hi - (double)z <= cover,
               "%s: z + L s does not cover max up to rounding (G=%u b=%u meta %d): z %a s %a hi %a",
               what, G, b, meta, (double)z, (double)s, hi);
        if ((double)z + L * (double)s < hi)
            n_below_max++;
    }
    int codes_ok = 1, range_ok = 1, t_ok = 1;
    for (uint32_t i = 0; i < G; i++) {
        codes_ok &= q[i] == qs[i];
        range_ok &= q[i] <= L;
        if (s > 0.0f) { /* §5.3: t <= L on every element, both roundings */
            float t = (v[i] - z) / s;
            t_ok &= t >= 0.0f && (double)t <= L;
            if ((double)t - L > worst_t_excess)
                worst_t_excess = (double)t - L;
        }
    }
    CHECKF(range_ok, "%s: code above L", what);
    CHECKF(codes_ok, "%s (G=%u b=%u meta=%d rnd=%d): codes differ from §5.3", what, G, b, meta,
           rnd);
    CHECKF(t_ok, "%s (G=%u b=%u meta=%d): t outside [0, L]", what, G, b, meta);
    /* decode: exactly fl(z + fl(q s)), and the §6.2 bound on every element */
    tahq_dequantize_tile(q, G, z, s, out);
    const double u = 0x1p-24, Eq = rnd == TAHQ_ROUND_NEAREST_EVEN ? 0.5 : 1.0;
    const double B =
        ((double)s * (Eq + (5.0 * L + 4) * u) + fabs((double)z) * u + 0x1p-148) * (1 + 0x1p-40);
    int dec_ok = 1, bound_ok = 1;
    for (uint32_t i = 0; i < G; i++) {
        float ps = (float)q[i] * s;
        float want = z + ps;
        dec_ok &= f2u(out[i]) == f2u(want);
        double e = fabs((double)v[i] - (double)out[i]);
        bound_ok &= e <= B;
        if (B > 0 && e / B > worst_bound_ratio) {
            worst_bound_ratio = e / B;
            snprintf(worst_desc, sizeof worst_desc,
                     "%s G=%u b=%u meta %d rnd %d v %a z %a s %a q %u", what, G, b, meta, rnd,
                     (double)v[i], (double)z, (double)s, q[i]);
        }
        n_elems++;
    }
    CHECKF(dec_ok, "%s: dequantize is not fl(z + fl(q s))", what);
    CHECKF(bound_ok, "%s (G=%u b=%u meta=%d rnd=%d): §6.2 bound violated (B = %.3g)", what, G, b,
           meta, rnd, B);
}

static void fill(float *v, uint32_t G, int kind, trng *r, tahq_meta meta)
{
    for (uint32_t i = 0; i < G; i++) {
        double g = trng_gauss(r);
        switch (kind) {
        case 0:
            v[i] = (float)g;
            break;
        case 1:
            v[i] = (float)(g / (fabs(trng_gauss(r)) + 0.05));
            break; /* heavy tail */
        case 2:
            v[i] = (float)(g * 1e-3 + 7.0);
            break; /* offset, narrow */
        case 3:
            v[i] = (float)((int)trng_below(r, 5) - 2);
            break; /* ties, zeros */
        case 4:
            v[i] = trng_float_exp(r, -149, -127);
            break; /* subnormal */
        case 5:
            v[i] = (trng_next(r) & 1) ? 0.0f : -0.0f;
            break; /* +-0 */
        case 6:
            v[i] = (float)(g * 0.01);
            break;
        case 7:
            v[i] = meta == TAHQ_META_FP16 ? (float)(g * 8000.0) : trng_float_exp(r, -10, 63);
            break;
        default:
            v[i] = (float)g;
            break;
        }
    }
    if (kind == 8)
        v[trng_below(r, G)] = 1000.0f; /* spike */
}

static void part_random(void)
{
    trng r = {1};
    float v[GMAX];
    for (size_t gi = 0; gi < 6; gi++)
        for (uint32_t b = 1; b <= 8; b++)
            for (int meta = 0; meta < 3; meta++)
                for (int rnd = 0; rnd < 2; rnd++)
                    for (int kind = 0; kind < 9; kind++)
                        for (int rep = 0; rep < 3; rep++) {
                            uint32_t G = Gs[gi];
                            fill(v, G, kind, &r, (tahq_meta)meta);
                            uint64_t seed = trng_next(&r),
                                     elem0 = trng_below(&r, UINT64_C(1) << 40);
                            quant_case(v, G, b, (tahq_meta)meta, (tahq_rounding)rnd, seed, elem0,
                                       -1, "random");
                        }
}

static void part_adversarial(void)
{
    float v[GMAX];
    uint8_t q[GMAX];
    float z, s;
    for (size_t gi = 0; gi < 6; gi++) {
        uint32_t G = Gs[gi];
        for (int meta = 0; meta < 3; meta++) {
            tahq_meta m = (tahq_meta)meta;
            /* all +0 / all -0 / mixed: z = +0, s = +0, codes 0 */
            for (int zk = 0; zk < 3; zk++) {
                for (uint32_t i = 0; i < G; i++)
                    v[i] = (zk == 0 || (zk == 2 && (i & 1))) ? 0.0f : -0.0f;
                for (uint32_t b = 1; b <= 8; b += 7) {
                    quant_case(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "zeros");
                    tahq_quantize_tile(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, &z, &s, q);
                    CHECKF(f2u(z) == 0 && f2u(s) == 0, "zero tile: z %08x s %08x", f2u(z), f2u(s));
                }
            }
            /* -0 as the minimum with a positive maximum: z must be +0 */
            for (uint32_t i = 0; i < G; i++)
                v[i] = (i == 1) ? 5.0f : -0.0f;
            tahq_quantize_tile(v, G, 4, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, &z, &s, q);
            CHECKF(f2u(z) == 0, "min -0: z bits %08x", f2u(z));
            quant_case(v, G, 4, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "-0 min");
            /* constant tile on the grid: s = 0, codes 0, exact decode */
            for (uint32_t i = 0; i < G; i++)
                v[i] = -3.0f;
            tahq_quantize_tile(v, G, 3, m, TAHQ_ROUND_STOCHASTIC, 9, 0, &z, &s, q);
            CHECKF(z == -3.0f && f2u(s) == 0, "constant on grid: z %a s %a", (double)z, (double)s);
            quant_case(v, G, 3, m, TAHQ_ROUND_STOCHASTIC, 9, 0, TAHQ_OK, "constant on grid");
            /* constant tile off the grid (0.1 is on neither fp16 nor bf16 grid) */
            for (uint32_t i = 0; i < G; i++)
                v[i] = 0.1f;
            for (uint32_t b = 1; b <= 8; b++) {
                quant_case(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "constant off grid");
                quant_case(v, G, b, m, TAHQ_ROUND_STOCHASTIC, 5, 77, TAHQ_OK, "constant off grid");
            }
            /* single spike, positive and negative, in zeros */
            for (uint32_t b = 1; b <= 8; b++) {
                for (uint32_t i = 0; i < G; i++)
                    v[i] = 0.0f;
                v[G / 2] = 123.456f;
                quant_case(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "spike");
                v[G / 2] = -123.456f;
                quant_case(v, G, b, m, TAHQ_ROUND_STOCHASTIC, 1, 0, TAHQ_OK, "spike");
            }
            /* denormal tiles: s0 = w/L may be 0 (-> minpos) */
            for (uint32_t i = 0; i < G; i++)
                v[i] = 0.0f;
            v[1] = 0x1p-149f;
            for (uint32_t b = 1; b <= 8; b++) {
                quant_case(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "one denormal");
                tahq_quantize_tile(v, G, b, m, TAHQ_ROUND_NEAREST_EVEN, 0, 0, &z, &s, q);
                if (b >= 2)
                    CHECKF(s == minpos[m], "2^-149 tile, b=%u meta %d: s %a", b, meta, (double)s);
            }
            v[2] = -0x1p-149f;
            quant_case(v, G, 8, m, TAHQ_ROUND_STOCHASTIC, 3, 5, TAHQ_OK, "denormals");
        }
        /* fp32 metadata, subnormal spread: tile {0, k 2^-149} with
         * k = (3L - 1)/2 (L odd): z = 0, w = k 2^-149, w / L = (1.5 - 1/(2L))
         * 2^-149 rounds to 2^-149 (a subnormal quotient has an absolute
         * rounding error); s = 2^-149 would give fl(w/s) = k > L, so the
         * §5.3 search steps to s = 2^-148 (w/s = (3L - 1)/4 <= L). With
         * s = up(fl(w/L)) alone the largest element would be clipped to L,
         * an error of (L-1)/2 quanta against B ~ 2.5 quanta. */
        for (uint32_t b = 2; b <= 8; b++) {
            uint32_t L = (1u << b) - 1;
            for (uint32_t i = 0; i < G; i++)
                v[i] = 0.0f;
            v[G - 1] = (float)((3 * L - 1) / 2) * 0x1p-149f;
            quant_case(v, G, b, TAHQ_META_FP32, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK,
                       "fp32 subnormal spread");
            quant_case(v, G, b, TAHQ_META_FP32, TAHQ_ROUND_STOCHASTIC, 1, 0, TAHQ_OK,
                       "fp32 subnormal spread");
            tahq_quantize_tile(v, G, b, TAHQ_META_FP32, TAHQ_ROUND_NEAREST_EVEN, 0, 0, &z, &s, q);
            CHECKF(z == 0.0f && s == 0x1p-148f,
                   "subnormal spread b=%u: z %a s %a (want 0, 0x1p-148)", b, (double)z, (double)s);
        }
        /* exact ties, fp16, b = 4: z = 0, w = 15, s = 1 -> t = v; 0.5 -> 0,
         * 1.5 -> 2, 2.5 -> 2, ... (half-way cases to even) */
        if (G == 16) {
            v[0] = 0.0f;
            v[1] = 15.0f;
            for (uint32_t i = 2; i < 16; i++)
                v[i] = (float)(i - 2) + 0.5f;
            tahq_quantize_tile(v, 16, 4, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, &z, &s, q);
            CHECKF(z == 0.0f && s == 1.0f, "tie tile: z %a s %a", (double)z, (double)s);
            int ok = q[0] == 0 && q[1] == 15;
            for (uint32_t i = 2; i < 16; i++) {
                uint32_t k = i - 2; /* v = k + 1/2 -> the even one of k, k+1 */
                ok &= q[i] == ((k & 1) ? k + 1 : k);
            }
            CHECK(ok);
            quant_case(v, 16, 4, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "ties");
        }
        /* the fp16 range */
        for (uint32_t i = 0; i < G; i++)
            v[i] = 0.0f;
        v[0] = -65504.0f;
        quant_case(v, G, 8, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "min -65504");
        v[0] = -65505.0f; /* z = down(-65505) = -inf */
        quant_case(v, G, 8, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_ERR_RANGE,
                   "min -65505");
        quant_case(v, G, 8, TAHQ_META_BF16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "bf16 -65505");
        v[0] = 0.0f;
        v[1] = 65504.0f; /* b = 1: s = 65504 exactly */
        quant_case(v, G, 1, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK,
                   "max 65504 b=1");
        v[1] = 65505.0f; /* b = 1: s0 = 65505, up() = inf */
        quant_case(v, G, 1, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_ERR_RANGE,
                   "max 65505 b=1");
        quant_case(v, G, 2, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK,
                   "max 65505 b=2");
        v[0] = -65504.0f;
        v[1] = 65504.0f; /* b = 1: w = 131008 -> inf */
        quant_case(v, G, 1, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_ERR_RANGE,
                   "+-65504 b=1");
        quant_case(v, G, 2, TAHQ_META_FP16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK, "+-65504 b=2");
        /* bf16 / fp32 never overflow below the input limit 2^64 */
        v[0] = -0x1.fffffep63f;
        v[1] = 0x1.fffffep63f;
        for (uint32_t b = 1; b <= 8; b++) {
            quant_case(v, G, b, TAHQ_META_BF16, TAHQ_ROUND_NEAREST_EVEN, 0, 0, TAHQ_OK,
                       "+-2^64 bf16");
            quant_case(v, G, b, TAHQ_META_FP32, TAHQ_ROUND_STOCHASTIC, 0, 0, TAHQ_OK,
                       "+-2^64 fp32");
        }
    }
    /* dequantize with s = 0 gives z everywhere */
    for (uint32_t i = 0; i < 8; i++)
        q[i] = (uint8_t)i;
    float out[8];
    tahq_dequantize_tile(q, 8, 2.5f, 0.0f, out);
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= out[i] == 2.5f;
    CHECK(ok);
}

/* §5.4: E[q] = t + beta, 0 <= beta < 2^-24. Per element, q - f0 is Bernoulli
 * with P = ceil(phi 2^24)/2^24, variance <= 1/4: over K seeds the mean has
 * sd <= 0.5/sqrt(K); tolerance 6 sd + 2^-24. When phi = 0 the code is f0 for
 * every seed (rho < 0 is impossible): exact. Aggregated over M elements the
 * sd of the total is <= 0.5 sqrt(M K): tolerance 6 of those. */
static double sr_worst_sd, sr_total_z;
static void part_stochastic(void)
{
    const int K = 4096;
    trng r = {555};
    float v[GMAX];
    uint8_t q[GMAX];
    double sum[GMAX];
    double total = 0;
    uint64_t M = 0;
    for (int tile = 0; tile < 12; tile++) {
        uint32_t G = Gs[tile % 6], b = 1 + (uint32_t)(tile % 4) * 2; /* b = 1, 3, 5, 7 */
        tahq_meta m = (tahq_meta)(tile % 3);
        fill(v, G, tile % 3, &r, m);
        float z, s;
        for (uint32_t i = 0; i < G; i++)
            sum[i] = 0;
        uint64_t elem0 = trng_below(&r, UINT64_C(1) << 40);
        for (int k = 0; k < K; k++) {
            tahq_status st = tahq_quantize_tile(v, G, b, m, TAHQ_ROUND_STOCHASTIC,
                                                (uint64_t)k * 7919, elem0, &z, &s, q);
            if (!CHECK(st == TAHQ_OK))
                return;
            for (uint32_t i = 0; i < G; i++)
                sum[i] += q[i];
        }
        /* z and s do not depend on the seed */
        for (uint32_t i = 0; i < G; i++) {
            float t = (v[i] - z) / s;
            if ((double)t > (double)((1u << b) - 1))
                continue; /* clamp region */
            double mean = sum[i] / K, f0 = floor((double)t), phi = (double)t - f0;
            double dev = mean - (double)t;
            if (phi == 0) {
                CHECKF(mean == (double)t, "phi = 0 but mean %.9g != t %.9g", mean, (double)t);
            } else {
                double tol = 6 * 0.5 / sqrt((double)K) + 0x1p-24;
                CHECKF(fabs(dev) <= tol, "stochastic mean %.6f vs t %.6f", mean, (double)t);
                double sd = sqrt(phi * (1 - phi) / K);
                if (sd > 0 && fabs(dev) / sd > sr_worst_sd)
                    sr_worst_sd = fabs(dev) / sd;
            }
            total += sum[i] - K * (double)t;
            M++;
        }
    }
    sr_total_z = fabs(total) / (0.5 * sqrt((double)M * K));
    CHECKF(sr_total_z <= 6, "aggregate bias %.3g sd", sr_total_z);
    /* codes are a function of (seed, element index): the same element index
     * gives the same code whatever tile it is quantized in. Tile A holds
     * values at elem0 = 1000; tile B = A shifted by one position at elem0 = 999,
     * with an extra minimum/maximum equal to A's so z and s are equal. */
    {
        float a[16], bt[16], za, sa, zb, sb;
        uint8_t qa[16], qb[16];
        for (int i = 0; i < 16; i++)
            a[i] = (float)(i * 37 % 16) / 3.0f;
        bt[0] = a[15];
        for (int i = 0; i < 15; i++)
            bt[i + 1] = a[i];
        /* same multiset -> same min/max -> same z, s */
        tahq_quantize_tile(a, 16, 3, TAHQ_META_FP16, TAHQ_ROUND_STOCHASTIC, 42, 1000, &za, &sa, qa);
        tahq_quantize_tile(bt, 16, 3, TAHQ_META_FP16, TAHQ_ROUND_STOCHASTIC, 42, 999, &zb, &sb, qb);
        int ok = za == zb && sa == sb;
        for (int i = 0; i < 15; i++)
            ok &= qa[i] == qb[i + 1];
        CHECK(ok);
    }
}

int main(void)
{
    double t0 = t_now();
    part_random();
    part_adversarial();
    part_stochastic();
    char what[320];
    snprintf(what, sizeof what,
             "%" PRIu64 " tiles (%" PRIu64 " ERR_RANGE) bit-exact vs §5.3/§6.1, %" PRIu64
             " elements within §6.2 (worst err/B %.3f, max t-L %.3g); stochastic: worst "
             "%.2f sd/elem, aggregate %.2f sd; %.2f s",
             n_tiles, n_range, n_elems, worst_bound_ratio, worst_t_excess, sr_worst_sd, sr_total_z,
             t_now() - t0);
    if (t_fails)
        fprintf(stderr, "worst err/B at: %s\n", worst_desc);
    return t_finish("test_quant", what);
}
