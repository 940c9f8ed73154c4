/* SPDX-License-Identifier: MIT */
/* conform_pv1.c - the tie-tolerant judgement of a paper_v1 message whose
 * token bitmap differs from the expected one (`tahq conform --tolerance`,
 * golden/README.md "paper-v1 cases").
 *
 * The authors rank tokens by an entropy summed in an unspecified order and
 * sort with an unstable sort (ref/SPEC.md A.2 steps 1-2, A.5): their low
 * tokens are a lowest-entropy selection under entropies that may differ from
 * the SPEC's H by a rounding error, with ties in any order. A candidate's
 * low set L of a sequence is accepted when such entropies exist: with
 * delta(H) the bound below, H'_t within delta(H_t) of H_t for every token t
 * and L the n_low smallest H' (ties in any order). That holds exactly when
 *     max over t in L of (H_t - delta_t)  <=  min over t not in L of (H_t + delta_t)
 * (take a threshold between the two sides and move each H_t towards it by
 * at most delta_t). The rest of the message is then judged against the
 * reference recomputed from the input at the candidate's bit-widths (each
 * token's tiles with its own width), with the usual paper_v1 tolerance:
 * flags and pivots exact, codes within 1 at a rate of at most
 * GOLDEN_PV1_CODE_RATE, zero points and scales within 1 fp16 ulp. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "golden_paper_v1.h"

/* The bound delta(H) on |H_authors - H_SPEC| for a token of C channels,
 * both computed in binary32 (u = 2^-24) with sums of C terms in any order:
 * a sum of C non-negative terms in any order is within g = gamma_(C-1) =
 * (C-1)u / (1 - (C-1)u) of the exact sum times the sum (Higham, Accuracy and
 * Stability, 2nd ed., §4.2), so two orders differ by 2g relatively. Then
 *   den = sum |x|:      relative difference <= 2g
 *   p = a / den:        relative difference <= 2g + 2u
 *   l = ln(p + eps):    absolute difference <= (2g + 2u) + 2u + 4u |l|
 *                       (a relative change e of p moves ln p by about e; each
 *                       side's log within 2 ulps of |l|)
 *   h = p l:            |dh| <= |dp| |l| + p |dl| + 2u |h|
 *   H = -sum h:         sum |h| = H and sum p = 1 give
 *   |dH| <= (4g + 8u) H + 2g + 4u.
 * The first-order terms are bounded by twice that; a p below the binary32
 * normal range adds at most C * 2^-149 * 70, covered by the 2^-100 term. */
static double h_tol(double H, uint64_t C)
{
    const double u = 0x1p-24;
    double g = (double)(C - 1) * u;
    g = g / (1.0 - g);
    return 2.0 * ((4.0 * g + 8.0 * u) * H + 2.0 * g + 4.0 * u) + 0x1p-100;
}

static int32_t f16_order(uint16_t h)
{
    return (h & 0x8000u) ? -(int32_t)(h & 0x7FFFu) : (int32_t)h;
}

typedef struct ranked {
    float H;
    uint32_t pos;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->H != y->H)
        return x->H < y->H ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int conform_pv1_ties(const tahq_paper_v1_config *cfg, const tahq_shape *sh, const float *x,
                     const uint8_t *got, size_t glen, char *detail, size_t n, const char **field)
{
    const uint64_t B = sh->batch, S = sh->seq_len, C = sh->channels, G = cfg->tile;
    const uint64_t T = C / G, N = B * S * T, cnt = B * S * C;
    const uint64_t n_low = tahq_paper_v1_low_count(sh->seq_len, cfg->hi_permille);
    uint8_t *map = malloc(B * S), *flags = malloc(N), *codes = malloc(cnt), *rc = malloc(G);
    uint16_t *piv = malloc(N * 2), *zero = malloc(N * 2), *scale = malloc(N * 2);
    float *H = malloc(S * sizeof *H), *v = malloc(G * sizeof *v);
    ranked *rk = malloc(S * sizeof *rk);
    int ok = 0;
    *field = "message";
    if (!map || !flags || !codes || !rc || !piv || !zero || !scale || !H || !v || !rk) {
        snprintf(detail, n, "out of memory");
        goto out;
    }
    tahq_status st =
        tahq_paper_v1_unpack(got, glen, cfg, sh, map, flags, piv, zero, scale, codes, NULL);
    if (st != TAHQ_OK) {
        snprintf(detail, n, "candidate message does not decode: %s", tahq_status_name(st));
        goto out;
    }
    /* the bitmap: a lowest-entropy selection within the tolerance */
    uint64_t moved = 0;
    double widest = 0.0;
    for (uint64_t b = 0; b < B; b++) {
        double lo_max = -INFINITY, hi_min = INFINITY;
        uint64_t lo_arg = 0, hi_arg = 0;
        for (uint64_t s = 0; s < S; s++) {
            H[s] = tahq_paper_v1_entropy(x + (b * S + s) * C, (uint32_t)C, (uint32_t)G);
            double d = h_tol(H[s], C);
            if (map[b * S + s] && (double)H[s] - d > lo_max) {
                lo_max = (double)H[s] - d;
                lo_arg = s;
            }
            if (!map[b * S + s] && (double)H[s] + d < hi_min) {
                hi_min = (double)H[s] + d;
                hi_arg = s;
            }
            rk[s].H = H[s];
            rk[s].pos = (uint32_t)s;
        }
        if (lo_max > hi_min) {
            *field = "token_bitmap";
            snprintf(detail, n,
                     "outside tolerance: in sequence %" PRIu64 " token %" PRIu64
                     " is low (H = %.9g) and token %" PRIu64 " high (H = %.9g); their "
                     "difference %.3g exceeds the entropy tolerance %.3g, so the low tokens "
                     "are not a lowest-entropy selection",
                     b, lo_arg, (double)H[lo_arg], hi_arg, (double)H[hi_arg],
                     (double)H[lo_arg] - (double)H[hi_arg],
                     h_tol(H[lo_arg], C) + h_tol(H[hi_arg], C));
            goto out;
        }
        /* the SPEC's own selection, to count the tokens on the other side;
         * the widest inversion: a low token's H above a high token's */
        qsort(rk, S, sizeof *rk, cmp_ranked);
        double lo_h = -INFINITY, hi_h = INFINITY;
        for (uint64_t i = 0; i < S; i++) {
            int low = map[b * S + rk[i].pos] != 0;
            moved += (i < n_low) != low;
            if (low && (double)rk[i].H > lo_h)
                lo_h = (double)rk[i].H;
            if (!low && (double)rk[i].H < hi_h)
                hi_h = (double)rk[i].H;
        }
        if (lo_h - hi_h > widest)
            widest = lo_h - hi_h;
    }
    /* every tile against the reference at the candidate's width */
    uint64_t d_flag = 0, d_piv = 0, d_code = 0, d_code_big = 0, d_zero = 0, d_scale = 0,
             d_meta_big = 0;
    for (uint64_t row = 0; row < B * S; row++) {
        uint32_t w = map[row] ? cfg->lo_bits : cfg->hi_bits;
        for (uint64_t j = 0; j < T; j++) {
            uint64_t t = row * T + j;
            memcpy(v, x + row * C + j * G, G * sizeof *v);
            uint32_t d = 0;
            int f = tahq_paper_v1_gate(v, (uint32_t)G, &d);
            d_flag += f != (flags[t] != 0);
            d_piv += f && flags[t] && d != piv[t];
            if (f)
                tahq_paper_v1_hadamard(v, (uint32_t)G, d, 0);
            float z, s;
            tahq_paper_v1_quantize_tile(v, (uint32_t)G, w, &z, &s, rc);
            int32_t dz = f16_order(tahq_f32_to_f16(z)) - f16_order(zero[t]);
            int32_t ds = f16_order(tahq_f32_to_f16(s)) - f16_order(scale[t]);
            d_zero += dz != 0;
            d_scale += ds != 0;
            d_meta_big += (dz > 1 || dz < -1) + (ds > 1 || ds < -1);
            for (uint64_t i = 0; i < G; i++) {
                int dc = (int)rc[i] - (int)codes[row * C + j * G + i];
                d_code += dc != 0;
                d_code_big += dc > 1 || dc < -1;
            }
        }
    }
    double rate = (double)d_code / (double)cnt;
    ok = d_flag == 0 && d_piv == 0 && d_code_big == 0 && rate <= GOLDEN_PV1_CODE_RATE &&
         d_meta_big == 0;
    *field = ok                                            ? NULL
             : d_flag                                      ? "tile_flags"
             : d_piv                                       ? "pivots"
             : (d_code_big || rate > GOLDEN_PV1_CODE_RATE) ? "codes"
                                                           : "zero_points/scales";
    snprintf(detail, n,
             "%s: the token bitmap differs from the SPEC's selection in %" PRIu64
             " token%s, a lowest-entropy selection within the entropy tolerance (largest "
             "inversion %.3g); against the reference at the candidate's widths: flags %" PRIu64
             ", pivots %" PRIu64 " differ; codes %" PRIu64 " of %" PRIu64 " differ (rate %.3g, "
             "%" PRIu64 " by more than 1); zero points %" PRIu64 ", scales %" PRIu64
             " differ (%" PRIu64 " by more than 1 fp16 ulp)",
             ok ? "within tolerance" : "outside tolerance", moved, moved == 1 ? "" : "s", widest,
             d_flag, d_piv, d_code, cnt, rate, d_code_big, d_zero, d_scale, d_meta_big);
out:
    free(map);
    free(flags);
    free(codes);
    free(rc);
    free(piv);
    free(zero);
    free(scale);
    free(H);
    free(v);
    free(rk);
    return ok;
}
