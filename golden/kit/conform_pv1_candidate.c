/* SPDX-License-Identifier: MIT */
/* conform_pv1_candidate.c - a test candidate for the paper_v1 cases of
 * `tahq conform` (golden/kit/conform_test.sh): an encoder of the paper-v1 profile
 * (ref/SPEC.md Appendix A.2, A.3) written from the SPEC's primitives, whose
 * tie order in the token ranking is a choice. With --ties low it is the
 * SPEC's rule (ties by lower position) and must give tahq's bytes; with
 * --ties high ties go to the higher position first, as an unstable sort may
 * do (A.2 step 2: the authors' order is unspecified); --ties wrong ranks
 * by decreasing entropy (a real bug: the highest-entropy tokens get the low
 * bit-width), the control that tolerance must not accept.
 * usage: conform_pv1_candidate --ties low|high|wrong encode IN.npy OUT.bin --config JSON */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

static int cfg_u32(const char *json, const char *key, uint32_t *v)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    unsigned u;
    if (!p || sscanf(p + strlen(pat), "%u", &u) != 1)
        return -1;
    *v = u;
    return 0;
}

static void put_bits(uint8_t *buf, uint64_t pos, uint32_t v, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++, pos++)
        if ((v >> (n - 1u - j)) & 1u)
            buf[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
}

static void put_f16(uint8_t *buf, uint64_t pos, uint16_t h)
{
    put_bits(buf, pos, h & 0xFFu, 8);
    put_bits(buf, pos + 8, (uint32_t)h >> 8, 8);
}

typedef struct tok {
    float H;
    uint32_t pos;
} tok;

static int ties_high, descending;

static int cmp_tok(const void *a, const void *b)
{
    const tok *x = a, *y = b;
    if (x->H != y->H)
        return (x->H < y->H) != descending ? -1 : 1;
    if (x->pos == y->pos)
        return 0;
    return (x->pos < y->pos) == !ties_high ? -1 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 8 || strcmp(argv[1], "--ties") != 0 || strcmp(argv[3], "encode") != 0 ||
        strcmp(argv[6], "--config") != 0 ||
        (strcmp(argv[2], "low") != 0 && strcmp(argv[2], "high") != 0 &&
         strcmp(argv[2], "wrong") != 0)) {
        fprintf(stderr, "usage: conform_pv1_candidate --ties low|high|wrong encode IN.npy "
                        "OUT.bin --config JSON\n");
        return 2;
    }
    ties_high = strcmp(argv[2], "high") == 0;
    descending = strcmp(argv[2], "wrong") == 0;
    const char *json = argv[7];
    tahq_paper_v1_config cfg;
    if (!strstr(json, "\"profile\":\"paper-v1\"") || cfg_u32(json, "tile", &cfg.tile) ||
        cfg_u32(json, "hi_bits", &cfg.hi_bits) || cfg_u32(json, "lo_bits", &cfg.lo_bits) ||
        cfg_u32(json, "hi_permille", &cfg.hi_permille)) {
        fprintf(stderr, "err_config: only paper-v1 configurations\n");
        return 1;
    }
    npy_tensor x;
    if (npy_read(argv[4], &x) != 0)
        return 1;
    if (x.ndim != 3) {
        fprintf(stderr, "err_shape: need [B, S, C]\n");
        npy_free(&x);
        return 1;
    }
    tahq_shape sh = {(uint32_t)x.dims[0], (uint32_t)x.dims[1], (uint32_t)x.dims[2]};
    if (tahq_paper_v1_check(&cfg, &sh) != TAHQ_OK) {
        fprintf(stderr, "err_config: configuration or shape invalid\n");
        npy_free(&x);
        return 1;
    }
    const uint64_t B = sh.batch, S = sh.seq_len, C = sh.channels, G = cfg.tile, T = C / G;
    const uint64_t N = B * S * T, n_low = tahq_paper_v1_low_count(sh.seq_len, cfg.hi_permille);
    uint32_t k = 0;
    while ((1u << k) < G)
        ++k;
    uint8_t *low = calloc(B * S, 1), *flag = calloc(N, 1), *codes = calloc(B * S * C, 1);
    uint64_t *rank = calloc(B * S, sizeof *rank);
    uint16_t *z16 = calloc(N, 2), *s16 = calloc(N, 2), *piv = calloc(N, 2);
    tok *tk = calloc(S, sizeof *tk);
    float *v = calloc(G, sizeof *v);
    if (!low || !flag || !codes || !rank || !z16 || !s16 || !piv || !tk || !v) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* A.2 steps 1-3: entropies, the n_low smallest (with the chosen tie
     * order), ranks low first */
    for (uint64_t b = 0; b < B; b++) {
        for (uint64_t s = 0; s < S; s++) {
            tk[s].H = tahq_paper_v1_entropy(x.data + (b * S + s) * C, (uint32_t)C, (uint32_t)G);
            tk[s].pos = (uint32_t)s;
        }
        qsort(tk, S, sizeof *tk, cmp_tok);
        for (uint64_t i = 0; i < n_low; i++)
            low[b * S + tk[i].pos] = 1;
        uint64_t rl = 0, rh = n_low;
        for (uint64_t s = 0; s < S; s++)
            rank[b * S + s] = low[b * S + s] ? rl++ : rh++;
    }
    /* steps 4-6 per tile, stored at the reordered tile index */
    for (uint64_t row = 0; row < B * S; row++) {
        uint64_t b = row / S;
        uint32_t w = low[row] ? cfg.lo_bits : cfg.hi_bits;
        for (uint64_t j = 0; j < T; j++) {
            const float *xt = x.data + row * C + j * G;
            uint64_t t = (b * S + rank[row]) * T + j;
            memcpy(v, xt, G * sizeof *v);
            uint32_t d = 0;
            flag[t] = (uint8_t)tahq_paper_v1_gate(v, (uint32_t)G, &d);
            if (flag[t]) {
                piv[t] = (uint16_t)d;
                tahq_paper_v1_hadamard(v, (uint32_t)G, d, 0);
            }
            float z, sc;
            tahq_paper_v1_quantize_tile(v, (uint32_t)G, w, &z, &sc, codes + row * C + j * G);
            z16[t] = tahq_f32_to_f16(z);
            s16[t] = tahq_f32_to_f16(sc);
        }
    }
    /* A.3: the fields */
    uint64_t nf = 0;
    for (uint64_t t = 0; t < N; t++)
        nf += flag[t];
    uint64_t bits =
        B * C * (n_low * cfg.lo_bits + (S - n_low) * cfg.hi_bits) + 33 * N + B * S + nf * k;
    size_t len = (size_t)((bits + 7) / 8);
    uint8_t *msg = calloc(len ? len : 1, 1);
    if (!msg) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t p = 0;
    for (int pass = 1; pass >= 0; pass--) /* low codes, then high codes */
        for (uint64_t b = 0; b < B; b++)
            for (uint64_t s = 0; s < S; s++) {
                uint64_t row = b * S + s;
                if (low[row] != pass)
                    continue;
                uint32_t w = pass ? cfg.lo_bits : cfg.hi_bits;
                for (uint64_t c = 0; c < C; c++, p += w)
                    put_bits(msg, p, codes[row * C + c], w);
            }
    for (uint64_t t = 0; t < N; t++, p += 16)
        put_f16(msg, p, z16[t]);
    for (uint64_t t = 0; t < N; t++, p += 16)
        put_f16(msg, p, s16[t]);
    for (uint64_t r = 0; r < B * S; r++, p++)
        put_bits(msg, p, low[r], 1);
    for (uint64_t t = 0; t < N; t++, p++)
        put_bits(msg, p, flag[t], 1);
    for (uint64_t t = N; t-- > 0;)
        if (flag[t]) {
            put_bits(msg, p, piv[t], k);
            p += k;
        }
    FILE *f = fopen(argv[5], "wb");
    int rc = !f || fwrite(msg, 1, len, f) != len;
    if (f && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "%s: cannot write\n", argv[5]);
    free(msg);
    free(low);
    free(flag);
    free(codes);
    free(rank);
    free(z16);
    free(s16);
    free(piv);
    free(tk);
    free(v);
    npy_free(&x);
    return rc;
}
