/* SPDX-License-Identifier: MIT */
/* fuzz_header.c - libFuzzer harness for tahq_parse_header (SPEC §8.1, §8.4
 * steps 1-4). The input is tried as given and with its CRC fixed. An
 * accepted header must describe exactly the bytes given, and its fields must
 * pass the library's own config and shape checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "fuzz_reseal.h"

static void check(const uint8_t *msg, size_t len)
{
    tahq_header h;
    memset(&h, 0xA5, sizeof h);
    tahq_status st = tahq_parse_header(msg, len, &h);
    if (st == TAHQ_OK) {
        if (h.payload_bytes + TAHQ_HEADER_BYTES != len)
            abort();
        if (tahq_check_config(&h.config) != TAHQ_OK ||
            tahq_check_shape(&h.config, &h.shape) != TAHQ_OK)
            abort();
        uint64_t rows = (uint64_t)h.shape.batch * h.shape.seq_len;
        if (rows * h.shape.channels > TAHQ_MAX_ELEMENTS)
            abort();
        if (h.n_flagged > rows * (h.shape.channels / h.config.tile))
            abort();
        size_t bound;
        if (tahq_encode_bound(&h.config, &h.shape, &bound) != TAHQ_OK || bound < len)
            abort();
    } else {
        if (st < TAHQ_ERR_NULL || st >= TAHQ_STATUS_COUNT)
            abort();
        /* SPEC §8.4 step 1: the length checks come first */
        if (len < 4 && st != TAHQ_ERR_TRUNCATED)
            abort();
        if (len >= 4 && memcmp(msg, TAHQ_MAGIC, 4) != 0 && st != TAHQ_ERR_MAGIC)
            abort();
    }
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
