/* SPDX-License-Identifier: MIT */ /* theorems.c - properties stated over several functions of ref/, as C
 * functions that WP proves from those functions' contracts alone (they are
 * given to WP with ref/, never compiled into the library).
 *
 * Bit-stream round trip (SPEC §8.3): unpacking what tahq_pack_bits wrote
 * gives back every code's low b bits, at any bit offset and width 1..8
 * (stated bit by bit: see proofs/README.md, "What is proved").
 *
 * Tile round trip (SPEC §8.3, the codec's tiles): unpacking what
 * tahq_pack_tile wrote gives back every code, bit by bit, when every code
 * fits in b bits (which the quantizer's code range gives). */
#include "internal.h"

/*@ requires 1 <= b <= 8;
  @ requires bitpos + n * b + 7 <= UINT64_MAX;
  @ requires \valid(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1));
  @ requires \valid_read(codes + (0 .. n - 1)) && \valid(back + (0 .. n - 1));
  @ requires \separated(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1), codes + (0 .. n - 1),
  @                     back + (0 .. n - 1));
  @ assigns buf[bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1], back[0 .. n - 1];
  @ ensures round_trip: \forall integer i, j; 0 <= i < n && 0 <= j < 8 ==>
  @   (bit_test(back[i], j) <==> bit_test(codes[i] & ((1 << b) - 1), j)); */
void tahq_theorem_bits_round_trip(uint8_t *buf, uint64_t bitpos, const uint8_t *codes,
                                  uint8_t *back, uint64_t n, uint32_t b)
{
    tahq_pack_bits(buf, bitpos, codes, n, b);
    tahq_unpack_bits(buf, bitpos, back, n, b);
    /*@ assert same_bits: \forall integer i, j; 0 <= i < n && 0 <= j < b ==>
      @   (bit_test(back[i], j) <==> bit_test(codes[i], j)); */
    /*@ assert (1 << b) - 1 == tahq_low_mask(b); */
    /*@ assert mask_bits: \forall integer j; 0 <= j ==> (bit_test((1 << b) - 1, j) <==> j < b); */
    /*@ assert code_high: \forall integer i, j; 0 <= i < n && b <= j ==>
      @   !bit_test(codes[i] & ((1 << b) - 1), j); */
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid(buf + (0 .. tile / 8 * b - 1));
  @ requires \valid_read(codes + (0 .. tile - 1)) && \valid(back + (0 .. tile - 1));
  @ requires \separated(buf + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1), back + (0 .. tile - 1));
  @ requires fit: \forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(codes[c], k);
  @ assigns buf[0 .. tile / 8 * b - 1], back[0 .. tile - 1];
  @ ensures round_trip: \forall integer c, k; 0 <= c < tile && 0 <= k < 8 ==>
  @   (bit_test(back[c], k) <==> bit_test(codes[c], k)); */
void tahq_theorem_tile_round_trip(uint8_t *buf, const uint8_t *codes, uint8_t *back, uint32_t tile,
                                  uint32_t b)
{
    tahq_pack_tile(buf, codes, tile, b);
    tahq_unpack_tile(buf, back, tile, b);
}
