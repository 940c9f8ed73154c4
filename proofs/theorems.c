/* theorems.c - properties stated over several functions of ref/, as C
 * functions that WP proves from those functions' contracts alone (they are
 * given to WP with ref/, never compiled into the library).
 *
 * Bit-stream round trip (SPEC §8.3): unpacking what tahq_pack_bits wrote
 * gives back every code's low b bits, at any bit offset and width 1..8
 * (stated bit by bit: see proofs/README.md, "What is proved"). */
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
