/* internal.h - helpers shared by the ref/ translation units (not public). */
#ifndef TAHQ_INTERNAL_H
#define TAHQ_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include "tahq.h"

/* Bit views of binary32 values (SPEC §2.1); memcpy is the defined way in C. */
static inline uint32_t tahq_bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, sizeof w);
    return w;
}

static inline float tahq_float_of(uint32_t w)
{
    float x;
    memcpy(&x, &w, sizeof x);
    return x;
}

static inline float tahq_absf(float x)
{
    return tahq_float_of(tahq_bits_of(x) & 0x7FFFFFFFu);
}

/* TAHQ_SCALAR_ONLY (set for Frama-C and for the tests' scalar build) turns
 * off every fast path: AVX2 clones, 8-lane vectors and the SSE4.2 CRC. */
#if defined(__FRAMAC__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_SCALAR_ONLY 1
#endif

/* Hot per-tile loops are compiled twice on x86-64 GCC/Clang (baseline and
 * AVX2) and picked at load time. AVX2 only widens the vectors: FMA is a
 * separate target feature and stays off, so results are identical. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY) && !defined(__clang__) && \
    defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define TAHQ_HOT __attribute__((target_clones("avx2", "default")))
#else
#define TAHQ_HOT
#endif

#if defined(__GNUC__) && !defined(__clang__) && !defined(TAHQ_SCALAR_ONLY)
/* 8-lane vectors (GCC vector extensions, __builtin_shuffle) for the fast
 * paths; each computes the same operations as its scalar form. Other
 * compilers take the scalar forms. */
#define TAHQ_HAVE_V8 1
typedef float tahq_v8f __attribute__((vector_size(32)));
typedef int32_t tahq_v8i __attribute__((vector_size(32)));
#endif

/* log2 of a power-of-two tile size (8..256); 0 if not one. */
static inline uint32_t tahq_tile_log2(uint32_t tile)
{
    uint32_t k = 0;
    while (k < 9u && (1u << k) != tile)
        k++;
    return k < 9u ? k : 0u;
}

/* Derived sizes of one message (SPEC §8.2). */
typedef struct tahq_layout {
    uint64_t rows;        /* B*S */
    uint64_t tiles_per_row;
    uint64_t n_tiles;
    uint64_t map_bits;
    uint64_t map_bytes;
    uint64_t flag_bytes;
    uint64_t meta_bytes;  /* per value */
    uint64_t zero_off;    /* payload offsets */
    uint64_t scale_off;
    uint64_t code_off;
    uint64_t code_bytes;
    uint64_t pivot_off;
    uint64_t pivot_bytes;
    uint64_t payload_bytes;
    uint32_t tile_log2;
} tahq_layout;

/* Number of low-precision units the SPEC requires for cfg and shape (§4.2). */
uint64_t tahq_required_low_units(const tahq_config *cfg, const tahq_shape *shape);
/* Fill the layout for n_low units and n_flagged tiles; cfg and shape valid. */
void tahq_layout_compute(const tahq_config *cfg, const tahq_shape *shape, uint64_t n_low,
                         uint64_t n_flagged, tahq_layout *lay);
/* Header write/read (format.c). */
void tahq_header_write(uint8_t *dst, const tahq_config *cfg, const tahq_shape *shape,
                       uint64_t n_low, uint64_t n_flagged, uint64_t payload_bytes);
void tahq_header_seal(uint8_t *msg, uint64_t payload_bytes);

/* Allocation (entropy.c): writes the precision map bits of the whole tensor
 * into map (zeroed by the caller) and returns the number of low units. */
uint64_t tahq_allocate(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                       float *entropy_ws, uint64_t *key_ws, uint8_t *map);

/* min and max of a tile (quant.c); the sign of a zero result is unspecified. */
void tahq_tile_range(const float *v, uint32_t tile, float *lo, float *hi);
/* The gate (SPEC §5.1) given the tile's range from tahq_tile_range. */
int tahq_gate_from_range(const float *x, uint32_t tile, float tau, float lo, float hi,
                         uint32_t *pivot);
/* tahq_quantize_tile given the range of v from tahq_tile_range. */
tahq_status tahq_quantize_tile_range(const float *v, uint32_t tile, float lo, float hi,
                                     uint32_t bits, tahq_meta meta, tahq_rounding rounding,
                                     uint64_t seed, uint64_t elem0, float *zero, float *scale,
                                     uint32_t *zero_bits, uint32_t *scale_bits, uint8_t *codes);
/* Wire bit patterns of the metadata values down(x) and up(x) (fp16.c). */
uint32_t tahq_meta_round_down_bits(tahq_meta meta, float x);
uint32_t tahq_meta_round_up_bits(tahq_meta meta, float x);
/* Scale of SPEC §5.3/§7.2 as bits: smallest meta s >= fl(w/L) with fl(w/s) <= L. */
uint32_t tahq_meta_scale_bits(tahq_meta meta, float w, uint32_t levels);

/* Tile codes, byte-aligned, LSB-first (bitpack.c); codes must be < 2^b. */
void tahq_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b);
void tahq_unpack_tile(const uint8_t *src, uint8_t *codes, uint32_t tile, uint32_t b);

/* Little-endian field access. */
static inline void tahq_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void tahq_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void tahq_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t tahq_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t tahq_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t tahq_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint32_t tahq_get_bit(const uint8_t *buf, uint64_t i)
{
    return (buf[i >> 3] >> (i & 7u)) & 1u;
}
static inline void tahq_set_bit(uint8_t *buf, uint64_t i)
{
    buf[i >> 3] = (uint8_t)(buf[i >> 3] | (1u << (i & 7u)));
}

#endif
