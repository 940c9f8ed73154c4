/* SPDX-License-Identifier: MIT */
/* tahq_ref_api.h - the internal API of the reference (not public, not
 * exported by libtahq.so): functions of ref/ that cpu/, kernels/ and the
 * tests call beyond include/. C, C++ and CUDA host code include it; nobody
 * declares these prototypes by hand. Their contracts are on the definitions
 * (the ref/ sources), the ACSL vocabulary they use in ref/internal.h. */
#ifndef TAHQ_REF_API_H
#define TAHQ_REF_API_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Derived sizes of one message (SPEC §8.2). */
typedef struct tahq_layout {
    uint64_t rows; /* B*S */
    uint64_t tiles_per_row;
    uint64_t n_tiles;
    uint64_t map_bits;
    uint64_t map_bytes;
    uint64_t flag_bytes;
    uint64_t meta_bytes; /* per value */
    uint64_t zero_off;   /* payload offsets */
    uint64_t scale_off;
    uint64_t code_off;
    uint64_t code_bytes;
    uint64_t pivot_off;
    uint64_t pivot_bytes;
    uint64_t payload_bytes;
    uint32_t tile_log2;
} tahq_layout;

/* tahq_encode's argument checks (codec.c), for the encoders that make the
 * same checks in the same order: first the pointers (TAHQ_ERR_NULL; then
 * *out_len = 0), last, once the configuration and shape passed, room for
 * the message bound in out and a workspace of ws_need bytes. */
tahq_status tahq_encode_check_pointers(const tahq_config *cfg, const tahq_shape *shape,
                                       const float *x, const uint8_t *out, size_t *out_len);
tahq_status tahq_encode_check_room(size_t bound, size_t out_capacity, size_t ws_need,
                                   const void *workspace, size_t workspace_bytes);
/* Units ranked together (codec.c): S tokens in token and gain modes, C/T
 * tiles in tile mode, 0 without allocation; cfg and shape valid. */
uint64_t tahq_alloc_group_size(const tahq_config *cfg, const tahq_shape *shape);
/* Number of low-precision units the SPEC requires for cfg and shape (§4.2). */
uint64_t tahq_required_low_units(const tahq_config *cfg, const tahq_shape *shape);
/* The layout for n_low units and n_flagged tiles; cfg and shape valid. Returned
 * by value, so callers keep their facts about memory across the call. */
tahq_layout tahq_layout_compute(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                                uint64_t n_flagged);
/* Header write/read (format.c). */
void tahq_header_write(uint8_t *dst, const tahq_config *cfg, const tahq_shape *shape,
                       uint64_t n_low, uint64_t n_flagged, uint64_t payload_bytes);
void tahq_header_seal(uint8_t *msg, uint64_t payload_bytes);
/* tahq_parse_header (SPEC §8.4) but the CRC: the same checks in the same
 * order, so the same status for every message whose CRC is right; *hdr is
 * unchanged on failure. It reads msg[0 .. min(len, 72) - 1] only (len is the
 * whole message's length), so a caller may pass just the header bytes. For
 * the codecs that compute the CRC in parts (cpu/parallel.c, kernels/). */
tahq_status tahq_parse_header_nocrc(const uint8_t *msg, size_t len, tahq_header *hdr);

/* The paper profile's layout (SPEC Appendix A.3; paper_v1.c): its counts
 * and the bit offset of each section, for a configuration and shape that
 * tahq_paper_v1_check accepts. */
typedef struct tahq_pv1_layout {
    uint64_t B, S, C, T, N, n_low, n_high;
    uint64_t n_elems; /* B*S*C */
    uint64_t rows;    /* B*S */
    uint32_t k, G, lo_bits, hi_bits;
    uint64_t off_lo, off_hi, off_zero, off_scale, off_map, off_flags, off_piv;
} tahq_pv1_layout;
void tahq_pv1_layout_compute(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                             tahq_pv1_layout *l);
/* tahq_paper_v1_encode's argument checks (paper_v1.c), for the encoders
 * that make the same checks in the same order: first *out_len = 0 and the
 * pointers the configuration check needs (TAHQ_ERR_NULL); last the
 * configuration and shape, the data pointers, and room for the message bound
 * in out and a workspace of ws_need bytes. */
tahq_status tahq_paper_v1_encode_check_pointers(const tahq_paper_v1_config *cfg,
                                                const tahq_shape *shape, size_t *out_len);
tahq_status tahq_paper_v1_encode_check_room(const tahq_paper_v1_config *cfg,
                                            const tahq_shape *shape, const float *x,
                                            const uint8_t *out, size_t out_capacity,
                                            const void *workspace, size_t workspace_bytes,
                                            size_t ws_need);

/* The argument checks of tahq_fixpoint_encode and tahq_fixpoint_decode
 * (fixpoint.c), in their order, for the CUDA fixpoint codec. */
tahq_status tahq_fixpoint_encode_check(const float *g, uint64_t rows, uint32_t channels,
                                       uint32_t bits, tahq_meta meta, const uint8_t *codes,
                                       const float *steps);
tahq_status tahq_fixpoint_decode_check(const uint8_t *codes, const float *steps, uint64_t rows,
                                       uint32_t channels, uint32_t bits, const float *out);

/* Ascending heapsort of n 64-bit keys whose low 32 bits are distinct
 * (entropy.c): the order is total, so any correct sort gives the same array. */
void tahq_sort_keys(uint64_t *a, uint64_t n);

/* Allocation (entropy.c): writes the precision map bits of the whole tensor
 * into map (zeroed by the caller) and returns the number of low units. */
uint64_t tahq_allocate(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                       float *entropy_ws, uint64_t *key_ws, uint8_t *map);

/* Gain allocation (SPEC §4.3; entropy.c): as tahq_allocate for alloc gain,
 * key_ws[S]; TAHQ_ERR_RANGE when a tile cannot be quantized at either width. */
tahq_status tahq_allocate_gain(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                               uint64_t *key_ws, uint8_t *map, uint64_t *n_low);
/* The 32-bit gain key of one token of `tiles` tiles whose first element has
 * global index elem0 (gain.c). */
tahq_status tahq_token_gain_key(const tahq_config *cfg, const float *row, uint32_t tiles,
                                uint64_t elem0, uint32_t *key);

/* min and max of a tile (quant.c); the sign of a zero result is unspecified. */
void tahq_tile_range(const float *v, uint32_t tile, float *lo, float *hi);
/* The gate (SPEC §5.1) given the tile's range from tahq_tile_range. */
int tahq_gate_from_range(const float *x, uint32_t tile, float tau, float lo, float hi,
                         uint32_t *pivot);
/* tahq_quantize_tile given the range of v from tahq_tile_range. */
tahq_status tahq_quantize_tile_range(const float *v, uint32_t tile, float lo, float hi,
                                     uint32_t bits, tahq_meta meta, tahq_rounding rounding,
                                     uint64_t seed, uint64_t elem0, float *zero, float *scale,
                                     uint32_t *zero_bits, uint32_t *scale_bits, uint8_t *codes);
/* Wire bit patterns of the metadata values down(x) and up(x) (fp16.c). */
uint32_t tahq_meta_round_down_bits(tahq_meta meta, float x);
uint32_t tahq_meta_round_up_bits(tahq_meta meta, float x);
/* Scale of SPEC §5.3/§7.2 as bits: smallest meta s >= fl(w/L) with fl(w/s) <= L. */
uint32_t tahq_meta_scale_bits(tahq_meta meta, float w, uint32_t levels);

/* Tile codes, byte-aligned, LSB-first (bitpack.c); codes must be < 2^b. */
void tahq_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b);
void tahq_unpack_tile(const uint8_t *src, uint8_t *codes, uint32_t tile, uint32_t b);

#ifdef __cplusplus
}
#endif

#endif /* TAHQ_REF_API_H */
