/* SPDX-License-Identifier: MIT */ /* internal.h - helpers shared by the ref/ translation units (not public). */
#ifndef TAHQ_INTERNAL_H
#define TAHQ_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include "tahq.h"
#include "tahq_spec.h"
#include "tahq_paper_v1.h"
#ifdef __FRAMAC__
#include "__fc_integer.h" /* ACSL bit_test(x, k), which WP maps to its own bit library */
#endif

/*@ // ACSL vocabulary of the proofs (proofs/README.md).
  @ axiomatic TahqBits {
  @   // bits(x) of SPEC §2.1. WP's memory model cannot see through the
  @   // memcpy below, so the two bit-view contracts are assumed for WP (and
  @   // checked by Eva); every other fact about bits is derived from them.
  @   logic integer tahq_f32_bits(float x) reads \nothing;
  @   axiom tahq_f32_bits_range: \forall float x; 0 <= tahq_f32_bits(x) <= 0xFFFFFFFF;
  @ }
  @ axiomatic TahqBitwise {
  @   // Facts about <<, >>, & and | on non-negative integers (two's
  @   // complement). WP's provers see these operators as uninterpreted, so
  @   // the facts are assumed (proofs/README.md, "trusted base").
  @   axiom tahq_lsl_mono: \forall integer x, y, s; 0 <= x <= y && 0 <= s ==> (x << s) <= (y << s);
  @   axiom tahq_pow2_pos: \forall integer s; 0 <= s ==> 1 <= (1 << s);
  @   axiom tahq_land_le: \forall integer x, y; 0 <= x && 0 <= y ==>
  @     0 <= (x & y) <= x && (x & y) <= y;
  @   axiom tahq_land_low: \forall integer x, s; 0 <= x && 0 <= s ==>
  @     (x & ((1 << s) - 1)) == x % (1 << s);
  @   axiom tahq_land_7: \forall integer x; 0 <= x ==> (x & 7) == x % 8;
  @   axiom tahq_land_1: \forall integer x; 0 <= x ==> (x & 1) == x % 2;
  @   axiom tahq_land_u32: \forall integer x; 0 <= x ==> (x & 0xFFFFFFFF) == x % 0x100000000;
  @   axiom tahq_lor_shift: \forall integer x, y, s; 0 <= x && 0 <= s && 0 <= y < (1 << s) ==>
  @     ((x << s) | y) == (x << s) + y;
  @   axiom tahq_land_255: \forall integer x; 0 <= x ==> (x & 0xFF) == x % 256;
  @   axiom tahq_lnot: \forall integer x; ~x == -x - 1;
  @   axiom tahq_lor_le: \forall integer x, y; 0 <= x && 0 <= y ==>
  @     x <= (x | y) && y <= (x | y) && (x | y) <= x + y;
  @   axiom tahq_lor_u8: \forall integer x, y; 0 <= x <= 0xFF && 0 <= y <= 0xFF ==>
  @     (x | y) <= 0xFF;
  @   axiom tahq_lor_u16: \forall integer x, y; 0 <= x <= 0xFFFF && 0 <= y <= 0xFFFF ==>
  @     (x | y) <= 0xFFFF;
  @   axiom tahq_lor_u32: \forall integer x, y; 0 <= x <= 0xFFFFFFFF && 0 <= y <= 0xFFFFFFFF ==>
  @     (x | y) <= 0xFFFFFFFF;
  @   axiom tahq_top_bit_set: \forall integer x; 0x80000000 <= x <= 0xFFFFFFFF ==>
  @     x == 0x80000000 + (x & 0x7FFFFFFF);
  @   axiom tahq_top_bit_clear: \forall integer x; 0 <= x < 0x80000000 ==> (x & 0x7FFFFFFF) == x;
  @ }
  @ // The mask 2^b - 1 and its bits: bit k is set exactly when k < b.
  @ // bit_test (ACSL, Frama-C's __fc_integer.h) is WP's own bit predicate,
  @ // which its bit library links to & | ~ << >>; it has no fact about a
  @ // mask. (A named mask keeps the axioms out of the goals that do not use
  @ // it.)
  @ axiomatic TahqMaskBits {
  @   logic integer tahq_low_mask(integer b) reads \nothing;
  @   axiom tahq_low_mask_def: \forall integer b; 0 <= b ==> tahq_low_mask(b) == (1 << b) - 1;
  @   axiom tahq_mask_bits: \forall integer b, k; 0 <= b && 0 <= k ==>
  @     (bit_test(tahq_low_mask(b), k) <==> k < b);
  @ }
  @ predicate tahq_not_nan_bits(integer w) = (w & 0x7FFFFFFF) <= 0x7F800000;
  @ logic integer tahq_mag(float x) = tahq_f32_bits(x) & 0x7FFFFFFF;
  @ // Signed order key of a bit pattern (quant.c) and its inverse.
  @ logic integer tahq_okey(integer u) = u >= 0x80000000 ? -(u & 0x7FFFFFFF) - 1 : u;
  @ logic integer tahq_okey_inv(integer k) = k < 0 ? 0x80000000 + (-(k + 1)) : k;
  @ lemma tahq_okey_inverse: \forall integer u; 0 <= u <= 0xFFFFFFFF ==>
  @   tahq_okey_inv(tahq_okey(u)) == u;
  @ lemma tahq_okey_range: \forall integer u; 0 <= u <= 0xFFFFFFFF ==>
  @   -0x80000000 <= tahq_okey(u) <= 0x7FFFFFFF;
  @ axiomatic TahqPow2 {
  @   // n is a power of two 2^k, 0 <= k <= 31 (facts assumed: proofs/README.md).
  @   predicate tahq_is_pow2(integer n);
  @   axiom tahq_pow2_range: \forall integer n; tahq_is_pow2(n) ==> 1 <= n <= 0x80000000;
  @   axiom tahq_pow2_one: tahq_is_pow2(1);
  @   axiom tahq_pow2_double: \forall integer n, m; tahq_is_pow2(n) && tahq_is_pow2(m) && m < n ==>
  @     2 * m <= n && tahq_is_pow2(2 * m);
  @ }
  @ // Number of one bits of c >= 0 (SPEC §2.5 pairwise stack depth).
  @ logic integer tahq_popcount(integer c) = c <= 0 ? 0 : c % 2 + tahq_popcount(c / 2);
  @ axiomatic TahqPopcount {
  @   // Needs induction on c; assumed (proofs/README.md, "trusted base").
  @   axiom tahq_popcount_bound: \forall integer c; 0 <= c <= 0xFFFFFFFF ==>
  @     0 <= tahq_popcount(c) <= 32 && (1 <= c ==> 1 <= tahq_popcount(c));
  @ }
  @ // Allocation keys (entropy.c): the low 32 bits of a[0 .. m-1] are distinct
  @ // unit indices below n, so marking the first n_low marks n_low units.
  @ predicate tahq_keys_ok{L}(uint64_t *a, integer m, integer n) =
  @   (\forall integer p; 0 <= p < m ==> a[p] % 0x100000000 < n) &&
  @   (\forall integer p, q; 0 <= p < q < m ==> a[p] % 0x100000000 != a[q] % 0x100000000);
  @ predicate tahq_pow2_le256(integer h) = h == 1 || h == 2 || h == 4 || h == 8 || h == 16 ||
  @   h == 32 || h == 64 || h == 128 || h == 256;
  @ predicate tahq_valid_tile(integer g) =
  @   g == 8 || g == 16 || g == 32 || g == 64 || g == 128 || g == 256;
  @ logic integer tahq_lg(integer g) =
  @   g == 8 ? 3 : g == 16 ? 4 : g == 32 ? 5 : g == 64 ? 6 : g == 128 ? 7 : g == 256 ? 8 : 0;
  @ // Shifts by small amounts unfolded for the provers (each proved by a
  @ // case split on k).
  @ lemma tahq_pow2_small: \forall integer k; 0 <= k <= 10 ==> (1 << k) ==
  @   (k == 0 ? 1 : k == 1 ? 2 : k == 2 ? 4 : k == 3 ? 8 : k == 4 ? 16 :
  @    k == 5 ? 32 : k == 6 ? 64 : k == 7 ? 128 : k == 8 ? 256 : k == 9 ? 512 : 1024);
  @ lemma tahq_lsr_1: \forall integer x; 0 <= x ==> (x >> 1) == x / 2;
  @ lemma tahq_lsr_3: \forall integer x; 0 <= x ==> (x >> 3) == x / 8;
  @ lemma tahq_pow2_u32: \forall integer k; 0 <= k <= 31 ==> 1 <= (1 << k) <= 0x80000000;
  @ lemma tahq_lsr_ge14: \forall integer m, k; 0 <= m <= 0xFFFFFF && 14 <= k <= 24 ==> (m >> k) <= 0x3FF;
  @ lemma tahq_lsl255_small: \forall integer k; 0 <= k <= 7 ==> (255 << k) <= 32640;
  @ lemma tahq_lsl255_bytes: \forall integer k; 0 <= k <= 7 ==> (255 << (8 * k)) <= 0xFF00000000000000;
  @*/

/* Ghost lemma functions (defined in format.c): each contract is proved once
 * and instantiated at a ghost call, where WP's simplifier puts the products in
 * the same normal form as the goal that needs them. */
/*@ ghost
  /@ requires 0 <= a <= b && 0 <= c;
   @ assigns \nothing;
   @ ensures a * c <= b * c && c * a <= c * b; @/
  void tahq_mul_mono(uint64_t a, uint64_t b, uint64_t c);
*/

/* Bit views of binary32 values (SPEC §2.1); memcpy is the defined way in C. */
/*@ assigns \nothing;
  @ ensures \result == tahq_f32_bits(x); */
static inline uint32_t tahq_bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(w) ==> tahq_f32_bits(\result) == w; */
static inline float tahq_float_of(uint32_t w)
{
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
}

/*@ assigns \nothing;
  @ ensures tahq_not_nan_bits(tahq_f32_bits(x)) ==>
  @         tahq_f32_bits(\result) == (tahq_f32_bits(x) & 0x7FFFFFFF); */
static inline float tahq_absf(float x)
{
    return tahq_float_of(tahq_bits_of(x) & 0x7FFFFFFFu);
}

/* The canonical quiet NaN of SPEC §1 rule 6: every NaN a decoder writes has
 * these bits (IEEE leaves a generated NaN's sign and payload open). */
#define TAHQ_CANONICAL_NAN_BITS 0x7FC00000u

/* x, or the canonical NaN if x is a NaN (SPEC §1 rule 6). */
/*@ assigns \nothing; */
static inline float tahq_canonical_nan(float x)
{
    return x != x ? tahq_float_of(TAHQ_CANONICAL_NAN_BITS) : x;
}

/* TAHQ_SCALAR_ONLY (set for Frama-C and for the tests' scalar build) turns
 * off every fast path: AVX2 clones, 8-lane vectors and the SSE4.2 CRC. */
#if defined(__FRAMAC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_SCALAR_ONLY 1
#endif

/* Hot per-tile loops are compiled twice on x86-64 GCC/Clang (baseline and
 * AVX2) and picked at load time. AVX2 only widens the vectors: FMA is a
 * separate target feature and stays off, so results are identical. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY) && !defined(__clang__) && \
    defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define TAHQ_HOT __attribute__((target_clones("avx2", "default")))
#else
#define TAHQ_HOT
#endif

#if defined(__GNUC__) && !defined(__clang__) && !defined(TAHQ_SCALAR_ONLY)
/* 8-lane vectors (GCC vector extensions, __builtin_shuffle) for the fast
 * paths; each computes the same operations as its scalar form. Other
 * compilers take the scalar forms. */
#define TAHQ_HAVE_V8 1
typedef float tahq_v8f __attribute__((vector_size(32)));
typedef int32_t tahq_v8i __attribute__((vector_size(32)));
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

/* log2 of a power-of-two tile size (8..256); 0 if not one. */
/*@ assigns \nothing;
  @ ensures \result <= 8;
  @ ensures tahq_valid_tile(tile) ==> \result == tahq_lg(tile);
  @ ensures 8 <= tile <= 256 && !tahq_valid_tile(tile) ==> \result == 0; */
static inline uint32_t tahq_tile_log2(uint32_t tile)
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

/* Derived sizes of one message (SPEC §8.2). */
typedef struct tahq_layout {
    uint64_t rows;        /* B*S */
    uint64_t tiles_per_row;
    uint64_t n_tiles;
    uint64_t map_bits;
    uint64_t map_bytes;
    uint64_t flag_bytes;
    uint64_t meta_bytes;  /* per value */
    uint64_t zero_off;    /* payload offsets */
    uint64_t scale_off;
    uint64_t code_off;
    uint64_t code_bytes;
    uint64_t pivot_off;
    uint64_t pivot_bytes;
    uint64_t payload_bytes;
    uint32_t tile_log2;
} tahq_layout;

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

/* Little-endian field access. */
/*@ requires \valid(p + (0 .. 1));
  @ assigns p[0 .. 1]; */
static inline void tahq_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
}
/*@ requires \valid(p + (0 .. 3));
  @ assigns p[0 .. 3]; */
static inline void tahq_put_u32(uint8_t *p, uint32_t v)
{
    /*@ loop invariant 0 <= i <= 4;
      @ loop assigns i, p[0 .. 3];
      @ loop variant 4 - i; */
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid(p + (0 .. 7));
  @ assigns p[0 .. 7]; */
static inline void tahq_put_u64(uint8_t *p, uint64_t v)
{
    /*@ loop invariant 0 <= i <= 8;
      @ loop assigns i, p[0 .. 7];
      @ loop variant 8 - i; */
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
}
/*@ requires \valid_read(p + (0 .. 1));
  @ assigns \nothing; */
static inline uint16_t tahq_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] + p[1] * 256);
}
/*@ requires \valid_read(p + (0 .. 3));
  @ assigns \nothing; */
static inline uint32_t tahq_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}
/*@ requires \valid_read(p + (0 .. 7));
  @ assigns \nothing; */
static inline uint64_t tahq_get_u64(const uint8_t *p)
{
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
           ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
           ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

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
