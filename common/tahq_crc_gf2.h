/* SPDX-License-Identifier: MIT */ /*
 * tahq_crc_gf2.h - CRC-32C (SPEC §2.6) as polynomial arithmetic over GF(2):
 * the algebra that joins the CRCs of consecutive pieces of a message into
 * the CRC of the whole. One definition for the CUDA kernels
 * (kernels/tahq_device_math.cuh, host and device) and the multi-threaded
 * CPU codec (cpu/parallel.c). Header-only: every function is static inline
 * (__host__ __device__ under nvcc); C11, C++ and CUDA.
 *
 * Reflected representation (as zlib's crc32_combine): bit 31 of a word is
 * the coefficient of x^0. raw(s, M) is the CRC register after the bytes M
 * starting from register s, without the final xor, so that
 * CRC-32C(M) = ~raw(~0, M). raw is linear in s and in M:
 *   raw(s, A || B) = mulmod(raw(s, A), x^(8|B|)) ^ raw(0, B),
 * from which, with CRC-32C(M) = ~raw(~0, M),
 *   CRC-32C(A || B) = mulmod(CRC-32C(A), x^(8|B|)) ^ CRC-32C(B)
 * (the ~ of both sides cancels because mulmod is linear in its first
 * argument: mulmod(~a, X) ^ mulmod(~0, X) = mulmod(a, X)).
 */
#ifndef TAHQ_CRC_GF2_H
#define TAHQ_CRC_GF2_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define TAHQ_GF2_FN static __host__ __device__ __forceinline__
#else
#define TAHQ_GF2_FN static inline
#endif

/* The reflected CRC-32C polynomial (Castagnoli). */
#define TAHQ_CRC32C_POLY 0x82F63B78u

/* Table entry for byte v: the same values as ref/format.c's table. */
TAHQ_GF2_FN uint32_t tahq_gf2_crc_table_entry(uint32_t v)
{
    uint32_t c = v;
    for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (TAHQ_CRC32C_POLY & (0u - (c & 1u)));
    return c;
}

/* a * b mod P */
TAHQ_GF2_FN uint32_t tahq_gf2_mulmod(uint32_t a, uint32_t b)
{
    uint32_t p = 0u;
    for (int i = 0; i < 32; i++) {
        p ^= b & (0u - ((a >> 31) & 1u));
        a <<= 1;
        b = (b >> 1) ^ (TAHQ_CRC32C_POLY & (0u - (b & 1u)));
    }
    return p;
}

/* x^n mod P (n up to 2^64 - 1) by square-and-multiply. */
TAHQ_GF2_FN uint32_t tahq_gf2_xpow(uint64_t n)
{
    uint32_t result = 0x80000000u; /* x^0 */
    uint32_t sq = 0x40000000u;     /* x^1 */
    while (n) {
        if (n & 1u)
            result = tahq_gf2_mulmod(result, sq);
        sq = tahq_gf2_mulmod(sq, sq);
        n >>= 1;
    }
    return result;
}

/* x^-1 mod P: x * ((P(x) - 1) / x) = 1, i.e. (POLY << 1) | 1 reflected. */
TAHQ_GF2_FN uint32_t tahq_gf2_xinv(void)
{
    return (TAHQ_CRC32C_POLY << 1) | 1u;
}

/* x^(-n) mod P */
TAHQ_GF2_FN uint32_t tahq_gf2_xpow_inv(uint64_t n)
{
    uint32_t result = 0x80000000u;
    uint32_t sq = tahq_gf2_xinv();
    while (n) {
        if (n & 1u)
            result = tahq_gf2_mulmod(result, sq);
        sq = tahq_gf2_mulmod(sq, sq);
        n >>= 1;
    }
    return result;
}

/* raw CRC register update over n bytes, bit by bit. */
TAHQ_GF2_FN uint32_t tahq_gf2_crc_raw_bytes(uint32_t c, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (TAHQ_CRC32C_POLY & (0u - (c & 1u)));
    }
    return c;
}

/* CRC-32C of A || B from crc_a = CRC-32C(A), crc_b = CRC-32C(B) and the
 * length of B in bytes (see the top of this file). */
TAHQ_GF2_FN uint32_t tahq_gf2_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    return tahq_gf2_mulmod(crc_a, tahq_gf2_xpow(8u * len_b)) ^ crc_b;
}

#endif /* TAHQ_CRC_GF2_H */
