/* SPDX-License-Identifier: MIT */
/*
 * test_fixpoint - SPEC §7.2 per-channel symmetric fixpoint quantizer
 * (tahq_fixpoint_encode / tahq_fixpoint_decode).
 *
 * Checked against a transcription of §7.2: steps and codes bit-exact, codes
 * in [1, 2^b - 1], steps on the metadata grid, decode = fl(float(q) x h)
 * bit-exact, the §7.2 bound |g - ĝ| <= h (1/2 + 2(L+1)u) + 2^-149 on every
 * element, |fl(g/h)| <= L (the clamp never changes a code), symmetry
 * (encoding -g gives the mirrored codes), and the error paths.
 */
#include "spec_ref.h"
#include "tutil.h"

/* §7.2 encode transcription */
static tahq_status fix_spec(const float *g, uint64_t rows, uint32_t C, uint32_t b, tahq_meta meta,
                            uint8_t *codes, float *steps)
{
    const int32_t L = (1 << (b - 1)) - 1, off = 1 << (b - 1);
    for (uint32_t c = 0; c < C; c++) {
        float m = 0.0f;
        for (uint64_t r = 0; r < rows; r++)
            m = fmaxf(m, fabsf(g[r * C + c]));
        float h;
        if (m == 0.0f) {
            h = 0.0f;
        } else {
            h = spec_scale(meta, m, (uint32_t)L); /* the search of §5.3 step 3 */
            if (h == INFINITY)
                return TAHQ_ERR_RANGE;
        }
        steps[c] = h;
    }
    for (uint64_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < C; c++) {
            int32_t q = 0;
            if (steps[c] != 0.0f) {
                float t = g[r * C + c] / steps[c];
                double rt = nearbyint((double)t); /* RNE (default rounding mode), exact */
                q = (int32_t)rt;
                if (q > L)
                    q = L;
                if (q < -L)
                    q = -L;
            }
            codes[r * C + c] = (uint8_t)(q + off);
        }
    return TAHQ_OK;
}

static uint64_t n_cases, n_elems;
static double worst_ratio;

static void fix_case(const float *g, uint64_t rows, uint32_t C, uint32_t b, tahq_meta meta,
                     const char *what)
{
    const uint64_t n = rows * C;
    uint8_t *codes = malloc(n), *cs = malloc(n), *cneg = malloc(n);
    float *steps = malloc(C * sizeof(float)), *ss = malloc(C * sizeof(float)),
          *sneg = malloc(C * sizeof(float)), *out = malloc(n * sizeof(float)),
          *gn = malloc(n * sizeof(float));
    if (!codes || !cs || !cneg || !steps || !ss || !sneg || !out || !gn)
        abort();
    tahq_status st = tahq_fixpoint_encode(g, rows, C, b, meta, codes, steps);
    tahq_status want = fix_spec(g, rows, C, b, meta, cs, ss);
    n_cases++;
    CHECKF(st == want, "%s (b=%u meta=%d): status %d, §7.2 %d", what, b, meta, st, want);
    if (st != TAHQ_OK || want != TAHQ_OK)
        goto done;
    const int32_t L = (1 << (b - 1)) - 1, off = 1 << (b - 1);
    int steps_ok = 1, codes_ok = 1, range_ok = 1, grid_ok = 1, t_ok = 1;
    for (uint32_t c = 0; c < C; c++) {
        steps_ok &= f2u(steps[c]) == f2u(ss[c]);
        grid_ok &= (f2u(steps[c]) >> 31) == 0 && isfinite(steps[c]) &&
                   f2u(tahq_meta_round_up(meta, steps[c])) == f2u(steps[c]);
    }
    for (uint64_t i = 0; i < n; i++) {
        codes_ok &= codes[i] == cs[i];
        range_ok &= codes[i] >= 1 && codes[i] <= 2 * off - 1;
        float h = steps[i % C];
        if (h > 0)
            t_ok &= fabs((double)(g[i] / h)) <= L; /* §7.2: |fl(g/h)| <= L */
    }
    CHECKF(steps_ok, "%s (b=%u meta=%d): steps differ from §7.2", what, b, meta);
    CHECKF(codes_ok, "%s (b=%u meta=%d): codes differ from §7.2", what, b, meta);
    CHECKF(range_ok && grid_ok, "%s: code outside [1, 2^b-1] or step off the grid", what);
    CHECKF(t_ok, "%s (b=%u meta=%d): |fl(g/h)| > L: the clamp changes a code", what, b, meta);
    /* decode: bit-exact and within the bound */
    if (CHECKF(tahq_fixpoint_decode(codes, steps, rows, C, b, out) == TAHQ_OK, "%s: decode",
               what)) {
        int dec_ok = 1, bound_ok = 1;
        const double u = 0x1p-24;
        for (uint64_t i = 0; i < n; i++) {
            float h = steps[i % C];
            float want_v = (float)((int32_t)codes[i] - off) * h;
            dec_ok &= f2u(out[i]) == f2u(want_v);
            double B = ((double)h * (0.5 + 2 * (L + 1) * u) + 0x1p-149) * (1 + 0x1p-40);
            double e = fabs((double)g[i] - (double)out[i]);
            bound_ok &= e <= B;
            if (e / B > worst_ratio)
                worst_ratio = e / B;
        }
        n_elems += n;
        CHECKF(dec_ok, "%s: decode is not fl(float(q) x h)", what);
        CHECKF(bound_ok, "%s (b=%u meta=%d): §7.2 bound violated", what, b, meta);
    }
    /* symmetry: -g gives the same steps and mirrored codes */
    for (uint64_t i = 0; i < n; i++)
        gn[i] = -g[i];
    if (CHECK(tahq_fixpoint_encode(gn, rows, C, b, meta, cneg, sneg) == TAHQ_OK)) {
        int sym = memcmp(steps, sneg, C * sizeof(float)) == 0;
        for (uint64_t i = 0; i < n; i++)
            sym &= (int)cneg[i] == 2 * off - (int)codes[i];
        CHECKF(sym, "%s: encoding -g is not the mirror of encoding g", what);
    }
done:
    free(codes);
    free(cs);
    free(cneg);
    free(steps);
    free(ss);
    free(sneg);
    free(out);
    free(gn);
}

int main(void)
{
    trng r = {71};
    static const uint32_t shapes[][2] = {{1, 1}, {7, 3}, {64, 64}, {300, 17}};
    for (uint32_t b = 2; b <= 8; b++)
        for (int meta = 0; meta < 3; meta++)
            for (size_t si = 0; si < 4; si++)
                for (int kind = 0; kind < 6; kind++) {
                    uint64_t rows = shapes[si][0];
                    uint32_t C = shapes[si][1];
                    float *g = malloc(rows * C * sizeof(float));
                    for (uint64_t i = 0; i < rows * C; i++) {
                        double v = trng_gauss(&r);
                        switch (kind) {
                        case 0:
                            g[i] = (float)(v * 1e-3);
                            break;
                        case 1:
                            g[i] = (float)(v / (fabs(trng_gauss(&r)) + 0.01));
                            break;
                        case 2:
                            g[i] = (i % C == 0) ? 0.0f : (float)v;
                            break; /* a zero channel */
                        case 3:
                            g[i] = trng_float_exp(&r, -149, -127);
                            break; /* subnormal */
                        case 4:
                            g[i] = (float)((int)trng_below(&r, 9) - 4) * 0.25f;
                            break; /* ties */
                        default:
                            g[i] = trng_float_exp(&r, -20, 20);
                            break;
                        }
                    }
                    fix_case(g, rows, C, b, (tahq_meta)meta, "random");
                    free(g);
                }
    /* symmetric extremes: +m and -m in one channel */
    float e2[4] = {3.0f, -3.0f, 1.5f, -0.0f};
    for (uint32_t b = 2; b <= 8; b++)
        fix_case(e2, 4, 1, b, TAHQ_META_FP16, "+-m");
    /* fp32 steps of subnormal size: m = 190 2^-149, b = 8 (L = 127):
     * fl(m / L) = 2^-149 (1.496 quanta, absolute rounding of a subnormal
     * quotient); h = 2^-149 would give fl(m/h) = 190 > L, so the search
     * steps to h = 2^-148 (m/h = 95 <= 127). Hand-derived. */
    float sub[2] = {190 * 0x1p-149f, 0.0f};
    fix_case(sub, 2, 1, 8, TAHQ_META_FP32, "fp32 subnormal step");
    {
        uint8_t q2[2];
        float h2[1];
        CHECK(tahq_fixpoint_encode(sub, 2, 1, 8, TAHQ_META_FP32, q2, h2) == TAHQ_OK &&
              h2[0] == 0x1p-148f && q2[0] == 128 + 95 && q2[1] == 128);
    }
    /* fp16 range: b = 2 (L = 1): m = 65504 fits, 65505 -> h = inf -> RANGE */
    float big[2] = {65504.0f, -1.0f};
    fix_case(big, 2, 1, 2, TAHQ_META_FP16, "m = 65504");
    big[0] = -65505.0f;
    fix_case(big, 2, 1, 2, TAHQ_META_FP16, "m = 65505");
    {
        uint8_t q[2];
        float h[1];
        CHECK(tahq_fixpoint_encode(big, 2, 1, 2, TAHQ_META_FP16, q, h) == TAHQ_ERR_RANGE);
        CHECK(tahq_fixpoint_encode(big, 2, 1, 2, TAHQ_META_BF16, q, h) == TAHQ_OK);
    }

    /* error paths */
    float g[6] = {1, 2, 3, 4, 5, 6};
    uint8_t q[6];
    float h[3], o[6];
    CHECK(tahq_fixpoint_encode(NULL, 2, 3, 4, TAHQ_META_FP16, q, h) == TAHQ_ERR_NULL);
    CHECK(tahq_fixpoint_encode(g, 2, 3, 4, TAHQ_META_FP16, NULL, h) == TAHQ_ERR_NULL);
    CHECK(tahq_fixpoint_encode(g, 2, 3, 4, TAHQ_META_FP16, q, NULL) == TAHQ_ERR_NULL);
    const uint32_t badbits[] = {0, 1, 9, 32};
    for (int i = 0; i < 4; i++) {
        CHECKF(tahq_fixpoint_encode(g, 2, 3, badbits[i], TAHQ_META_FP16, q, h) == TAHQ_ERR_CONFIG,
               "encode bits %u", badbits[i]);
        CHECKF(tahq_fixpoint_decode(q, h, 2, 3, badbits[i], o) == TAHQ_ERR_CONFIG, "decode bits %u",
               badbits[i]);
    }
    CHECK(tahq_fixpoint_encode(g, 2, 3, 4, (tahq_meta)3, q, h) == TAHQ_ERR_CONFIG);
    CHECK(tahq_fixpoint_encode(g, 0, 3, 4, TAHQ_META_FP16, q, h) == TAHQ_ERR_SHAPE);
    CHECK(tahq_fixpoint_encode(g, 2, 0, 4, TAHQ_META_FP16, q, h) == TAHQ_ERR_SHAPE);
    CHECK(tahq_fixpoint_encode(g, UINT64_C(1) << 40, 2, 4, TAHQ_META_FP16, q, h) == TAHQ_ERR_SHAPE);
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        float y[6];
        memcpy(y, g, sizeof y);
        y[4] = bad[i];
        CHECK(tahq_fixpoint_encode(y, 2, 3, 4, TAHQ_META_FP16, q, h) == TAHQ_ERR_NONFINITE);
    }
    {
        float y[6];
        memcpy(y, g, sizeof y);
        y[2] = 0x1p64f; /* §3.2 input limit */
        CHECK(tahq_fixpoint_encode(y, 2, 3, 4, TAHQ_META_BF16, q, h) == TAHQ_ERR_RANGE);
    }
    /* decoder: codes 0 or >= 2^b, steps negative / NaN / inf -> PAYLOAD, out untouched */
    CHECK(tahq_fixpoint_encode(g, 2, 3, 4, TAHQ_META_FP16, q, h) == TAHQ_OK);
    struct {
        int idx;
        uint8_t code;
        int hidx;
        float step;
        const char *what;
    } pc[] = {{1, 0, -1, 0, "code 0"},           {5, 16, -1, 0, "code 2^b"},
              {0, 255, -1, 0, "code 255"},       {-1, 0, 1, -1.0f, "step -1"},
              {-1, 0, 2, NAN, "step NaN"},       {-1, 0, 0, INFINITY, "step inf"},
              {-1, 0, 0, -INFINITY, "step -inf"}};
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        uint8_t qq[6];
        float hh[3];
        memcpy(qq, q, sizeof qq);
        memcpy(hh, h, sizeof hh);
        if (pc[i].idx >= 0)
            qq[pc[i].idx] = pc[i].code;
        if (pc[i].hidx >= 0)
            hh[pc[i].hidx] = pc[i].step;
        for (int k = 0; k < 6; k++)
            o[k] = 1234.5f;
        tahq_status st = tahq_fixpoint_decode(qq, hh, 2, 3, 4, o);
        int untouched = 1;
        for (int k = 0; k < 6; k++)
            untouched &= o[k] == 1234.5f;
        CHECKF(st == TAHQ_ERR_PAYLOAD && untouched, "fixpoint decode %s: %d", pc[i].what, st);
    }
    CHECK(tahq_fixpoint_decode(NULL, h, 2, 3, 4, o) == TAHQ_ERR_NULL);
    CHECK(tahq_fixpoint_decode(q, NULL, 2, 3, 4, o) == TAHQ_ERR_NULL);
    CHECK(tahq_fixpoint_decode(q, h, 2, 3, 4, NULL) == TAHQ_ERR_NULL);

    char what[200];
    snprintf(what, sizeof what,
             "%" PRIu64 " channel sets bit-exact vs §7.2, %" PRIu64
             " elements within the §7.2 bound (worst err/bound %.3f), symmetry, error paths",
             n_cases, n_elems, worst_ratio);
    return t_finish("test_fixpoint", what);
}
