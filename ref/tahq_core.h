/* SPDX-License-Identifier: MIT */
/*
 * tahq_core.h - the scalar SPEC primitives that the reference (the ref/
 * sources), the fast CPU paths (cpu/) and the CUDA kernels (kernels/, host
 * and device) compute alike, written once:
 *
 *   bit views of binary32, absolute value, canonical NaN   SPEC 1, 2.1
 *   little-endian fields and the header offsets           SPEC 8.1
 *   log2 of a tile size                                   SPEC 3.3
 *   the log2 coefficients                                 SPEC 2.3
 *   the Philox4x32-10 constants                           SPEC 2.4
 *
 * Header-only: every function is static inline (__host__ __device__ under
 * nvcc), C11, C++ and CUDA, integer or basic binary32 operations in the
 * order the SPEC writes them. The ACSL contracts are WP's (proofs/run.sh
 * proves the first copy Frama-C sees and skips the per-file duplicates);
 * their vocabulary is tahq_logic.h. The CRC-32C algebra has its own header,
 * common/tahq_crc_gf2.h. ARCHITECTURE.md lists what is still written twice
 * and why.
 */
#ifndef TAHQ_CORE_H
#define TAHQ_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tahq.h"
#include "tahq_logic.h"

#if defined(__CUDACC__)
#define TAHQ_CORE_FN static __host__ __device__ __forceinline__
#else
#define TAHQ_CORE_FN static inline
#endif

/* ---- bit views (SPEC 2.1) ------------------------------------------------ */

/* Bit views of binary32 values (SPEC §2.1); memcpy is the defined way in C. */
/*@ assigns \nothing;
  @ ensures \result == tahq_f32_bits(x); */
TAHQ_CORE_FN uint32_t tahq_bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(w) ==> tahq_f32_bits(\result) == w; */
TAHQ_CORE_FN float tahq_float_of(uint32_t w)
{
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(tahq_f32_bits(x)) ==>
  @         tahq_f32_bits(\result) == (tahq_f32_bits(x) & 0x7FFFFFFF); */
TAHQ_CORE_FN float tahq_absf(float x)
{
    return tahq_float_of(tahq_bits_of(x) & 0x7FFFFFFFu);
}

/* The canonical quiet NaN of SPEC §1 rule 6: every NaN a decoder writes has
 * these bits (IEEE leaves a generated NaN's sign and payload open). */
#define TAHQ_CANONICAL_NAN_BITS 0x7FC00000u

/* x, or the canonical NaN if x is a NaN (SPEC §1 rule 6). */
/*@ assigns \nothing; */
TAHQ_CORE_FN float tahq_canonical_nan(float x)
{
    return x != x ? tahq_float_of(TAHQ_CANONICAL_NAN_BITS) : x;
}

/* ---- little-endian fields and header offsets (SPEC 8.1) --------------------- */

/* Little-endian field access. */
/*@ requires \valid(p + (0 .. 1));
  @ assigns p[0 .. 1]; */
TAHQ_CORE_FN void tahq_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
}
/*@ requires \valid(p + (0 .. 3));
  @ assigns p[0 .. 3]; */
TAHQ_CORE_FN void tahq_put_u32(uint8_t *p, uint32_t v)
{
    /*@ loop invariant 0 <= i <= 4;
      @ loop assigns i, p[0 .. 3];
      @ loop variant 4 - i; */
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid(p + (0 .. 7));
  @ assigns p[0 .. 7]; */
TAHQ_CORE_FN void tahq_put_u64(uint8_t *p, uint64_t v)
{
    /*@ loop invariant 0 <= i <= 8;
      @ loop assigns i, p[0 .. 7];
      @ loop variant 8 - i; */
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid_read(p + (0 .. 1));
  @ assigns \nothing; */
TAHQ_CORE_FN uint16_t tahq_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] + p[1] * 256);
}
/*@ requires \valid_read(p + (0 .. 3));
  @ assigns \nothing; */
TAHQ_CORE_FN uint32_t tahq_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
/*@ requires \valid_read(p + (0 .. 7));
  @ assigns \nothing; */
TAHQ_CORE_FN uint64_t tahq_get_u64(const uint8_t *p)
{
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
           ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

/* Byte offsets of the fields of the 72-byte header (SPEC 8.1); the bytes
 * 64..67 are reserved (zero). */
#define TAHQ_HDR_MAGIC 0
#define TAHQ_HDR_VERSION 4
#define TAHQ_HDR_HEADER_BYTES 6
#define TAHQ_HDR_TILE_LOG2 8
#define TAHQ_HDR_HI_BITS 9
#define TAHQ_HDR_LO_BITS 10
#define TAHQ_HDR_ALLOC 11
#define TAHQ_HDR_ROUNDING 12
#define TAHQ_HDR_META 13
#define TAHQ_HDR_HI_PERMILLE 14
#define TAHQ_HDR_TAU 16
#define TAHQ_HDR_BATCH 20
#define TAHQ_HDR_SEQ_LEN 24
#define TAHQ_HDR_CHANNELS 28
#define TAHQ_HDR_SEED 32
#define TAHQ_HDR_N_LOW 40
#define TAHQ_HDR_N_FLAGGED 48
#define TAHQ_HDR_PAYLOAD_BYTES 56
#define TAHQ_HDR_RESERVED 64
#define TAHQ_HDR_CRC 68

/* ---- tile size (SPEC 3.3) ---------------------------------------------- */

/* log2 of a power-of-two tile size (8..256); 0 if not one. */
/*@ assigns \nothing;
  @ ensures \result <= 8;
  @ ensures tahq_valid_tile(tile) ==> \result == tahq_lg(tile);
  @ ensures 8 <= tile <= 256 && !tahq_valid_tile(tile) ==> \result == 0; */
TAHQ_CORE_FN uint32_t tahq_tile_log2(uint32_t tile)
{
    uint32_t k = 0;
    /*@ loop invariant 0 <= k <= 9;
      @ loop invariant \forall integer j; 0 <= j < k ==> (1 << j) != tile;
      @ loop invariant tahq_valid_tile(tile) ==> k <= tahq_lg(tile);
      @ loop assigns k;
      @ loop variant 9 - k; */
    while (k < 9u && (1u << k) != tile)
        k++;
    return k < 9u ? k : 0u;
}

/* ---- log2 (SPEC 2.3) ----------------------------------------------------- */

/* Horner coefficients c0..c8 of log2(1+f)/f on [sqrt(1/2)-1, sqrt(2)-1].
 * TAHQ_LOG2_COEFFS initializes an array of the nine. */
#define TAHQ_LOG2_C0 0x1.715476p+0f
#define TAHQ_LOG2_C1 (-0x1.71547p-1f)
#define TAHQ_LOG2_C2 0x1.ec73d4p-2f
#define TAHQ_LOG2_C3 (-0x1.715c9cp-2f)
#define TAHQ_LOG2_C4 0x1.26d41p-2f
#define TAHQ_LOG2_C5 (-0x1.e94f12p-3f)
#define TAHQ_LOG2_C6 0x1.b9b11ep-3f
#define TAHQ_LOG2_C7 (-0x1.a8cc5cp-3f)
#define TAHQ_LOG2_C8 0x1.025a2p-3f
#define TAHQ_LOG2_COEFFS                                                                \
    TAHQ_LOG2_C0, TAHQ_LOG2_C1, TAHQ_LOG2_C2, TAHQ_LOG2_C3, TAHQ_LOG2_C4, TAHQ_LOG2_C5, \
        TAHQ_LOG2_C6, TAHQ_LOG2_C7, TAHQ_LOG2_C8

/* ---- Philox4x32-10 (SPEC 2.4) ------------------------------------------- */

#define TAHQ_PHILOX_M0 0xD2511F53u
#define TAHQ_PHILOX_M1 0xCD9E8D57u
#define TAHQ_PHILOX_W0 0x9E3779B9u
#define TAHQ_PHILOX_W1 0xBB67AE85u

#endif /* TAHQ_CORE_H */
