/* SPDX-License-Identifier: MIT */
/* fast_tile.h - per-tile fast paths of the CPU codec (cpu/fast_tile.c):
 * the same bytes and floats as the reference functions they replace
 * (tahq_pack_tile, tahq_unpack_tile + tahq_dequantize_tile with
 * tahq_meta_value, the stochastic codes of ref/quant.c), with x86-64 BMI2/AVX2/F16C instructions chosen at run
 * time. Under TAHQ_SCALAR_ONLY, on other compilers or CPUs, they call the
 * reference functions. Not public. */
#ifndef TAHQ_CPU_FAST_TILE_H
#define TAHQ_CPU_FAST_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"

/* 1 if the instruction-set fast paths run: the avx2 or avx512 path of
 * cpu_path.h (for reports). */
int tahq_fast_tile_active(void);

/* tahq_pack_tile: codes[0 .. tile) (each < 2^b) into tile*b/8 bytes. */
void tahq_fast_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b);

/* tahq_unpack_tile then tahq_dequantize_tile: out[i] = zero + (float)q_i * scale. */
void tahq_fast_decode_tile(const uint8_t *src, uint32_t tile, uint32_t b, float zero, float scale,
                           float *out);

/* The stochastic codes of SPEC §5.3 (ref/quant.c codes_stochastic) for a
 * tile whose zero-point and non-zero scale are known; elem0 = the index of
 * the tile's first element (a multiple of the tile). Returns 0 without
 * writing if there is no fast path on this CPU (then the caller uses the
 * reference). Philox4x32-10 runs on 8 blocks (32 elements) at a time. */
int tahq_fast_codes_stochastic(const float *v, uint32_t tile, float zero, float scale,
                               uint32_t levels, uint64_t seed, uint64_t elem0, uint8_t *codes);

/* words[i] = the random word of element elem0 + i (SPEC §2.4: Philox4x32-10
 * of block (elem0 + i) / 4, word (elem0 + i) mod 4) for i < tile (a multiple
 * of 8; elem0 a multiple of the tile), as tahq_fast_codes_stochastic draws
 * them. Returns 0 without writing if there is no fast path on this CPU. */
int tahq_fast_random_words(uint64_t seed, uint64_t elem0, uint32_t tile, uint32_t *words);

/* x[i] = the canonical NaN if x[i] is a NaN (SPEC §1 rule 6), else x[i]. */
void tahq_fast_canonical_nans(float *x, uint32_t n);

/* What the decoder of a validated format-1 message needs to decode tiles
 * (SPEC §8.2 sections; the metadata already checked finite). */
typedef struct tahq_fast_dec {
    const uint8_t *zero;   /* zero-point of tile 0 */
    const uint8_t *scale;  /* scale of tile 0 */
    const uint8_t *flags;  /* gate flags: bit t for tile t */
    const uint8_t *pivots; /* the pivots section */
    const uint8_t *end;    /* end of the message: nothing at or past it is read */
    float *out;            /* output of tile 0 */
    uint32_t tile, tile_log2, meta_bytes;
    tahq_meta meta;
} tahq_fast_dec;

/* Tiles t .. t + n - 1, all of code width b, as tahq_decode does each one
 * (tahq_unpack_tile, tahq_dequantize_tile with tahq_meta_value, then for a
 * flagged tile tahq_hadamard_inverse and the canonical NaN rule): codes
 * from *codes, the run's first pivot is number *pivot; both are advanced
 * past the run. The fast path keeps a flagged tile in registers from its
 * codes to its store. */
void tahq_fast_decode_tiles(const tahq_fast_dec *d, uint64_t t, uint64_t n, uint32_t b,
                            const uint8_t **codes, uint64_t *pivot);

/* SPEC §8.4 step 5 on the metadata of n tiles: 1 if a zero-point at zp is
 * not finite or is -0, or a scale at sp is not finite or has its sign bit
 * set (ref/codec.c: fl(v - v) != 0, zero == -0, scale < 0 or -0), else 0. */
int tahq_fast_meta_bad(const uint8_t *zp, const uint8_t *sp, uint64_t n, tahq_meta meta);

/* tahq_crc32c (CRC-32C continued from crc over data[0 .. n)); with SSE4.2,
 * long inputs as three interleaved streams joined by
 * tahq_gf2_crc32c_combine (the crc32 instruction has a latency of 3 cycles
 * and a throughput of 1). */
uint32_t tahq_fast_crc32c(uint32_t crc, const uint8_t *data, size_t n);

#endif
