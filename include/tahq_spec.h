/* SPDX-License-Identifier: MIT */ /*
 * tahq_spec.h - the SPEC primitives of libtahq, one function per
 * step of ref/SPEC.md, for implementers of the format and for tests: check
 * each step of another implementation on its own (the CUDA kernels' host
 * emulation and the golden-vector generator use them too). Section numbers
 * (§) refer to ref/SPEC.md. The codec itself is in tahq.h.
 */
#ifndef TAHQ_SPEC_H
#define TAHQ_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* §2.2 binary16 / bfloat16 conversions (round to nearest even, subnormals kept). */
uint16_t tahq_f32_to_f16(float x);
float tahq_f16_to_f32(uint16_t h);
uint16_t tahq_f32_to_bf16(float x);
float tahq_bf16_to_f32(uint16_t h);
/* §2.2 directed rounding of a binary32 value onto the metadata grid:
 * largest meta value <= x, smallest meta value >= x (may be +-inf). */
float tahq_meta_round_down(tahq_meta meta, float x);
float tahq_meta_round_up(tahq_meta meta, float x);
/* Encode / decode one metadata value as its wire bits (fp32: the bits). */
uint32_t tahq_meta_bits(tahq_meta meta, float v);
float tahq_meta_value(tahq_meta meta, uint32_t bits);
uint32_t tahq_meta_bytes(tahq_meta meta);

/* §2.4 Philox4x32-10: out = philox(counter, key). */
void tahq_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);
/* The 32-bit random word for element index idx under seed (§2.4). */
uint32_t tahq_random_word(uint64_t seed, uint64_t idx);

/* §2.3 the SPEC's log2 for 0 < x <= 1 (finite positive x in general). */
float tahq_log2(float x);
/* §2.5 pairwise sum of n values, n a power of two (halving tree). */
float tahq_tree_sum(const float *v, uint32_t n);
/* §4.1 entropy of a unit of n = tiles*G values (tiles >= 1), in bits. */
float tahq_entropy(const float *x, uint32_t tiles, uint32_t tile);

/* §5.1 outlier gate: returns 1 if flagged; *pivot = lowest index of max |x|. */
int tahq_gate(const float *x, uint32_t tile, float tau, uint32_t *pivot);
/* §5.2 unnormalized in-place fast Walsh-Hadamard transform, stages h=1,2,..,G/2. */
void tahq_fwht(float *x, uint32_t tile);
/* The same transform as plain scalar loops (the fast path above must match
 * it bit for bit; test_hadamard compares them at every G). */
void tahq_fwht_scalar(float *x, uint32_t tile);
/* §5.2 forward (swap, FWHT, *2^-ceil(k/2)) and inverse (FWHT, *2^-floor(k/2), swap). */
void tahq_hadamard_forward(float *x, uint32_t tile, uint32_t pivot);
void tahq_hadamard_inverse(float *x, uint32_t tile, uint32_t pivot);

/* §5.3 quantize one tile of values v[G] with b bits: zero/scale (already on
 * the metadata grid) and codes[G]. elem0 is the global index of v[0] (for
 * stochastic rounding). Returns TAHQ_ERR_RANGE on metadata overflow. */
tahq_status tahq_quantize_tile(const float *v, uint32_t tile, uint32_t bits, tahq_meta meta,
                               tahq_rounding rounding, uint64_t seed, uint64_t elem0, float *zero,
                               float *scale, uint8_t *codes);
void tahq_dequantize_tile(const uint8_t *codes, uint32_t tile, float zero, float scale, float *out);

/* §8.3 LSB-first bit packing of n codes of b bits starting at bit offset
 * bitpos of buf (buf must hold ceil((bitpos + n*b)/8) bytes; bits outside the
 * written range are preserved). */
void tahq_pack_bits(uint8_t *buf, uint64_t bitpos, const uint8_t *codes, uint64_t n, uint32_t b);
void tahq_unpack_bits(const uint8_t *buf, uint64_t bitpos, uint8_t *codes, uint64_t n, uint32_t b);

/* §2.6 CRC-32C (Castagnoli, reflected, init and xorout 0xFFFFFFFF); §8.1 says what it covers. */
uint32_t tahq_crc32c(uint32_t crc, const uint8_t *data, size_t n);

/* The number of low-precision units of a group of n units (§4.2):
 * floor(n * (1000 - hi_permille) / 1000) in integer arithmetic. */
uint64_t tahq_low_count(uint64_t n, uint32_t hi_permille);

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_SPEC_H */
