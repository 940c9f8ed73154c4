/* SPDX-License-Identifier: MIT */ /* internal.h - what the ref/ translation units share beyond the public
 * headers: the ACSL vocabulary about configurations, shapes and layouts, the
 * build switches of the fast paths, and (through its includes) the scalar core
 * tahq_core.h and the internal API tahq_ref_api.h. C only; cpu/ includes it
 * too, C++ and CUDA include the two headers named above. */
#ifndef TAHQ_INTERNAL_H
#define TAHQ_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include "tahq.h"
#include "tahq_spec.h"
#include "tahq_paper_v1.h"
#include "tahq_core.h"
#include "tahq_ref_api.h"

/* Ghost lemma functions (defined in format.c): each contract is proved once
 * and instantiated at a ghost call, where WP's simplifier puts the products in
 * the same normal form as the goal that needs them. */
/*@ ghost
  /@ requires 0 <= a <= b && 0 <= c;
   @ assigns \nothing;
   @ ensures a * c <= b * c && c * a <= c * b; @/
  void tahq_mul_mono(uint64_t a, uint64_t b, uint64_t c);
*/

/* TAHQ_SCALAR_ONLY (set for Frama-C and for the tests' scalar build) turns
 * off every fast path: AVX2 clones, 8-lane vectors and the SSE4.2 CRC. */
#if defined(__FRAMAC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_SCALAR_ONLY 1
#endif

/* Hot per-tile loops are compiled twice on x86-64 GCC/Clang (baseline and
 * AVX2) and picked at load time. AVX2 only widens the vectors: FMA is a
 * separate target feature and stays off, so results are identical. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY) && \
    !defined(__clang__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define TAHQ_HOT __attribute__((target_clones("avx2", "default")))
#else
#define TAHQ_HOT
#endif

/* The fast forms that ref/ calls live outside the proof boundary, in
 * cpu/ref_accel.c (library tahq_cpu); ref/ keeps the scalar forms the proofs
 * read and, outside TAHQ_SCALAR_ONLY, one call into cpu/ where a fast form
 * exists. 8-lane vectors (GCC vector extensions, cpu/vec8.h): each computes
 * the same operations as its scalar form; other compilers take the scalar
 * forms. tahq_cpu_fwht8 needs tahq_valid_tile(tile), tahq_cpu_halving_tree8
 * a power of two n >= 8. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_HAVE_V8 1
void tahq_cpu_fwht8(float *x, uint32_t tile);
float tahq_cpu_halving_tree8(float *w, uint32_t n);
#endif
/* The SSE4.2 CRC-32C instruction: tahq_cpu_crc32c advances *c over
 * data[0 .. n) and returns 1, or returns 0 (*c unchanged) on a CPU without
 * SSE4.2. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_HAVE_CRC32C_SSE42 1
int tahq_cpu_crc32c(uint32_t *c, const uint8_t *data, size_t n);
#endif

/* Allocation modes with one precision-map bit per row, ranked per sequence
 * (SPEC §4.2): token (entropy) and gain (§4.3). A macro, not an ACSL logic
 * function, so that the provers see the plain disjunction. */
#define tahq_per_row(alloc) ((alloc) == TAHQ_ALLOC_TOKEN || (alloc) == TAHQ_ALLOC_GAIN)

/*@ // Configuration, shape and message sizes of SPEC §3.3, §3.1, §4.2, §8.2.
  @ predicate tahq_config_ok{L}(tahq_config *cfg) =
  @   \valid_read(cfg) && tahq_valid_tile(cfg->tile) &&
  @   1 <= cfg->hi_bits <= 8 && 1 <= cfg->lo_bits <= cfg->hi_bits && cfg->hi_permille <= 1000 &&
  @   0 <= cfg->alloc <= 3 && 0 <= cfg->rounding <= 1 && 0 <= cfg->meta <= 2 &&
  @   (tahq_f32_bits(cfg->tau) & 0x80000000) == 0 && tahq_not_nan_bits(tahq_f32_bits(cfg->tau));
  @ logic integer tahq_rows{L}(tahq_shape *s) = s->batch * s->seq_len;
  @ logic integer tahq_elements{L}(tahq_shape *s) = tahq_rows(s) * s->channels;
  @ predicate tahq_shape_ok{L}(tahq_config *cfg, tahq_shape *s) =
  @   \valid_read(s) && s->batch >= 1 && s->seq_len >= 1 && s->channels >= cfg->tile &&
  @   s->channels % cfg->tile == 0 && tahq_elements(s) <= 0x10000000000;
  @ logic integer tahq_tpr{L}(tahq_config *cfg, tahq_shape *s) = s->channels / cfg->tile;
  @ logic integer tahq_ntiles{L}(tahq_config *cfg, tahq_shape *s) = tahq_rows(s) * tahq_tpr(cfg, s);
  @ logic integer tahq_group{L}(tahq_config *cfg, tahq_shape *s) =
  @   tahq_per_row(cfg->alloc) ? s->seq_len :
  @   cfg->alloc == TAHQ_ALLOC_TILE ? tahq_tpr(cfg, s) : 0;
  @ logic integer tahq_map_bits{L}(tahq_config *cfg, tahq_shape *s) =
  @   tahq_per_row(cfg->alloc) ? tahq_rows(s) :
  @   cfg->alloc == TAHQ_ALLOC_TILE ? tahq_ntiles(cfg, s) : 0;
  @ logic integer tahq_low(integer n, integer r) = n * (1000 - r) / 1000;
  @ logic integer tahq_required_low{L}(tahq_config *cfg, tahq_shape *s) =
  @   tahq_per_row(cfg->alloc) ? s->batch * tahq_low(s->seq_len, cfg->hi_permille) :
  @   cfg->alloc == TAHQ_ALLOC_TILE ? tahq_rows(s) * tahq_low(tahq_tpr(cfg, s), cfg->hi_permille) : 0;
  @*/

/*@ // The layout of SPEC §8.2 for n_low units and n_flagged tiles.
  @ logic integer tahq_low_tiles{L}(tahq_config *cfg, tahq_shape *s, integer n_low) =
  @   tahq_per_row(cfg->alloc) ? n_low * tahq_tpr(cfg, s) : n_low;
  @ logic integer tahq_meta_size{L}(tahq_config *cfg) = cfg->meta == TAHQ_META_FP32 ? 4 : 2;
  @ logic integer tahq_zero_off{L}(tahq_config *cfg, tahq_shape *s) =
  @   (tahq_map_bits(cfg, s) + 7) / 8 + (tahq_ntiles(cfg, s) + 7) / 8;
  @ logic integer tahq_code_off{L}(tahq_config *cfg, tahq_shape *s) =
  @   tahq_zero_off(cfg, s) + 2 * (tahq_ntiles(cfg, s) * tahq_meta_size(cfg));
  @ logic integer tahq_code_bytes{L}(tahq_config *cfg, tahq_shape *s, integer n_low) =
  @   ((tahq_ntiles(cfg, s) - tahq_low_tiles(cfg, s, n_low)) * cfg->hi_bits +
  @    tahq_low_tiles(cfg, s, n_low) * cfg->lo_bits) * (cfg->tile / 8);
  @ logic integer tahq_pivot_off{L}(tahq_config *cfg, tahq_shape *s, integer n_low) =
  @   tahq_code_off(cfg, s) + tahq_code_bytes(cfg, s, n_low);
  @ logic integer tahq_payload{L}(tahq_config *cfg, tahq_shape *s, integer n_low, integer n_flagged) =
  @   tahq_pivot_off(cfg, s, n_low) + (n_flagged * tahq_lg(cfg->tile) + 7) / 8;
  @ predicate tahq_layout_ok{L}(tahq_layout lay, tahq_config *cfg, tahq_shape *s,
  @                             integer n_low, integer n_flagged) =
  @   lay.tile_log2 == tahq_lg(cfg->tile) &&
  @   lay.rows == tahq_rows(s) && lay.tiles_per_row == tahq_tpr(cfg, s) &&
  @   lay.n_tiles == tahq_ntiles(cfg, s) && lay.map_bits == tahq_map_bits(cfg, s) &&
  @   lay.map_bytes == (lay.map_bits + 7) / 8 && lay.flag_bytes == (lay.n_tiles + 7) / 8 &&
  @   lay.meta_bytes == tahq_meta_size(cfg) &&
  @   lay.zero_off == tahq_zero_off(cfg, s) &&
  @   lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes &&
  @   lay.code_off == tahq_code_off(cfg, s) &&
  @   lay.code_bytes == tahq_code_bytes(cfg, s, n_low) &&
  @   lay.pivot_off == tahq_pivot_off(cfg, s, n_low) &&
  @   lay.pivot_bytes == (n_flagged * lay.tile_log2 + 7) / 8 &&
  @   lay.payload_bytes == tahq_payload(cfg, s, n_low, n_flagged);
  @*/

/* Ghost lemma function (format.c), as tahq_mul_mono above. */
/*@ ghost
  /@ requires po == tahq_pivot_off(cfg, shape, n_low) && lg == tahq_lg(cfg->tile);
   @ assigns \nothing;
   @ ensures tahq_payload(cfg, shape, n_low, n_flagged) == po + (n_flagged * lg + 7) / 8; @/
  void tahq_payload_of(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                       uint64_t n_flagged, uint64_t po, uint32_t lg);
*/

/*@ // The layout facts the tile walks use, stated on values only (the config
  @ // by value), so that they survive stores to other memory; implied by
  @ // tahq_layout_ok for a valid config and shape (tahq_layout_compute).
  @ predicate tahq_layout_wf(tahq_layout lay, tahq_config c) =
  @   tahq_valid_tile(c.tile) && 1 <= c.lo_bits <= c.hi_bits <= 8 &&
  @   0 <= c.alloc <= 3 && 0 <= c.meta <= 2 &&
  @   lay.tile_log2 == tahq_lg(c.tile) && lay.tiles_per_row >= 1 &&
  @   lay.n_tiles == lay.rows * lay.tiles_per_row && lay.n_tiles * c.tile <= 0x10000000000 &&
  @   lay.map_bits == (tahq_per_row(c.alloc) ? lay.rows :
  @                    c.alloc == TAHQ_ALLOC_TILE ? lay.n_tiles : 0) &&
  @   lay.map_bytes == (lay.map_bits + 7) / 8 && lay.flag_bytes == (lay.n_tiles + 7) / 8 &&
  @   lay.meta_bytes == (c.meta == TAHQ_META_FP32 ? 4 : 2) &&
  @   lay.zero_off == lay.map_bytes + lay.flag_bytes &&
  @   lay.scale_off == lay.zero_off + lay.n_tiles * lay.meta_bytes &&
  @   lay.code_off == lay.scale_off + lay.n_tiles * lay.meta_bytes &&
  @   lay.pivot_off == lay.code_off + lay.code_bytes &&
  @   lay.payload_bytes == lay.pivot_off + lay.pivot_bytes &&
  @   lay.payload_bytes <= 0x10000000000000;
  @*/

/*@ // A header that tahq_parse_header accepted for a message of len bytes.
  @ predicate tahq_header_ok{L}(tahq_header *h, integer len) =
  @   tahq_config_ok(&h->config) && tahq_shape_ok(&h->config, &h->shape) &&
  @   h->n_low == tahq_required_low(&h->config, &h->shape) &&
  @   h->n_low <= (tahq_per_row(h->config.alloc) ? tahq_rows(&h->shape) :
  @                tahq_ntiles(&h->config, &h->shape)) &&
  @   h->n_flagged <= tahq_ntiles(&h->config, &h->shape) &&
  @   h->payload_bytes == tahq_payload(&h->config, &h->shape, h->n_low, h->n_flagged) &&
  @   len == TAHQ_HEADER_BYTES + h->payload_bytes;
  @*/

/*@ // Bit i of a LSB-first bit string (SPEC §2.4), the number of one bits
  @ // among bits first .. first+n-1, and the sum of the code widths of tiles
  @ // 0 .. t-1 under a precision map (SPEC §4, §8.2; their codes take G/8 bytes
  @ // per bit of width): tile t is low when the unit holding it (its row in
  @ // token mode, itself in tile mode) is marked.
  @ logic integer tahq_bit{L}(uint8_t *buf, integer i) = (buf[i >> 3] >> (i & 7)) & 1;
  @ logic integer tahq_bit_count{L}(uint8_t *buf, integer first, integer n) =
  @   n <= 0 ? 0 : tahq_bit_count(buf, first, n - 1) + tahq_bit(buf, first + n - 1);
  @ logic integer tahq_unit(tahq_config c, integer tpr, integer t) =
  @   tahq_per_row(c.alloc) ? t / tpr : t;
  @ logic integer tahq_tile_bits{L}(uint8_t *map, tahq_config c, integer tpr, integer t) =
  @   c.alloc != TAHQ_ALLOC_NONE && tahq_bit(map, tahq_unit(c, tpr, t)) == 1 ? c.lo_bits : c.hi_bits;
  @ logic integer tahq_bits_sum{L}(uint8_t *map, tahq_config c, integer tpr, integer t) =
  @   t <= 0 ? 0 : tahq_bits_sum(map, c, tpr, t - 1) + tahq_tile_bits(map, c, tpr, t - 1);
  @ // End of the codes of tiles 0 .. t-1 in the codes section (bytes).
  @ logic integer tahq_code_end{L}(uint8_t *map, tahq_config c, integer tpr, integer t) =
  @   c.tile / 8 * tahq_bits_sum(map, c, tpr, t);
  @*/

/*@ requires \valid_read(buf + i / 8);
  @ assigns \nothing;
  @ ensures \result <= 1 && \result == tahq_bit(buf, i); */
static inline uint32_t tahq_get_bit(const uint8_t *buf, uint64_t i)
{
    return ((uint32_t)buf[i >> 3] >> (i & 7u)) & 1u;
}
/*@ requires \valid(buf + i / 8);
  @ assigns buf[i / 8]; */
static inline void tahq_set_bit(uint8_t *buf, uint64_t i)
{
    /*@ assert (i & 7) <= 7; */
    buf[i >> 3] = (uint8_t)((buf[i >> 3] | (1u << (i & 7u))) & 0xFFu);
}

#endif
