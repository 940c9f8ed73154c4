/* SPDX-License-Identifier: MIT */
/*
 * test_bitpack - SPEC §8.3 LSB-first bit streams: tahq_pack_bits /
 * tahq_unpack_bits.
 *
 * Layout: stream bit p is bit (p mod 8) of byte floor(p/8); value bit j of the
 * n-th b-bit field is stream bit n*b + j.
 */
#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

/* reference writer / reader, one bit at a time */
static void pack_ref(uint8_t *buf, uint64_t pos, const uint8_t *codes, uint64_t n, uint32_t b)
{
    for (uint64_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < b; j++) {
            uint64_t p = pos + i * b + j;
            uint8_t bit = (uint8_t)((codes[i] >> j) & 1);
            buf[p / 8] = (uint8_t)((buf[p / 8] & ~(1u << (p % 8))) | ((unsigned)bit << (p % 8)));
        }
}
static uint8_t get_bit(const uint8_t *buf, uint64_t p)
{
    return (uint8_t)((buf[p / 8] >> (p % 8)) & 1);
}

int main(void)
{
    /* ---- hand-derived examples ------------------------------------------------ */
    /* b = 3, codes 1,2,3,4,5,6,7,0 at bit 0: the stream value is
     * sum c_n << 3n = 1 + 2<<3 + 3<<6 + 4<<9 + 5<<12 + 6<<15 + 7<<18
     *              = 1 + 16 + 192 + 2048 + 20480 + 196608 + 1835008 = 0x1F58D1,
     * little-endian bytes D1 58 1F. Byte 0 = bits 0..7: code0 = 1 -> bit 0;
     * code1 = 2 -> bit 4; code2 = 3 -> bits 6, 7: 0b11010001 = 0xD1. */
    const uint8_t c3[8] = {1, 2, 3, 4, 5, 6, 7, 0};
    uint8_t buf[64], out[64];
    memset(buf, 0, sizeof buf);
    tahq_pack_bits(buf, 0, c3, 8, 3);
    CHECKF(buf[0] == 0xD1 && buf[1] == 0x58 && buf[2] == 0x1F && buf[3] == 0x00,
           "b=3 example: %02x %02x %02x %02x", buf[0], buf[1], buf[2], buf[3]);
    /* the same at bit offset 5 in a buffer of 0xFF: 0x1F58D1 << 5 = 0x3EB1A20;
     * byte 0 keeps its low 5 bits (0x1F) -> 0x3F, then 1A, EB, and byte 3 = 0x03
     * with its bits 5..7 kept (0xE0) -> 0xE3; byte 4 untouched (0xFF). */
    memset(buf, 0xFF, sizeof buf);
    tahq_pack_bits(buf, 5, c3, 8, 3);
    CHECKF(buf[0] == 0x3F && buf[1] == 0x1A && buf[2] == 0xEB && buf[3] == 0xE3 && buf[4] == 0xFF,
           "b=3 example at bit 5: %02x %02x %02x %02x %02x", buf[0], buf[1], buf[2], buf[3],
           buf[4]);
    tahq_unpack_bits(buf, 5, out, 8, 3);
    CHECK(memcmp(out, c3, 8) == 0);
    /* b = 1: codes 1,0,1,1,0,0,0,1 -> bits 0,2,3,7 -> 1+4+8+128 = 0x8D */
    const uint8_t c1[8] = {1, 0, 1, 1, 0, 0, 0, 1};
    memset(buf, 0, sizeof buf);
    tahq_pack_bits(buf, 0, c1, 8, 1);
    CHECKF(buf[0] == 0x8D && buf[1] == 0, "b=1 example: %02x", buf[0]);
    /* b = 8: the bytes are the codes; b = 4: low nibble first (0x21 0x43) */
    const uint8_t c8[4] = {0x12, 0xAB, 0x00, 0xFF};
    memset(buf, 0x5A, sizeof buf);
    tahq_pack_bits(buf, 8, c8, 4, 8);
    CHECK(buf[0] == 0x5A && memcmp(buf + 1, c8, 4) == 0 && buf[5] == 0x5A);
    const uint8_t c4[4] = {1, 2, 3, 4};
    memset(buf, 0, sizeof buf);
    tahq_pack_bits(buf, 0, c4, 4, 4);
    CHECK(buf[0] == 0x21 && buf[1] == 0x43 && buf[2] == 0);
    /* b = 5, codes 31, 0, 17 at bit 3: stream value (31 | 0<<5 | 17<<10) << 3
     * = (31 + 17408) << 3 = 17439 << 3 = 139512 = 0x220F8, bytes F8 20 02;
     * in a zero buffer */
    const uint8_t c5[3] = {31, 0, 17};
    memset(buf, 0, sizeof buf);
    tahq_pack_bits(buf, 3, c5, 3, 5);
    CHECKF(buf[0] == 0xF8 && buf[1] == 0x20 && buf[2] == 0x02 && buf[3] == 0,
           "b=5 example: %02x %02x %02x", buf[0], buf[1], buf[2]);

    /* ---- random round trips with guard bytes --------------------------------- */
    trng r = {3};
    enum { NMAX = 300, BUFN = 8 + (NMAX * 8 + 200) / 8 + 8 };
    uint8_t codes[NMAX + 16], back[NMAX + 16], ref[BUFN], got[BUFN], pre[BUFN];
    uint64_t n_cases = 0;
    for (uint32_t b = 1; b <= 8; b++)
        for (uint64_t pos = 0; pos <= 131; pos++)
            for (int rep = 0; rep < 12; rep++) {
                uint64_t n = (rep == 0) ? 0 : (rep == 1) ? 1 : trng_below(&r, NMAX + 1);
                for (uint64_t i = 0; i < n; i++)
                    codes[i] = (uint8_t)trng_below(&r, 1u << b);
                for (size_t i = 0; i < BUFN; i++)
                    pre[i] = (uint8_t)trng_next(&r);
                memcpy(ref, pre, BUFN);
                memcpy(got, pre, BUFN);
                pack_ref(ref, pos, codes, n, b);
                tahq_pack_bits(got, pos, codes, n, b);
                /* whole buffer equal to the bit-by-bit reference: the fields
                 * are right and every bit outside [pos, pos + n b) is kept */
                CHECK_QUIET(memcmp(ref, got, BUFN) == 0, "pack b=%u pos=%" PRIu64 " n=%" PRIu64, b,
                            pos, n);
                memset(back, 0xEE, sizeof back);
                tahq_unpack_bits(got, pos, back, n, b);
                CHECK_QUIET(memcmp(back, codes, n) == 0, "unpack b=%u pos=%" PRIu64 " n=%" PRIu64,
                            b, pos, n);
                int guard = 1;
                for (size_t i = n; i < n + 16; i++)
                    guard &= back[i] == 0xEE;
                CHECK_QUIET(guard, "unpack wrote past n codes (b=%u n=%" PRIu64 ")", b, n);
                /* unpack reads exactly the field bits: from an arbitrary buffer */
                tahq_unpack_bits(pre, pos, back, n, b);
                int ok = 1;
                for (uint64_t i = 0; i < n && ok; i++) {
                    uint32_t v = 0;
                    for (uint32_t j = 0; j < b; j++)
                        v |= (uint32_t)get_bit(pre, pos + i * b + j) << j;
                    ok = back[i] == v;
                }
                CHECK_QUIET(ok, "unpack of random bytes b=%u pos=%" PRIu64, b, pos);
                n_cases++;
            }

    /* ---- out-of-range codes ----------------------------------------------------
     * tahq.h does not document codes >= 2^b for tahq_pack_bits; the only safe
     * behaviour is to use the low b bits and leave neighbouring fields and
     * bytes alone. Checked: code 0xFF with b = 1..7 between fields of zeros. */
    uint64_t n_oor = 0;
    for (uint32_t b = 1; b <= 7; b++)
        for (uint64_t pos = 0; pos < 16; pos++) {
            uint8_t cc[3] = {0, 0xFF, 0};
            memset(got, 0, 16);
            tahq_pack_bits(got, pos, cc, 3, b);
            int ok = 1;
            for (uint64_t p = 0; p < 128; p++) {
                int inside = p >= pos + b && p < pos + 2 * (uint64_t)b;
                ok &= get_bit(got, p) == (inside ? 1 : 0);
            }
            CHECK_QUIET(ok, "code 0xFF with b=%u at pos %" PRIu64 " spills outside its field", b,
                        pos);
            n_oor++;
        }

    char what[200];
    snprintf(what, sizeof what,
             "5 hand-derived layouts, %" PRIu64
             " random round trips (b=1..8, offsets 0..131, guard "
             "bytes, bitwise ref), %" PRIu64 " out-of-range-code cases",
             n_cases, n_oor);
    return t_finish("test_bitpack", what);
}
