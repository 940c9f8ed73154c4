/* SPDX-License-Identifier: MIT */
/* encode_avx512.h - the 16-lane forms of the encoder's fast path (the avx512
 * path of cpu_path.h), included once by fast_encode.c after its 8-lane
 * forms, whose scalar steps it shares (the metadata search, the pairwise
 * merges, the last three levels of each halving tree, the gate's decision).
 *
 * A tile of G >= 16 values is held in G / 16 registers of 16 lanes; each
 * lane does the scalar operations of its element, in the order of the
 * 8-lane form (what each step computes: fast_encode.c's head comment).
 * Sums keep the SPEC's order: a halving tree's levels h >= 16 add whole
 * vectors, level 8 adds the upper half of the vector to its lower half,
 * then the 8-lane steps (the entropy does levels 8 .. 1 of two tiles in
 * one register, the same pairs of lanes); no sum is reassociated. The tile
 * phase runs in batches of 16 tiles (run16), whose fp16 metadata searches
 * share one register. Tiles of 8 values take the 8-lane forms. */
#ifndef TAHQ_CPU_ENCODE_AVX512_H
#define TAHQ_CPU_ENCODE_AVX512_H

#include "prefetch.h"
#include "regs_avx512.h"
#include "stochastic_avx512.h"
#include "tile_avx512.h"

/* log2_8 on 16 lanes, the select and the halving by masks: the same
 * operations per lane, for m <= 4 vectors x[0 .. m) at once into y. The
 * steps are written step by step across the m vectors (each Horner step of
 * every vector, then the next): the 9 dependent steps of one vector are a
 * chain of about 60 cycles, and emitted one vector after the other the
 * chains do not fit the scheduler together; interleaved, m = 4 chains keep
 * the multiplier busy. */
TAHQ_AVX512_INLINE void log2_16n(const __m512 *x, __m512 *y, const uint32_t m)
{
    __m512 f[4], ef[4];
    __m512i w[4];
    __mmask16 sub[4], any = 0;
#pragma GCC unroll 4
    for (uint32_t v = 0; v < m; v++) {
        w[v] = _mm512_castps_si512(x[v]);
        /* x >= +0: the bits are a non-negative int32, so a signed compare */
        sub[v] = _mm512_cmplt_epi32_mask(w[v], _mm512_set1_epi32(0x00800000));
        any = _kor_mask16(any, sub[v]);
    }
    /* the subnormal select: a masked multiply and subtract, which change
     * no lane where the mask is empty, so they run only when some lane of
     * the group is below 2^-126 (or zero) */
    const int subnormal = !_kortestz_mask16_u8(any, any);
    if (subnormal)
#pragma GCC unroll 4
        for (uint32_t v = 0; v < m; v++)
            w[v] = _mm512_castps_si512(
                _mm512_mask_mul_ps(x[v], sub[v], x[v], _mm512_set1_ps(0x1p23f)));
#pragma GCC unroll 4
    for (uint32_t v = 0; v < m; v++) {
        __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(w[v], 23), _mm512_set1_epi32(127));
        if (subnormal)
            e = _mm512_mask_sub_epi32(e, sub[v], e, _mm512_set1_epi32(23));
        const __m512i frac = _mm512_and_si512(w[v], _mm512_set1_epi32(0x7FFFFF));
        const __mmask16 above = _mm512_cmpgt_epi32_mask(frac, _mm512_set1_epi32(0x3504F3));
        __m512i mb = _mm512_or_si512(frac, _mm512_set1_epi32(0x3F800000));
        mb = _mm512_mask_sub_epi32(mb, above, mb, _mm512_set1_epi32(0x00800000)); /* m / 2 */
        e = _mm512_mask_add_epi32(e, above, e, _mm512_set1_epi32(1));
        f[v] = _mm512_sub_ps(_mm512_castsi512_ps(mb), _mm512_set1_ps(1.0f));
        ef[v] = _mm512_cvtepi32_ps(e); /* exact: |e| < 2^8 */
        y[v] = _mm512_set1_ps(log2_coeff[8]);
    }
#pragma GCC unroll 8
    for (int i = 7; i >= 0; i--)
#pragma GCC unroll 4
        for (uint32_t v = 0; v < m; v++)
            y[v] = _mm512_add_ps(_mm512_mul_ps(y[v], f[v]), _mm512_set1_ps(log2_coeff[i]));
#pragma GCC unroll 4
    for (uint32_t v = 0; v < m; v++)
        y[v] = _mm512_add_ps(ef[v], _mm512_mul_ps(f[v], y[v]));
}

/* Levels h = 8, 4, 2, 1 of SPEC §2.5's halving tree for two tiles at once:
 * a and b hold the 16 sums of tiles A and B after their levels h >= 16.
 * Each add pairs the lanes i and i + h of both tiles (h = 8: the 128-bit
 * blocks 0, 1 with 2, 3 of each tile, gathered into one register; h = 4:
 * block 0 with 1, 2 with 3; then h = 2, 1 inside each block): the sums of
 * the 8-lane tree_regs after a level h = 8 of the halves, two tiles per
 * operation, which also halves the chain of dependent adds per tile. A's
 * sum ends in lane 0, B's in lane 8. */
TAHQ_AVX512_INLINE void tree16_tail2(__m512 a, __m512 b, float *sum_a, float *sum_b)
{
    __m512 v = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1)); /* h = 4 */
    v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4E));       /* h = 2 */
    v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));       /* h = 1 */
    *sum_a = _mm512_cvtss_f32(v);
    *sum_b = _mm_cvtss_f32(_mm512_extractf32x4_ps(v, 2));
}

/* Levels h >= 16 of the halving tree of a tile in n vectors (w overwritten):
 * whole vectors (w[j] + w[j+h]); the result's 16 lanes go to tree16_tail2,
 * or for a lone tile to level 8 (its halves) and tree_regs. */
TAHQ_AVX512_INLINE __m512 tree16_across(__m512 *w, const uint32_t n)
{
#pragma GCC unroll 8
    for (uint32_t h = n / 2; h >= 1; h /= 2)
#pragma GCC unroll 8
        for (uint32_t j = 0; j < h; j++)
            w[j] = _mm512_add_ps(w[j], w[j + h]);
    return w[0];
}

/* Pass 1 of the entropy for one tile of 16n values at x: the magnitudes
 * (their maximum into *worst, the input check) and the tile's levels
 * h >= 16. */
TAHQ_AVX512_INLINE __m512 abs16_tile(const float *x, const uint32_t n, __m512i *worst)
{
    const __m512i mag = _mm512_set1_epi32(0x7FFFFFFF);
    __m512 w[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++) {
        __m512i a = _mm512_and_si512(_mm512_loadu_si512(x + 16 * i), mag);
        *worst = _mm512_max_epi32(*worst, a); /* magnitude bits < 2^31: signed order */
        w[i] = _mm512_castsi512_ps(a);
    }
    return tree16_across(w, n);
}

/* Pass 2 for the values of one tile, or of two tiles of 16 or 32 values
 * (x holds n vectors): p * log2(p) per value, p = min(|x| * inv, 1), in
 * groups of at most 4 vectors (log2_16n), then the levels h >= 16 of each
 * tile of g vectors. */
TAHQ_AVX512_INLINE void plogp16_vectors(const float *x, const uint32_t n, __m512 inv, __m512 *w)
{
    const __m512i mag = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512 one = _mm512_set1_ps(1.0f);
#pragma GCC unroll 4
    for (uint32_t i0 = 0; i0 < n; i0 += 4) {
        const uint32_t m = n - i0 < 4u ? n - i0 : 4u;
        __m512 p[4], l[4];
#pragma GCC unroll 4
        for (uint32_t v = 0; v < m; v++) {
            const __m512 a =
                _mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512(x + 16 * (i0 + v)), mag));
            /* p = min(|x| * (1 / total), 1): MINPS gives p < 1 ? p : 1 */
            p[v] = _mm512_min_ps(_mm512_mul_ps(a, inv), one);
        }
        log2_16n(p, l, m);
#pragma GCC unroll 4
        for (uint32_t v = 0; v < m; v++)
            w[i0 + v] = _mm512_mul_ps(p[v], l[v]); /* -0 for p = +0, as the reference */
    }
}

TAHQ_AVX512_INLINE __m512 plogp16_tile(const float *x, const uint32_t n, __m512 inv)
{
    __m512 w[TAHQ_TILE_MAX / 16];
    plogp16_vectors(x, n, inv, w);
    return tree16_across(w, n);
}

/* entropy_regs for tiles of 16n values. Tiles of at most 64 values go two
 * at a time (their trees' last levels share registers, and the two tiles'
 * independent chains fill the pipeline: one tile's dependent log2 steps
 * and tree levels are too short a window to do so); the sums are pushed in
 * tile order, so every sum is the reference's. */
TAHQ_AVX512_INLINE int entropy16_regs(const float *row, uint32_t T, const uint32_t n,
                                      float *entropy)
{
    const uint32_t G = 16u * n;
    const uint32_t pairs = n <= 4 ? T / 2u : 0u;
    __m512i worst = _mm512_setzero_si512();
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    for (uint32_t t = 0; t < 2u * pairs; t += 2) {
        const float *x = row + (uint64_t)t * G;
        const __m512 a = abs16_tile(x, n, &worst), b = abs16_tile(x + G, n, &worst);
        float sa, sb;
        tree16_tail2(a, b, &sa, &sb);
        pair_push(&acc, sa);
        pair_push(&acc, sb);
    }
    for (uint32_t t = 2u * pairs; t < T; t++) {
        __m512 w = abs16_tile(row + (uint64_t)t * G, n, &worst);
        __m256 v = _mm256_add_ps(tahq_lo8_ps(w), tahq_hi8_ps(w));
        pair_push(&acc, tree_regs(&v, 1));
    }
    if (_mm512_reduce_max_epi32(worst) >= 0x5F800000) /* a value >= 2^64, infinite or NaN */
        return 0;
    float inverse;
    if (entropy_total(&acc, row, T, G, entropy, &inverse))
        return 1;
    const __m512 inv = _mm512_set1_ps(inverse);
    tahq_pairwise_acc hacc = {.count = 0, .depth = 0};
    /* pass 1 of the next row reads from memory: ask for it while pass 2
     * works on this row's values from the cache */
    const uint64_t next = (uint64_t)T * G;
    for (uint32_t t = 0; t < 2u * pairs; t += 2) {
        const float *x = row + (uint64_t)t * G;
        tahq_prefetch_floats(row, next + (uint64_t)t * G, 2u * G);
        __m512 a, b;
        if (n <= 2) { /* both tiles' vectors in one group of log2_16n */
            __m512 w[4];
            plogp16_vectors(x, 2u * n, inv, w);
            a = tree16_across(w, n);
            b = tree16_across(w + n, n);
        } else {
            a = plogp16_tile(x, n, inv);
            b = plogp16_tile(x + G, n, inv);
        }
        float sa, sb;
        tree16_tail2(a, b, &sa, &sb);
        pair_push(&hacc, sa);
        pair_push(&hacc, sb);
    }
    for (uint32_t t = 2u * pairs; t < T; t++) {
        tahq_prefetch_floats(row, next + (uint64_t)t * G, G);
        __m512 w = plogp16_tile(row + (uint64_t)t * G, n, inv);
        __m256 v = _mm256_add_ps(tahq_lo8_ps(w), tahq_hi8_ps(w));
        pair_push(&hacc, tree_regs(&v, 1));
    }
    *entropy = 0.0f - tahq_pairwise_finish(&hacc);
    return 1;
}

static TAHQ_AVX512_TARGET int row_entropy_avx512(const float *row, uint32_t T, uint32_t G,
                                                 float *entropy)
{
    switch (G) {
    case 16:
        return entropy16_regs(row, T, 1, entropy);
    case 32:
        return entropy16_regs(row, T, 2, entropy);
    case 64:
        return entropy16_regs(row, T, 4, entropy);
    case 128:
        return entropy16_regs(row, T, 8, entropy);
    default:
        return entropy16_regs(row, T, 16, entropy);
    }
}

static TAHQ_AVX512_TARGET void log2_8_avx512(const float *x, float *y)
{
    const __m512 v = _mm512_zextps256_ps512(_mm256_loadu_ps(x));
    __m512 l;
    log2_16n(&v, &l, 1);
    _mm256_storeu_ps(y, tahq_lo8_ps(l));
}

/* codes_nearest_regs on 16 lanes: code16's operations, each vector's codes
 * packed as soon as they are known (pack16_put). */
TAHQ_AVX512_INLINE void codes16_nearest_regs(const __m512 *u, const uint32_t n, float z, float s,
                                             const uint32_t bits, uint8_t *dst)
{
    const __m512 zv = _mm512_set1_ps(z), sv = _mm512_set1_ps(s);
    const __m512i lv = _mm512_set1_epi32((int)((1u << bits) - 1u));
    const uint64_t mask = TAHQ_BYTE_MASK(bits);
    tahq_bitwriter w = {dst, 0, 0};
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++)
        pack16_put(&w, code16(u[i], zv, sv, lv), bits, mask, dst, i);
    if (bits != 8)
        tahq_bitwriter_flush(&w);
}

/* The stochastic codes of a tile of 16n >= 64 values (elem0: the index of
 * its first element), packed: 16 Philox blocks per 64 values
 * (stochastic_avx512.h), each 64 codes by pack16_regs (they fill 8 * bits
 * whole bytes). */
TAHQ_AVX512_INLINE void codes16_stochastic_regs(const float *v, const uint32_t n, float z, float s,
                                                const uint32_t bits, uint64_t seed, uint64_t elem0,
                                                uint8_t *dst)
{
    const __m512 zv = _mm512_set1_ps(z), sv = _mm512_set1_ps(s);
    const __m512i lv = _mm512_set1_epi32((int)((1u << bits) - 1u));
    for (uint32_t i = 0; i < n; i += 4) {
        __m512i words[4], q[4];
        tahq_words64(elem0 + 16u * i, (uint32_t)seed, (uint32_t)(seed >> 32), words);
#pragma GCC unroll 4
        for (uint32_t m = 0; m < 4; m++)
            q[m] = tahq_stochastic_q16(_mm512_loadu_ps(v + 16 * (i + m)), zv, sv, lv, words[m]);
        pack16_regs(q, 4, bits, dst + 2u * bits * i);
    }
}

/* tahq_fast_encode_run for tiles of 16n values, in batches of 16 tiles:
 * the range, gate and transform of each (flagged tiles kept in `moved`),
 * the metadata of all 16 (batch16_meta), then each tile's codes and fields
 * in order; the first tile whose metadata overflows ends the run as in
 * RUN_TILES (its fields and those after it unwritten). */
TAHQ_AVX512_INLINE tahq_status run16(const tahq_config *c, const float *x, uint64_t t0,
                                     uint64_t count, const uint32_t bits, tahq_fast_run *run,
                                     const uint32_t n)
{
    const uint32_t G = 16u * n, k = tahq_tile_log2(G), code_bytes = G / 8u * bits;
    const uint32_t levels = (1u << bits) - 1u;
    const uint64_t meta_bytes = tahq_meta_bytes(c->meta);
    uint8_t *codes = run->codes;
    uint64_t pivot_bit = run->pivot_bit;
    float moved[16][TAHQ_TILE_MAX];
    for (uint64_t b0 = t0, e = t0 + count; b0 < e; b0 += 16) {
        const uint32_t m = e - b0 < 16 ? (uint32_t)(e - b0) : 16u;
        batch16 b;
        batch16_ranges(&b, x + b0 * G, m, n, c->tau, moved, NULL);
        batch16_meta(&b, m, c->meta, levels);
        for (uint32_t j = 0; j < m; j++, codes += code_bytes) {
            tahq_prefetch_tile_ahead(x, b0 + j, G); /* the next batch's tile j */
            if (b.bad[j]) {
                run->codes = codes;
                run->pivot_bit = pivot_bit;
                return TAHQ_ERR_RANGE;
            }
            const uint64_t t = b0 + j;
            const float *v = batch16_values(&b, j, x + t * G, moved);
            const enc_tile tile = {b.zb[j], b.sb[j], b.pivot[j], (int)b.flagged[j]};
            if (b.s[j] == 0.0f) {
                memset(codes, 0, code_bytes);
            } else if (c->rounding == TAHQ_ROUND_STOCHASTIC) {
                if (n >= 4)
                    codes16_stochastic_regs(v, n, b.z[j], b.s[j], bits, c->seed, t * G, codes);
                else
                    codes_stochastic(v, G, b.z[j], b.s[j], bits, c->seed, t * G, codes);
            } else {
                __m512 u[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
                for (uint32_t i = 0; i < n; i++)
                    u[i] = _mm512_loadu_ps(v + 16 * i);
                codes16_nearest_regs(u, n, b.z[j], b.s[j], bits, codes);
            }
            pivot_bit = store_tile(run, t, &tile, meta_bytes, k, pivot_bit);
        }
    }
    run->codes = codes;
    run->pivot_bit = pivot_bit;
    return TAHQ_OK;
}

static TAHQ_AVX512_TARGET tahq_status encode_run_avx512(const tahq_config *c, const float *x,
                                                        uint64_t t0, uint64_t count, uint32_t bits,
                                                        tahq_fast_run *run)
{
    switch (c->tile) {
    case 16:
        return run16(c, x, t0, count, bits, run, 1);
    case 32:
        return run16(c, x, t0, count, bits, run, 2);
    case 64:
        return run16(c, x, t0, count, bits, run, 4);
    case 128:
        return run16(c, x, t0, count, bits, run, 8);
    default:
        return run16(c, x, t0, count, bits, run, 16);
    }
}

/* encode_known_regs on 16 lanes: the transform of a flagged tile
 * (forward16_regs, its range unused) and the codes of run16. */
TAHQ_AVX512_INLINE void known16(const tahq_config *c, const float *xt, const uint32_t n,
                                const uint32_t bits, uint64_t elem0, const tahq_tile_meta *kn,
                                uint8_t *dst, enc_tile *out)
{
    float z, s;
    known_fields(c, bits, kn, out, &z, &s);
    if (s == 0.0f) {
        memset(dst, 0, 2u * n * bits);
        return;
    }
    __m512 u[TAHQ_TILE_MAX / 16];
#pragma GCC unroll 16
    for (uint32_t i = 0; i < n; i++)
        u[i] = _mm512_loadu_ps(xt + 16 * i);
    if (out->flagged) {
        float lo, hi;
        forward16_regs(u, n, xt, out->pivot, &lo, &hi);
    }
    if (c->rounding != TAHQ_ROUND_STOCHASTIC) {
        codes16_nearest_regs(u, n, z, s, bits, dst);
        return;
    }
    float v[TAHQ_TILE_MAX];
    const float *src = xt;
    if (out->flagged) {
#pragma GCC unroll 16
        for (uint32_t i = 0; i < n; i++)
            _mm512_storeu_ps(v + 16 * i, u[i]);
        src = v;
    }
    if (n >= 4)
        codes16_stochastic_regs(src, n, z, s, bits, c->seed, elem0, dst);
    else
        codes_stochastic(src, 16u * n, z, s, bits, c->seed, elem0, dst);
}

static TAHQ_AVX512_TARGET tahq_status encode_run_known_avx512(const tahq_config *c, const float *x,
                                                              uint64_t t0, uint64_t count,
                                                              uint32_t bits,
                                                              const tahq_tile_meta *known,
                                                              tahq_fast_run *run)
{
#define ENC16K(n)                      \
    RUN_TILES(c, t0, count, bits, run, \
              (known16(c, x + t * G, n, bits, t * G, &known[t - (t0)], codes, &tile), TAHQ_OK))
    switch (c->tile) {
    case 16:
        ENC16K(1);
    case 32:
        ENC16K(2);
    case 64:
        ENC16K(4);
    case 128:
        ENC16K(8);
    default:
        ENC16K(16);
    }
#undef ENC16K
}

/* tahq_fast_zero_scale by batch16_meta's forms (fp16: the 16-lane search,
 * here on one range), so that the tests reach them. */
static TAHQ_AVX512_TARGET tahq_status zero_scale_avx512(tahq_meta meta, float lo, float hi,
                                                        uint32_t levels, float *z, float *s,
                                                        uint32_t *zb, uint32_t *sb)
{
    batch16 b;
    b.lo[0] = lo;
    b.hi[0] = hi;
    batch16_meta(&b, 1, meta, levels);
    if (b.bad[0])
        return TAHQ_ERR_RANGE;
    *z = b.z[0];
    *s = b.s[0];
    *zb = b.zb[0];
    *sb = b.sb[0];
    return TAHQ_OK;
}

#endif
