/* SPDX-License-Identifier: MIT */
/* fast_encode.h - the encoder's per-tile fast path (cpu/fast_encode.c): the
 * steps of ref/codec.c's encode_tiles for one tile (range, gate, transform,
 * metadata, codes, packing) with the same bytes, on the CPU path of
 * cpu_path.h (avx2; avx512: the 16-lane forms of encode_avx512.h for tiles
 * of 16 values and more). On the scalar path, under TAHQ_SCALAR_ONLY, on
 * other compilers and CPUs tahq_fast_encode_active() is 0 and the caller
 * keeps the reference's functions. Not public. */
#ifndef TAHQ_CPU_FAST_ENCODE_H
#define TAHQ_CPU_FAST_ENCODE_H

#include <stdint.h>

#include "tahq.h"

/* 1 if the fast paths below run: the avx2 or avx512 path (cpu_path.h). */
int tahq_fast_encode_active(void);

/* binary16 conversions with F16C (VCVTPS2PH's rounding immediates, VCVTPH2PS)
 * where the CPU has it, else the reference's integer code. For every
 * binary32 x that is not a NaN (tests/test_fast_encode.c checks all of
 * them): down_bits(x) == tahq_meta_round_down_bits(TAHQ_META_FP16, x) and
 * up_bits(x) == tahq_meta_round_up_bits(TAHQ_META_FP16, x); for every
 * binary16 h that is not a NaN: value(h) == tahq_meta_value(TAHQ_META_FP16, h)
 * (as bits). */
uint16_t tahq_fast_f16_down_bits(float x);
uint16_t tahq_fast_f16_up_bits(float x);
float tahq_fast_f16_value(uint16_t h);

/* SPEC §5.3 steps 2-3 (ref/quant.c tile_zero_scale) from the range [lo, hi]
 * of a finite tile, with the conversions above for fp16 metadata. */
tahq_status tahq_fast_zero_scale(tahq_meta meta, float lo, float hi, uint32_t levels, float *zero,
                                 float *scale, uint32_t *zero_bits, uint32_t *scale_bits);

/* Where a run of tiles writes (SPEC §8.2): the codes of its first tile, the
 * zero-point and scale fields of tile 0 (each meta_bytes wide, tile t at
 * t * meta_bytes), the gate flags (bit t) and the pivots (k bits each from
 * bit pivot_bit; the bits there are zero: they are ORed in). tahq_fast_encode_run advances codes and pivot_bit. */
typedef struct tahq_fast_run {
    uint8_t *codes;
    uint8_t *zeros, *scales, *flags, *pivots;
    uint64_t pivot_bit;
} tahq_fast_run;

/* Tiles t0 .. t0 + count - 1 of x (tile t at x + t * cfg->tile), all of
 * width `bits`, one after the other: the gate flag and pivot (SPEC §5.1),
 * the transform of a flagged tile (§5.2), metadata bits and codes (§5.3)
 * packed (§8.3), exactly as tahq_tile_range, tahq_gate_from_range,
 * tahq_hadamard_forward, tahq_quantize_tile_range and tahq_pack_tile do in
 * ref/codec.c; the fields written where `run` says. The input is finite. Stops at the first tile whose metadata
 * overflows (TAHQ_ERR_RANGE; its fields unwritten). Only when
 * tahq_fast_encode_active(). */
tahq_status tahq_fast_encode_run(const tahq_config *cfg, const float *x, uint64_t t0,
                                 uint64_t count, uint32_t bits, tahq_fast_run *run);

/* What the gain key's pass (cpu/fast_gain.c) learns of a tile and the
 * message's tile phase would compute again: the metadata bits at lo_bits
 * (index 0) and hi_bits (index 1), the gate flag and the pivot. The zero
 * point and scale are the values of those bits (tile_zero_scale sets
 * z = value(zero_bits), s = value(scale_bits), +0 for the bits 0). */
typedef struct tahq_tile_meta {
    uint32_t zero_bits[2], scale_bits[2];
    uint16_t pivot, flagged;
} tahq_tile_meta;
/* include/tahq_parallel.h states the workspace in these bytes per tile */
_Static_assert(sizeof(tahq_tile_meta) == 20, "tahq_tile_meta: 20 bytes");

/* tahq_fast_encode_run with the range, gate and metadata of each tile taken
 * from known[0 .. count) (tile t0 + i in known[i], as the gain key's pass
 * left them for this configuration and input) instead of computed again:
 * the same bytes, since they are the values computed by the same operations.
 * Tiles whose metadata overflowed never reach it (the gain key failed). */
tahq_status tahq_fast_encode_run_known(const tahq_config *cfg, const float *x, uint64_t t0,
                                       uint64_t count, uint32_t bits, const tahq_tile_meta *known,
                                       tahq_fast_run *run);

/* tahq_fast_encode_run_known for a run at hi_bits whose packed codes the
 * gain key's pass wrote (tahq_fast_gain_key's hi_codes, from tile t0's):
 * the codes copied, the fields from known; the input is not read. */
void tahq_fast_encode_run_coded(const tahq_config *cfg, uint64_t t0, uint64_t count, uint32_t bits,
                                const tahq_tile_meta *known, const uint8_t *codes,
                                tahq_fast_run *run);

/* The input check (SPEC §3.2) and the entropy (§4.1, tahq_entropy) of a row
 * of `tiles` tiles of `tile` values: 0 if an element is not finite or has
 * |x| >= 2^64 (then the caller finds it with tahq_cpu_first_bad), else 1
 * with *entropy = tahq_entropy(row, tiles, tile) (the same bits). Only when
 * tahq_fast_encode_active(). */
int tahq_fast_row_entropy(const float *row, uint32_t tiles, uint32_t tile, float *entropy);

/* y[i] = tahq_log2(x[i]) for 8 values x[i] >= +0 (SPEC §2.3), with the
 * 8-lane form tahq_fast_row_entropy uses where the CPU has it. */
void tahq_fast_log2_8(const float *x, float *y);

#endif
