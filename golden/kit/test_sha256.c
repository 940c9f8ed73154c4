/* SPDX-License-Identifier: MIT */
/* test_sha256.c - the SHA-256 of cli/ against the FIPS 180 examples
 * (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf") and streaming splits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static int fails = 0;

static void check(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        printf("FAIL %s: got %s want %s\n", what, got, want);
        ++fails;
    }
}

static void hex_of_ctx(sha256_ctx *c, char hex[65])
{
    uint8_t d[32];
    sha256_final(c, d);
    for (unsigned i = 0; i < 32; ++i)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int main(void)
{
    char hex[65];
    sha256_hex("", 0, hex);
    check("empty", hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, hex);
    check("abc", hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(m2, strlen(m2), hex);
    check("448-bit", hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m3 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    sha256_hex(m3, strlen(m3), hex);
    check("896-bit", hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* one million 'a', fed in uneven pieces */
    sha256_ctx c;
    sha256_init(&c);
    char a[1000];
    memset(a, 'a', sizeof a);
    size_t left = 1000000, step = 1;
    while (left) {
        size_t n = step < left ? step : left;
        sha256_update(&c, a, n);
        left -= n;
        step = step % 983 + 13; /* at most 995 < sizeof a */
    }
    hex_of_ctx(&c, hex);
    check("million a", hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* SHA2_Additional: 55, 56 and 64 bytes of zero around the padding boundary */
    uint8_t z[1005] = {0};
    sha256_hex(z, 55, hex);
    check("55 zeros", hex, "02779466cdec163811d078815c633f21901413081449002f24aa3e80f0b88ef7");
    sha256_hex(z, 56, hex);
    check("56 zeros", hex, "d4817aa5497628e7c77e6b606107042bbba3130888c5f47a375e6179be789fbb");
    sha256_hex(z, 57, hex);
    check("57 zeros", hex, "65a16cb7861335d5ace3c60718b5052e44660726da4cd13bb745381b235a1785");
    sha256_hex(z, 64, hex);
    check("64 zeros", hex, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
    sha256_hex(z, 1000, hex);
    check("1000 zeros", hex, "541b3e9daa09b20bf85fa273e5cbd3e80185aa4ec298e765db87742b70138a53");
    uint8_t b1 = 0xbd;
    sha256_hex(&b1, 1, hex);
    check("bd", hex, "68325720aabd7c82f30f554b313d0570c95accbb7dc4b5aae11204c08ffe732b");
    uint8_t b4[4] = {0xc9, 0x8c, 0x8e, 0x55};
    sha256_hex(b4, 4, hex);
    check("c98c8e55", hex, "7abc22c0ae5af26ce93dbb94433a0e0b2e119d014f8e7f65bd56c61ccccd9504");
    if (fails)
        return 1;
    printf("sha256: all FIPS 180 examples match\n");
    return 0;
}
