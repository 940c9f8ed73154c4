/* SPDX-License-Identifier: MIT */
/* crc32c_clmul512.h - CRC-32C (SPEC §8.1, the bytes of tahq_crc32c) by
 * carry-less multiplication on 512-bit registers (VPCLMULQDQ), for the
 * avx512 path's CRC parts (fast_tile.c tahq_fast_crc32c). Included once by
 * fast_tile.c; static.
 *
 * Bit-reflected CRC algebra: a 16-byte block loaded little-endian is the
 * polynomial whose first bit (bit 0 of byte 0) has the highest degree, so
 * its low 64 bits H and high 64 bits L stand for H(x) x^64 + L(x). Moving
 * a block D bits further down the message multiplies it by x^D; modulo the
 * CRC polynomial P that is H(x) (x^(D+63) mod P) x + L(x) (x^(D-1) mod P) x,
 * and PCLMULQDQ of bit-reflected operands gives exactly the reflected
 * product times x (its 127-bit result sits one bit up in 128). So each
 * fold is two carry-less products of 64 x 32 bits (degree < 96: the result
 * fits the 128-bit block) XORed into the block D bits on; the constants
 * below are reflect32(x^(D+63) mod P) << 32 (for H) and
 * reflect32(x^(D-1) mod P) << 32 (for L), P = 0x11EDC6F41, computed by
 * polynomial arithmetic over GF(2) (tests compare the result with
 * tahq_crc32c on every length up to 2 KiB and longer buffers). The CRC's
 * starting register is XORed into the first 4 bytes (linearity), the
 * blocks are folded into one, and the SSE4.2 crc32 instruction from a zero
 * register over that block (it computes block(x) x^32 mod P, the block
 * being congruent to every byte before it) and the last bytes finishes. */
#ifndef TAHQ_CPU_CRC32C_CLMUL512_H
#define TAHQ_CPU_CRC32C_CLMUL512_H

#include <stdint.h>
#include <string.h>

#include <immintrin.h>

#define TAHQ_CLMUL512_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,vpclmulqdq,pclmul,sse4.2")))
#define TAHQ_CLMUL512_INLINE static inline __attribute__((always_inline)) TAHQ_CLMUL512_TARGET

/* (H constant, L constant) of a fold by D bits */
#define TAHQ_CRC_K128 UINT64_C(0x3743f7bd00000000), UINT64_C(0x3171d43000000000)
#define TAHQ_CRC_K256 UINT64_C(0x33ccbbbc00000000), UINT64_C(0xa2158b3400000000)
#define TAHQ_CRC_K384 UINT64_C(0xa46ef4aa00000000), UINT64_C(0x6051243f00000000)
#define TAHQ_CRC_K512 UINT64_C(0x1c19243b00000000), UINT64_C(0x75bba45b00000000)
#define TAHQ_CRC_K2048 UINT64_C(0xe9a5d8be00000000), UINT64_C(0x1426a81500000000)

/* The same (H, L) constant pair in each 128-bit lane. */
TAHQ_CLMUL512_INLINE __m512i crc_k4(uint64_t kh, uint64_t kl)
{
    return _mm512_set_epi64((long long)kl, (long long)kh, (long long)kl, (long long)kh,
                            (long long)kl, (long long)kh, (long long)kl, (long long)kh);
}

/* Each 128-bit block of x moved by the lane's constants, XORed into data. */
TAHQ_CLMUL512_INLINE __m512i crc_fold512(__m512i x, __m512i k, __m512i data)
{
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

TAHQ_CLMUL512_INLINE __m128i crc_fold128(__m128i x, __m128i k, __m128i data)
{
    return _mm_xor_si128(
        _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data);
}

/* tahq_crc32c(crc, p, n) for n >= 256. */
static TAHQ_CLMUL512_TARGET uint32_t crc32c_clmul512(uint32_t crc, const uint8_t *p, size_t n)
{
    const __m512i k2048 = crc_k4(TAHQ_CRC_K2048), k512 = crc_k4(TAHQ_CRC_K512);
    __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64),
            x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
    p += 256;
    n -= 256;
    for (; n >= 256; p += 256, n -= 256) { /* four chains, each 256 bytes on */
        x0 = crc_fold512(x0, k2048, _mm512_loadu_si512(p));
        x1 = crc_fold512(x1, k2048, _mm512_loadu_si512(p + 64));
        x2 = crc_fold512(x2, k2048, _mm512_loadu_si512(p + 128));
        x3 = crc_fold512(x3, k2048, _mm512_loadu_si512(p + 192));
    }
    x1 = crc_fold512(x0, k512, x1);
    x2 = crc_fold512(x1, k512, x2);
    x3 = crc_fold512(x2, k512, x3);
    for (; n >= 64; p += 64, n -= 64)
        x3 = crc_fold512(x3, k512, _mm512_loadu_si512(p));
    /* the four blocks of x3 into one: moved by 384, 256, 128 and 0 bits
     * (the last block's constants 0, the block itself XORed in) */
    const __m512i k4 = _mm512_set_epi64(
        0, 0, (long long)UINT64_C(0x3171d43000000000), (long long)UINT64_C(0x3743f7bd00000000),
        (long long)UINT64_C(0xa2158b3400000000), (long long)UINT64_C(0x33ccbbbc00000000),
        (long long)UINT64_C(0x6051243f00000000), (long long)UINT64_C(0xa46ef4aa00000000));
    const __m512i moved = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x3, k4, 0x00),
                                                    _mm512_clmulepi64_epi128(x3, k4, 0x11),
                                                    _mm512_maskz_mov_epi64(0xC0, x3), 0x96);
    const __m256i h =
        _mm256_xor_si256(_mm512_castsi512_si256(moved), _mm512_extracti64x4_epi64(moved, 1));
    __m128i s = _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    const __m128i k128 = _mm_set_epi64x((long long)UINT64_C(0x3171d43000000000),
                                        (long long)UINT64_C(0x3743f7bd00000000));
    for (; n >= 16; p += 16, n -= 16)
        s = crc_fold128(s, k128, _mm_loadu_si128((const __m128i *)(const void *)p));
    uint64_t r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s));
    r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(s, 1));
    if (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        r = _mm_crc32_u64(r, w);
        p += 8;
        n -= 8;
    }
    uint32_t r32 = (uint32_t)r;
    for (; n > 0; p++, n--)
        r32 = _mm_crc32_u8(r32, *p);
    return ~r32;
}

#endif
