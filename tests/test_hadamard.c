/* SPDX-License-Identifier: MIT */
/*
 * test_hadamard - SPEC §5.1 outlier gate and pivot, §5.2 transform.
 *
 * References: the dense Sylvester matrix H[i][j] = (-1)^popcount(i & j)
 * applied in binary64, and a transcription of the §5.2 operation order.
 */
#include "spec_ref.h"
#include "tutil.h"

#define GMAX 256
static const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};

#define log2u spec_log2u
static int popcount(uint32_t v)
{
    int c = 0;
    while (v) {
        c += (int)(v & 1);
        v >>= 1;
    }
    return c;
}
/* y = H x in binary64 (exact for the small-integer inputs used) */
static void dense_H(const float *x, double *y, uint32_t G)
{
    for (uint32_t i = 0; i < G; i++) {
        double acc = 0.0;
        for (uint32_t j = 0; j < G; j++)
            acc += (popcount(i & j) & 1) ? -(double)x[j] : (double)x[j];
        y[i] = acc;
    }
}
/* §5.1 / §5.2 transcriptions: spec_ref.h */
#define fwht_spec spec_fwht
#define forward_spec spec_forward
#define inverse_spec spec_inverse
#define gate_spec spec_gate

static uint64_t n_exact, n_tol, n_rt, n_gate;
static double worst_ratio;

static void part_transform(void)
{
    trng r = {8};
    float x[GMAX], y[GMAX], z[GMAX], w[GMAX];
    double yd[GMAX];
    for (size_t gi = 0; gi < 6; gi++) {
        uint32_t G = Gs[gi];
        int k = log2u(G);
        /* small integers: every intermediate is an integer below 2^24 -> exact */
        for (int rep = 0; rep < 200; rep++) {
            for (uint32_t i = 0; i < G; i++)
                x[i] = (float)((int)trng_below(&r, 2001) - 1000);
            if (rep == 0)
                for (uint32_t i = 0; i < G; i++)
                    x[i] = (i == 0) ? 1.0f : 0.0f;
            if (rep == 1)
                for (uint32_t i = 0; i < G; i++)
                    x[i] = (float)i;
            memcpy(y, x, sizeof x);
            tahq_fwht(y, G);
            dense_H(x, yd, G);
            int ok = 1;
            for (uint32_t i = 0; i < G; i++)
                ok &= f2u(y[i]) == f2u((float)yd[i]);
            CHECKF(ok, "fwht G=%u rep %d differs from dense H", G, rep);
            n_exact++;
            /* forward then inverse: exact (power-of-two scalings of integers) */
            uint32_t pivots[4] = {0, 1, G - 1, (uint32_t)trng_below(&r, G)};
            for (int p = 0; p < 4; p++) {
                memcpy(z, x, sizeof x);
                tahq_hadamard_forward(z, G, pivots[p]);
                memcpy(w, x, sizeof x);
                forward_spec(w, G, pivots[p]);
                CHECKF(memcmp(z, w, G * sizeof(float)) == 0, "forward G=%u pivot %u", G, pivots[p]);
                tahq_hadamard_inverse(z, G, pivots[p]);
                CHECKF(memcmp(z, x, G * sizeof(float)) == 0,
                       "forward+inverse G=%u pivot %u not exact", G, pivots[p]);
                n_rt++;
            }
        }
        /* scalings: forward(e0) = 2^-ceil(k/2) everywhere, inverse(e0) = 2^-floor(k/2) */
        for (uint32_t i = 0; i < G; i++)
            z[i] = w[i] = (i == 0) ? 1.0f : 0.0f;
        tahq_hadamard_forward(z, G, 0);
        tahq_hadamard_inverse(w, G, 0);
        int okf = 1, oki = 1;
        for (uint32_t i = 0; i < G; i++) {
            okf &= z[i] == ldexpf(1.0f, -((k + 1) / 2));
            oki &= w[i] == ldexpf(1.0f, -(k / 2));
        }
        CHECKF(okf && oki, "G=%u scaling factors", G);
        /* the pivot swap is a permutation: forward(x, d) = forward(swap(x, 0, d), 0),
         * inverse(y, d) = swap(inverse(y, 0), 0, d) */
        for (int rep = 0; rep < 50; rep++) {
            uint32_t d = (uint32_t)trng_below(&r, G);
            for (uint32_t i = 0; i < G; i++)
                x[i] = (float)trng_gauss(&r);
            memcpy(z, x, sizeof x);
            tahq_hadamard_forward(z, G, d);
            memcpy(w, x, sizeof x);
            float t = w[0];
            w[0] = w[d];
            w[d] = t;
            tahq_hadamard_forward(w, G, 0);
            CHECKF(memcmp(z, w, G * sizeof(float)) == 0, "forward pivot %u vs swap+pivot 0", d);
            memcpy(z, x, sizeof x);
            tahq_hadamard_inverse(z, G, d);
            memcpy(w, x, sizeof x);
            tahq_hadamard_inverse(w, G, 0);
            t = w[0];
            w[0] = w[d];
            w[d] = t;
            CHECKF(memcmp(z, w, G * sizeof(float)) == 0, "inverse pivot %u vs pivot 0 + swap", d);
        }
        /* random inputs: bit-exact vs the §5.2 order, and within the rounding
         * bound of the dense product. Each output is a sum of G terms +-x_j
         * through a tree of depth k; with g(k) = k u / (1 - k u) (u = 2^-24) the
         * standard bound is |fl - exact| <= g(k) sum_j |x_j| (no underflow:
         * inputs are normal and sums of normals are exact when subnormal). */
        for (int rep = 0; rep < 300; rep++) {
            for (uint32_t i = 0; i < G; i++)
                x[i] = (rep & 1) ? trng_float_exp(&r, -30, 30) : (float)trng_gauss(&r);
            memcpy(y, x, sizeof x);
            tahq_fwht(y, G);
            memcpy(z, x, sizeof x);
            fwht_spec(z, G);
            CHECKF(memcmp(y, z, G * sizeof(float)) == 0, "fwht G=%u: not the §5.2 order", G);
            dense_H(x, yd, G);
            double s = 0;
            for (uint32_t i = 0; i < G; i++)
                s += fabs((double)x[i]);
            const double u = 0x1p-24, g = k * u / (1 - k * u);
            double tol = g * s * (1 + 1e-12);
            for (uint32_t i = 0; i < G; i++) {
                double e = fabs((double)y[i] - yd[i]);
                CHECK_QUIET(e <= tol, "fwht G=%u out %u: err %.3g > %.3g", G, i, e, tol);
                if (e / tol > worst_ratio)
                    worst_ratio = e / tol;
            }
            n_tol++;
            uint32_t d = (uint32_t)trng_below(&r, G);
            memcpy(z, x, sizeof x);
            tahq_hadamard_forward(z, G, d);
            memcpy(w, x, sizeof x);
            forward_spec(w, G, d);
            CHECKF(memcmp(z, w, G * sizeof(float)) == 0, "forward G=%u: not the §5.2 order", G);
            tahq_hadamard_inverse(z, G, d);
            inverse_spec(w, G, d);
            CHECKF(memcmp(z, w, G * sizeof(float)) == 0, "inverse G=%u: not the §5.2 order", G);
        }
    }
}

static void gate_expect(const float *x, uint32_t G, float tau, int flag, uint32_t pivot,
                        const char *what)
{
    uint32_t p = 12345;
    int f = tahq_gate(x, G, tau, &p);
    CHECKF(f == flag && p == pivot, "%s (tau %a): flagged %d pivot %u, want %d / %u", what,
           (double)tau, f, p, flag, pivot);
    uint32_t ps;
    int fs = gate_spec(x, G, tau, &ps);
    CHECKF(fs == flag && ps == pivot, "test's own transcription disagrees on %s", what);
    n_gate++;
}

static void part_gate(void)
{
    float x[GMAX];
    const float taus[] = {0.0f, 2.0f, 1e30f, INFINITY};
    for (size_t gi = 0; gi < 6; gi++) {
        uint32_t G = Gs[gi];
        /* all zero (+0, -0, mixed): never flagged; pivot 0 */
        for (int z = 0; z < 3; z++) {
            for (uint32_t i = 0; i < G; i++)
                x[i] = (z == 0 || (z == 2 && (i & 1))) ? 0.0f : -0.0f;
            for (int t = 0; t < 4; t++)
                gate_expect(x, G, taus[t], 0, 0, "all-zero tile");
        }
        /* single spike (value, sign, position): flagged for every finite tau */
        const float spikes[] = {5.0f, -5.0f, 0x1p-149f, -0x1p-149f, 1e18f};
        for (int s = 0; s < 5; s++)
            for (uint32_t pos = 0; pos < G; pos += (G / 8) + 1) {
                for (uint32_t i = 0; i < G; i++)
                    x[i] = (i & 1) ? -0.0f : 0.0f;
                x[pos] = spikes[s];
                for (int t = 0; t < 4; t++)
                    gate_expect(x, G, taus[t], t < 3, pos, "single spike");
            }
        /* two equal largest magnitudes 5 and -5 at 3 and G-2: m2 = m1 */
        for (uint32_t i = 0; i < G; i++)
            x[i] = 0.25f * (float)(i % 7) - 0.75f;
        x[3] = 5.0f;
        x[G - 2] = -5.0f;
        gate_expect(x, G, 2.0f, 0, 3, "5 and -5, tau 2");
        gate_expect(x, G, 1.0f, 1, 3, "5 and -5, tau 1 (m1 = tau m2)");
        gate_expect(x, G, 0x1.000002p0f, 0, 3, "5 and -5, tau 1+2^-23");
        gate_expect(x, G, 0.0f, 1, 3, "5 and -5, tau 0");
        x[3] = -5.0f;
        x[G - 2] = 5.0f;
        gate_expect(x, G, 1.0f, 1, 3, "-5 and 5, tau 1: lower index");
        /* boundary m1 = fl(tau m2) exactly: flagged; m1 one ulp below: not */
        for (uint32_t i = 0; i < G; i++)
            x[i] = 0.0f;
        x[1] = 3.0f;
        x[G - 1] = 6.0f;
        gate_expect(x, G, 2.0f, 1, G - 1, "m1 = 2 m2");
        x[G - 1] = nextafterf(6.0f, 0.0f);
        gate_expect(x, G, 2.0f, 0, G - 1, "m1 just below 2 m2");
        /* the product is rounded before the comparison: m2 = 1 + 2^-23,
         * tau = 1 + 2^-23: exact product 1 + 2^-22 + 2^-46, fl = 1 + 2^-22.
         * m1 = 1 + 2^-22 is >= fl(tau m2) (flagged) though below the exact product. */
        x[1] = 0x1.000002p0f;
        x[G - 1] = 0x1.000004p0f;
        gate_expect(x, G, 0x1.000002p0f, 1, G - 1, "m1 = fl(tau m2) < tau m2");
        /* subnormals: m2 = 3 * 2^-149, tau = 1.5: tau m2 = 4.5 * 2^-149 rounds
         * (tie, even) to 4 * 2^-149; m1 = 4 * 2^-149 is flagged (the exact
         * comparison 4 >= 4.5 would say no) */
        x[1] = 0x3p-149f;
        x[G - 1] = 0x4p-149f;
        gate_expect(x, G, 1.5f, 1, G - 1, "subnormal, rounded product");
        gate_expect(x, G, 2.0f, 0, G - 1, "subnormal, 4 < 6");
        /* tau = 0 flags every tile that is not all zero; +inf none */
        trng r = {G};
        for (int rep = 0; rep < 200; rep++) {
            for (uint32_t i = 0; i < G; i++)
                x[i] = (trng_next(&r) % 3) ? 0.0f : trng_float_exp(&r, -149, 10);
            x[trng_below(&r, G)] = 0x1p-140f;
            uint32_t ps;
            (void)gate_spec(x, G, 0.0f, &ps);
            gate_expect(x, G, 0.0f, 1, ps, "tau 0, nonzero tile");
            gate_expect(x, G, INFINITY, 0, ps, "tau inf");
        }
        /* random tiles and taus (ties in magnitude likely) vs the transcription */
        for (int rep = 0; rep < 3000; rep++) {
            for (uint32_t i = 0; i < G; i++) {
                int v = (int)trng_below(&r, 9) - 4;
                x[i] = (rep & 1) ? (float)v * 0.5f : trng_float_exp(&r, -8, 8);
            }
            if (rep % 5 == 0)
                x[trng_below(&r, G)] *= 20.0f;
            float tau =
                (rep % 3 == 0) ? (float)trng_below(&r, 5) * 0.5f : (float)(trng_unit(&r) * 4.0);
            uint32_t ps, p = 999;
            int fs = gate_spec(x, G, tau, &ps);
            int f = tahq_gate(x, G, tau, &p);
            CHECK_QUIET(f == fs && p == ps, "random gate G=%u tau %a: %d/%u want %d/%u", G,
                        (double)tau, f, p, fs, ps);
            n_gate++;
        }
    }
}

/* tahq_fwht (the dispatched, vectorized path) against tahq_fwht_scalar (plain
 * loops in the SPEC §5.2 stage order), bit for bit, on general binary32
 * tiles: random magnitudes over 2^-140..2^60 with random signs (rounding in
 * every stage, subnormal sums), signed zeros. */
static uint64_t n_scalar;
static void part_fwht_scalar(void)
{
    trng r = {11};
    float x[GMAX], y[GMAX];
    for (size_t gi = 0; gi < 6; gi++) {
        uint32_t G = Gs[gi];
        for (int rep = 0; rep < 300; rep++) {
            for (uint32_t i = 0; i < G; i++) {
                double m = ldexp(1.0 + trng_unit(&r), (int)trng_below(&r, 201) - 140);
                x[i] = (float)(trng_below(&r, 2) ? -m : m);
                if (trng_below(&r, 16) == 0)
                    x[i] = trng_below(&r, 2) ? -0.0f : 0.0f;
            }
            memcpy(y, x, sizeof x);
            tahq_fwht(x, G);
            tahq_fwht_scalar(y, G);
            int ok = 1;
            for (uint32_t i = 0; i < G; i++)
                ok &= f2u(x[i]) == f2u(y[i]);
            CHECKF(ok, "G=%u rep %d: tahq_fwht and tahq_fwht_scalar differ", G, rep);
            n_scalar++;
        }
    }
}

int main(void)
{
    double t0 = t_now();
    part_transform();
    part_fwht_scalar();
    part_gate();
    char what[300];
    snprintf(what, sizeof what,
             "G=8..256: %" PRIu64 " integer tiles bit-exact vs dense H, %" PRIu64
             " fwd/inv exact round trips, %" PRIu64 " random tiles (err/bound <= %.3f, bit-exact "
             "SPEC order), %" PRIu64 " gate cases, %" PRIu64 " tiles fast == scalar FWHT; %.2f s",
             n_exact, n_rt, n_tol, worst_ratio, n_gate, n_scalar, t_now() - t0);
    return t_finish("test_hadamard", what);
}
