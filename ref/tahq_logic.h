/* SPDX-License-Identifier: MIT */
/* tahq_logic.h - the ACSL vocabulary of the proofs (proofs/README.md) that
 * needs no type of the library: bit views, bitwise facts, order keys, powers
 * of two and tile sizes. Only comments for a compiler (C, C++
 * or CUDA); Frama-C reads them. The vocabulary about configurations, shapes
 * and layouts stays beside those types in internal.h. */
#ifndef TAHQ_LOGIC_H
#define TAHQ_LOGIC_H

#include <stdint.h>
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

#endif /* TAHQ_LOGIC_H */
