/* SPDX-License-Identifier: MIT */ /* rng.c - Philox4x32-10 counter-based generator (SPEC §2.4). */
#include "internal.h"

/* The constants of SPEC §2.4 (the scalar core's, tahq_core.h). */
#define PHILOX_M0 TAHQ_PHILOX_M0
#define PHILOX_M1 TAHQ_PHILOX_M1
#define PHILOX_W0 TAHQ_PHILOX_W0
#define PHILOX_W1 TAHQ_PHILOX_W1

/*@ requires \valid_read(counter + (0 .. 3)) && \valid_read(key + (0 .. 1));
  @ requires \valid(out + (0 .. 3));
  @ requires \separated(out + (0 .. 3), counter + (0 .. 3), key + (0 .. 1));
  @ assigns out[0 .. 3]; */
void tahq_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    /*@ loop invariant 0 <= round <= 10;
      @ loop assigns round, c0, c1, c2, c3, k0, k1;
      @ loop variant 10 - round; */
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)(p1 & 0xFFFFFFFFu); /* lo(M1 c2) */
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)(p0 & 0xFFFFFFFFu);
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 = (uint32_t)(((uint64_t)k0 + PHILOX_W0) & 0xFFFFFFFFu); /* mod 2^32 */
        k1 = (uint32_t)(((uint64_t)k1 + PHILOX_W1) & 0xFFFFFFFFu);
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/*@ assigns \nothing; */
uint32_t tahq_random_word(uint64_t seed, uint64_t idx)
{
    uint64_t block = idx >> 2;
    const uint32_t counter[4] = {(uint32_t)(block & 0xFFFFFFFFu), (uint32_t)(block >> 32), 0u, 0u};
    const uint32_t key[2] = {(uint32_t)(seed & 0xFFFFFFFFu), (uint32_t)(seed >> 32)};
    uint32_t out[4];
    tahq_philox4x32_10(counter, key, out);
    return out[idx & 3u];
}
