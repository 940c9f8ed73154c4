/* bitpack.c - LSB-first bit streams (SPEC §8.3). */
#include "internal.h"

/*@ requires 1 <= b <= 8;
  @ requires bitpos + n * b + 7 <= UINT64_MAX;
  @ requires \valid(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1));
  @ requires \valid_read(codes + (0 .. n - 1));
  @ requires \separated(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1), codes + (0 .. n - 1));
  @ assigns buf[bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1]; */
void tahq_pack_bits(uint8_t *buf, uint64_t bitpos, const uint8_t *codes, uint64_t n, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t p = bitpos;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant p == bitpos + i * b;
      @ loop assigns i, p, buf[bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1];
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t byte = p >> 3;
        uint32_t shift = (uint32_t)(p & 7u);
        /*@ assert byte == p / 8 && shift == p % 8 && 0 <= i * b && (i + 1) * b <= n * b; */
        /*@ assert ((uint32_t)codes[i] & mask) <= 255 && shift <= 7 && (255 << shift) <= 32640; */
        uint32_t value = ((uint32_t)codes[i] & mask) << shift; /* at most 15 bits */
        uint32_t field = mask << shift;
        buf[byte] = (uint8_t)(((buf[byte] & ~field) | value) & 0xFFu);
        if (shift + b > 8u)
            buf[byte + 1] = (uint8_t)(((buf[byte + 1] & ~(field >> 8)) | (value >> 8)) & 0xFFu);
        p += b;
    }
}

/*@ requires 1 <= b <= 8;
  @ requires bitpos + n * b + 7 <= UINT64_MAX;
  @ requires \valid_read(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1));
  @ requires \valid(codes + (0 .. n - 1));
  @ requires \separated(buf + (bitpos / 8 .. (bitpos + n * b + 7) / 8 - 1), codes + (0 .. n - 1));
  @ assigns codes[0 .. n - 1];
  @ ensures code_range: \forall integer i; 0 <= i < n ==> codes[i] < (1 << b); */
void tahq_unpack_bits(const uint8_t *buf, uint64_t bitpos, uint8_t *codes, uint64_t n, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t p = bitpos;
    /*@ loop invariant 0 <= i <= n;
      @ loop invariant p == bitpos + i * b;
      @ loop invariant \forall integer j; 0 <= j < i ==> codes[j] < (1 << b);
      @ loop assigns i, p, codes[0 .. n - 1];
      @ loop variant n - i; */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t byte = p >> 3;
        uint32_t shift = (uint32_t)(p & 7u);
        /*@ assert byte == p / 8 && shift == p % 8 && 0 <= i * b && (i + 1) * b <= n * b; */
        uint32_t window = buf[byte];
        if (shift + b > 8u)
            window |= (uint32_t)buf[byte + 1] << 8;
        codes[i] = (uint8_t)((window >> shift) & mask);
        p += b;
    }
}

/* Codes of one tile: each group of 8 codes fills exactly b bytes. The group
 * is loaded as one little-endian 64-bit word of 8 byte-sized codes and
 * compressed in three SWAR steps (pairs of bytes, pairs of 16-bit lanes,
 * the two halves), giving code j at bits j*b.. of the result, which is
 * stored as b bytes (SPEC §8.3 order). One copy per bit-width so the
 * shifts are constants. */
/* The n (<= 8) low bytes of a little-endian 64-bit value. */
/*@ requires n <= 8 && \valid_read(p + (0 .. n - 1));
  @ assigns \nothing; */
static inline uint64_t load_le64(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(TAHQ_SCALAR_ONLY)
    memcpy(&v, p, n);
#else
    /*@ loop invariant 0 <= k <= n;
      @ loop assigns k, v;
      @ loop variant n - k; */
    for (uint32_t k = 0; k < n; k++) {
        /*@ assert k <= 7 && (255 << (8 * k)) <= 0xFF00000000000000; */
        v |= (uint64_t)p[k] << (8 * k);
    }
#endif
    return v;
}

/*@ requires n <= 8 && \valid(p + (0 .. n - 1));
  @ assigns p[0 .. n - 1]; */
static inline void store_le64(uint8_t *p, uint64_t v, uint32_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(TAHQ_SCALAR_ONLY)
    memcpy(p, &v, n);
#else
    /*@ loop invariant 0 <= k <= n;
      @ loop assigns k, p[0 .. n - 1];
      @ loop variant n - k; */
    for (uint32_t k = 0; k < n; k++)
        p[k] = (uint8_t)((v >> (8 * k)) & 0xFFu);
#endif
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid(dst + (0 .. tile / 8 * b - 1));
  @ requires \valid_read(codes + (0 .. tile - 1));
  @ requires \separated(dst + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns dst[0 .. tile / 8 * b - 1]; */
static inline void pack_tile_width(uint8_t *dst, const uint8_t *codes, uint32_t tile,
                                   const uint32_t b)
{
    /*@ loop invariant 0 <= g <= tile && g % 8 == 0;
      @ loop invariant dst == \at(dst, Pre) + g / 8 * b;
      @ loop assigns g, dst, \at(dst, Pre)[0 .. tile / 8 * b - 1];
      @ loop variant tile - g; */
    for (uint32_t g = 0; g < tile; g += 8) {
        /*@ assert (0x00FF00FF00FF00FF << b) <= 0xFFFFFFFFFFFFFFFF &&
          @   (0x0000FFFF0000FFFF << (2 * b)) <= 0xFFFFFFFFFFFFFFFF &&
          @   (0xFFFFFFFF << (4 * b)) <= 0xFFFFFFFFFFFFFFFF; */
        uint64_t v = load_le64(codes + g, 8);
        v = (v & UINT64_C(0x00FF00FF00FF00FF)) | ((v >> 8) & UINT64_C(0x00FF00FF00FF00FF)) << b;
        v = (v & UINT64_C(0x0000FFFF0000FFFF)) | ((v >> 16) & UINT64_C(0x0000FFFF0000FFFF)) << (2 * b);
        /*@ assert (v >> 32) <= 0xFFFFFFFF; */
        v = (v & UINT64_C(0x00000000FFFFFFFF)) | (v >> 32) << (4 * b);
        store_le64(dst, v, b);
        dst += b;
    }
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid(dst + (0 .. tile / 8 * b - 1));
  @ requires \valid_read(codes + (0 .. tile - 1));
  @ requires \separated(dst + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns dst[0 .. tile / 8 * b - 1]; */
void tahq_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1: pack_tile_width(dst, codes, tile, 1); break;
    case 2: pack_tile_width(dst, codes, tile, 2); break;
    case 3: pack_tile_width(dst, codes, tile, 3); break;
    case 4: pack_tile_width(dst, codes, tile, 4); break;
    case 5: pack_tile_width(dst, codes, tile, 5); break;
    case 6: pack_tile_width(dst, codes, tile, 6); break;
    case 7: pack_tile_width(dst, codes, tile, 7); break;
    default: pack_tile_width(dst, codes, tile, 8); break;
    }
}

/* The inverse: spread the 8*b bits back into one byte per code. */
/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid_read(src + (0 .. tile / 8 * b - 1));
  @ requires \valid(codes + (0 .. tile - 1));
  @ requires \separated(src + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1]; */
static inline void unpack_tile_width(const uint8_t *src, uint8_t *codes, uint32_t tile,
                                     const uint32_t b)
{
    const uint64_t field = (UINT64_C(1) << b) - 1u;
    const uint64_t f2 = (UINT64_C(1) << (2 * b)) - 1u, f4 = (UINT64_C(1) << (4 * b)) - 1u;
    /*@ loop invariant 0 <= g <= tile && g % 8 == 0;
      @ loop invariant src == \at(src, Pre) + g / 8 * b;
      @ loop assigns g, src, codes[0 .. tile - 1];
      @ loop variant tile - g; */
    for (uint32_t g = 0; g < tile; g += 8) {
        uint64_t v = load_le64(src, b);
        v = (v & f4) | ((v >> (4 * b)) & f4) << 32;
        v = (v & (f2 | f2 << 32)) | ((v >> (2 * b)) & (f2 | f2 << 32)) << 16;
        v = (v & (field * UINT64_C(0x0001000100010001))) |
            ((v >> b) & (field * UINT64_C(0x0001000100010001))) << 8;
        store_le64(codes + g, v, 8);
        src += b;
    }
}

/*@ requires 1 <= b <= 8 && tile <= 256 && tile % 8 == 0;
  @ requires \valid_read(src + (0 .. tile / 8 * b - 1));
  @ requires \valid(codes + (0 .. tile - 1));
  @ requires \separated(src + (0 .. tile / 8 * b - 1), codes + (0 .. tile - 1));
  @ assigns codes[0 .. tile - 1]; */
void tahq_unpack_tile(const uint8_t *src, uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1: unpack_tile_width(src, codes, tile, 1); break;
    case 2: unpack_tile_width(src, codes, tile, 2); break;
    case 3: unpack_tile_width(src, codes, tile, 3); break;
    case 4: unpack_tile_width(src, codes, tile, 4); break;
    case 5: unpack_tile_width(src, codes, tile, 5); break;
    case 6: unpack_tile_width(src, codes, tile, 6); break;
    case 7: unpack_tile_width(src, codes, tile, 7); break;
    default: unpack_tile_width(src, codes, tile, 8); break;
    }
}
