/* SPDX-License-Identifier: MIT */
/*
 * test_log2_entropy - SPEC §2.3 log2, §2.5 tree sum, §4.1 entropy, §4.2 low().
 *
 * Usage: test_log2_entropy [part]   part = main (default) | log2-lo | log2-hi |
 *                                          tsum-large
 *   main:    log2 on a dense sample of (0,1] (every 16th pattern) + all
 *            subnormals + every power of two + a sample of x > 1; tree sum;
 *            entropy; low count.
 *   log2-lo / log2-hi: log2 on EVERY binary32 in (0, 2^-64) / [2^-64, 1].
 *
 * log2 accuracy. SPEC §2.3 says (informatively) that the absolute error is
 * below 1.2e-7 on (0,1]. That cannot hold for small x: the result is rounded
 * to binary32 once more in step 6 (fl(e + f*y)), and for |log2 x| >= 4 half
 * an ulp of the result already exceeds 1.2e-7 (e.g. x = 0x1.58772p-130: error
 * 7.7e-6). What the construction guarantees is
 *     |fl(e + P) - log2 x| <= |P - log2 m| + 2^-24 |e + P|
 * (P = fl(f*y) the polynomial part, RNE relative error <= 2^-24), so the test
 * checks
 *     |tahq_log2(x) - log2(x)| <= 1.2e-7 (1 + 2^-24) + 2^-24 |log2 x|   on (0,1],
 * i.e. 1.2e-7 for the polynomial part, and the plain 1.2e-7 on [0.5, 1]
 * (e = 0 or e = -1 with |e + P| < 1, where the last rounding is below 6e-8).
 * The operation order (normative) is checked bit-exactly against the
 * transcription of §2.3 in spec_ref.h (as are the tree sums and §4.1).
 */
#include "spec_ref.h"
#include "tutil.h"

/* The transcriptions of §2.3, §2.5 and §4.1 are in spec_ref.h. */
static float log2_spec(float x)
{
    return spec_log2(x);
}
static float tsum_spec(float *v, uint32_t n)
{
    return spec_tsum(v, n);
}
static float entropy_spec(const float *x, uint32_t tiles, uint32_t G)
{
    return spec_entropy(x, tiles, G);
}
#define pow2_ceil spec_pow2_ceil

/* Shannon entropy in binary64 */
static double entropy_double(const float *x, size_t n)
{
    double S = 0;
    for (size_t k = 0; k < n; k++)
        S += fabs((double)x[k]);
    if (S == 0)
        return 0;
    double H = 0;
    for (size_t k = 0; k < n; k++) {
        double p = fabs((double)x[k]) / S;
        if (p > 0)
            H -= p * log2(p);
    }
    return H;
}

/* ---- log2 parts ------------------------------------------------------------ */
static double log2_worst_excess, log2_worst_half;
static uint64_t log2_points;

/* l: log2(x) in binary64 */
static void log2_point_ref(float x, double l)
{
    float got = tahq_log2(x);
    double err = fabs((double)got - l);
    log2_points++;
    CHECK_QUIET(err <= 1.2e-7 * (1 + 0x1p-24) + 0x1p-24 * fabs(l),
                "log2(%a) = %a, log2 %.17g, err %.3g", (double)x, (double)got, l, err);
    double ex = err - 0x1p-24 * fabs(l);
    if (ex > log2_worst_excess)
        log2_worst_excess = ex;
    if (x >= 0.5f) {
        CHECK_QUIET(err < 1.2e-7, "log2(%a): err %.3g", (double)x, err);
        if (err > log2_worst_half)
            log2_worst_half = err;
    }
    if (x < 1.0f)
        CHECK_QUIET(got < 0.0f, "log2(%a) = %a not < 0", (double)x, (double)got);
    float ref = log2_spec(x);
    CHECK_QUIET(f2u(got) == f2u(ref), "log2(%a) = %a, SPEC order gives %a", (double)x, (double)got,
                (double)ref);
}

static void log2_point(float x)
{
    log2_point_ref(x, log2((double)x));
}

/* Every pattern in [w0, w1]. The binary64 reference of a normal x = 2^E M
 * (1 <= M < 2) is E + log2(M) with log2(M) from libm once per mantissa (a
 * table of 2^23 values): the sum is rounded once in binary64 (error below
 * 2^-53 * 150 = 2e-14, far inside the tolerance), and the libm calls drop
 * from 2^30 to 2^23. Subnormals call libm directly. */
static void log2_range(uint32_t w0, uint32_t w1)
{
    double *tab = malloc(sizeof(double) << 23);
    if (!tab)
        abort();
    for (uint32_t m = 0; m < (1u << 23); m++)
        tab[m] = log2(1.0 + (double)m * 0x1p-23);
    for (uint64_t w = w0; w <= w1; w++) {
        float x = u2f((uint32_t)w);
        if (w < 0x800000u)
            log2_point(x);
        else
            log2_point_ref(x, (double)((int)(w >> 23) - 127) + tab[w & 0x7FFFFFu]);
    }
    free(tab);
}

static void part_log2_sample(void)
{
    /* every 16th pattern of (0,1], low 4 bits varied */
    for (uint64_t j = 0; j < (UINT64_C(0x3F800000) >> 4); j++) {
        uint32_t w = (uint32_t)((j << 4) | ((j * 0x9E3779B1u) >> 28));
        if (w)
            log2_point(u2f(w));
    }
    for (uint32_t w = 1; w < 0x800000u; w++)
        log2_point(u2f(w)); /* every subnormal */
    for (int e = -149; e <= 0; e++)
        log2_point(ldexpf(1.0f, e));
    /* around the m > sqrt(2) switch (mantissa 0x3504F3) in every binade */
    for (uint32_t f = 1; f <= 126; f++)
        for (int d = -8; d <= 8; d++)
            log2_point(u2f((f << 23) + (uint32_t)(0x3504F3 + d)));
    /* exact values */
    CHECK(f2u(tahq_log2(1.0f)) == 0); /* +0 */
    for (int e = -149; e <= 127; e++)
        CHECKF(tahq_log2(ldexpf(1.0f, e)) == (float)e, "log2(2^%d) = %a", e,
               (double)tahq_log2(ldexpf(1.0f, e)));
    /* x > 1 (defined for finite positive x): bit-exact vs the transcription */
    trng r = {5};
    for (int i = 0; i < 2000000; i++) {
        float x = u2f(0x3F800001u + (uint32_t)trng_below(&r, 0x7F800000u - 0x3F800001u));
        CHECK_QUIET(f2u(tahq_log2(x)) == f2u(log2_spec(x)), "log2(%a)", (double)x);
        CHECK_QUIET(fabs((double)tahq_log2(x) - log2((double)x)) <=
                        1.2e-7 * (1 + 0x1p-24) + 0x1p-24 * fabs(log2((double)x)) + 1e-300,
                    "log2(%a) = %a", (double)x, (double)tahq_log2(x));
    }
}

/* ---- tree sum --------------------------------------------------------------- */
static uint64_t tsum_cases, tsum_differs_seq, tsum_differs_adj;
/* nmin..nmax: powers of two. The API takes any power of two n (uint32_t);
 * n > 256 (longer than any tile) is a separate CTest part ("tsum-large"). */
static void part_tree_sum(uint32_t nmin, uint32_t nmax)
{
    trng r = {31 + nmin};
    enum { NMAX = 1 << 16 };
    float *v = malloc(NMAX * sizeof(float)), *c = malloc(NMAX * sizeof(float)),
          *c2 = malloc(NMAX * sizeof(float));
    if (!v || !c || !c2)
        abort();
    for (uint32_t n = nmin; n <= nmax && n <= NMAX; n *= 2) {
        int reps = n <= 256 ? 400 : n <= 4096 ? 40 : 4;
        for (int rep = 0; rep < reps; rep++) {
            for (uint32_t i = 0; i < n; i++) {
                switch (rep % 4) {
                case 0:
                    v[i] = trng_float_exp(&r, -20, 20);
                    break;
                case 1:
                    v[i] = fabsf(trng_float_exp(&r, -30, 30));
                    break;
                case 2:
                    v[i] = (float)trng_gauss(&r);
                    break;
                default:
                    v[i] = trng_float_exp(&r, -149, -120);
                    break; /* subnormal region */
                }
            }
            memcpy(c, v, n * sizeof(float));
            float got = tahq_tree_sum(v, n);
            CHECKF(memcmp(c, v, n * sizeof(float)) == 0, "tree_sum modified its input (n=%u)", n);
            memcpy(c2, c, n * sizeof(float));
            float want = tsum_spec(c2, n);
            CHECK_QUIET(f2u(got) == f2u(want), "tree_sum n=%u: %a want %a", n, (double)got,
                        (double)want);
            tsum_cases++;
            /* does the data tell the SPEC order from other orders? */
            float seq = 0.0f;
            for (uint32_t i = 0; i < n; i++)
                seq = seq + c[i];
            memcpy(c2, c, n * sizeof(float));
            for (uint32_t w = 1; w < n; w *= 2) /* adjacent pairs tree */
                for (uint32_t i = 0; i + w < n; i += 2 * w)
                    c2[i] = c2[i] + c2[i + w];
            tsum_differs_seq += f2u(seq) != f2u(want);
            tsum_differs_adj += f2u(c2[0]) != f2u(want);
        }
    }
    if (nmin > 1)
        goto done;
    /* hand case: n = 4, {2^24, 1, -2^24, 1}: h=2: {2^24 + -2^24, 1 + 1} = {0, 2};
     * h=1: 2. Left-to-right: ((2^24 + 1) + -2^24) + 1 = (2^24 + -2^24) + 1 = 1. */
    float hv[4] = {0x1p24f, 1.0f, -0x1p24f, 1.0f};
    CHECK(tahq_tree_sum(hv, 4) == 2.0f);
    float one[1] = {-0.0f};
    CHECK(f2u(tahq_tree_sum(one, 1)) == 0x80000000u); /* n = 1: v[0] itself */
done:
    CHECK(tsum_differs_seq > 0 && tsum_differs_adj > 0);
    free(v);
    free(c);
    free(c2);
}

/* ---- entropy ------------------------------------------------------------------ */
static uint64_t ent_cases, ent_rho_inf;
static float spec_unit_sum_abs(const float *x, uint32_t tiles, uint32_t G)
{
    size_t n = (size_t)tiles * G;
    float *a = malloc(n * sizeof(float));
    if (!a)
        abort();
    for (size_t k = 0; k < n; k++)
        a[k] = fabsf(x[k]);
    float S = spec_unit_sum(a, tiles, G);
    free(a);
    return S;
}
static double ent_worst_ratio;

/* Tolerance of |H - H_double| (all a_k >= 0; n = tiles*G; D = tree depth
 * log2(G) + ceil(log2(tiles)); u = 2^-24; g(j) = j u / (1 - j u)):
 *  - the sum of magnitudes is Σa(1+θ1), |θ1| <= g(D) (same-sign tree sum);
 *  - ρ = fl(1 / Σa'), p'_k = min(fl(a_k ρ), 1) = p_k(1+θ2) + η with
 *    |θ2| <= g(D+2), |η| <= 2^-150 (the min only lowers a p' above 1 = p);
 *  - replacing p by p(1+θ) changes -p log2 p by <= p|θ|(|log2 p| + 1/ln2 + 2|θ|),
 *    summed: <= |θ2|(H + 1.45) (+ tiny);
 *  - log2 error (part 1): <= 1.2e-7(1+u) + u|log2 p'| per element, times p',
 *    summed: <= 1.2e-7(1+u)(1+|θ2|) + u(H + ...);
 *  - the product p'·log2(p') rounds: <= u p'|log2 p'|, summed <= u(H + ...);
 *  - the tree sum of the h_k (all <= 0): relative g(D);
 *  - subnormal p' and p' = 0 for p > 0 contribute <= 150·2^-150 per element.
 * Total (rounded up generously): (2 g(D+2) + 4u)(H + 2) + 1.21e-7 + n 2^-140. */
static double entropy_tol(double H, uint32_t tiles, uint32_t G)
{
    int D = 0;
    while ((1u << D) < G)
        D++;
    uint32_t P = pow2_ceil(tiles);
    while (P > 1) {
        D++;
        P /= 2;
    }
    const double u = 0x1p-24;
    double g = (D + 2) * u / (1 - (D + 2) * u);
    return (2 * g + 4 * u) * (H + 2) + 1.21e-7 + (double)tiles * G * 0x1p-140;
}

static void entropy_case(const float *x, uint32_t tiles, uint32_t G, const char *what)
{
    size_t n = (size_t)tiles * G;
    float *copy = malloc(n * sizeof(float));
    if (!copy)
        abort();
    memcpy(copy, x, n * sizeof(float));
    float H = tahq_entropy(x, tiles, G);
    ent_cases++;
    CHECKF(memcmp(copy, x, n * sizeof(float)) == 0, "entropy modified its input");
    free(copy);
    float Hs = entropy_spec(x, tiles, G);
    CHECKF(f2u(H) == f2u(Hs), "%s T=%u G=%u: H %a, SPEC order %a", what, tiles, G, (double)H,
           (double)Hs);
    CHECKF((f2u(H) >> 31) == 0 && !isnan(H), "%s: H = %a not >= +0", what, (double)H);
    double Hd = entropy_double(x, n), tol = entropy_tol(Hd, tiles, G);
    double err = fabs((double)H - Hd);
    /* §4.1: for Σa < 2^-128 the reciprocal overflows and p_k = a_k / Σa is
     * used instead; count those units and check them like the others. */
    if (1.0f / spec_unit_sum_abs(x, tiles, G) == INFINITY)
        ent_rho_inf++;
    CHECKF(err <= tol, "%s T=%u G=%u: H %.9g, double %.12g, err %.3g > tol %.3g", what, tiles, G,
           (double)H, Hd, err, tol);
    if (err / tol > ent_worst_ratio)
        ent_worst_ratio = err / tol;
}

static void part_entropy(void)
{
    static const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
    static const uint32_t Ts[] = {1, 2, 3, 4, 5, 7, 8, 25, 32, 33};
    trng r = {4242};
    float *x = malloc(33 * 256 * sizeof(float));
    if (!x)
        abort();
    for (size_t gi = 0; gi < 6; gi++)
        for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
            uint32_t G = Gs[gi], T = Ts[ti];
            size_t n = (size_t)T * G;
            for (int kind = 0; kind < 8; kind++) {
                for (size_t k = 0; k < n; k++) {
                    double g = trng_gauss(&r);
                    switch (kind) {
                    case 0:
                        x[k] = (float)g;
                        break;
                    case 1:
                        x[k] = (float)(g / (fabs(trng_gauss(&r)) + 1e-3));
                        break; /* heavy tail */
                    case 2:
                        x[k] = (k % 37 == 5) ? (float)(100 * g) : (float)g;
                        break; /* outliers */
                    case 3:
                        x[k] = (trng_next(&r) & 3) ? 0.0f : (float)g;
                        break; /* sparse */
                    case 4:
                        x[k] = trng_float_exp(&r, -149, -126);
                        break; /* subnormal */
                    case 5:
                        x[k] = trng_float_exp(&r, -60, 60);
                        break; /* wide range */
                    case 6:
                        x[k] = (trng_next(&r) & 1) ? -0.0f : 0x1p-149f;
                        break;
                    default:
                        x[k] = trng_float_exp(&r, 50, 63);
                        break; /* near 2^64 */
                    }
                }
                entropy_case(x, T, G, "random");
            }
            /* all zero (+0, -0, mixed) -> +0 */
            for (int z = 0; z < 3; z++) {
                for (size_t k = 0; k < n; k++)
                    x[k] = (z == 0 || (z == 2 && (k & 1))) ? 0.0f : -0.0f;
                float H = tahq_entropy(x, T, G);
                CHECKF(f2u(H) == 0, "all-zero unit: H bits %08x", f2u(H));
                entropy_case(x, T, G, "zero");
            }
            /* one nonzero -> exactly +0 (p = 1, log2(1) = +0) */
            for (int rep = 0; rep < 3; rep++) {
                for (size_t k = 0; k < n; k++)
                    x[k] = rep == 2 ? -0.0f : 0.0f;
                size_t pos = trng_below(&r, n);
                x[pos] = rep == 0 ? -3.25f : rep == 1 ? 0x1p-149f : 1e18f;
                float H = tahq_entropy(x, T, G);
                CHECKF(f2u(H) == 0, "one nonzero at %zu: H %a", pos, (double)H);
                entropy_case(x, T, G, "one");
            }
            /* 2^j equal magnitudes 0.75 (random signs), the rest zero: every
             * partial sum is k*0.75 (<= 18 significant bits, exact in any
             * order), so Σa = 0.75*2^j, p = 2^-j, log2(p) = -j (m = 1, f = 0),
             * h = -j 2^-j, and their sums are exact too: H = j exactly. */
            for (uint32_t j = 0; (1u << j) <= n; j++) {
                for (size_t k = 0; k < n; k++)
                    x[k] = 0.0f;
                size_t cnt = 0, stride = n >> j;
                for (size_t k = 0; k < n && cnt < (1u << j); k += stride, cnt++)
                    x[k] = (trng_next(&r) & 1) ? 0.75f : -0.75f;
                float H = tahq_entropy(x, T, G);
                CHECKF(H == (float)j, "uniform over 2^%u of n=%zu: H %a", j, n, (double)H);
            }
        }
    /* The tile-level tree (§2.5 psum, adjacent pairs), hand-derived: T = 4
     * tiles of 8 with one value each: 1, 2^-24, 0, 2^-24 (tile sums the same).
     * psum = (1 + 2^-24) + (0 + 2^-24) = 1 + 2^-24 -> 1 (tie, even), so
     * Σa = 1, rho = 1, p = a; h = 0 for p = 1 and -24 * 2^-24 for p = 2^-24
     * (log2 exact); psum of the h: (0 + h) + (0 + h) = -48 * 2^-24 exactly;
     * H = 3 * 2^-20 = 0x1.8p-19. (A halving tree over the tile sums would give
     * Σa = (1 + 0) + (2^-24 + 2^-24) = 1 + 2^-23 and H = 0x1.971544p-19.) */
    memset(x, 0, 32 * sizeof(float));
    x[0] = 1.0f;
    x[8] = 0x1p-24f;
    x[24] = 0x1p-24f;
    {
        float H = tahq_entropy(x, 4, 8);
        CHECKF(H == 0x1.8p-19f, "tile-level pairwise tree: H = %a, want 0x1.8p-19", (double)H);
        entropy_case(x, 4, 8, "pairwise tree");
    }
    /* T = 25 (padded to 32) with many tiny tile sums next to a large one */
    for (size_t k = 0; k < 25 * 64; k++)
        x[k] = (k < 64) ? 1.0f / 64 : 0x1p-30f;
    entropy_case(x, 25, 64, "padding");
    free(x);
}

/* ---- low count ------------------------------------------------------------------ */
/* n = 1000 q + m: n(1000-r)/1000 = q(1000-r) + m(1000-r)/1000 (spec_low) */
static uint64_t low_ref(uint64_t n, uint32_t r)
{
    return spec_low(n, r);
}
static uint64_t low_cases;
static void part_low(void)
{
    CHECK(tahq_low_count(1024, 800) == 204);
    CHECK(tahq_low_count(5, 800) == 1 && tahq_low_count(4, 800) == 0);
    for (uint64_t n = 0; n <= 2100; n++)
        for (uint32_t r = 0; r <= 1000; r++) {
            CHECK_QUIET(tahq_low_count(n, r) == low_ref(n, r), "low(%" PRIu64 ", %u) = %" PRIu64, n,
                        r, tahq_low_count(n, r));
            low_cases++;
        }
    const uint64_t big[] = {UINT64_C(1) << 32,      (UINT64_C(1) << 40) - 1,
                            UINT64_C(1) << 40,      (UINT64_C(1) << 40) + 1,
                            UINT64_C(999999999999), UINT64_C(1000000000000)};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (int d = -1000; d <= 1000; d++)
            for (uint32_t r = 0; r <= 1000; r += 37) {
                uint64_t n = big[i] + (uint64_t)(int64_t)d;
                CHECK_QUIET(tahq_low_count(n, r) == low_ref(n, r), "low(%" PRIu64 ", %u)", n, r);
                low_cases++;
            }
    CHECK(tahq_low_count(UINT64_C(1) << 40, 0) == (UINT64_C(1) << 40));
    CHECK(tahq_low_count(UINT64_C(1) << 40, 1000) == 0);
    CHECK(tahq_low_count(UINT64_C(1) << 40, 999) == 1099511627); /* floor(2^40 / 1000) */
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "main";
    char what[400];
    double t0 = t_now();
    if (!strcmp(part, "log2-lo") || !strcmp(part, "log2-hi")) {
        /* 2^-64 = pattern 0x1F800000 */
        if (part[5] == 'l')
            log2_range(1, 0x1F7FFFFF);
        else
            log2_range(0x1F800000, 0x3F800000);
        snprintf(what, sizeof what,
                 "log2 on all %" PRIu64 " floats of %s: bound 1.2e-7+2^-24|log2| (worst poly "
                 "part %.3g), <1.2e-7 on [0.5,1] (worst %.3g), bit-exact vs SPEC order; %.1f s",
                 log2_points, part[5] == 'l' ? "(0,2^-64)" : "[2^-64,1]", log2_worst_excess,
                 log2_worst_half, t_now() - t0);
        return t_finish("test_log2_entropy", what);
    }
    if (!strcmp(part, "tsum-large")) {
        part_tree_sum(512, 1u << 16);
        snprintf(what, sizeof what,
                 "tree_sum n = 512..65536: %" PRIu64
                 " cases bit-exact vs SPEC §2.5, input unchanged",
                 tsum_cases);
        return t_finish("test_log2_entropy", what);
    }
    if (strcmp(part, "main")) {
        fprintf(stderr, "unknown part '%s'\n", part);
        return 2;
    }
    part_log2_sample();
    part_tree_sum(1, 256);
    part_entropy();
    part_low();
    snprintf(what, sizeof what,
             "log2 %" PRIu64
             " pts (worst poly part %.3g, [0.5,1] %.3g) + bit-exact; tree_sum %" PRIu64
             " cases bit-exact (data differs from sequential in %" PRIu64 "); entropy %" PRIu64
             " units bit-exact (%" PRIu64 " with 1/Σa = inf), err/tol <= %.3g; low() %" PRIu64
             " cases; %.1f s",
             log2_points, log2_worst_excess, log2_worst_half, tsum_cases, tsum_differs_seq,
             ent_cases, ent_rho_inf, ent_worst_ratio, low_cases, t_now() - t0);
    return t_finish("test_log2_entropy", what);
}
