/* SPDX-License-Identifier: MIT */
/*
 * test_tile_l2 - the flagged-tile L2 check of the CLI's bound checks
 * (check_flagged_tiles_l2 in support/codec_ops.c, used by roundtrip, report and
 * bounds). SPEC §6.3 bounds a flagged tile's Euclidean error, and
 * tahq_error_bound repeats that bound E on each element; checking only
 * |x_i - x̂_i| <= E cannot see a tile whose error is a few times too large
 * (per element such tiles reach about a third of E).
 *   1. the real decode of a tensor with every tile flagged (tau = 0) passes
 *      both checks;
 *   2. the control: the same decode with every error doubled
 *      (y' = x + 2(y - x)) still passes the per-element check here, and the
 *      L2 check must reject it;
 *   3. unflagged tiles (tau = inf) are not L2-checked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_ops.h"
#include "tahq.h"
#include "tutil.h"

enum { B = 1, S = 32, C = 256, N = B * S * C };

static uint8_t *encode(const tahq_config *cfg, const tahq_shape *sh, const float *x, size_t *len)
{
    size_t cap = 0, wsz = 0;
    if (tahq_encode_bound(cfg, sh, &cap) != TAHQ_OK ||
        tahq_encode_workspace_size(cfg, sh, &wsz) != TAHQ_OK)
        return NULL;
    uint8_t *msg = malloc(cap);
    void *ws = malloc(wsz ? wsz : 1);
    if (msg && ws && tahq_encode(cfg, sh, x, ws, wsz, msg, cap, len) != TAHQ_OK) {
        free(msg);
        msg = NULL;
    }
    free(ws);
    return msg;
}

int main(void)
{
    static float x[N], y[N], y2[N];
    static double bound[N / 64], elem_bound[N];
    trng r = {7};
    for (int i = 0; i < N; ++i)
        x[i] = (float)(trng_unit(&r) * 2.0 - 1.0);
    tahq_shape sh = {B, S, C};
    tahq_config cfg;
    tahq_config_default(&cfg);
    cfg.tau = 0.0f; /* every non-zero tile flagged */
    size_t len = 0;
    uint8_t *msg = encode(&cfg, &sh, x, &len);
    if (!CHECK(msg != NULL))
        return t_finish("test_tile_l2", "encode");
    CHECK(tahq_decode(msg, len, y, N) == TAHQ_OK);
    CHECK(tahq_tile_error_bound(msg, len, bound, N / 64) == TAHQ_OK);
    /* tahq_error_bound is the tile's bound repeated on each element, bit for bit */
    CHECK(tahq_error_bound(msg, len, elem_bound, N) == TAHQ_OK);
    int same = 1;
    for (int i = 0; i < N; ++i)
        same &= memcmp(&elem_bound[i], &bound[i / 64], sizeof(double)) == 0;
    CHECKF(same, "tahq_tile_error_bound differs from tahq_error_bound");
    CHECK(tahq_tile_error_bound(msg, len, bound, N / 64 - 1) == TAHQ_ERR_BUFFER);
    CHECK(tahq_tile_error_bound(msg, len, bound, N / 64 + 1) == TAHQ_ERR_BUFFER);
    CHECK(tahq_tile_error_bound(msg, len, bound, N) == TAHQ_ERR_BUFFER);
    CHECK(tahq_tile_error_bound(msg, len, NULL, N / 64) == TAHQ_ERR_NULL);

    rt_stats s;
    compute_stats(x, y, bound, 64, N, &s);
    CHECK(check_flagged_tiles_l2(msg, len, x, y, bound, N, &s) == TAHQ_OK);
    CHECKF(s.n_flagged_checked == N / 64, "%llu flagged tiles checked",
           (unsigned long long)s.n_flagged_checked);
    CHECKF(s.n_over_bound == 0 && s.n_tiles_over_l2 == 0, "real decode: %llu elements, %llu tiles",
           (unsigned long long)s.n_over_bound, (unsigned long long)s.n_tiles_over_l2);
    printf("real decode: max |e|/E %.4f, max ||e||_2/E %.4f\n", s.max_err_over_bound,
           s.max_l2_over_bound);
    double l2_real = s.max_l2_over_bound;
    CHECKF(l2_real > 0.5 && l2_real <= 1.0,
           "max L2 ratio %g: the doubled control below needs "
           "it above 1/2",
           l2_real);

    for (int i = 0; i < N; ++i)
        y2[i] = x[i] + 2.0f * (y[i] - x[i]);
    compute_stats(x, y2, bound, 64, N, &s);
    CHECK(check_flagged_tiles_l2(msg, len, x, y2, bound, N, &s) == TAHQ_OK);
    printf("doubled errors: max |e|/E %.4f (%llu elements over), max ||e||_2/E %.4f (%llu tiles "
           "over)\n",
           s.max_err_over_bound, (unsigned long long)s.n_over_bound, s.max_l2_over_bound,
           (unsigned long long)s.n_tiles_over_l2);
    CHECKF(s.n_over_bound == 0,
           "the per-element check sees the doubled error (%llu elements): "
           "the control no longer shows what it is for",
           (unsigned long long)s.n_over_bound);
    CHECKF(s.n_tiles_over_l2 > 0, "the L2 check missed doubled errors");
    free(msg);

    cfg.tau = INFINITY; /* no tile flagged */
    msg = encode(&cfg, &sh, x, &len);
    if (CHECK(msg != NULL)) {
        CHECK(tahq_decode(msg, len, y, N) == TAHQ_OK);
        CHECK(tahq_tile_error_bound(msg, len, bound, N / 64) == TAHQ_OK);
        compute_stats(x, y, bound, 64, N, &s);
        CHECK(check_flagged_tiles_l2(msg, len, x, y, bound, N, &s) == TAHQ_OK);
        CHECK(s.n_flagged_checked == 0 && s.n_tiles_over_l2 == 0);
        free(msg);
    }
    return t_finish("test_tile_l2", "flagged-tile L2 bound check");
}
