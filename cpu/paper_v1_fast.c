/* SPDX-License-Identifier: MIT */
/* paper_v1_fast.c - the paper-v1 profile (ref/SPEC.md Appendix A) split
 * into jobs and with 8-lane forms of its per-element loops
 * (include/tahq_parallel.h). The bytes, floats and statuses of
 * ref/paper_v1.c for every input and job count: the same binary32
 * operations in the same order (tree sums with the SPEC's halving tree,
 * tile sums with the reference's pairwise accumulator); only independent
 * per-element work is done 8 lanes at a time (GCC vectors / target_clones,
 * the scalar forms under TAHQ_SCALAR_ONLY), and bits are read and written a
 * byte or a group of 8 codes at a time instead of one bit at a time.
 *
 * The layout of Appendix A.3 fixes every field once the token map is known:
 * codes of a token start on a byte (C * bits is a multiple of 8), zeros and
 * scales are 16-bit fields in reordered tile order. So the encode runs
 *   A  rows (parts): input check (first bad element), the entropy key of
 *      each token, the gate (flag, pivot) of each tile;
 *   B  sequences (parts): the sort of each sequence's keys;
 *      serial: map bits, the reordered order and the flagged tiles before
 *      each reordered token;
 *   C  reordered tokens (parts): transform, quantization, zeros, scales,
 *      codes (whole bytes);
 *   D  serial: flag bits and pivots (one pass over the tiles).
 * The decode validates as the reference (flag count, length, padding, map
 * counts), then decodes reordered tokens in parts, each starting its walk
 * of the map and its flag rank by counting bits. */
#include "internal.h"
#include "jobs.h"
#include "pairwise.h"
#include "tahq_parallel.h"
#include "vec8.h"

#define PV1F_EPS 1e-30f
#define PV1F_LN2 0x1.62e43p-1f
#define PV1F_SQRT2 0x1.6a09e6p+0f

/* ---- layout: the reference's (tahq_pv1_layout_compute, Appendix A.3) ------ */

static uint64_t bytes_of_bits(uint64_t bits)
{
    return bits / 8u + (bits % 8u != 0u);
}

/* Width and first code bit of the token at rank `rank` of sequence b
 * (ref/paper_v1.c pv1_code_base): low tokens' codes first, then the high
 * ones', each in reordered order. A multiple of 8 (C is). */
static uint64_t pv1f_code_base(const tahq_pv1_layout *l, uint64_t b, uint64_t rank, uint32_t *bits)
{
    const int low = rank < l->n_low;
    *bits = low ? l->lo_bits : l->hi_bits;
    const uint64_t count = low ? l->n_low : l->n_high;
    const uint64_t pass_rank = low ? rank : rank - l->n_low;
    return (low ? 0u : l->off_hi) + (b * count + pass_rank) * l->C * *bits;
}

/* ---- MSB-first bits --------------------------------------------------------- */

static inline uint32_t bit_at(const uint8_t *buf, uint64_t pos)
{
    return ((uint32_t)buf[pos >> 3] >> (7u - (uint32_t)(pos & 7u))) & 1u;
}

/* n <= 8 bits from pos, the first one most significant. */
static inline uint32_t bits_at(const uint8_t *buf, uint64_t pos, uint32_t n)
{
    const uint64_t byte = pos >> 3;
    const uint32_t sh = (uint32_t)(pos & 7u);
    uint32_t w = (uint32_t)buf[byte] << 8;
    if (sh + n > 8u)
        w |= buf[byte + 1u];
    return (w >> (16u - sh - n)) & ((1u << n) - 1u);
}

/* ORs the n <= 8 low bits of v into bits pos.. (most significant first). */
static inline void or_bits(uint8_t *buf, uint64_t pos, uint32_t v, uint32_t n)
{
    const uint64_t byte = pos >> 3;
    const uint32_t sh = (uint32_t)(pos & 7u);
    const uint32_t w = v << (16u - sh - n);
    buf[byte] |= (uint8_t)(w >> 8);
    if (sh + n > 8u)
        buf[byte + 1u] |= (uint8_t)w;
}

/* Number of one bits among bits first .. first+n-1. */
static uint64_t ones_in(const uint8_t *buf, uint64_t first, uint64_t n)
{
    uint64_t c = 0;
    for (; n > 0 && (first & 7u) != 0; first++, n--)
        c += bit_at(buf, first);
    const uint8_t *p = buf + (first >> 3);
    for (; n >= 64u; p += 8, n -= 64u) {
        uint64_t w;
        memcpy(&w, p, sizeof w);
        c += (uint64_t)__builtin_popcountll(w);
    }
    for (; n >= 8u; p++, n -= 8u)
        c += (uint64_t)__builtin_popcount(*p);
    for (uint64_t pos = (uint64_t)(p - buf) * 8u; n > 0; pos++, n--)
        c += bit_at(buf, pos);
    return c;
}

/* First position s >= from (< S) of the sequence whose map starts at bit
 * map0 with map bit `want`; S if none. */
static uint64_t next_with(const uint8_t *buf, uint64_t map0, uint64_t S, uint64_t from,
                          uint32_t want)
{
    for (uint64_t s = from; s < S; s++)
        if (bit_at(buf, map0 + s) == want)
            return s;
    return S;
}

/* Position of the token at rank `rank` of the sequence whose map starts at
 * map0 (the n-th one for a low rank, else the n-th zero): S if none. */
static uint64_t pos_of_rank(const uint8_t *buf, uint64_t map0, uint64_t S, uint64_t n_low,
                            uint64_t rank)
{
    const uint32_t want = rank < n_low;
    uint64_t n = want ? rank : rank - n_low;
    for (uint64_t s = 0; s < S; s++)
        if (bit_at(buf, map0 + s) == want && n-- == 0)
            return s;
    return S;
}

/* The position of the next reordered token after the one at `pos` and rank
 * `rank` - 1 (rank > 0) of the same sequence. */
static uint64_t pos_after(const uint8_t *buf, uint64_t map0, uint64_t S, uint64_t n_low,
                          uint64_t rank, uint64_t pos)
{
    if (rank == n_low)
        return next_with(buf, map0, S, 0, 0u); /* the high pass starts over */
    return next_with(buf, map0, S, pos + 1u, rank < n_low);
}

/* ---- numerics (Appendix A.1, A.2): the reference's operations ------------ */

/* SPEC §2.5 halving tree over w[0 .. n), n a power of two >= 8; w is
 * overwritten (the 8-lane form of cpu/vec8.h, as ref/entropy.c's). */
static inline float halving_tree(float *w, uint32_t n)
{
#ifdef TAHQ_HAVE_V8
    return tahq_v8_halving_tree(w, n);
#else
    for (uint32_t h = n / 2; h >= 1; h /= 2)
        for (uint32_t j = 0; j < h; j++)
            w[j] = w[j] + w[j + h];
    return w[0];
#endif
}

/* tahq_paper_v1_entropy of a token of T tiles of G channels. */
TAHQ_HOT static float pv1f_entropy(const float *x, uint64_t T, uint32_t G)
{
    float w[TAHQ_TILE_MAX];
    tahq_pairwise_acc acc = {.count = 0, .depth = 0};
    for (uint64_t t = 0; t < T; t++) {
        const float *xt = x + t * G;
        for (uint32_t i = 0; i < G; i++)
            w[i] = tahq_absf(xt[i]);
        tahq_pairwise_push(&acc, halving_tree(w, G));
    }
    const float den = tahq_pairwise_finish(&acc) + PV1F_EPS;
    tahq_pairwise_acc hacc = {.count = 0, .depth = 0};
    for (uint64_t t = 0; t < T; t++) {
        const float *xt = x + t * G;
        for (uint32_t i = 0; i < G; i++) {
            const float p = tahq_absf(xt[i]) / den;
            /* p + 1e-30 is normal: the core's subnormal select picks nothing */
            w[i] = p * (tahq_core_log2(p + PV1F_EPS) * PV1F_LN2);
        }
        tahq_pairwise_push(&hacc, halving_tree(w, G));
    }
    return 0.0f - tahq_pairwise_finish(&hacc);
}

/* tahq_paper_v1_gate: m1 = max |x| (magnitudes of finite floats order as
 * their bits), the pivot its first index, m2 the largest magnitude at
 * another index (m1 again if it occurs twice). Returns flag << 8 | pivot,
 * the pivot searched for only when flagged (0 otherwise: not used). */
TAHQ_HOT static uint32_t pv1f_gate(const float *x, uint32_t G)
{
    uint32_t m1 = 0;
    for (uint32_t i = 0; i < G; i++) {
        const uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        m1 = a > m1 ? a : m1;
    }
    uint32_t n = 0, below = 0;
    for (uint32_t i = 0; i < G; i++) {
        const uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        const uint32_t is_max = a == m1;
        n += is_max;
        const uint32_t other = a & (is_max ? 0u : 0xFFFFFFFFu);
        below = other > below ? other : below;
    }
    const float m2 = tahq_float_of(n >= 2u ? m1 : below);
    if (!(tahq_float_of(m1) >= 2.0f * m2))
        return 0;
    uint32_t d = 0;
    while ((tahq_bits_of(x[d]) & 0x7FFFFFFFu) != m1)
        d++;
    return 1u << 8 | d;
}

/* tahq_paper_v1_quantize_tile. The reference's lo is the first element of
 * least value: the same value as the minimum, and of the same sign when it
 * is a zero (then searched for: the only case where equal values differ). */
TAHQ_HOT static void pv1f_quantize(const float *v, uint32_t G, uint32_t bits, float *zero,
                                   float *scale, uint8_t *codes)
{
    int32_t kmin = INT32_MAX, kmax = INT32_MIN;
    for (uint32_t i = 0; i < G; i++) {
        const int32_t k = tahq_order_key(v[i]);
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    float lo = tahq_from_order_key(kmin);
    const float hi = tahq_from_order_key(kmax); /* its zero sign does not matter: hi - lo */
    if (kmin == -1)                             /* a -0 is least: the first zero decides */
        for (uint32_t i = 0; i < G; i++)
            if (v[i] == 0.0f) {
                lo = v[i];
                break;
            }
    const uint32_t levels = (1u << bits) - 1u;
    const float L = (float)levels;
    float s = (hi - lo) / L;
    if (!(s >= PV1F_EPS))
        s = PV1F_EPS;
    for (uint32_t i = 0; i < G; i++) {
        float t = (v[i] - lo) / s;
        t = t > L ? L : t;
        codes[i] = tahq_nearest_code(t, levels);
    }
    *zero = lo;
    *scale = s;
}

/* fl(sqrt G) of Appendix A.1 (ref/paper_v1.c pv1_sqrt_tile). */
static float pv1f_sqrt_tile(uint32_t G)
{
    const uint32_t k = tahq_tile_log2(G);
    const float p = (float)(1u << (k / 2u));
    return (k & 1u) ? p * PV1F_SQRT2 : p;
}

TAHQ_HOT static void divide_tile(float *v, uint32_t G, float r)
{
    for (uint32_t i = 0; i < G; i++)
        v[i] = v[i] / r;
}

static inline void swap_pivot(float *v, uint32_t pivot)
{
    const float t = v[0];
    v[0] = v[pivot];
    v[pivot] = t;
}

/* Codes of 8 elements as one value, the first code most significant, and
 * back: with BMI2 PEXT / PDEP of the byte-reversed codes where the CPU has
 * them (chosen at run time), else shifts. Both give the same value. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TAHQ_SCALAR_ONLY)
#define PV1F_BMI2 1
#include <immintrin.h>
__attribute__((target("bmi2"))) static void pack_tile_bmi2(uint8_t *buf, const uint8_t *codes,
                                                           uint32_t G, uint32_t bits)
{
    const uint64_t mask = 0x0101010101010101ull * ((1u << bits) - 1u);
    for (uint32_t g = 0; g < G; g += 8, buf += bits) {
        uint64_t c;
        memcpy(&c, codes + g, sizeof c);
        const uint64_t w = _pext_u64(__builtin_bswap64(c), mask);
        const uint64_t be = __builtin_bswap64(w << (64u - 8u * bits));
        memcpy(buf, &be, sizeof be); /* bits bytes are the group's; the rest is overwritten */
    }
}

__attribute__((target("bmi2"))) static void unpack_tile_bmi2(uint8_t *codes, const uint8_t *buf,
                                                             uint32_t G, uint32_t bits)
{
    const uint64_t mask = 0x0101010101010101ull * ((1u << bits) - 1u);
    for (uint32_t g = 0; g < G; g += 8, buf += bits) {
        uint64_t be;
        memcpy(&be, buf, sizeof be);
        const uint64_t w = __builtin_bswap64(be) >> (64u - 8u * bits);
        const uint64_t c = __builtin_bswap64(_pdep_u64(w, mask));
        memcpy(codes + g, &c, sizeof c);
    }
}

static int have_bmi2(void)
{
    static int cached = -1;
    int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("bmi2") ? 1 : 0;
        __atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
    }
    return ok;
}
#endif

/* codes[0 .. G) of `bits` bits each, MSB-first, into the G*bits/8 bytes of
 * dst (written through a local buffer: the fast form stores 8 bytes per
 * group). */
static void pack_msb(uint8_t *dst, const uint8_t *codes, uint32_t G, uint32_t bits)
{
#ifdef PV1F_BMI2
    if (have_bmi2()) {
        uint8_t buf[TAHQ_TILE_MAX + 8];
        pack_tile_bmi2(buf, codes, G, bits);
        memcpy(dst, buf, G * bits / 8u);
        return;
    }
#endif
    for (uint32_t g = 0; g < G; g += 8, dst += bits) {
        uint64_t w = 0;
        for (uint32_t i = 0; i < 8; i++)
            w = (w << bits) | codes[g + i];
        for (uint32_t j = 0; j < bits; j++)
            dst[j] = (uint8_t)(w >> (8u * (bits - 1u - j)));
    }
}

/* The G codes of `bits` bits at src (MSB-first) into codes[0 .. G). */
static void unpack_msb(uint8_t *codes, const uint8_t *src, uint32_t G, uint32_t bits)
{
#ifdef PV1F_BMI2
    if (have_bmi2()) {
        uint8_t buf[TAHQ_TILE_MAX + 8];
        memcpy(buf, src, G * bits / 8u); /* the fast form loads 8 bytes per group */
        unpack_tile_bmi2(codes, buf, G, bits);
        return;
    }
#endif
    const uint64_t mask = (1u << bits) - 1u;
    for (uint32_t g = 0; g < G; g += 8, src += bits) {
        uint64_t w = 0;
        for (uint32_t j = 0; j < bits; j++)
            w = (w << 8) | src[j];
        for (uint32_t i = 0; i < 8; i++)
            codes[g + i] = (uint8_t)((w >> (bits * (7u - i))) & mask);
    }
}

/* The decoder's v[i] = (float)q_i * sc + z. */
TAHQ_HOT static void dequantize(const uint8_t *codes, uint32_t G, float z, float sc, float *v)
{
    for (uint32_t i = 0; i < G; i++)
        v[i] = (float)codes[i] * sc + z;
}

/* dst[i] = v[i], or the canonical NaN for a NaN (Appendix A.4). */
TAHQ_HOT static void store_canonical(float *dst, const float *v, uint32_t G)
{
    for (uint32_t i = 0; i < G; i++) {
        const uint32_t b = tahq_bits_of(v[i]);
        const uint32_t nan = (b & 0x7FFFFFFFu) > 0x7F800000u;
        dst[i] = tahq_float_of(nan ? TAHQ_CANONICAL_NAN_BITS : b);
    }
}

/* ---- encode ----------------------------------------------------------------- */

typedef struct pv1f_enc {
    tahq_pv1_layout l;
    uint32_t jobs;
    const float *x;
    uint8_t *out;
    uint64_t *keys;      /* per row: bits of its entropy << 32 | position */
    uint64_t *order;     /* per reordered row: its row in the tensor */
    uint64_t *row_flags; /* per row: its flagged tiles */
    uint16_t *gate;      /* per tile (tensor order): flag << 8 | pivot */
    tahq_status st[TAHQ_JOBS_MAX];
} pv1f_enc;

static void enc_rows_job(void *arg, uint32_t j)
{
    pv1f_enc *e = arg;
    const tahq_pv1_layout *l = &e->l;
    const uint64_t r0 = tahq_cpu_part_start(l->rows, e->jobs, j, 1);
    const uint64_t r1 = tahq_cpu_part_start(l->rows, e->jobs, j + 1, 1);
    e->st[j] = TAHQ_OK;
    for (uint64_t r = r0; r < r1; r++) {
        const float *row = e->x + r * l->C;
        tahq_status st;
        if (tahq_cpu_first_bad(row, l->C, &st) < l->C) {
            e->st[j] = st; /* the part's first bad element: later parts' come after */
            return;
        }
        if (l->n_low > 0) { /* the keys are only sorted then */
            const float H = pv1f_entropy(row, l->T, l->G);
            e->keys[r] = (uint64_t)tahq_bits_of(H) << 32 | (r % l->S);
        }
        uint64_t n = 0;
        for (uint64_t t = 0; t < l->T; t++) {
            const uint32_t g = pv1f_gate(row + t * l->G, l->G);
            e->gate[r * l->T + t] = (uint16_t)g;
            n += g >> 8;
        }
        e->row_flags[r] = n;
    }
}

static void enc_sort_job(void *arg, uint32_t j)
{
    pv1f_enc *e = arg;
    const tahq_pv1_layout *l = &e->l;
    const uint64_t b0 = tahq_cpu_part_start(l->B, e->jobs, j, 1);
    const uint64_t b1 = tahq_cpu_part_start(l->B, e->jobs, j + 1, 1);
    for (uint64_t b = b0; b < b1; b++)
        tahq_sort_keys(e->keys + b * l->S, l->S); /* keys distinct: one order */
}

static void enc_tiles_job(void *arg, uint32_t j)
{
    pv1f_enc *e = arg;
    const tahq_pv1_layout *l = &e->l;
    const uint32_t G = l->G;
    const float r = pv1f_sqrt_tile(G);
    const uint64_t R0 = tahq_cpu_part_start(l->rows, e->jobs, j, 1);
    const uint64_t R1 = tahq_cpu_part_start(l->rows, e->jobs, j + 1, 1);
    uint8_t *zeros = e->out + l->off_zero / 8u, *scales = e->out + l->off_scale / 8u;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    for (uint64_t R = R0; R < R1; R++) {
        const uint64_t orow = e->order[R], b = R / l->S;
        uint32_t bits;
        uint8_t *dst = e->out + pv1f_code_base(l, b, R - b * l->S, &bits) / 8u;
        for (uint64_t t = 0; t < l->T; t++, dst += G * bits / 8u) {
            const uint64_t tr = R * l->T + t;
            memcpy(v, e->x + orow * l->C + t * G, G * sizeof v[0]);
            const uint32_t g = e->gate[orow * l->T + t];
            if (g >> 8) {
                swap_pivot(v, g & 0xFFu);
                tahq_fwht(v, G);
                divide_tile(v, G, r);
            }
            float z, sc;
            pv1f_quantize(v, G, bits, &z, &sc, codes);
            const uint16_t hz = tahq_f32_to_f16(z), hs = tahq_f32_to_f16(sc);
            zeros[2u * tr] = (uint8_t)hz; /* low byte first (A.3) */
            zeros[2u * tr + 1u] = (uint8_t)(hz >> 8);
            scales[2u * tr] = (uint8_t)hs;
            scales[2u * tr + 1u] = (uint8_t)(hs >> 8);
            pack_msb(dst, codes, G, bits);
        }
    }
}

tahq_status tahq_paper_v1_encode_parallel_workspace_size(const tahq_paper_v1_config *cfg,
                                                         const tahq_shape *shape, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = tahq_paper_v1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    tahq_pv1_layout l;
    tahq_pv1_layout_compute(cfg, shape, &l);
    const uint64_t total = 24u * l.rows + 2u * l.N + 7u;
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

tahq_status tahq_paper_v1_encode_parallel(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                          const float *x, void *workspace, size_t workspace_bytes,
                                          uint8_t *out, size_t out_capacity, size_t *out_len,
                                          const tahq_parallel *par)
{
    /* tahq_paper_v1_encode's checks, in its order, the job count between them */
    tahq_status st = tahq_paper_v1_encode_check_pointers(cfg, shape, out_len);
    if (st != TAHQ_OK)
        return st;
    uint32_t jobs = par ? par->jobs : 1u;
    if (jobs == 0 || jobs > TAHQ_JOBS_MAX)
        return TAHQ_ERR_CONFIG;
    size_t ws_need = 0;
    tahq_paper_v1_encode_parallel_workspace_size(cfg, shape, &ws_need);
    st = tahq_paper_v1_encode_check_room(cfg, shape, x, out, out_capacity, workspace,
                                         workspace_bytes, ws_need);
    if (st != TAHQ_OK)
        return st;
    size_t bound = 0;
    tahq_paper_v1_encode_bound(cfg, shape, &bound);

    pv1f_enc *e = &(pv1f_enc){0};
    tahq_pv1_layout_compute(cfg, shape, &e->l);
    const tahq_pv1_layout *l = &e->l;
    if ((uint64_t)jobs > l->rows)
        jobs = (uint32_t)l->rows;
    e->jobs = jobs;
    e->x = x;
    e->out = out;
    const uintptr_t p = (uintptr_t)workspace;
    uint64_t *w64 = (uint64_t *)(void *)(p + ((8u - (p & 7u)) & 7u));
    e->keys = w64;
    e->order = w64 + l->rows;
    e->row_flags = w64 + 2u * l->rows;
    e->gate = (uint16_t *)(void *)(w64 + 3u * l->rows);

    /* A: input check, keys, gates */
    tahq_cpu_run_jobs(par, enc_rows_job, e, jobs);
    for (uint32_t j = 0; j < jobs; j++)
        if (e->st[j] != TAHQ_OK)
            return e->st[j]; /* the first part with a bad element has the first one */

    /* B: the map (low = the n_low smallest keys of each sequence) */
    const uint64_t meta_end = l->off_map / 8u; /* a byte boundary: 16-bit fields before */
    memset(out + meta_end, 0, bound - meta_end);
    if (l->n_low > 0) {
        tahq_cpu_run_jobs(par, enc_sort_job, e, jobs); /* parts past B are empty */
        for (uint64_t b = 0; b < l->B; b++)
            for (uint64_t i = 0; i < l->n_low; i++)
                or_bits(out, l->off_map + b * l->S + (e->keys[b * l->S + i] & 0xFFFFFFFFu), 1u, 1u);
    }
    /* the reordered order (low tokens, then high, each by position) */
    uint64_t R = 0, n_flagged = 0;
    for (uint64_t b = 0; b < l->B; b++)
        for (int pass = 1; pass >= 0; pass--)
            for (uint64_t s = 0; s < l->S; s++)
                if (bit_at(out, l->off_map + b * l->S + s) == (uint32_t)pass) {
                    e->order[R++] = b * l->S + s;
                    n_flagged += e->row_flags[b * l->S + s];
                }

    /* C: tiles */
    tahq_cpu_run_jobs(par, enc_tiles_job, e, jobs);

    /* D: flag bits and pivots (the pivot of the f-th flagged tile at
     * off_piv + (n_flagged - 1 - f) * k) */
    uint64_t f = 0;
    for (R = 0; R < l->rows; R++) {
        const uint16_t *g = e->gate + e->order[R] * l->T;
        for (uint64_t t = 0; t < l->T; t++)
            if (g[t] >> 8) {
                or_bits(out, l->off_flags + R * l->T + t, 1u, 1u);
                or_bits(out, l->off_piv + (n_flagged - 1u - f) * l->k, g[t] & 0xFFu, l->k);
                f++;
            }
    }
    *out_len = (size_t)bytes_of_bits(l->off_piv + n_flagged * l->k);
    return TAHQ_OK;
}

/* ---- decode ----------------------------------------------------------------- */

/* ref/paper_v1.c pv1_open: length, flag count, padding, map counts. */
static tahq_status pv1f_open(const uint8_t *msg, size_t len, const tahq_pv1_layout *l, uint64_t *nf)
{
    if (!msg)
        return TAHQ_ERR_NULL;
    if ((uint64_t)len < bytes_of_bits(l->off_piv))
        return TAHQ_ERR_TRUNCATED;
    const uint64_t n = ones_in(msg, l->off_flags, l->N);
    const uint64_t total = l->off_piv + n * l->k;
    const uint64_t need = bytes_of_bits(total);
    if ((uint64_t)len < need)
        return TAHQ_ERR_TRUNCATED;
    if ((uint64_t)len > need)
        return TAHQ_ERR_SIZE;
    if (total % 8u != 0u && bits_at(msg, total, (uint32_t)(8u - total % 8u)) != 0u)
        return TAHQ_ERR_PAYLOAD;
    for (uint64_t b = 0; b < l->B; b++)
        if (ones_in(msg, l->off_map + b * l->S, l->S) != l->n_low)
            return TAHQ_ERR_PAYLOAD;
    *nf = n;
    return TAHQ_OK;
}

typedef struct pv1f_dec {
    tahq_pv1_layout l;
    uint32_t jobs;
    uint64_t nf;
    const uint8_t *msg;
    float *out;
} pv1f_dec;

static void dec_tiles_job(void *arg, uint32_t j)
{
    const pv1f_dec *d = arg;
    const tahq_pv1_layout *l = &d->l;
    const uint8_t *msg = d->msg;
    const uint32_t G = l->G;
    const float r = pv1f_sqrt_tile(G);
    const uint64_t R0 = tahq_cpu_part_start(l->rows, d->jobs, j, 1);
    const uint64_t R1 = tahq_cpu_part_start(l->rows, d->jobs, j + 1, 1);
    if (R0 >= R1)
        return;
    uint64_t flag_rank = ones_in(msg, l->off_flags, R0 * l->T);
    const uint8_t *zeros = msg + l->off_zero / 8u, *scales = msg + l->off_scale / 8u;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX + 8];
    uint64_t pos = 0;
    for (uint64_t R = R0; R < R1; R++) {
        const uint64_t b = R / l->S, rank = R - b * l->S, map0 = l->off_map + b * l->S;
        pos = (R == R0 || rank == 0) ? pos_of_rank(msg, map0, l->S, l->n_low, rank)
                                     : pos_after(msg, map0, l->S, l->n_low, rank, pos);
        const uint64_t orow = b * l->S + pos;
        uint32_t bits;
        const uint8_t *src = msg + pv1f_code_base(l, b, rank, &bits) / 8u;
        float *dst = d->out + orow * l->C;
        for (uint64_t t = 0; t < l->T; t++, src += G * bits / 8u, dst += G) {
            const uint64_t tr = R * l->T + t;
            const uint16_t hz = (uint16_t)(zeros[2u * tr] | (uint32_t)zeros[2u * tr + 1u] << 8);
            const uint16_t hs = (uint16_t)(scales[2u * tr] | (uint32_t)scales[2u * tr + 1u] << 8);
            const uint32_t flagged = bit_at(msg, l->off_flags + tr);
            unpack_msb(codes, src, G, bits);
            dequantize(codes, G, tahq_f16_to_f32(hz), tahq_f16_to_f32(hs), v);
            if (flagged) {
                const uint32_t piv =
                    bits_at(msg, l->off_piv + (d->nf - 1u - flag_rank) * l->k, l->k);
                flag_rank++;
                tahq_fwht(v, G);
                divide_tile(v, G, r);
                swap_pivot(v, piv);
            }
            store_canonical(dst, v, G);
        }
    }
}

tahq_status tahq_paper_v1_decode_parallel(const uint8_t *msg, size_t len,
                                          const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                          float *out, size_t count, const tahq_parallel *par)
{
    tahq_status st = tahq_paper_v1_check(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    uint32_t jobs = par ? par->jobs : 1u;
    if (jobs == 0 || jobs > TAHQ_JOBS_MAX)
        return TAHQ_ERR_CONFIG;
    pv1f_dec *d = &(pv1f_dec){0};
    tahq_pv1_layout_compute(cfg, shape, &d->l);
    st = pv1f_open(msg, len, &d->l, &d->nf);
    if (st != TAHQ_OK)
        return st;
    if (!out)
        return TAHQ_ERR_NULL;
    if ((uint64_t)count != d->l.n_elems)
        return TAHQ_ERR_BUFFER;
    if ((uint64_t)jobs > d->l.rows)
        jobs = (uint32_t)d->l.rows;
    d->jobs = jobs;
    d->msg = msg;
    d->out = out;
    tahq_cpu_run_jobs(par, dec_tiles_job, d, jobs);
    return TAHQ_OK;
}
