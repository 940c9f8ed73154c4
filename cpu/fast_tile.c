/* fast_tile.c - per-tile fast paths (cpu/fast_tile.h).
 *
 * Codes of one tile (SPEC §8.3): each group of 8 b-bit codes fills exactly b
 * bytes, code j of the group at bits j*b of the little-endian group. BMI2's
 * PDEP spreads such a group into 8 bytes (code j in byte j) and PEXT packs it
 * back: one instruction per group instead of the reference's SWAR steps.
 * The decode converts the 8 codes to float (exact: q < 256) and computes
 * zero + q * scale as two rounded binary32 operations in that order, the
 * reference's expression (no FMA: the target below does not enable it and
 * the project compiles with -ffp-contract=off). fp16 metadata is widened
 * with F16C (exact for every finite binary16, which is all a validated
 * message holds). */
#include <string.h>

#include "fast_tile.h"
#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(TAHQ_SCALAR_ONLY)
#define TAHQ_FAST_X86 1
#include <immintrin.h>
#endif

#ifdef TAHQ_FAST_X86

#define FAST_TARGET __attribute__((target("avx2,bmi2,f16c")))

/* -1 until the first call; atomic, since the parallel codec's threads ask */
static int fast_ok = -1;

static int fast_check(void)
{
    int ok = __atomic_load_n(&fast_ok, __ATOMIC_RELAXED);
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
             __builtin_cpu_supports("f16c");
        __atomic_store_n(&fast_ok, ok, __ATOMIC_RELAXED);
    }
    return ok;
}

/* 0x01 repeated in each byte times 2^b - 1: the b low bits of every byte. */
#define BYTE_MASK(b) (UINT64_C(0x0101010101010101) * ((1u << (b)) - 1u))

static inline FAST_TARGET void pack_width(uint8_t *dst, const uint8_t *codes, uint32_t tile,
                                          const uint32_t b)
{
    for (uint32_t g = 0; g < tile; g += 8, dst += b) {
        uint64_t u;
        memcpy(&u, codes + g, 8);
        uint64_t w = _pext_u64(u, BYTE_MASK(b));
        memcpy(dst, &w, b); /* little-endian: the b low bytes */
    }
}

static FAST_TARGET void pack_avx(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    switch (b) {
    case 1: pack_width(dst, codes, tile, 1); break;
    case 2: pack_width(dst, codes, tile, 2); break;
    case 3: pack_width(dst, codes, tile, 3); break;
    case 4: pack_width(dst, codes, tile, 4); break;
    case 5: pack_width(dst, codes, tile, 5); break;
    case 6: pack_width(dst, codes, tile, 6); break;
    case 7: pack_width(dst, codes, tile, 7); break;
    default: memcpy(dst, codes, tile); break; /* 8 bits: the bytes themselves */
    }
}

static inline FAST_TARGET void decode_width(const uint8_t *src, uint32_t tile, const uint32_t b,
                                            __m256 z, __m256 s, float *out)
{
    for (uint32_t g = 0; g < tile; g += 8, src += b) {
        uint64_t w = 0;
        memcpy(&w, src, b); /* only the group's b bytes: never past the message */
        uint64_t u = b == 8 ? w : _pdep_u64(w, BYTE_MASK(b));
        __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)u)));
        _mm256_storeu_ps(out + g, _mm256_add_ps(z, _mm256_mul_ps(q, s)));
    }
}

static FAST_TARGET void decode_avx(const uint8_t *src, uint32_t tile, uint32_t b, float zero,
                                   float scale, float *out)
{
    const __m256 z = _mm256_set1_ps(zero), s = _mm256_set1_ps(scale);
    switch (b) {
    case 1: decode_width(src, tile, 1, z, s, out); break;
    case 2: decode_width(src, tile, 2, z, s, out); break;
    case 3: decode_width(src, tile, 3, z, s, out); break;
    case 4: decode_width(src, tile, 4, z, s, out); break;
    case 5: decode_width(src, tile, 5, z, s, out); break;
    case 6: decode_width(src, tile, 6, z, s, out); break;
    case 7: decode_width(src, tile, 7, z, s, out); break;
    default: decode_width(src, tile, 8, z, s, out); break;
    }
}

static FAST_TARGET float f16_avx(uint32_t bits)
{
    return _cvtsh_ss((unsigned short)bits);
}

int tahq_fast_tile_active(void)
{
    return fast_check();
}

void tahq_fast_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    if (fast_check())
        pack_avx(dst, codes, tile, b);
    else
        tahq_pack_tile(dst, codes, tile, b);
}

void tahq_fast_decode_tile(const uint8_t *src, uint32_t tile, uint32_t b, float zero, float scale,
                           float *out)
{
    if (fast_check()) {
        decode_avx(src, tile, b, zero, scale, out);
    } else {
        uint8_t codes[TAHQ_TILE_MAX];
        tahq_unpack_tile(src, codes, tile, b);
        tahq_dequantize_tile(codes, tile, zero, scale, out);
    }
}

float tahq_fast_meta_value(tahq_meta meta, uint32_t bits)
{
    switch (meta) {
    case TAHQ_META_FP32: return tahq_float_of(bits);
    case TAHQ_META_BF16: return tahq_float_of(bits << 16);
    default: return fast_check() ? f16_avx(bits) : tahq_meta_value(meta, bits);
    }
}

#else /* the reference functions */

int tahq_fast_tile_active(void)
{
    return 0;
}

void tahq_fast_pack_tile(uint8_t *dst, const uint8_t *codes, uint32_t tile, uint32_t b)
{
    tahq_pack_tile(dst, codes, tile, b);
}

void tahq_fast_decode_tile(const uint8_t *src, uint32_t tile, uint32_t b, float zero, float scale,
                           float *out)
{
    uint8_t codes[TAHQ_TILE_MAX];
    tahq_unpack_tile(src, codes, tile, b);
    tahq_dequantize_tile(codes, tile, zero, scale, out);
}

float tahq_fast_meta_value(tahq_meta meta, uint32_t bits)
{
    return tahq_meta_value(meta, bits);
}

#endif
