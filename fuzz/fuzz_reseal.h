/* SPDX-License-Identifier: MIT */
/* fuzz_reseal.h - shared by the decode and header harnesses: a copy of the
 * fuzzer's bytes with a CRC-32C that matches them (SPEC §8.1: over bytes
 * 0..67 and everything after the header), so that the checks behind the CRC
 * are reached. */
#ifndef TAHQ_FUZZ_RESEAL_H
#define TAHQ_FUZZ_RESEAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message_reseal.h"
#include "tahq.h"

/* size >= TAHQ_HEADER_BYTES; the caller frees the result. */
static uint8_t *copy_with_valid_crc(const uint8_t *data, size_t size)
{
    uint8_t *m = malloc(size);
    if (!m)
        abort();
    memcpy(m, data, size);
    message_reseal(m, size);
    return m;
}

#endif
