/* fast_tile.h - per-tile fast paths of the CPU codec (cpu/fast_tile.c):
 * the same bytes and floats as the reference functions they replace
 * (tahq_pack_tile, tahq_unpack_tile + tahq_dequantize_tile with
 * tahq_meta_value, the stochastic codes of ref/quant.c), with x86-64 BMI2/AVX2/F16C instructions chosen at run
 * time. Under TAHQ_SCALAR_ONLY, on other compilers or CPUs, they call the
 * reference functions. Not public. */
#ifndef TAHQ_CPU_FAST_TILE_H
#define TAHQ_CPU_FAST_TILE_H

#include <stdint.h>

#include "tahq.h"

/* 1 if the instruction-set fast paths run on this CPU (for reports). */
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

/* tahq_hadamard_inverse (SPEC §5.2 inverse) then the canonical NaN rule
 * (SPEC §1 rule 6) on a decoded flagged tile. */
void tahq_fast_inverse_tile(float *x, uint32_t tile, uint32_t pivot);

/* x[i] = the canonical NaN if x[i] is a NaN (SPEC §1 rule 6), else x[i]. */
void tahq_fast_canonical_nans(float *x, uint32_t n);

/* The same with the zero-point and scale given as the wire bits of finite
 * metadata values (widened as tahq_meta_value does). */
void tahq_fast_decode_tile_meta(const uint8_t *src, uint32_t tile, uint32_t b, tahq_meta meta,
                                uint32_t zero_bits, uint32_t scale_bits, float *out);

#endif
