/* SPDX-License-Identifier: MIT */
/* prefetch.h - a hint that input values are read soon, for the fast paths'
 * passes that read the input from memory with other work between the loads
 * (the entropy's first pass, the tile phase, the gain key): the hardware
 * prefetcher alone leaves those loads waiting on memory on some machines.
 * A prefetch never faults and changes no result. */
#ifndef TAHQ_CPU_PREFETCH_H
#define TAHQ_CPU_PREFETCH_H

#include <stdint.h>

#include <immintrin.h>

/* How far ahead of the tile it works on a pass asks for the input: 16
 * tiles, the avx512 path's batch. */
#define TAHQ_PREFETCH_TILES 16u

/* The n floats from base[first] on, one request per 64-byte line. They may
 * lie past the tensor (the next row or batch of the last one): the address
 * is computed as an integer, never as a pointer. */
static inline __attribute__((always_inline)) void
tahq_prefetch_floats(const float *base, uint64_t first, const uint32_t n)
{
    const uintptr_t a = (uintptr_t)base + 4u * first;
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i += 16)
        _mm_prefetch((const char *)(a + 4u * i), _MM_HINT_T0);
}

/* The tile TAHQ_PREFETCH_TILES after tile t of G values from base on. */
static inline __attribute__((always_inline)) void
tahq_prefetch_tile_ahead(const float *base, uint64_t t, const uint32_t G)
{
    tahq_prefetch_floats(base, (t + TAHQ_PREFETCH_TILES) * G, G);
}

#endif
