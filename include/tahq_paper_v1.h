/* SPDX-License-Identifier: MIT */ /*
 * tahq_paper_v1.h - the paper-v1 compatibility profile of libtahq: the
 * authors' own TAH-Quant format (ref/SPEC.md Appendix A), encoder, decoder,
 * unpacker and its primitives. Format 1 is in tahq.h.
 */
#ifndef TAHQ_PAPER_V1_H
#define TAHQ_PAPER_V1_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* =====================================================================
 * paper-v1 compatibility profile (ref/SPEC.md Appendix A)
 *
 * The authors' codec numerics and their raw wire layout: token allocation
 * with n_low = floor(S*(1-r)) in binary64, tokens reordered (low first),
 * natural-log entropy with their 1e-30 epsilons, gate m1 >= 2*m2, pivot
 * swap + Hadamard, binary32 zero/scale sent as fp16, an MSB-first bit
 * stream with no header. Not format 1: the decoder needs the configuration
 * and the shape from the caller. Errors use the tahq_status codes.
 * ===================================================================== */

typedef struct tahq_paper_v1_config {
    uint32_t tile;        /* G: power of two, 8..256 */
    uint32_t hi_bits;     /* 1..8 (the authors' 4) */
    uint32_t lo_bits;     /* 1..8 (the authors' 3) */
    uint32_t hi_permille; /* r in 1/1000, 0..1000 (the authors' 0.8 = 800) */
} tahq_paper_v1_config;
#if !defined(__FRAMAC__) && (defined(__LP64__) || defined(_WIN64))
#ifdef __cplusplus
static_assert(sizeof(tahq_paper_v1_config) == 16, "tahq struct layout changed: update python/tahq");
#else
_Static_assert(sizeof(tahq_paper_v1_config) == 16,
               "tahq struct layout changed: update python/tahq");
#endif
#endif

/* G=64, 4/3 bits, r=0.8. */
void tahq_paper_v1_config_default(tahq_paper_v1_config *cfg);
/* CONFIG or SHAPE (the shape rules of format 1, §3.1). */
tahq_status tahq_paper_v1_check(const tahq_paper_v1_config *cfg, const tahq_shape *shape);
/* floor(S * (1.0 - hi_permille/1000.0)) in binary64 (A.2): 204 for S=1024, r=800. */
uint64_t tahq_paper_v1_low_count(uint32_t seq_len, uint32_t hi_permille);
/* Largest message (every tile flagged) and the exact length for n_flagged tiles. */
tahq_status tahq_paper_v1_encode_bound(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       size_t *bytes);
tahq_status tahq_paper_v1_message_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                       uint64_t n_flagged, size_t *bytes);
tahq_status tahq_paper_v1_workspace_size(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                         size_t *bytes);
/* Encode x[B*S*C]. out_capacity must be at least tahq_paper_v1_encode_bound;
 * every check (config, shape, buffers, input finite with |x| < 2^64) runs
 * before anything is written. */
tahq_status tahq_paper_v1_encode(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                 const float *x, void *workspace, size_t workspace_bytes,
                                 uint8_t *out, size_t out_capacity, size_t *out_len);
/* Decode into out[count], count = B*S*C; out is written only after the
 * message has been validated (A.4). */
tahq_status tahq_paper_v1_decode(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, float *out, size_t count);
/* The message's fields, indexed by ORIGINAL position (any pointer may be
 * NULL): low_map[B*S] (1 = low), and per tile (B*S*C/G, original tile
 * order) flags, pivots (0 where not flagged), zeros and scales (fp16 bits),
 * codes[B*S*C]. Validates as decode does. */
tahq_status tahq_paper_v1_unpack(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                                 const tahq_shape *shape, uint8_t *low_map, uint8_t *flags,
                                 uint16_t *pivots, uint16_t *zeros, uint16_t *scales,
                                 uint8_t *codes, uint64_t *n_flagged);
/* A.1 primitives: ln(y) = fl(log2(y) * fl(ln 2)); the entropy of one token
 * of C channels; the gate (1 = flagged, *pivot = first index of max |x|);
 * the transform (swap, FWHT, / fl(sqrt G); inverse: FWHT, / fl(sqrt G),
 * swap); the quantizer (binary32 zero and scale, codes). */
float tahq_paper_v1_ln(float y);
float tahq_paper_v1_entropy(const float *x, uint32_t channels, uint32_t tile);
int tahq_paper_v1_gate(const float *x, uint32_t tile, uint32_t *pivot);
void tahq_paper_v1_hadamard(float *v, uint32_t tile, uint32_t pivot, int inverse);
void tahq_paper_v1_quantize_tile(const float *v, uint32_t tile, uint32_t bits, float *zero,
                                 float *scale, uint8_t *codes);

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_PAPER_V1_H */
