/* SPDX-License-Identifier: MIT */
/*
 * encode_dump - writes, for a fixed set of configurations and a built-in
 * deterministic tensor, every message byte, every decoded float, a CRC of
 * the error bounds and the results of the SPEC primitives to a file. The test suite
 * builds it against libraries compiled at different optimization levels and
 * compares the files byte for byte (tests/compare_dumps.cmake): bit-exactness
 * must not depend on the compiler's optimization.
 *
 * Usage: encode_dump OUTPUT_FILE
 */
#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

static FILE *out;
static uint64_t n_bytes;
static uint32_t crc;

static void put(const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, out) != n) {
        perror("encode_dump: write");
        exit(2);
    }
    crc = tahq_crc32c(crc, (const uint8_t *)p, n);
    n_bytes += n;
}
static void put_u64(uint64_t v)
{
    uint8_t b[8];
    t_put_le(b, v, 8);
    put(b, 8);
}

/* The tensor: 2 x 16 x 512 values built from tahq_random_word, each exact in
 * binary32 (integers below 2^24 times powers of two): a base, outlier
 * channels, massive-activation tokens, zero rows, small-integer rows (ties)
 * and subnormal rows. */
enum { B = 2, S = 16, C = 512, N = B * S * C };
static float x[N];

static void make_tensor(void)
{
    for (uint64_t i = 0; i < N; i++) {
        uint32_t w = tahq_random_word(0x5EED, i);
        uint64_t row = i / C, c = i % C;
        float v = (float)((int32_t)w >> 8) * 0x1p-21f;
        if (c % 61 == 7)
            v = v * 64.0f;
        if (row % S == 0 && c == 3)
            v = v * 1024.0f;
        if (row % S == 5)
            v = 0.0f;
        if (row % S == 9)
            v = (float)((int)(w >> 29) - 4);
        if (row % S == 13)
            v = (float)(w >> 12) * 0x1p-149f;
        x[i] = v;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: encode_dump OUTPUT_FILE\n");
        return 2;
    }
    out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 2;
    }
    make_tensor();
    put(x, sizeof x);

    static const uint32_t Gs[] = {8, 64, 256};
    static const float taus[] = {0.0f, 2.0f, INFINITY};
    tahq_shape sh = {B, S, C};
    static uint8_t msg[1 << 20];
    static float dec[N];
    static double bnd[N];
    static uint64_t ws[1 << 12];
    int n_cfg = 0;
    for (int gi = 0; gi < 3; gi++)
        for (int alloc = 0; alloc < 4; alloc++) /* none, token, tile, gain */
            for (int ti = 0; ti < 3; ti++)
                for (int rnd = 0; rnd < 2; rnd++)
                    for (int meta = 0; meta < 3; meta++) {
                        tahq_config c;
                        tahq_config_default(&c);
                        c.tile = Gs[gi];
                        c.alloc = (tahq_alloc)alloc;
                        c.tau = taus[ti];
                        c.rounding = (tahq_rounding)rnd;
                        c.meta = (tahq_meta)meta;
                        c.seed = (uint64_t)n_cfg * 0x9E3779B97F4A7C15u;
                        if (n_cfg % 2) {
                            c.hi_bits = 8;
                            c.lo_bits = 2;
                            c.hi_permille = 500;
                        }
                        size_t len = 0;
                        tahq_status st =
                            tahq_encode(&c, &sh, x, ws, sizeof ws, msg, sizeof msg, &len);
                        put_u64((uint64_t)st);
                        put_u64(len);
                        put(msg, len);
                        if (st == TAHQ_OK) {
                            put_u64((uint64_t)tahq_decode(msg, len, dec, N));
                            put(dec, sizeof dec);
                            /* the bounds (binary64) enter as their CRC-32C */
                            put_u64((uint64_t)tahq_error_bound(msg, len, bnd, N));
                            put_u64(tahq_crc32c(0, (const uint8_t *)bnd, sizeof bnd));
                        }
                        n_cfg++;
                    }
    /* primitives */
    for (uint32_t i = 0; i < 65536; i++) {
        float v = u2f(tahq_random_word(1, i) & 0x3F7FFFFFu); /* finite, < 1 */
        float r[7] = {tahq_log2(v > 0 ? v : 1.0f),
                      tahq_f16_to_f32((uint16_t)i),
                      tahq_bf16_to_f32((uint16_t)i),
                      tahq_meta_round_down(TAHQ_META_FP16, v),
                      tahq_meta_round_up(TAHQ_META_BF16, v),
                      (float)tahq_f32_to_f16(u2f(tahq_random_word(2, i))),
                      (float)tahq_f32_to_bf16(u2f(tahq_random_word(3, i)))};
        put(r, sizeof r);
    }
    for (uint64_t row = 0; row < B * S; row++) {
        float h[2] = {tahq_entropy(x + row * C, C / 64, 64), tahq_entropy(x + row * C, 1, 64)};
        put(h, sizeof h);
        float t[256];
        memcpy(t, x + row * C, sizeof t);
        tahq_fwht(t, 256);
        put(t, sizeof t);
        uint32_t piv;
        int f = tahq_gate(x + row * C + 256, 256, 2.0f, &piv);
        put_u64((uint64_t)f << 32 | piv);
    }
    if (fclose(out) != 0) {
        perror("encode_dump: close");
        return 2;
    }
    printf("encode_dump: %d configurations + primitives, %" PRIu64 " bytes, crc32c %08x\n", n_cfg,
           n_bytes, crc);
    return 0;
}
