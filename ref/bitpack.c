/* bitpack.c - LSB-first bit streams (SPEC §8.3). */
#include "tahq.h"

void tahq_pack_bits(uint8_t *buf, uint64_t bitpos, const uint8_t *codes, uint64_t n, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t p = bitpos;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t byte = p >> 3;
        uint32_t shift = (uint32_t)(p & 7u);
        uint32_t value = ((uint32_t)codes[i] & mask) << shift; /* at most 15 bits */
        uint32_t field = mask << shift;
        buf[byte] = (uint8_t)((buf[byte] & ~field) | (value & 0xFFu));
        if (shift + b > 8u)
            buf[byte + 1] = (uint8_t)((buf[byte + 1] & ~(field >> 8)) | (value >> 8));
        p += b;
    }
}

void tahq_unpack_bits(const uint8_t *buf, uint64_t bitpos, uint8_t *codes, uint64_t n, uint32_t b)
{
    const uint32_t mask = (1u << b) - 1u;
    uint64_t p = bitpos;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t byte = p >> 3;
        uint32_t shift = (uint32_t)(p & 7u);
        uint32_t window = buf[byte];
        if (shift + b > 8u)
            window |= (uint32_t)buf[byte + 1] << 8;
        codes[i] = (uint8_t)((window >> shift) & mask);
        p += b;
    }
}

/* Codes of one tile: groups of 8 codes fill exactly b bytes, so a group is
 * assembled in a 64-bit word and stored byte by byte (SPEC §8.3 order).
 * One copy per bit-width so that the shifts are constants. */
static inline void pack_tile_width(uint8_t *dst, const uint8_t *codes, uint32_t tile,
                                   const uint32_t b)
{
    for (uint32_t g = 0; g < tile; g += 8) {
        uint64_t word = 0;
        for (uint32_t j = 0; j < 8; j++)
            word |= (uint64_t)codes[g + j] << (j * b);
        for (uint32_t k = 0; k < b; k++)
            dst[k] = (uint8_t)(word >> (8 * k));
        dst += b;
    }
}

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

/* One unpacker per bit-width so that the shifts are constants. */
static inline void unpack_tile_width(const uint8_t *src, uint8_t *codes, uint32_t tile,
                                     const uint32_t b)
{
    const uint64_t mask = (UINT64_C(1) << b) - 1u;
    for (uint32_t g = 0; g < tile; g += 8) {
        uint64_t word = 0;
        for (uint32_t k = 0; k < b; k++)
            word |= (uint64_t)src[k] << (8 * k);
        for (uint32_t j = 0; j < 8; j++)
            codes[g + j] = (uint8_t)((word >> (j * b)) & mask);
        src += b;
    }
}

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
