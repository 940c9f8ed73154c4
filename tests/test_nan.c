/* SPDX-License-Identifier: MIT */
/*
 * test_nan.c - SPEC §1 rule 6: every NaN a decoder writes is the canonical
 * quiet NaN 0x7FC00000 (format 1, §6.1; paper-v1, Appendix A.4).
 *
 * Format 1: a valid message (fp32 and bf16 metadata, every tile flagged)
 * whose first tile's scale is patched to 2^127 (CRC fixed): q*s overflows to
 * +inf and the inverse FWHT meets inf - inf. Paper-v1: fp16 NaN zero point
 * and scale with payloads, and the encoder's own z = -inf, s = +inf pair.
 * Each NaN must have the canonical bits; the controls (the same messages
 * unpatched) decode without a NaN.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

#include "message_reseal.h" /* support/: the one re-seal of an edited message */
#include "tutil.h"

#define CANONICAL_NAN 0x7FC00000u

/* Number of NaNs in y[0..n-1]; each must be canonical. */
static uint64_t check_nans(const float *y, uint64_t n, const char *what)
{
    uint64_t nans = 0;
    for (uint64_t i = 0; i < n; i++)
        if (y[i] != y[i]) {
            nans++;
            CHECKF(f2u(y[i]) == CANONICAL_NAN, "%s: element %" PRIu64 " is NaN 0x%08x", what, i,
                   (unsigned)f2u(y[i]));
        }
    return nans;
}

static void put_le(uint8_t *p, uint32_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void format1(tahq_meta meta, const char *name)
{
    tahq_config c;
    tahq_config_plain(&c, 8, 4);
    c.tau = 0.0f; /* every non-zero tile flagged */
    c.meta = meta;
    tahq_shape s = {1, 1, 16};
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i % 8 + 1) * (i < 8 ? 1.0f : -0.25f);
    size_t cap = 0, wsz = 0, len = 0;
    if (!CHECK(tahq_encode_bound(&c, &s, &cap) == TAHQ_OK) ||
        !CHECK(tahq_encode_workspace_size(&c, &s, &wsz) == TAHQ_OK))
        return;
    uint8_t *m = malloc(cap);
    void *ws = malloc(wsz);
    float y[16], y0[16];
    if (!CHECK(m && ws) || !CHECK(tahq_encode(&c, &s, x, ws, wsz, m, cap, &len) == TAHQ_OK)) {
        free(m);
        free(ws);
        return;
    }
    tahq_header h;
    CHECK(tahq_parse_header(m, len, &h) == TAHQ_OK && h.n_flagged == 2);
    /* control: the message as encoded */
    CHECK(tahq_decode(m, len, y0, 16) == TAHQ_OK);
    CHECKF(check_nans(y0, 16, name) == 0, "%s: control decodes to a NaN", name);
    for (int i = 0; i < 16; i++)
        CHECKF(y0[i] - y0[i] == 0.0f, "%s: control element %d not finite", name, i);
    /* payload (alloc none): flags (1 byte), 2 zero points, 2 scales, codes, pivots */
    const unsigned mb = meta == TAHQ_META_FP32 ? 4 : 2;
    const size_t scale0 = 72 + 1 + 2 * mb;
    put_le(m + scale0, meta == TAHQ_META_FP32 ? 0x7F000000u : 0x7F00u, mb); /* 2^127 */
    message_reseal(m, len);
    CHECKF(tahq_decode(m, len, y, 16) == TAHQ_OK, "%s: patched message rejected", name);
    uint64_t nans = check_nans(y, 16, name);
    CHECKF(nans > 0 && nans < 8, "%s: %" PRIu64 " NaNs in the patched tile (want some, not all)",
           name, nans);
    for (int i = 8; i < 16; i++) /* the other tile is untouched */
        CHECKF(f2u(y[i]) == f2u(y0[i]), "%s: tile 1 element %d changed", name, i);
    free(m);
    free(ws);
}

static size_t pv1_encode(const tahq_paper_v1_config *c, const tahq_shape *s, const float *x,
                         uint8_t **msg)
{
    size_t cap = 0, wsz = 0, len = 0;
    *msg = NULL;
    if (!CHECK(tahq_paper_v1_encode_bound(c, s, &cap) == TAHQ_OK) ||
        !CHECK(tahq_paper_v1_workspace_size(c, s, &wsz) == TAHQ_OK))
        return 0;
    uint8_t *m = malloc(cap);
    void *ws = malloc(wsz);
    if (!CHECK(m && ws) ||
        !CHECK(tahq_paper_v1_encode(c, s, x, ws, wsz, m, cap, &len) == TAHQ_OK)) {
        free(m);
        free(ws);
        return 0;
    }
    free(ws);
    *msg = m;
    return len;
}

static void paper_v1(void)
{
    tahq_paper_v1_config c = {8, 4, 4, 1000}; /* one high token: codes, then zeros, scales */
    tahq_shape s = {1, 1, 16};
    float x[16], y[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)((i * 5) % 8) - 3.0f;
    uint8_t *m = NULL;
    size_t len = pv1_encode(&c, &s, x, &m);
    if (!m)
        return;
    CHECK(tahq_paper_v1_decode(m, len, &c, &s, y, 16) == TAHQ_OK);
    CHECKF(check_nans(y, 16, "paper-v1 control") == 0, "paper-v1 control decodes to a NaN");
    /* 16 codes of 4 bits = 8 bytes; zero points at bytes 8..11, scales at
     * 12..15, each low byte first (A.3) */
    m[8] = 0x01; /* tile 0: zero point fp16 0x7E01, a quiet NaN with payload */
    m[9] = 0x7E;
    m[14] = 0x01; /* tile 1: scale fp16 0xFE01, negative, with payload */
    m[15] = 0xFE;
    CHECK(tahq_paper_v1_decode(m, len, &c, &s, y, 16) == TAHQ_OK);
    CHECKF(check_nans(y, 16, "paper-v1 NaN metadata") == 16,
           "paper-v1: NaN metadata must give 16 NaNs");
    free(m);

    /* the encoder's own infinite pair: minimum -1e6 (fp16 -inf) and range
     * 2e6 / 15 (fp16 +inf), equal maxima (not flagged): 0 * inf, inf - inf */
    tahq_paper_v1_config c8 = {8, 4, 4, 1000};
    tahq_shape s8 = {1, 1, 8};
    float x8[8] = {-1e6f, 1e6f, 0.0f, 1.0f, 2.0f, -3.0f, 4.0f, 5.0f};
    len = pv1_encode(&c8, &s8, x8, &m);
    if (!m)
        return;
    CHECK(tahq_paper_v1_decode(m, len, &c8, &s8, y, 8) == TAHQ_OK);
    CHECKF(check_nans(y, 8, "paper-v1 infinite metadata") == 8,
           "paper-v1: z = -inf, s = +inf must give 8 NaNs");
    free(m);
}

int main(void)
{
    format1(TAHQ_META_FP32, "format 1 fp32");
    format1(TAHQ_META_BF16, "format 1 bf16");
    paper_v1();
    return t_finish("test_nan", "canonical NaN (SPEC §1 rule 6)");
}
