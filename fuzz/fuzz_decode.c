/* SPDX-License-Identifier: MIT */
/* fuzz_decode.c - libFuzzer harness: arbitrary bytes as a tahq message.
 *
 * Every byte string must be either rejected with a status code or decoded;
 * decode, error_bound and tile_infos must agree on validity. Each input is
 * tried twice: as given, and with a correct CRC-32C stored at bytes 68..71,
 * so that the fuzzer reaches the payload checks (SPEC §8.4 step 5) instead
 * of stopping at the CRC. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "fuzz_reseal.h"

/* Messages are at most a few hundred kilobytes here; a header that claims
 * more elements than this cannot be complete anyway. */
#define FUZZ_MAX_COUNT (UINT64_C(1) << 22)

static void check(const uint8_t *msg, size_t len)
{
    tahq_header h;
    tahq_status st = tahq_parse_header(msg, len, &h);
    if (st != TAHQ_OK) {
        if (st < TAHQ_ERR_NULL || st >= TAHQ_STATUS_COUNT)
            abort();
        float one;
        /* the decoder reports the same failure before touching out */
        if (tahq_decode(msg, len, &one, 1) == TAHQ_OK)
            abort();
        return;
    }
    if (h.payload_bytes + TAHQ_HEADER_BYTES != len)
        abort();
    uint64_t count = (uint64_t)h.shape.batch * h.shape.seq_len * h.shape.channels;
    uint64_t n_tiles = count / h.config.tile;
    if (count > FUZZ_MAX_COUNT)
        abort(); /* impossible: the payload holds >= 1 bit per element */
    float *out = malloc((size_t)count * sizeof *out);
    double *bound = malloc((size_t)count * sizeof *bound);
    tahq_tile_info *info = malloc((size_t)n_tiles * sizeof *info);
    if (!out || !bound || !info)
        abort();
    tahq_status sd = tahq_decode(msg, len, out, (size_t)count);
    tahq_status sb = tahq_error_bound(msg, len, bound, (size_t)count);
    tahq_status si = tahq_tile_infos(msg, len, info, (size_t)n_tiles);
    if (sd != sb || sd != si)
        abort();
    if (sd == TAHQ_OK) {
        /* decoded values of a crafted message may overflow (fp32 metadata
         * near FLT_MAX); the bound must still be a non-negative number */
        for (uint64_t i = 0; i < count; i++)
            if (!(bound[i] >= 0.0))
                abort();
        for (uint64_t t = 0; t < n_tiles; t++)
            if (info[t].bits != h.config.hi_bits && info[t].bits != h.config.lo_bits)
                abort();
        /* a wrong element count is a buffer error, never a write */
        if (tahq_decode(msg, len, out, (size_t)count - 1u) != TAHQ_ERR_BUFFER)
            abort();
    } else if (sd != TAHQ_ERR_PAYLOAD) {
        abort();
    }
    free(out);
    free(bound);
    free(info);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    if (size >= TAHQ_HEADER_BYTES) {
        uint8_t *m = copy_with_valid_crc(data, size);
        check(m, size);
        free(m);
    }
    return 0;
}
