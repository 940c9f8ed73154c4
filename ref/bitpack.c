/* SPDX-License-Identifier: MIT */ /* bitpack.c - LSB-first bit streams (SPEC §8.3). */
#include "internal.h"

/* Ghost lemma: bit q of the stream, for q in byte m, is bit q - 8m of that
 * byte (called where the byte's state is the one to read). */
/*@ ghost
  /@ assigns \nothing;
   @ ensures \forall integer q; m * 8 <= q < m * 8 + 8 ==>
   @   (bit_test(buf[q / 8], q % 8) <==> bit_test(buf[m], q - m * 8)); @/
  static void byte_view(const uint8_t *buf, uint64_t m)
  {
      /@ assert \forall integer q; m * 8 <= q < m * 8 + 8 ==> q / 8 == m && q % 8 == q - m * 8; @/
  }
*/

/* One field: the low b bits of code at bit p, every other bit of the
 * (one or two) bytes it touches kept. The proofs work bit by bit
 * (bit_test, which WP links to & | ~ << >> by its own bit library): bit q of
 * the stream is bit q % 8 of byte q / 8. */
/*@ requires 1 <= b <= 8 && p + b + 7 <= UINT64_MAX;
  @ requires \valid(buf + (p / 8 .. (p + b + 7) / 8 - 1));
  @ assigns buf[p / 8 .. (p + b + 7) / 8 - 1];
  @ ensures field: \forall integer j; 0 <= j < b ==>
  @   (bit_test(buf[(p + j) / 8], (p + j) % 8) <==> bit_test(code, j));
  @ ensures kept: \forall integer q; (p / 8 * 8 <= q < p || p + b <= q < (p + b + 7) / 8 * 8) ==>
  @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], Pre), q % 8)); */
static inline void put_field(uint8_t *buf, uint64_t p, uint8_t code, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t byte = p >> 3;
    uint32_t shift = (uint32_t)(p & 7u);
    /*@ assert byte == p / 8 && shift == p % 8 && p == byte * 8 + shift; */
    /*@ ghost byte_view(buf, byte); */
    /*@ ghost byte_view(buf, byte + 1); */
    /*@ assert ((uint32_t)code & mask) <= 255 && shift <= 7 && (255 << shift) <= 32640; */
    /*@ assert mask == tahq_low_mask(b); */
    /*@ assert mask_bits: \forall integer j; 0 <= j ==> (bit_test(mask, j) <==> j < b); */
    /*@ assert code_bits: \forall integer j; 0 <= j ==>
      @   (bit_test((uint32_t)code & mask, j) <==> (j < b && bit_test(code, j))); */
    uint32_t value = ((uint32_t)code & mask) << shift; /* at most 15 bits */
    uint32_t field = mask << shift;
    /*@ assert value_bits: \forall integer k; 0 <= k < 16 ==>
      @   (bit_test(value, k) <==> (shift <= k < shift + b && bit_test(code, k - shift))); */
    /*@ assert field_bits: \forall integer k; 0 <= k < 16 ==>
      @   (bit_test(field, k) <==> shift <= k < shift + b); */
    buf[byte] = (uint8_t)(((buf[byte] & ~field) | value) & 0xFFu);
    /*@ assert low_mix: \forall integer k; 0 <= k < 8 ==>
      @   (bit_test(buf[byte], k) <==> ((bit_test(\at(buf[p / 8], Pre), k) && !bit_test(field, k))
      @                                  || bit_test(value, k))); */
    /*@ assert low_byte: \forall integer k; 0 <= k < 8 ==>
      @   (bit_test(buf[byte], k) <==> (shift <= k < shift + b ?
      @     bit_test(code, k - shift) : bit_test(\at(buf[p / 8], Pre), k))); */
    if (shift + b > 8u) {
        buf[byte + 1] = (uint8_t)(((buf[byte + 1] & ~(field >> 8)) | (value >> 8)) & 0xFFu);
        /*@ assert high_mix: \forall integer k; 0 <= k < 8 ==>
          @   (bit_test(buf[byte + 1], k) <==> ((bit_test(\at(buf[p / 8 + 1], Pre), k) &&
          @     !bit_test(field, k + 8)) || bit_test(value, k + 8))); */
        /*@ assert high_byte: \forall integer k; 0 <= k < 8 ==>
          @   (bit_test(buf[byte + 1], k) <==> (k + 8 < shift + b ?
          @     bit_test(code, k + 8 - shift) : bit_test(\at(buf[p / 8 + 1], Pre), k))); */
    }
    /*@ assert low_now: \forall integer k; 0 <= k < 8 ==>
      @   (bit_test(buf[byte], k) <==> (shift <= k < shift + b ?
      @     bit_test(code, k - shift) : bit_test(\at(buf[p / 8], Pre), k))); */
    /*@ assert high_now: shift + b > 8 ==> \forall integer k; 0 <= k < 8 ==>
      @   (bit_test(buf[byte + 1], k) <==> (k + 8 < shift + b ?
      @     bit_test(code, k + 8 - shift) : bit_test(\at(buf[p / 8 + 1], Pre), k))); */
    /*@ assert end_byte: (p + b + 7) / 8 == (shift + b > 8 ? byte + 2 : byte + 1); */
    /*@ ghost byte_view(buf, byte); */
    /*@ ghost byte_view(buf, byte + 1); */
    /*@ assert low_q: \forall integer q; byte * 8 <= q < byte * 8 + 8 ==>
      @   (bit_test(buf[q / 8], q % 8) <==> (p <= q < p + b ? bit_test(code, q - p) :
      @                                  bit_test(\at(buf[q / 8], Pre), q % 8))); */
    /*@ assert high_q: \forall integer q; byte * 8 + 8 <= q < (p + b + 7) / 8 * 8 ==>
      @   (bit_test(buf[q / 8], q % 8) <==> (q < p + b ? bit_test(code, q - p) :
      @                                  bit_test(\at(buf[q / 8], Pre), q % 8))); */
}

/* The field of b bits at bit p. */
/*@ requires 1 <= b <= 8 && p + b + 7 <= UINT64_MAX;
  @ requires \valid_read(buf + (p / 8 .. (p + b + 7) / 8 - 1));
  @ assigns \nothing;
  @ ensures range: \result < (1 << b);
  @ ensures high: \forall integer j; b <= j ==> !bit_test(\result, j);
  @ ensures field: \forall integer j; 0 <= j < b ==>
  @   (bit_test(\result, j) <==> bit_test(buf[(p + j) / 8], (p + j) % 8)); */
static inline uint8_t get_field(const uint8_t *buf, uint64_t p, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t byte = p >> 3;
    uint32_t shift = (uint32_t)(p & 7u);
    /*@ assert byte == p / 8 && shift == p % 8 && p == byte * 8 + shift; */
    uint32_t window = buf[byte];
    if (shift + b > 8u)
        window |= (uint32_t)buf[byte + 1] << 8;
    /*@ assert window_bits: \forall integer k; shift <= k < shift + b ==>
      @   (bit_test(window, k) <==> (k < 8 ? bit_test(buf[byte], k) : bit_test(buf[byte + 1], k - 8))); */
    /*@ assert mask == tahq_low_mask(b); */
    /*@ assert mask_bits: \forall integer j; 0 <= j ==> (bit_test(mask, j) <==> j < b); */
    uint8_t code = (uint8_t)((window >> shift) & mask);
    /*@ assert code_high: \forall integer j; b <= j ==> !bit_test((window >> shift) & mask, j); */
    /*@ assert code_bits: \forall integer j; 0 <= j < b ==>
      @   (bit_test(code, j) <==> bit_test(window, j + shift)); */
    /*@ ghost byte_view(buf, byte); */
    /*@ ghost byte_view(buf, byte + 1); */
    /*@ assert stream: \forall integer k; shift <= k < shift + b ==>
      @   (bit_test(window, k) <==> bit_test(buf[(byte * 8 + k) / 8], (byte * 8 + k) % 8)); */
    return code;
}

/*@ requires 1 <= b <= 8;
  @ requires bitpos + n * b + 7 <= UINT64_MAX;
  @ requires \valid(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1));
  @ requires \valid_read(codes + (0 .. n - 1));
  @ requires \separated(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1), codes + (0 .. n - 1));
  @ assigns buf[bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1];
  @ ensures written: \forall integer i, j; 0 <= i < n && 0 <= j < b ==>
  @   (bit_test(buf[(bitpos + i * b + j) / 8], (bitpos + i * b + j) % 8) <==> bit_test(codes[i], j));
  @ ensures kept: \forall integer q; (bitpos / 8 * 8 <= q < bitpos ||
  @   bitpos + n * b <= q < (bitpos + n * b + 7) / 8 * 8) ==>
  @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], Pre), q % 8)); */
void tahq_pack_bits(uint8_t *buf, uint64_t bitpos, const uint8_t *codes, uint64_t n, uint32_t b)
{
    uint64_t p = bitpos;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant p == bitpos + i * b;
      @ loop invariant written: \forall integer i2, j; 0 <= i2 < i && 0 <= j < b ==>
      @   (bit_test(buf[(bitpos + i2 * b + j) / 8], (bitpos + i2 * b + j) % 8) <==> bit_test(codes[i2], j));
      @ loop invariant before: \forall integer q; bitpos / 8 * 8 <= q < bitpos ==>
      @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], Pre), q % 8));
      @ loop invariant after: \forall integer q; p <= q < (bitpos + n * b + 7) / 8 * 8 ==>
      @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], Pre), q % 8));
      @ loop assigns i, p, buf[bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1];
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        /*@ assert 0 <= i * b && (i + 1) * b <= n * b; */
        /*@ assert earlier: \forall integer i2, j; 0 <= i2 < i && 0 <= j < b ==>
          @   bitpos <= bitpos + i2 * b + j < p; */
        put_field(buf, p, codes[i], b);
        /*@ assert outside: \forall integer q; 0 <= q && (q < p / 8 * 8 || (p + b + 7) / 8 * 8 <= q) ==>
          @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], LoopCurrent), q % 8)); */
        /*@ assert prev: \forall integer q; bitpos <= q < p ==>
          @   (bit_test(buf[q / 8], q % 8) <==> bit_test(\at(buf[q / 8], LoopCurrent), q % 8)); */
        /*@ assert old_codes: \forall integer i2, j; 0 <= i2 < i && 0 <= j < b ==>
          @   (bit_test(buf[(bitpos + i2 * b + j) / 8], (bitpos + i2 * b + j) % 8) <==> bit_test(codes[i2], j)); */
        /*@ assert now: \forall integer j; 0 <= j < b ==>
          @   (bit_test(buf[(bitpos + i * b + j) / 8], (bitpos + i * b + j) % 8) <==> bit_test(codes[i], j)); */
        p += b;
    }
}

/*@ requires 1 <= b <= 8;
  @ requires bitpos + n * b + 7 <= UINT64_MAX;
  @ requires \valid_read(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1));
  @ requires \valid(codes + (0 .. n - 1));
  @ requires \separated(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1), codes + (0 .. n - 1));
  @ assigns codes[0 .. n - 1];
  @ ensures code_range: \forall integer i; 0 <= i < n ==> codes[i] < (1 << b);
  @ ensures high: \forall integer i, j; 0 <= i < n && b <= j ==> !bit_test(codes[i], j);
  @ ensures read: \forall integer i, j; 0 <= i < n && 0 <= j < b ==>
  @   (bit_test(codes[i], j) <==> (\let w = (bitpos + i * b + j); bit_test(\at(buf[w / 8], Pre), w % 8))); */
void tahq_unpack_bits(const uint8_t *buf, uint64_t bitpos, uint8_t *codes, uint64_t n, uint32_t b)
{
    uint64_t p = bitpos;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant p == bitpos + i * b;
      @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] < (1 << b);
      @ loop invariant high: \forall integer i2, j; 0 <= i2 < i && b <= j ==> !bit_test(codes[i2], j);
      @ loop invariant read: \forall integer i2, j; 0 <= i2 < i && 0 <= j < b ==>
      @   (bit_test(codes[i2], j) <==> (\let w = (bitpos + i2 * b + j); bit_test(\at(buf[w / 8], Pre), w % 8)));
      @ loop invariant buf_kept: \forall integer m; bitpos / 8 <= m < (bitpos + n * b + 7) / 8 ==>
      @   buf[m] == \at(buf[m], Pre);
      @ loop assigns i, p, codes[0 .. n - 1];
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        /*@ assert 0 <= i * b && (i + 1) * b <= n * b; */
        /*@ assert bytes: \forall integer j; 0 <= j < b ==>
          @   bitpos / 8 <= (p + j) / 8 < (bitpos + n * b + 7) / 8; */
        /*@ assert same: \forall integer j; 0 <= j < b ==>
          @   (bit_test(buf[(p + j) / 8], (p + j) % 8) <==> (\let w = (p + j); bit_test(\at(buf[w / 8], Pre), w % 8))); */
        codes[i] = get_field(buf, p, b);
        /*@ assert got: \forall integer j; 0 <= j < b ==>
          @   (bit_test(codes[i], j) <==> (\let w = bitpos + i * b + j; bit_test(\at(buf[w / 8], Pre), w % 8))); */
        /*@ assert kept: \forall integer i2, j; 0 <= i2 < i && 0 <= j < b ==>
          @   (bit_test(codes[i2], j) <==> (\let w = bitpos + i2 * b + j; bit_test(\at(buf[w / 8], Pre), w % 8))); */
        p += b;
    }
}

/* Codes of one tile: each group of 8 codes fills exactly b bytes. The group
 * is loaded as one little-endian 64-bit word of 8 byte-sized codes and
 * compressed in three SWAR steps (pairs of bytes, pairs of 16-bit lanes,
 * the two halves), giving code j at bits j*b.. of the result, which is
 * stored as b bytes (SPEC §8.3 order). One copy per bit-width so the
 * shifts are constants.
 *
 * The proofs of the two SWAR transforms work on bit positions k of the
 * 64-bit word, each step stated as "bit k of the new word is bit f(k) of
 * the old one, or clear", with the masks as unions of intervals of k;
 * their results are stated code by code (i = 0..7: i*b is linear only for a
 * literal i) over a bare bit position k, the form the callers can use. */

/* Ghost lemma: x with bits 0..w-1 set, repeated every s bits. */
/*@ ghost
  /@ requires 0 <= x && \forall integer k; 0 <= k ==> (bit_test(x, k) <==> k < w);
   @ assigns \nothing;
   @ ensures \forall integer k; 0 <= k ==> (bit_test(x | x << s, k) <==> (k < w || s <= k < s + w));
   @ ensures \forall integer k; 0 <= k ==> (bit_test(x | x << s | x << (2 * s) | x << (3 * s), k) <==>
   @   (k < w || s <= k < s + w || 2 * s <= k < 2 * s + w || 3 * s <= k < 3 * s + w)); @/
  static void repeat_bits(uint64_t x, uint32_t w, uint32_t s)
  {
  }
*/

/* Ghost lemma: the bits of 2^w - 1. Called with a constant w, its contract
 * gives the bits of that constant (the provers cannot evaluate 1 << 8 inside
 * the quantified definition of tahq_low_mask). */
/*@ ghost
  /@ assigns \nothing;
   @ ensures \forall integer k; 0 <= k ==> (bit_test((1 << w) - 1, k) <==> k < w); @/
  static void low_bits(uint32_t w)
  {
      /@ assert (1 << w) - 1 == tahq_low_mask(w); @/
  }
*/

/* Ghost lemma: the bits of the constant masks of squeeze_group. */
/*@ ghost
  /@ assigns \nothing;
   @ ensures \forall integer k; 0 <= k ==> (bit_test(0x00FF00FF00FF00FF, k) <==> (k < 8 || 16 <= k < 24 || 32 <= k < 40 || 48 <= k < 56));
   @ ensures \forall integer k; 0 <= k ==> (bit_test(0x0000FFFF0000FFFF, k) <==> (k < 16 || 32 <= k < 48));
   @ ensures \forall integer k; 0 <= k ==> (bit_test(0xFFFFFFFF, k) <==> k < 32); @/
  static void swar_masks(void)
  {
      low_bits(8);
      low_bits(16);
      low_bits(32);
      repeat_bits(0xFF, 8, 16);
      repeat_bits(0xFFFF, 16, 32);
  }
*/

/* Eight byte-sized codes (code i in byte i) to eight b-bit fields (code i at
 * bit i*b). Exact when every code fits in b bits. */
/*@ requires 1 <= b <= 8;
  @ assigns \nothing;
  @ ensures clear: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 8 * b <= k ==> !bit_test(\result, k);
  @ ensures lanes: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> (
  @   (\forall integer k; 0 * b <= k < 1 * b ==> (bit_test(\result, k) <==> bit_test(v, 0 + k - 0 * b))) &&
  @   (\forall integer k; 1 * b <= k < 2 * b ==> (bit_test(\result, k) <==> bit_test(v, 8 + k - 1 * b))) &&
  @   (\forall integer k; 2 * b <= k < 3 * b ==> (bit_test(\result, k) <==> bit_test(v, 16 + k - 2 * b))) &&
  @   (\forall integer k; 3 * b <= k < 4 * b ==> (bit_test(\result, k) <==> bit_test(v, 24 + k - 3 * b))) &&
  @   (\forall integer k; 4 * b <= k < 5 * b ==> (bit_test(\result, k) <==> bit_test(v, 32 + k - 4 * b))) &&
  @   (\forall integer k; 5 * b <= k < 6 * b ==> (bit_test(\result, k) <==> bit_test(v, 40 + k - 5 * b))) &&
  @   (\forall integer k; 6 * b <= k < 7 * b ==> (bit_test(\result, k) <==> bit_test(v, 48 + k - 6 * b))) &&
  @   (\forall integer k; 7 * b <= k < 8 * b ==> (bit_test(\result, k) <==> bit_test(v, 56 + k - 7 * b)))); */
static inline uint64_t squeeze_group(uint64_t v, const uint32_t b)
{
    /*@ assert (0x00FF00FF00FF00FF << b) <= 0xFFFFFFFFFFFFFFFF &&
      @   (0x0000FFFF0000FFFF << (2 * b)) <= 0xFFFFFFFFFFFFFFFF &&
      @   (0xFFFFFFFF << (4 * b)) <= 0xFFFFFFFFFFFFFFFF; */
    uint64_t v1 = (v & UINT64_C(0x00FF00FF00FF00FF)) | ((v >> 8) & UINT64_C(0x00FF00FF00FF00FF))
                                                           << b;
    uint64_t v2 = (v1 & UINT64_C(0x0000FFFF0000FFFF)) | ((v1 >> 16) & UINT64_C(0x0000FFFF0000FFFF))
                                                            << (2 * b);
    uint64_t high = v2 >> 32;
    /*@ assert high <= 0xFFFFFFFF; */
    uint64_t v3 = (v2 & UINT64_C(0x00000000FFFFFFFF)) | high << (4 * b);
    /*@ ghost swar_masks(); */
    /*@ assert a1: \forall integer k; 0 <= k < 64 ==> (bit_test(v1, k) <==>
      @   (((k < 8 || 16 <= k < 24 || 32 <= k < 40 || 48 <= k < 56) && bit_test(v, k)) || (b <= k && (k - b < 8 || 16 <= k - b < 24 || 32 <= k - b < 40 || 48 <= k - b < 56) && bit_test(v, k - b + 8)))); */
    /*@ assert z1: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 0 <= k < 64 && 2 * b <= k % 16 ==> !bit_test(v1, k); */
    /*@ assert a2: \forall integer k; 0 <= k < 64 ==> (bit_test(v2, k) <==>
      @   (((k < 16 || 32 <= k < 48) && bit_test(v1, k)) || (2 * b <= k && (k - 2 * b < 16 || 32 <= k - 2 * b < 48) && bit_test(v1, k - 2 * b + 16)))); */
    /*@ assert z2: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 0 <= k < 64 && 4 * b <= k % 32 ==> !bit_test(v2, k); */
    /*@ assert a3: \forall integer k; 0 <= k < 64 ==> (bit_test(v3, k) <==>
      @   ((k < 32 && bit_test(v2, k)) || (4 * b <= k && bit_test(v2, k - 4 * b + 32)))); */
    /*@ assert k0: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 0 * b <= k < 1 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 0 + k - 0 * b)); */
    /*@ assert k1: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 1 * b <= k < 2 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 8 + k - 1 * b)); */
    /*@ assert k2: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 2 * b <= k < 3 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 16 + k - 2 * b)); */
    /*@ assert k3: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 3 * b <= k < 4 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 24 + k - 3 * b)); */
    /*@ assert k4: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 4 * b <= k < 5 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 32 + k - 4 * b)); */
    /*@ assert k5: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 5 * b <= k < 6 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 40 + k - 5 * b)); */
    /*@ assert k6: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 6 * b <= k < 7 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 48 + k - 6 * b)); */
    /*@ assert k7: (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k)) ==> \forall integer k; 7 * b <= k < 8 * b ==>
      @   (bit_test(v3, k) <==> bit_test(v, 56 + k - 7 * b)); */
    return v3;
}

/* The inverse: eight b-bit fields (code i at bit i*b) to eight bytes, every
 * bit above b clear. */
/*@ requires 1 <= b <= 8;
  @ assigns \nothing;
  @ ensures high: \forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(\result, k);
  @ ensures lanes: (
  @   (\forall integer k; 0 * b <= k < 1 * b ==> (bit_test(w, k) <==> bit_test(\result, 0 + k - 0 * b))) &&
  @   (\forall integer k; 1 * b <= k < 2 * b ==> (bit_test(w, k) <==> bit_test(\result, 8 + k - 1 * b))) &&
  @   (\forall integer k; 2 * b <= k < 3 * b ==> (bit_test(w, k) <==> bit_test(\result, 16 + k - 2 * b))) &&
  @   (\forall integer k; 3 * b <= k < 4 * b ==> (bit_test(w, k) <==> bit_test(\result, 24 + k - 3 * b))) &&
  @   (\forall integer k; 4 * b <= k < 5 * b ==> (bit_test(w, k) <==> bit_test(\result, 32 + k - 4 * b))) &&
  @   (\forall integer k; 5 * b <= k < 6 * b ==> (bit_test(w, k) <==> bit_test(\result, 40 + k - 5 * b))) &&
  @   (\forall integer k; 6 * b <= k < 7 * b ==> (bit_test(w, k) <==> bit_test(\result, 48 + k - 6 * b))) &&
  @   (\forall integer k; 7 * b <= k < 8 * b ==> (bit_test(w, k) <==> bit_test(\result, 56 + k - 7 * b)))); */
static inline uint64_t spread_group(uint64_t w, const uint32_t b)
{
    const uint64_t field = (UINT64_C(1) << b) - 1u;
    const uint64_t f2 = (UINT64_C(1) << (2 * b)) - 1u, f4 = (UINT64_C(1) << (4 * b)) - 1u;
    const uint64_t lanes2 = f2 | f2 << 32, lanes1 = field | field << 16 | field << 32 | field << 48;
    uint64_t u1 = (w & f4) | ((w >> (4 * b)) & f4) << 32;
    uint64_t u2 = (u1 & lanes2) | ((u1 >> (2 * b)) & lanes2) << 16;
    uint64_t u3 = (u2 & lanes1) | ((u2 >> b) & lanes1) << 8;
    /*@ assert field == tahq_low_mask(b) && f2 == tahq_low_mask(2 * b) && f4 == tahq_low_mask(4 * b); */
    /*@ assert \forall integer k; 0 <= k ==> (bit_test(field, k) <==> k < b); */
    /*@ assert \forall integer k; 0 <= k ==> (bit_test(f2, k) <==> k < 2 * b); */
    /*@ assert \forall integer k; 0 <= k ==> (bit_test(f4, k) <==> k < 4 * b); */
    /*@ ghost repeat_bits(field, b, 16); */
    /*@ ghost repeat_bits(f2, 2 * b, 32); */
    /*@ assert b1: \forall integer k; 0 <= k < 64 ==> (bit_test(u1, k) <==>
      @   ((k < 4 * b && bit_test(w, k)) || (32 <= k < 32 + 4 * b && bit_test(w, k - 32 + 4 * b)))); */
    /*@ assert b2: \forall integer k; 0 <= k < 64 ==> (bit_test(u2, k) <==>
      @   (((k < 2 * b || 32 <= k < 32 + 2 * b) && bit_test(u1, k)) || (16 <= k && (k - 16 < 2 * b || 32 <= k - 16 < 32 + 2 * b) && bit_test(u1, k - 16 + 2 * b)))); */
    /*@ assert b3: \forall integer k; 0 <= k < 64 ==> (bit_test(u3, k) <==>
      @   (((k < b || 16 <= k < 16 + b || 32 <= k < 32 + b || 48 <= k < 48 + b) && bit_test(u2, k)) || (8 <= k && (k - 8 < b || 16 <= k - 8 < 16 + b || 32 <= k - 8 < 32 + b || 48 <= k - 8 < 48 + b) && bit_test(u2, k - 8 + b)))); */
    /*@ assert k0: \forall integer k; 0 * b <= k < 1 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 0 + k - 0 * b)); */
    /*@ assert k1: \forall integer k; 1 * b <= k < 2 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 8 + k - 1 * b)); */
    /*@ assert k2: \forall integer k; 2 * b <= k < 3 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 16 + k - 2 * b)); */
    /*@ assert k3: \forall integer k; 3 * b <= k < 4 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 24 + k - 3 * b)); */
    /*@ assert k4: \forall integer k; 4 * b <= k < 5 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 32 + k - 4 * b)); */
    /*@ assert k5: \forall integer k; 5 * b <= k < 6 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 40 + k - 5 * b)); */
    /*@ assert k6: \forall integer k; 6 * b <= k < 7 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 48 + k - 6 * b)); */
    /*@ assert k7: \forall integer k; 7 * b <= k < 8 * b ==>
      @   (bit_test(w, k) <==> bit_test(u3, 56 + k - 7 * b)); */
    return u3;
}

/* The n (<= 8) low bytes of a little-endian 64-bit value. */
/*@ requires n <= 8 && \valid_read(p + (0 .. n - 1));
  @ assigns \nothing;
  @ ensures bytes: \forall integer m, t; 0 <= m < n && 0 <= t < 8 ==>
  @   (bit_test(\result, 8 * m + t) <==> bit_test(p[m], t));
  @ ensures above: \forall integer k; 8 * n <= k ==> !bit_test(\result, k);
  @ ensures stream: \forall integer q; 0 <= q < 8 * n ==>
  @   (bit_test(\result, q) <==> bit_test(p[q / 8], q % 8)); */
static inline uint64_t load_le64(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    !defined(TAHQ_SCALAR_ONLY)
    memcpy(&v, p, n);
#else
    /*@ loop invariant 0 <= k <= n;
      @ loop invariant bytes: \forall integer m, t; 0 <= m < k && 0 <= t < 8 ==>
      @   (bit_test(v, 8 * m + t) <==> bit_test(p[m], t));
      @ loop invariant above: \forall integer q; 8 * k <= q ==> !bit_test(v, q);
      @ loop assigns k, v;
      @ loop variant n - k; */
    for (uint32_t k = 0; k < n; k++) {
        const uint64_t byte = p[k];
        /*@ assert k <= 7 && byte <= 255; */
        /*@ assert (255 << (8 * k)) <= 0xFF00000000000000; */
        v |= byte << (8 * k);
    }
#endif
    /*@ assert stream: \forall integer q; 0 <= q < 8 * n ==>
      @   (bit_test(v, q) <==> bit_test(p[q / 8], q % 8)); */
    return v;
}

/* The n (<= 8) low bytes of v, little-endian. */
/*@ requires n <= 8 && \valid(p + (0 .. n - 1));
  @ assigns p[0 .. n - 1];
  @ ensures bytes: \forall integer m, t; 0 <= m < n && 0 <= t < 8 ==>
  @   (bit_test(p[m], t) <==> bit_test(v, 8 * m + t));
  @ ensures stream: \forall integer q; 0 <= q < 8 * n ==>
  @   (bit_test(p[q / 8], q % 8) <==> bit_test(v, q)); */
static inline void store_le64(uint8_t *p, uint64_t v, uint32_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    !defined(TAHQ_SCALAR_ONLY)
    memcpy(p, &v, n);
#else
    /*@ ghost low_bits(8); */
    /*@ loop invariant 0 <= k <= n;
      @ loop invariant bytes: \forall integer m, t; 0 <= m < k && 0 <= t < 8 ==>
      @   (bit_test(p[m], t) <==> bit_test(v, 8 * m + t));
      @ loop assigns k, p[0 .. n - 1];
      @ loop variant n - k; */
    for (uint32_t k = 0; k < n; k++)
        p[k] = (uint8_t)((v >> (8 * k)) & 0xFFu);
#endif
    /*@ assert stream: \forall integer q; 0 <= q < 8 * n ==>
      @   (bit_test(p[q / 8], q % 8) <==> bit_test(v, q)); */
}

/* Ghost lemma: group g of a tile (its first code) lies inside the tile, and
 * where the next group starts. Called with the loop's C values, it gives the
 * provers the products of the width at those values. */
/*@ ghost
  /@ requires g % 8 == 0 && tile % 8 == 0 && g < tile <= 256 && 1 <= b <= 8;
   @ assigns \nothing;
   @ ensures room: g / 8 * b + b <= tile / 8 * b;
   @ ensures next: g / 8 * b + b == (g + 8) / 8 * b; @/
  static void group_in_tile(uint32_t g, uint32_t tile, uint32_t b)
  {
      /@ assert g / 8 * 8 == g && tile / 8 * 8 == tile && g / 8 + 1 <= tile / 8; @/
      /@ assert (g / 8 + 1) * b <= tile / 8 * b; @/
  }
*/

/* Ghost lemma: the eight codes of a group at codes[g], one by one, give
 * every code c of the group (with where its bits fall): stated for a bare c,
 * the form in which the provers use it. */
/*@ ghost
  /@ requires 1 <= b <= 8 && g % 8 == 0 && \valid_read(codes + (g .. g + 7));
   @ assigns \nothing;
   @ ensures (
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 0 * b + j) <==> bit_test(codes[g + 0], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 1 * b + j) <==> bit_test(codes[g + 1], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 2 * b + j) <==> bit_test(codes[g + 2], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 3 * b + j) <==> bit_test(codes[g + 3], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 4 * b + j) <==> bit_test(codes[g + 4], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 5 * b + j) <==> bit_test(codes[g + 5], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 6 * b + j) <==> bit_test(codes[g + 6], j))) &&
   @   (\forall integer j; 0 <= j < b ==> (bit_test(w, 7 * b + j) <==> bit_test(codes[g + 7], j)))) ==>
   @   \forall integer c, j; g <= c < g + 8 && 0 <= j < b ==>
   @     c / 8 == g / 8 && c / 8 * b == g / 8 * b && 0 <= c % 8 * b + j < 8 * b && (c % 8 * b + j) / 8 < b &&
   @     (bit_test(w, c % 8 * b + j) <==> bit_test(codes[c], j)); @/
  static void by_code_at(uint64_t w, const uint8_t *codes, uint32_t g, uint32_t b)
  {
  }
*/

/* Ghost lemma: a group's word stored at byte g/8*b of d puts every code of
 * the group at its place in the tile (a small context for the provers). */
/*@ ghost
  /@ requires 1 <= b <= 8 && g % 8 == 0;
   @ assigns \nothing;
   @ ensures (\forall integer c, j; g <= c < g + 8 && 0 <= j < b ==>
   @     c / 8 == g / 8 && c / 8 * b == g / 8 * b && 0 <= c % 8 * b + j < 8 * b && (c % 8 * b + j) / 8 < b &&
   @     (bit_test(w, c % 8 * b + j) <==> bit_test(codes[c], j))) ==>
   @   (\forall integer q; 0 <= q < 8 * b ==> (bit_test(d[g / 8 * b + q / 8], q % 8) <==> bit_test(w, q))) ==>
   @   \forall integer c, j; g <= c < g + 8 && 0 <= j < b ==>
   @     (bit_test(d[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8) <==> bit_test(codes[c], j)); @/
  static void group_bytes(const uint8_t *d, const uint8_t *codes, uint64_t w, uint32_t g, uint32_t b)
  {
  }
*/

/* One group: the codes g .. g + 7 packed into the b bytes of the tile from
 * byte g/8*b. */
/*@ requires 1 <= b <= 8 && g % 8 == 0 && g <= 248;
  @ requires \valid(dst + (g / 8 * b .. g / 8 * b + b - 1));
  @ requires \valid_read(codes + (g .. g + 7));
  @ requires \separated(dst + (g / 8 * b .. g / 8 * b + b - 1), codes + (g .. g + 7));
  @ assigns dst[g / 8 * b .. g / 8 * b + b - 1];
  @ ensures group: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==>
  @   \forall integer c, j; g <= c < g + 8 && 0 <= j < b ==>
  @     c / 8 * b == g / 8 * b && (c % 8 * b + j) / 8 < b &&
  @     (bit_test(dst[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8) <==> bit_test(codes[c], j)); */
static inline void pack_group(uint8_t *dst, const uint8_t *codes, uint32_t g, const uint32_t b)
{
    const uint64_t v = load_le64(codes + g, 8);
    const uint64_t w = squeeze_group(v, b);
    store_le64(dst + g / 8 * b, w, b);
    /*@ assert kept: \forall integer c; g <= c < g + 8 ==> codes[c] == \at(codes[c], Pre); */
    /*@ assert fit_v: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(v, k); */
    /*@ assert v_codes: \forall integer c, t; g <= c < g + 8 && 0 <= t < 8 ==>
      @   (bit_test(codes[c], t) <==> bit_test(v, 8 * (c - g) + t)); */
    /*@ assert w0: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 0 * b + j) <==> bit_test(codes[g + 0], j)); */
    /*@ assert w1: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 1 * b + j) <==> bit_test(codes[g + 1], j)); */
    /*@ assert w2: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 2 * b + j) <==> bit_test(codes[g + 2], j)); */
    /*@ assert w3: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 3 * b + j) <==> bit_test(codes[g + 3], j)); */
    /*@ assert w4: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 4 * b + j) <==> bit_test(codes[g + 4], j)); */
    /*@ assert w5: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 5 * b + j) <==> bit_test(codes[g + 5], j)); */
    /*@ assert w6: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 6 * b + j) <==> bit_test(codes[g + 6], j)); */
    /*@ assert w7: (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 7 * b + j) <==> bit_test(codes[g + 7], j)); */
    /*@ ghost by_code_at(w, codes, g, b); */
    /*@ ghost group_bytes(dst, codes, w, g, b); */
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid(dst + (0 .. tile / 8 * b - 1));
  @ requires \valid_read(codes + (0 .. tile - 1));
  @ requires \separated(dst + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns dst[0 .. tile / 8 * b - 1];
  @ ensures layout: (\forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==>
  @   \forall integer c, j; 0 <= c < tile && 0 <= j < b ==>
  @     (bit_test(dst[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8) <==> bit_test(codes[c], j)); */
static inline void pack_tile_width(uint8_t *dst, const uint8_t *codes, uint32_t tile,
                                   const uint32_t b)
{
    /*@ loop invariant 0 <= g <= tile && g % 8 == 0;
      @ loop invariant kept: \forall integer c; 0 <= c < tile ==> codes[c] == \at(codes[c], Pre);
      @ loop invariant layout: (\forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==>
      @   \forall integer c, j; 0 <= c < g && 0 <= j < b ==>
      @     c / 8 * b + b <= g / 8 * b && (c % 8 * b + j) / 8 < b &&
      @     (bit_test(dst[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8) <==> bit_test(codes[c], j));
      @ loop assigns g, dst[0 .. tile / 8 * b - 1];
      @ loop variant tile - g; */
    for (uint32_t g = 0; g < tile; g += 8) {
        /*@ ghost group_in_tile(g, tile, b); */
        /*@ assert fit8: (\forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==> (\forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(codes[c], k)); */
        pack_group(dst, codes, g, b);
    }
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid(dst + (0 .. tile / 8 * b - 1));
  @ requires \valid_read(codes + (0 .. tile - 1));
  @ requires \separated(dst + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns dst[0 .. tile / 8 * b - 1];
  @ ensures layout: (\forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(\at(codes[c], Pre), k)) ==>
  @   \forall integer c, j; 0 <= c < tile && 0 <= j < b ==>
  @     (bit_test(dst[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8) <==> bit_test(codes[c], j)); */
void tahq_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1:
        pack_tile_width(dst, codes, tile, 1);
        break;
    case 2:
        pack_tile_width(dst, codes, tile, 2);
        break;
    case 3:
        pack_tile_width(dst, codes, tile, 3);
        break;
    case 4:
        pack_tile_width(dst, codes, tile, 4);
        break;
    case 5:
        pack_tile_width(dst, codes, tile, 5);
        break;
    case 6:
        pack_tile_width(dst, codes, tile, 6);
        break;
    case 7:
        pack_tile_width(dst, codes, tile, 7);
        break;
    default:
        pack_tile_width(dst, codes, tile, 8);
        break;
    }
}

/* Ghost lemma: codes g .. g + 7 stored from the bytes of u, whose bits >= b
 * are clear in every byte, have their bits >= b clear. */
/*@ ghost
  /@ requires 1 <= b <= 8;
   @ assigns \nothing;
   @ ensures (\forall integer c, t; g <= c < g + 8 && 0 <= t < 8 ==>
   @     (bit_test(codes[c], t) <==> bit_test(u, 8 * (c - g) + t))) ==>
   @   (\forall integer k; 0 <= k < 64 && b <= k % 8 ==> !bit_test(u, k)) ==>
   @   \forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(codes[c], k); @/
  static void group_high(const uint8_t *codes, uint64_t u, uint32_t g, uint32_t b)
  {
  }
*/

/* One group: the b bytes of the tile from byte g/8*b unpacked into the codes
 * g .. g + 7. */
/*@ requires 1 <= b <= 8 && g % 8 == 0 && g <= 248;
  @ requires \valid_read(src + (g / 8 * b .. g / 8 * b + b - 1));
  @ requires \valid(codes + (g .. g + 7));
  @ requires \separated(src + (g / 8 * b .. g / 8 * b + b - 1), codes + (g .. g + 7));
  @ assigns codes[g .. g + 7];
  @ ensures group: \forall integer c, j; g <= c < g + 8 && 0 <= j < b ==>
  @   c / 8 * b == g / 8 * b && (c % 8 * b + j) / 8 < b && (bit_test(codes[c], j) <==> bit_test(src[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8));
  @ ensures high: \forall integer c, k; g <= c < g + 8 && b <= k < 8 ==> !bit_test(codes[c], k); */
static inline void unpack_group(const uint8_t *src, uint8_t *codes, uint32_t g, const uint32_t b)
{
    const uint64_t w = load_le64(src + g / 8 * b, b);
    const uint64_t u = spread_group(w, b);
    store_le64(codes + g, u, 8);
    /*@ assert src_kept: \forall integer x; g / 8 * b <= x < g / 8 * b + b ==> src[x] == \at(src[x], Pre); */
    /*@ assert w_src: \forall integer q; 0 <= q < 8 * b ==> (bit_test(src[g / 8 * b + q / 8], q % 8) <==> bit_test(w, q)); */
    /*@ assert u_codes: \forall integer c, t; g <= c < g + 8 && 0 <= t < 8 ==>
      @   (bit_test(codes[c], t) <==> bit_test(u, 8 * (c - g) + t)); */
    /*@ assert e0: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 0 * b + j) <==> bit_test(codes[g + 0], j)); */
    /*@ assert e1: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 1 * b + j) <==> bit_test(codes[g + 1], j)); */
    /*@ assert e2: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 2 * b + j) <==> bit_test(codes[g + 2], j)); */
    /*@ assert e3: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 3 * b + j) <==> bit_test(codes[g + 3], j)); */
    /*@ assert e4: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 4 * b + j) <==> bit_test(codes[g + 4], j)); */
    /*@ assert e5: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 5 * b + j) <==> bit_test(codes[g + 5], j)); */
    /*@ assert e6: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 6 * b + j) <==> bit_test(codes[g + 6], j)); */
    /*@ assert e7: \forall integer j; 0 <= j < b ==>
      @   (bit_test(w, 7 * b + j) <==> bit_test(codes[g + 7], j)); */
    /*@ ghost by_code_at(w, codes, g, b); */
    /*@ ghost group_bytes(src, codes, w, g, b); */
    /*@ ghost group_high(codes, u, g, b); */
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid_read(src + (0 .. tile / 8 * b - 1));
  @ requires \valid(codes + (0 .. tile - 1));
  @ requires \separated(src + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1];
  @ ensures layout: \forall integer c, j; 0 <= c < tile && 0 <= j < b ==> (bit_test(codes[c], j) <==> bit_test(src[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8));
  @ ensures high: \forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(codes[c], k); */
static inline void unpack_tile_width(const uint8_t *src, uint8_t *codes, uint32_t tile,
                                     const uint32_t b)
{
    /*@ loop invariant 0 <= g <= tile && g % 8 == 0;
      @ loop invariant layout: \forall integer c, j; 0 <= c < g && 0 <= j < b ==>
      @   c / 8 * b + b <= g / 8 * b && (c % 8 * b + j) / 8 < b && (bit_test(codes[c], j) <==> bit_test(src[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8));
      @ loop invariant high: \forall integer c, k; 0 <= c < g && b <= k < 8 ==> !bit_test(codes[c], k);
      @ loop assigns g, codes[0 .. tile - 1];
      @ loop variant tile - g; */
    for (uint32_t g = 0; g < tile; g += 8) {
        /*@ ghost group_in_tile(g, tile, b); */
        unpack_group(src, codes, g, b);
    }
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid_read(src + (0 .. tile / 8 * b - 1));
  @ requires \valid(codes + (0 .. tile - 1));
  @ requires \separated(src + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1];
  @ ensures layout: \forall integer c, j; 0 <= c < tile && 0 <= j < b ==> (bit_test(codes[c], j) <==> bit_test(src[c / 8 * b + (c % 8 * b + j) / 8], (c % 8 * b + j) % 8));
  @ ensures high: \forall integer c, k; 0 <= c < tile && b <= k < 8 ==> !bit_test(codes[c], k); */
void tahq_unpack_tile(const uint8_t *src, uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1:
        unpack_tile_width(src, codes, tile, 1);
        break;
    case 2:
        unpack_tile_width(src, codes, tile, 2);
        break;
    case 3:
        unpack_tile_width(src, codes, tile, 3);
        break;
    case 4:
        unpack_tile_width(src, codes, tile, 4);
        break;
    case 5:
        unpack_tile_width(src, codes, tile, 5);
        break;
    case 6:
        unpack_tile_width(src, codes, tile, 6);
        break;
    case 7:
        unpack_tile_width(src, codes, tile, 7);
        break;
    default:
        unpack_tile_width(src, codes, tile, 8);
        break;
    }
}
