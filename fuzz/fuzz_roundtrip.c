/* SPDX-License-Identifier: MIT */
/* fuzz_roundtrip.c - libFuzzer harness: encode -> decode on arbitrary
 * binary32 bit patterns and configurations.
 *
 * Input layout: 24 bytes of configuration and shape, then the float bits
 * (little-endian; missing values are 0, extra bytes ignored):
 *   0 tile log2 (mod 6 + 3)    1 hi_bits (raw)   2 lo_bits (raw)
 *   3 alloc (raw)              4 rounding (raw)  5 meta (raw)
 *   6..7 hi_permille (raw u16) 8..11 tau bits (raw; byte 23 bit 0 = 1
 *   picks one of a few common values instead)   12..19 seed
 *   20 batch (1..2)  21 seq (1..8)  22 tiles per row (1..2)
 *
 * Encoding must succeed or fail with a documented status (with *out_len = 0);
 * a produced message must parse, decode, and every element must be within
 * its SPEC §6 bound (tahq_error_bound); encoding twice gives the same bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 24)
        return 0;
    tahq_config cfg;
    cfg.tile = 1u << (data[0] % 6u + 3u);
    cfg.hi_bits = data[1];
    cfg.lo_bits = data[2];
    cfg.alloc = (tahq_alloc)data[3];
    cfg.rounding = (tahq_rounding)data[4];
    cfg.meta = (tahq_meta)data[5];
    cfg.hi_permille = tahq_get_u16(data + 6);
    uint32_t tau_bits = tahq_get_u32(data + 8);
    if (data[23] & 1u) {
        static const uint32_t common[4] = {0x00000000u, 0x40000000u, 0x7F800000u, 0x3F800000u};
        tau_bits = common[tau_bits & 3u];
    }
    memcpy(&cfg.tau, &tau_bits, 4);
    cfg.seed = (uint64_t)tahq_get_u32(data + 12) | (uint64_t)tahq_get_u32(data + 16) << 32;
    tahq_shape shape;
    shape.batch = data[20] % 2u + 1u;
    shape.seq_len = data[21] % 8u + 1u;
    shape.channels = (data[22] % 2u + 1u) * cfg.tile;
    const size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;

    float *x = calloc(count, sizeof *x);
    if (!x)
        abort();
    size_t avail = (size - 24u) / 4u;
    for (size_t i = 0; i < count && i < avail; i++) {
        uint32_t w = tahq_get_u32(data + 24 + 4 * i);
        memcpy(&x[i], &w, 4);
    }

    size_t cap = 0, ws_bytes = 0;
    tahq_status st = tahq_encode_bound(&cfg, &shape, &cap);
    if (st == TAHQ_OK)
        st = tahq_encode_workspace_size(&cfg, &shape, &ws_bytes);
    if (st != TAHQ_OK) {
        if (st != TAHQ_ERR_CONFIG && st != TAHQ_ERR_SHAPE)
            abort();
        /* encode reports the same error up front */
        uint8_t dummy[TAHQ_HEADER_BYTES];
        size_t out_len = 1;
        if (tahq_encode(&cfg, &shape, x, NULL, 0, dummy, sizeof dummy, &out_len) != st ||
            out_len != 0)
            abort();
        free(x);
        return 0;
    }
    uint8_t *msg = malloc(cap);
    uint8_t *msg2 = malloc(cap);
    /* no workspace needed: pass NULL, as the API allows */
    void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
    if (!msg || !msg2 || (ws_bytes && !ws))
        abort();
    size_t len = 1;
    st = tahq_encode(&cfg, &shape, x, ws, ws_bytes, msg, cap, &len);
    if (st != TAHQ_OK) {
        if ((st != TAHQ_ERR_NONFINITE && st != TAHQ_ERR_RANGE) || len != 0)
            abort();
        /* NONFINITE/RANGE must be explained by the input or the metadata */
        int bad = 0;
        for (size_t i = 0; i < count; i++)
            if (!isfinite(x[i]) || fabsf(x[i]) >= TAHQ_INPUT_LIMIT)
                bad = 1;
        if (st == TAHQ_ERR_NONFINITE && !bad)
            abort();
        if (st == TAHQ_ERR_RANGE && !bad && cfg.meta == TAHQ_META_FP32)
            abort(); /* an fp32 zero-point / scale of a valid input always fits */
        goto done;
    }
    if (len == 0 || len > cap)
        abort();
    size_t len2 = 0;
    if (tahq_encode(&cfg, &shape, x, ws, ws_bytes, msg2, cap, &len2) != TAHQ_OK || len2 != len ||
        memcmp(msg, msg2, len) != 0)
        abort();
    tahq_header h;
    if (tahq_parse_header(msg, len, &h) != TAHQ_OK)
        abort();
    if (h.payload_bytes + TAHQ_HEADER_BYTES != len)
        abort();
    float *y = malloc(count * sizeof *y);
    double *b = malloc(count * sizeof *b);
    if (!y || !b)
        abort();
    if (tahq_decode(msg, len, y, count) != TAHQ_OK ||
        tahq_error_bound(msg, len, b, count) != TAHQ_OK)
        abort();
    for (size_t i = 0; i < count; i++) {
        double err = fabs((double)x[i] - (double)y[i]);
        if (!isfinite(y[i]) || !(err <= b[i]))
            abort(); /* SPEC §6 bound violated */
    }
    free(y);
    free(b);
done:
    free(msg);
    free(msg2);
    free(ws);
    free(x);
    return 0;
}
