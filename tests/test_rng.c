/* SPDX-License-Identifier: MIT */
/*
 * test_rng - SPEC §2.4: Philox4x32-10 and the per-element random word.
 *
 * Known answers: the three philox4x32 10-round vectors of Random123's
 * tests/kat_vectors (DEShawResearch/random123; the same three lines appear in
 * its C++ known-answer test as dokat<philox4x32_prf<10>>). A second,
 * straightforward implementation written here from the SPEC text is checked
 * against the same vectors and then against the library on random inputs.
 */
#include "tahq.h"
#include "tahq_spec.h"
#include "tutil.h"

/* Straightforward transcription of SPEC §2.4 (64-bit products). */
static void philox_ref(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0; /* M0 * c0 */
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2; /* M1 * c2 */
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

static uint32_t word_ref(uint64_t seed, uint64_t idx)
{
    uint32_t ctr[4] = {(uint32_t)(idx >> 2), (uint32_t)(idx >> 34), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    tahq_philox4x32_10(ctr, key, out);
    return out[idx & 3];
}

int main(void)
{
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[3] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    int kat_ok = 0;
    for (int i = 0; i < 3; i++) {
        uint32_t got[4], ref[4];
        tahq_philox4x32_10(kat[i].ctr, kat[i].key, got);
        philox_ref(kat[i].ctr, kat[i].key, ref);
        int ok = 1;
        for (int j = 0; j < 4; j++) {
            ok &= CHECKF(got[j] == kat[i].out[j], "KAT %d word %d: %08x want %08x", i, j, got[j],
                         kat[i].out[j]);
            CHECKF(ref[j] == kat[i].out[j], "test's own reference, KAT %d word %d", i, j);
        }
        kat_ok += ok;
    }

    /* library == independent implementation on random counters and keys */
    trng r = {2024};
    const int n_rand = 1000000;
    for (int i = 0; i < n_rand; i++) {
        uint32_t ctr[4], key[2], a[4], b[4];
        for (int j = 0; j < 4; j++)
            ctr[j] = trng_u32(&r);
        key[0] = trng_u32(&r);
        key[1] = trng_u32(&r);
        if (i & 1) { /* sparse counters, as word() uses them */
            ctr[2] = ctr[3] = 0;
        }
        tahq_philox4x32_10(ctr, key, a);
        philox_ref(ctr, key, b);
        CHECK_QUIET(a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3],
                    "philox ctr %08x %08x %08x %08x key %08x %08x", ctr[0], ctr[1], ctr[2], ctr[3],
                    key[0], key[1]);
    }

    /* word(seed, i): SPEC §2.4 definition through the library's Philox */
    static const uint64_t seeds[] = {
        0,         1, UINT64_C(0xFFFFFFFF), UINT64_C(0x100000000), UINT64_C(0xDEADBEEFCAFEF00D),
        UINT64_MAX};
    static const uint64_t bases[] = {0,
                                     4,
                                     UINT64_C(0xFFFFFFF0),
                                     UINT64_C(0x3FFFFFFF0), /* counter word 0 wraps, c1 = 0 -> 1 */
                                     (UINT64_C(1) << 40) - 64,
                                     UINT64_C(0x123456789ABCDE),
                                     UINT64_MAX - 63};
    uint64_t n_word = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
            for (uint64_t i = 0; i < 64; i++) {
                uint64_t idx = bases[b] + i;
                CHECK_QUIET(tahq_random_word(seeds[s], idx) == word_ref(seeds[s], idx),
                            "word(%" PRIx64 ", %" PRIx64 ")", seeds[s], idx);
                n_word++;
            }
    for (int i = 0; i < 200000; i++) {
        uint64_t seed = trng_next(&r), idx = trng_next(&r);
        CHECK_QUIET(tahq_random_word(seed, idx) == word_ref(seed, idx),
                    "word(%" PRIx64 ", %" PRIx64 ")", seed, idx);
        n_word++;
    }
    /* word 0 of seed 0 is the first word of the first KAT */
    CHECK(tahq_random_word(0, 0) == 0x6627e8d5 && tahq_random_word(0, 3) == 0x9b00dbd8);

    /* Uniformity of 2^20 consecutive words (seed 12345):
     * 256 buckets by the top byte and 256 by the low byte. A bucket count is
     * Binomial(n = 2^20, p = 1/256): mean 4096, sd = sqrt(n p (1-p)) = 63.9;
     * every bucket must lie within 6 sd (383). The chi-square statistic with
     * 255 degrees of freedom has mean 255 and sd sqrt(2*255) = 22.6; it must lie
     * within 255 +- 6*22.6 = [119, 391] (too uniform is as suspicious as too
     * lumpy). Each of the 32 bit positions is set Binomial(2^20, 1/2) times:
     * mean 2^19, sd 512, tolerance 6 sd = 3072. With fixed inputs the result is
     * deterministic; a correct generator fails one of these 546 tests with
     * probability below 1e-6. */
    const uint32_t N = 1u << 20;
    static uint32_t top[256], low[256], ones[32];
    for (uint32_t i = 0; i < N; i++) {
        uint32_t w = tahq_random_word(12345, i);
        top[w >> 24]++;
        low[w & 255]++;
        for (int j = 0; j < 32; j++)
            ones[j] += (w >> j) & 1;
    }
    const double mean = N / 256.0, sd = sqrt(N * (1.0 / 256) * (255.0 / 256));
    double chi_top = 0, chi_low = 0, worst = 0;
    for (int i = 0; i < 256; i++) {
        CHECKF(fabs(top[i] - mean) <= 6 * sd, "top byte bucket %d: %u", i, top[i]);
        CHECKF(fabs(low[i] - mean) <= 6 * sd, "low byte bucket %d: %u", i, low[i]);
        chi_top += (top[i] - mean) * (top[i] - mean) / mean;
        chi_low += (low[i] - mean) * (low[i] - mean) / mean;
        worst = fmax(worst, fmax(fabs(top[i] - mean), fabs(low[i] - mean)) / sd);
    }
    const double chi_sd = sqrt(2.0 * 255);
    CHECKF(fabs(chi_top - 255) <= 6 * chi_sd, "chi2 top byte %.1f", chi_top);
    CHECKF(fabs(chi_low - 255) <= 6 * chi_sd, "chi2 low byte %.1f", chi_low);
    for (int j = 0; j < 32; j++)
        CHECKF(fabs(ones[j] - N / 2.0) <= 6 * 512.0, "bit %d set %u times", j, ones[j]);

    char what[256];
    snprintf(what, sizeof what,
             "%d/3 Random123 KATs, %d random philox vs own impl, %" PRIu64
             " word() vs SPEC def, 2^20 words: chi2 %.1f/%.1f (255 dof), worst bucket %.2f sd",
             kat_ok, n_rand, n_word, chi_top, chi_low, worst);
    return t_finish("test_rng", what);
}
