/* SPDX-License-Identifier: MIT */ /* rng.c - Philox4x32-10 counter-based generator (SPEC §2.4), exported;
 * the block is the scalar core's (tahq_core.h). */
#include "internal.h"

/*@ requires \valid_read(counter + (0 .. 3)) && \valid_read(key + (0 .. 1));
  @ requires \valid(out + (0 .. 3));
  @ requires \separated(out + (0 .. 3), counter + (0 .. 3), key + (0 .. 1));
  @ assigns out[0 .. 3]; */
void tahq_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    tahq_core_philox4x32_10(counter, key, out); /* the scalar core's */
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
