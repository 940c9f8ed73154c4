/* SPDX-License-Identifier: MIT */
/*
 * test_crc - SPEC §2.6: CRC-32C (Castagnoli, reflected, init/xorout all ones).
 *
 * Known answers: the check value CRC-32C("123456789") = 0xE3069283 and the
 * RFC 3720 appendix B.4 vectors (32 bytes of 00, of FF, ascending 00..1F,
 * descending 1F..00). Chaining convention of the API: tahq_crc32c(0, ...)
 * starts a CRC and tahq_crc32c(crc(a), b) = crc(a || b).
 */
#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

/* bit-at-a-time reference with the reflected polynomial 0x82F63B78 */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

int main(void)
{
    const uint8_t check[] = "123456789";
    CHECKF(tahq_crc32c(0, check, 9) == 0xE3069283u, "%08x", tahq_crc32c(0, check, 9));
    CHECK(crc_ref(0, check, 9) == 0xE3069283u);

    uint8_t v[32];
    static const uint32_t rfc[4] = {0x8A9136AAu, 0x62A8AB43u, 0x46DD794Eu, 0x113FDB5Cu};
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < 32; i++)
            v[i] = (uint8_t)(t == 0 ? 0x00 : t == 1 ? 0xFF : t == 2 ? i : 31 - i);
        CHECKF(tahq_crc32c(0, v, 32) == rfc[t], "RFC 3720 vector %d: %08x", t,
               tahq_crc32c(0, v, 32));
        CHECK(crc_ref(0, v, 32) == rfc[t]);
    }
    /* empty input leaves the running value unchanged */
    CHECK(tahq_crc32c(0, check, 0) == 0);
    CHECK(tahq_crc32c(0x12345678u, check, 0) == 0x12345678u);
    CHECK(tahq_crc32c(0, NULL, 0) == 0);

    /* random buffers, every length 0..1100 at every alignment 0..15, and
     * every split point of some of them (chaining) */
    enum { MAXN = 1 << 20 };
    uint8_t *buf = malloc(MAXN + 64);
    if (!buf)
        return 2;
    trng r = {77};
    for (size_t i = 0; i < MAXN + 64; i++)
        buf[i] = (uint8_t)trng_next(&r);
    uint64_t n_buf = 0, n_chain = 0;
    for (size_t len = 0; len <= 1100; len++)
        for (size_t al = 0; al < 16; al++) {
            uint32_t init = (len % 3 == 0) ? 0 : trng_u32(&r);
            CHECK_QUIET(tahq_crc32c(init, buf + al, len) == crc_ref(init, buf + al, len),
                        "len %zu align %zu init %08x", len, al, init);
            n_buf++;
        }
    for (size_t len = 0; len <= 300; len += 7)
        for (size_t cut = 0; cut <= len; cut++) {
            const uint8_t *p = buf + (len & 15);
            uint32_t whole = tahq_crc32c(0, p, len);
            uint32_t chained = tahq_crc32c(tahq_crc32c(0, p, cut), p + cut, len - cut);
            CHECK_QUIET(whole == chained, "len %zu cut %zu", len, cut);
            n_chain++;
        }
    /* one large buffer, whole and in uneven pieces */
    uint32_t big = crc_ref(0, buf + 3, MAXN);
    CHECK(tahq_crc32c(0, buf + 3, MAXN) == big);
    uint32_t c = 0;
    size_t off = 0, piece = 1;
    while (off < MAXN) {
        size_t n = piece < MAXN - off ? piece : MAXN - off;
        c = tahq_crc32c(c, buf + 3 + off, n);
        off += n;
        piece = piece * 3 + 1;
    }
    CHECK(c == big);
    free(buf);

    char what[200];
    snprintf(what, sizeof what,
             "check value + 4 RFC 3720 vectors, %" PRIu64 " random buffers (len 0..1100 x 16 "
             "alignments) vs bitwise ref, %" PRIu64 " chaining splits, 1 MiB buffer",
             n_buf, n_chain);
    return t_finish("test_crc", what);
}
