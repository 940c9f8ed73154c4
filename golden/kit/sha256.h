/* SPDX-License-Identifier: MIT */
/* sha256.h - SHA-256 (FIPS 180-4), used for the checksums of golden vectors. */
#ifndef TAHQ_GOLDEN_SHA256_H
#define TAHQ_GOLDEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t digest[32]);
/* One-shot: lowercase hex digest (64 characters and a NUL) of data[n]. */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
