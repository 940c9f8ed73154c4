/* SPDX-License-Identifier: MIT */
/* message_reseal.h - re-seal a format-1 message after editing its bytes: the
 * CRC-32C of SPEC §8.1 (over header bytes 0..67 and the payload after the
 * 72-byte header) written again into bytes 68..71, little-endian, so that a
 * decoder's checks behind the CRC are reached. The one copy for the tests,
 * the fuzzers, the golden generator and its candidates (header-only: the
 * fuzzers and tests compile it without the tools' library). */
#ifndef TAHQ_SUPPORT_MESSAGE_RESEAL_H
#define TAHQ_SUPPORT_MESSAGE_RESEAL_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"
#include "tahq_spec.h"

/* Over the header and the payload_len bytes after it (msg holds at least
 * TAHQ_HEADER_BYTES + payload_len bytes). */
static inline void message_reseal_payload(uint8_t *msg, size_t payload_len)
{
    uint32_t crc = tahq_crc32c(0, msg, 68);
    crc = tahq_crc32c(crc, msg + TAHQ_HEADER_BYTES, payload_len);
    for (int i = 0; i < 4; i++)
        msg[68 + i] = (uint8_t)(crc >> (8 * i));
}

/* Over everything after the header of msg[len] (len >= TAHQ_HEADER_BYTES). */
static inline void message_reseal(uint8_t *msg, size_t len)
{
    message_reseal_payload(msg, len - TAHQ_HEADER_BYTES);
}

/* Over the payload length the header states (payload_bytes, bytes 56..63),
 * so that a message cut short or padded keeps the CRC of its stated
 * payload; left as it is when msg[len] is shorter than that. */
static inline void message_reseal_stated(uint8_t *msg, size_t len)
{
    uint64_t stated = 0;
    for (int i = 7; i >= 0; --i)
        stated = stated << 8 | msg[56 + i];
    if (len < TAHQ_HEADER_BYTES || len - TAHQ_HEADER_BYTES < stated)
        return;
    message_reseal_payload(msg, (size_t)stated);
}

#endif
