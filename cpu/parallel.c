/* SPDX-License-Identifier: MIT */
/* parallel.c - multi-threaded encode and decode (include/tahq_parallel.h).
 *
 * Built from the per-unit and per-tile functions of the reference (ref/):
 * this file only divides the work. Every value of the message is a function
 * of its unit or tile alone (SPEC §4, §5), and every field's position in the
 * payload is fixed by the precision map (SPEC §8.2), except the pivots, which
 * come last. So the encode runs in phases, each split into parts that write
 * disjoint bytes:
 *   A  rows:   the input check (first bad element, SPEC §3.2) and the rank
 *              of every unit into the workspace: the bits of its entropy
 *              (SPEC §4.1; token and tile allocation) or its gain key
 *              (§4.3, tahq_token_gain_key; gain allocation);
 *   B  groups: the ranking of each allocation group and its map bits (§4.2);
 *              parts start at a multiple of 8 groups, so on a map byte;
 *   C  tiles:  gate, transform, quantization, metadata, codes, gate flag of
 *              every tile (§5); parts start at a multiple of 8 tiles, so the
 *              flag bytes are disjoint; a part's pivots are parked one after
 *              the other from bit t0*k, t0 its first tile (a byte boundary,
 *              and inside the message bound, which has room for a pivot per
 *              tile);
 *   D  serial: the parked pivots moved down to their place (n_flagged before
 *              the part, times k), the bits after them cleared;
 *   E  bytes:  the CRC-32C of each part of the payload, joined with the
 *              header's by the GF(2) combine (common/tahq_crc_gf2.h).
 * The decode validates the payload in parts (group counts, flag counts,
 * metadata values; SPEC §8.4 step 5) and then decodes tiles in parts whose
 * code offsets and pivot indices are prefix sums of the parts before. */
#include "fast_encode.h"
#include "fast_gain.h"
#include "fast_tile.h"
#include "jobs.h"
#include "internal.h"
#include "tahq_parallel.h"
#include "../common/tahq_crc_gf2.h"
#include "../common/tahq_jobs.h"

/* ---- job runner ------------------------------------------------------------ */

void tahq_parallel_threads(tahq_parallel *par, uint32_t jobs)
{
    if (!par)
        return;
    par->jobs = jobs;
    par->run = NULL;
    par->ctx = NULL;
}

typedef struct job_call {
    tahq_job_fn fn;
    void *arg;
} job_call;

static void job_thread(void *p, int t)
{
    const job_call *c = p;
    c->fn(c->arg, (uint32_t)t);
}

_Static_assert(TAHQ_JOBS_MAX <= TAHQ_JOBS_THREADS_MAX, "a thread for every job");

/* One thread per job (common/tahq_jobs.h): job 0 on the caller's thread, a
 * job whose thread cannot be started on the caller's thread after it. */
static void builtin_run(tahq_job_fn fn, void *arg, uint32_t n)
{
    job_call c = {fn, arg};
    tahq_jobs_each((int)n, job_thread, &c);
}

void tahq_cpu_run_jobs(const tahq_parallel *par, tahq_job_fn fn, void *arg, uint32_t n)
{
    if (n > 1 && par && par->run)
        par->run(par->ctx, fn, arg, n);
    else
        builtin_run(fn, arg, n);
}

/* Part j of n of the range [0, count): starts rounded down to a multiple of
 * `align` (so that parts meet on byte boundaries of bit fields indexed by the
 * range); the first part starts at 0, the last ends at count. */
uint64_t tahq_cpu_part_start(uint64_t count, uint32_t n, uint32_t j, uint64_t align)
{
    if (j == 0)
        return 0;
    if (j >= n)
        return count;
    /* count * j / n without overflow: count < 2^41, n <= 256 */
    uint64_t s = count / n * j + count % n * j / n;
    return s / align * align;
}

/* Number of one bits in bits [first, first + n) of an LSB-first stream. */
static uint64_t popcount_range(const uint8_t *buf, uint64_t first, uint64_t n)
{
    uint64_t c = 0, i = first, end = first + n;
    while (i < end && (i & 7u))
        c += tahq_get_bit(buf, i++);
    for (; i + 64 <= end; i += 64) {
        uint64_t w;
        memcpy(&w, buf + (i >> 3), 8);
        c += (uint64_t)__builtin_popcountll(w);
    }
    for (; i + 8 <= end; i += 8)
        c += (uint64_t)__builtin_popcount(buf[i >> 3]);
    while (i < end)
        c += tahq_get_bit(buf, i++);
    return c;
}

/* Number of low-precision tiles among tiles [t0, t1) under the map. */
static uint64_t low_tiles(const tahq_config *cfg, const tahq_layout *lay, const uint8_t *map,
                          uint64_t t0, uint64_t t1)
{
    if (t1 <= t0)
        return 0;
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN: {
        const uint64_t T = lay->tiles_per_row;
        const uint64_t r0 = t0 / T, r1 = (t1 - 1) / T; /* first and last row touched */
        if (r0 == r1)
            return tahq_get_bit(map, r0) * (t1 - t0);
        uint64_t c = tahq_get_bit(map, r0) * ((r0 + 1) * T - t0);
        c += tahq_get_bit(map, r1) * (t1 - r1 * T);
        if (r1 > r0 + 1)
            c += popcount_range(map, r0 + 1, r1 - r0 - 1) * T;
        return c;
    }
    case TAHQ_ALLOC_TILE:
        return popcount_range(map, t0, t1 - t0);
    default:
        return 0;
    }
}

/* Code width of tile t (SPEC §4). */
static inline uint32_t tile_bits(const tahq_config *cfg, const tahq_layout *lay, const uint8_t *map,
                                 uint64_t t)
{
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        return tahq_get_bit(map, t / lay->tiles_per_row) ? cfg->lo_bits : cfg->hi_bits;
    case TAHQ_ALLOC_TILE:
        return tahq_get_bit(map, t) ? cfg->lo_bits : cfg->hi_bits;
    default:
        return cfg->hi_bits;
    }
}

/* The code widths of tiles t0, t0 + 1, ... in order, without a division
 * per tile (tile_bits divides t by the tiles per row in token and gain mode). */
typedef struct bits_walk {
    const uint8_t *map;
    uint64_t t, row, col, per_row;
    uint32_t hi, lo;
    tahq_alloc alloc;
} bits_walk;

static bits_walk bits_walk_at(const tahq_config *cfg, const tahq_layout *lay, const uint8_t *map,
                              uint64_t t0)
{
    bits_walk w;
    w.map = map;
    w.t = t0;
    w.per_row = lay->tiles_per_row;
    w.row = t0 / w.per_row;
    w.col = t0 % w.per_row;
    w.hi = cfg->hi_bits;
    w.lo = cfg->lo_bits;
    w.alloc = cfg->alloc;
    return w;
}

/* Width of the current tile, then advance to the next. */
static inline uint32_t bits_walk_next(bits_walk *w)
{
    uint32_t low;
    switch (w->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        low = tahq_get_bit(w->map, w->row);
        break;
    case TAHQ_ALLOC_TILE:
        low = tahq_get_bit(w->map, w->t);
        break;
    default:
        low = 0;
        break;
    }
    w->t++;
    if (++w->col == w->per_row) {
        w->col = 0;
        w->row++;
    }
    return low ? w->lo : w->hi;
}

/* Offset in the codes section of tile t0's codes. */
static uint64_t code_offset(const tahq_config *cfg, const tahq_layout *lay, const uint8_t *map,
                            uint64_t t0)
{
    uint64_t lows = low_tiles(cfg, lay, map, 0, t0);
    return cfg->tile / 8u * (t0 * cfg->hi_bits - lows * (uint64_t)(cfg->hi_bits - cfg->lo_bits));
}

/* Units whose rank is stored: rows (token and gain modes) or tiles (tile
 * mode). */
static uint64_t rank_units(const tahq_config *cfg, const tahq_shape *shape)
{
    const uint64_t rows = (uint64_t)shape->batch * shape->seq_len;
    switch (cfg->alloc) {
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        return rows;
    case TAHQ_ALLOC_TILE:
        return rows * (shape->channels / cfg->tile);
    default:
        return 0;
    }
}

/* CRC-32C of bytes [0, n) of data, in parts of a job each, joined. */
typedef struct crc_ctx {
    const uint8_t *data;
    uint64_t n;
    uint32_t jobs;
    uint32_t crc[TAHQ_JOBS_MAX];
} crc_ctx;

static void crc_job(void *arg, uint32_t j)
{
    crc_ctx *c = arg;
    uint64_t a = tahq_cpu_part_start(c->n, c->jobs, j, 64),
             b = tahq_cpu_part_start(c->n, c->jobs, j + 1, 64);
    c->crc[j] = tahq_fast_crc32c(0, c->data + a, (size_t)(b - a));
}

uint32_t tahq_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    return tahq_gf2_crc32c_combine(crc_a, crc_b, len_b);
}

/* The parts of a CRC of data[0 .. n) on at most `jobs` jobs: parts below
 * 64 KiB are not worth a thread. */
static void crc_split(crc_ctx *c, uint32_t jobs, const uint8_t *data, uint64_t n)
{
    c->data = data;
    c->n = n;
    uint64_t most = n / 65536u + 1u;
    c->jobs = most < jobs ? (uint32_t)most : jobs;
}

/* crc_so_far's bytes followed by the parts of c, once crc_job has run. */
static uint32_t crc_join(const crc_ctx *c, uint32_t crc_so_far)
{
    uint32_t crc = crc_so_far;
    for (uint32_t j = 0; j < c->jobs; j++) {
        uint64_t a = tahq_cpu_part_start(c->n, c->jobs, j, 64),
                 b = tahq_cpu_part_start(c->n, c->jobs, j + 1, 64);
        crc = tahq_gf2_crc32c_combine(crc, c->crc[j], b - a);
    }
    return crc;
}

/* CRC of crc_so_far's bytes followed by data[0 .. n). */
static uint32_t crc_parallel(const tahq_parallel *par, uint32_t jobs, uint32_t crc_so_far,
                             const uint8_t *data, uint64_t n)
{
    crc_ctx c;
    crc_split(&c, jobs, data, n);
    tahq_cpu_run_jobs(par, crc_job, &c, c.jobs);
    return crc_join(&c, crc_so_far);
}

/* ---- encode ------------------------------------------------------------------ */

tahq_status tahq_encode_parallel_workspace_size(const tahq_config *cfg, const tahq_shape *shape,
                                                uint32_t jobs, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    tahq_status st = tahq_check_config(cfg);
    if (st == TAHQ_OK)
        st = tahq_check_shape(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    if (jobs > TAHQ_JOBS_MAX)
        return TAHQ_ERR_CONFIG;
    if (jobs == 0)
        jobs = 1;
    const uint64_t group = tahq_alloc_group_size(cfg, shape);
    const uint64_t units = rank_units(cfg, shape);
    /* keys (8-aligned inside the slack), then the ranks; in gain allocation
     * then each tile's gate and metadata from the gain key's pass
     * (tahq_tile_meta) and its packed codes at hi_bits, which the message
     * reuses */
    const uint64_t n_tiles =
        (uint64_t)shape->batch * shape->seq_len * (shape->channels / cfg->tile);
    const uint64_t known = cfg->alloc == TAHQ_ALLOC_GAIN
                               ? n_tiles * (sizeof(tahq_tile_meta) + cfg->tile / 8u * cfg->hi_bits)
                               : 0;
    uint64_t total =
        group == 0 ? 0 : jobs * group * sizeof(uint64_t) + units * sizeof(uint32_t) + known + 7u;
    if (total > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    *bytes = (size_t)total;
    return TAHQ_OK;
}

typedef struct enc_ctx {
    tahq_config c;
    tahq_shape shape;
    const float *x;
    tahq_layout lay;
    uint32_t jobs;
    uint64_t group;
    int ranked;            /* group > 0 and low(group) > 0: phases A (ranks) and B run */
    uint64_t *keys;        /* group keys per job */
    uint32_t *rank;        /* per unit: the bits of its entropy (>= +0), or its gain key */
    tahq_tile_meta *known; /* gain allocation: per tile, from the gain key's pass */
    uint8_t *hi_codes;     /* and each tile's packed codes at hi_bits */
    int reuse;             /* phase C takes the tiles' gate and metadata from `known` */
    uint8_t *payload;
    /* phase A */
    uint64_t bad_index[TAHQ_JOBS_MAX];
    tahq_status bad_status[TAHQ_JOBS_MAX];
    tahq_status gain_status[TAHQ_JOBS_MAX]; /* the part's first failing gain key */
    /* phase C */
    int fast_stochastic; /* tahq_fast_codes_stochastic runs on this CPU */
    int fast_encode;     /* cpu/fast_encode.c runs on this CPU */
    uint64_t n_flagged[TAHQ_JOBS_MAX];
    tahq_status tile_status[TAHQ_JOBS_MAX];
} enc_ctx;

/* First element of x[0 .. n) that is not finite or has |x| >= 2^64 (SPEC
 * §3.2): its index, or n; *st its status. */
TAHQ_HOT uint64_t tahq_cpu_first_bad(const float *x, uint64_t n, tahq_status *st)
{
    uint32_t worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        worst = a > worst ? a : worst;
    }
    *st = TAHQ_OK;
    if (worst < 0x5F800000u) /* 2^64 */
        return n;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t a = tahq_bits_of(x[i]) & 0x7FFFFFFFu;
        if (a >= 0x7F800000u) {
            *st = TAHQ_ERR_NONFINITE;
            return i;
        }
        if (a >= 0x5F800000u) {
            *st = TAHQ_ERR_RANGE;
            return i;
        }
    }
    return n;
}

/* Phase A: rows of part j: input check, then the ranks of their units. A
 * row's gain key is computed only once the row is known finite (the
 * precondition of tahq_token_gain_key); after the part's first failing key
 * no more keys are computed, but the input check goes on to the part's end:
 * tahq_encode checks the whole input before it ranks, so a bad element
 * anywhere decides the status over a failing key. */
static void enc_rows_job(void *arg, uint32_t j)
{
    enc_ctx *e = arg;
    const uint64_t rows = e->lay.rows, C = e->shape.channels;
    const uint32_t G = e->c.tile, T = (uint32_t)e->lay.tiles_per_row;
    const uint64_t r0 = tahq_cpu_part_start(rows, e->jobs, j, 1),
                   r1 = tahq_cpu_part_start(rows, e->jobs, j + 1, 1);
    e->bad_status[j] = TAHQ_OK;
    e->bad_index[j] = UINT64_MAX;
    e->gain_status[j] = TAHQ_OK;
    /* token allocation on the fast path: the input check and the entropy
     * in one function (cpu/fast_encode.c); a row that fails the check goes
     * through tahq_cpu_first_bad below for its index and status */
    const int fast_token = e->fast_encode && e->ranked && e->c.alloc == TAHQ_ALLOC_TOKEN;
    /* gain allocation on the fast path: the key's pass checks the input
     * too (cpu/fast_gain.h); a row whose key is not TAHQ_OK goes through
     * tahq_cpu_first_bad below, then keeps the key's status */
    const int fast_gain = e->fast_encode && e->ranked && e->c.alloc == TAHQ_ALLOC_GAIN;
    for (uint64_t r = r0; r < r1; r++) {
        const float *row = e->x + r * C;
        float entropy;
        if (fast_token && tahq_fast_row_entropy(row, T, G, &entropy)) {
            e->rank[r] = tahq_bits_of(entropy);
            continue;
        }
        tahq_status key_st = TAHQ_OK;
        if (fast_gain && e->gain_status[j] == TAHQ_OK) {
            uint32_t key = 0;
            key_st = tahq_fast_gain_key(&e->c, row, T, r * C, &key, e->known + r * T,
                                        e->hi_codes + r * T * (G / 8u * e->c.hi_bits));
            if (key_st == TAHQ_OK) {
                e->rank[r] = key;
                continue;
            }
        }
        tahq_status st;
        uint64_t i = tahq_cpu_first_bad(row, C, &st);
        if (st != TAHQ_OK) {
            e->bad_status[j] = st;
            e->bad_index[j] = r * C + i;
            return;
        }
        if (!e->ranked)
            continue;
        switch (e->c.alloc) {
        case TAHQ_ALLOC_TOKEN:
            e->rank[r] = tahq_bits_of(tahq_entropy(row, T, G));
            break;
        case TAHQ_ALLOC_TILE:
            for (uint32_t t = 0; t < T; t++)
                e->rank[r * T + t] = tahq_bits_of(tahq_entropy(row + (uint64_t)t * G, 1, G));
            break;
        case TAHQ_ALLOC_GAIN:
            if (fast_gain) {
                /* the row is finite, so the fast key's status is the
                 * reference's (TAHQ_OK rows took the `continue` above) */
                if (e->gain_status[j] == TAHQ_OK)
                    e->gain_status[j] = key_st;
            } else if (e->gain_status[j] == TAHQ_OK) {
                uint32_t key = 0;
                st = tahq_token_gain_key(&e->c, row, T, r * C, &key);
                if (st != TAHQ_OK)
                    e->gain_status[j] = st;
                else
                    e->rank[r] = key;
            }
            break;
        default:
            break;
        }
    }
}

/* Moves the `low` smallest of the distinct keys[0 .. n) to keys[0 .. low),
 * in any order (the map needs the set, SPEC §4.2: the low(n) smallest
 * (rank, index) pairs): quickselect with the median of three, partitions
 * of fewer than 32 keys (and, as a bound on the work, those left after 2
 * log2(n) + 2 rounds) sorted by tahq_sort_keys. Fewer operations than
 * sorting all n keys, and the same keys end in keys[0 .. low). */
static void select_lowest(uint64_t *keys, uint64_t n, uint64_t low)
{
    uint64_t lo = 0, hi = n;
    uint32_t rounds = 2u * (uint32_t)(64 - __builtin_clzll(n | 1u)) + 2u;
    while (low > lo && low < hi && hi - lo >= 32 && rounds-- > 0) {
        /* the median of the first, middle and last key as the pivot, moved
         * to the end; Lomuto partition (the keys are distinct) */
        const uint64_t mid = lo + (hi - lo) / 2;
        uint64_t a = keys[lo], b = keys[mid], c = keys[hi - 1];
        const uint64_t at = (a < b) == (b < c) ? mid : (b < a) == (a < c) ? lo : hi - 1;
        uint64_t t = keys[at];
        keys[at] = keys[hi - 1];
        keys[hi - 1] = t;
        const uint64_t pivot = t;
        uint64_t store = lo;
        for (uint64_t i = lo; i < hi - 1; i++)
            if (keys[i] < pivot) {
                t = keys[i];
                keys[i] = keys[store];
                keys[store++] = t;
            }
        keys[hi - 1] = keys[store];
        keys[store] = pivot;
        /* keys[lo .. store) < pivot = keys[store] < keys[store+1 .. hi) */
        if (low <= store)
            hi = store;
        else
            lo = store + 1;
    }
    if (low > lo && low < hi)
        tahq_sort_keys(keys + lo, hi - lo);
}

/* Phase B: the groups of part j (a multiple of 8 groups from the start, so
 * its map bits start on a byte): the low(n) smallest (rank, index) pairs of
 * each group (select_lowest) get map bit 1 (SPEC §4.2, §4.3; the keys order as the pairs:
 * for entropies >= +0 the bits order as the values, and the gain key is
 * order-preserving by construction). */
static void enc_rank_job(void *arg, uint32_t j)
{
    enc_ctx *e = arg;
    const uint64_t n = e->group;
    const uint64_t n_groups = tahq_per_row(e->c.alloc) ? e->shape.batch : e->lay.rows;
    const uint64_t low = tahq_low_count(n, e->c.hi_permille);
    const uint64_t g0 = tahq_cpu_part_start(n_groups, e->jobs, j, 8),
                   g1 = tahq_cpu_part_start(n_groups, e->jobs, j + 1, 8);
    uint64_t *keys = e->keys + j * n;
    for (uint64_t g = g0; g < g1; g++) {
        const uint32_t *h = e->rank + g * n;
        for (uint64_t i = 0; i < n; i++)
            keys[i] = ((uint64_t)h[i] << 32) + i;
        select_lowest(keys, n, low);
        for (uint64_t i = 0; i < low; i++)
            tahq_set_bit(e->payload, g * n + (keys[i] & 0xFFFFFFFFu));
    }
}

/* One tile with the reference's functions, as ref/codec.c's encode_tiles:
 * gate, transform, metadata, codes packed into dst. With a fast stochastic path: the reference's
 * metadata (and nearest codes, cheap), then the stochastic codes for the
 * same z and s; the reference writes all-zero codes for s = 0 in either
 * mode. */
static tahq_status enc_tile_ref(const enc_ctx *e, const float *tile_x, uint32_t bits,
                                uint64_t elem0, uint8_t *dst, uint32_t *zero_bits,
                                uint32_t *scale_bits, int *flagged_out, uint32_t *pivot)
{
    const tahq_config *c = &e->c;
    const uint32_t G = c->tile;
    float v[TAHQ_TILE_MAX];
    uint8_t codes[TAHQ_TILE_MAX];
    float lo, hi;
    tahq_tile_range(tile_x, G, &lo, &hi);
    int flagged = tahq_gate_from_range(tile_x, G, c->tau, lo, hi, pivot);
    const float *values = tile_x;
    if (flagged) {
        memcpy(v, tile_x, G * sizeof(float));
        tahq_hadamard_forward(v, G, *pivot);
        tahq_tile_range(v, G, &lo, &hi);
        values = v;
    }
    *flagged_out = flagged;
    float z, s;
    const int fast_sr = c->rounding == TAHQ_ROUND_STOCHASTIC && e->fast_stochastic;
    tahq_status st = tahq_quantize_tile_range(values, G, lo, hi, bits, c->meta,
                                              fast_sr ? TAHQ_ROUND_NEAREST_EVEN : c->rounding,
                                              c->seed, elem0, &z, &s, zero_bits, scale_bits, codes);
    if (st != TAHQ_OK)
        return st;
    if (fast_sr && s != 0.0f)
        tahq_fast_codes_stochastic(values, G, z, s, (1u << bits) - 1u, c->seed, elem0, codes);
    tahq_fast_pack_tile(dst, codes, G, bits);
    return TAHQ_OK;
}

/* Phase C: the tiles of part j (a multiple of 8 tiles from the start). The
 * per-tile steps are those of ref/codec.c's encode_tiles, in its order:
 * tahq_fast_encode_run (cpu/fast_encode.c) where the CPU has it, else
 * enc_tile_ref. */
static void enc_tiles_job(void *arg, uint32_t j)
{
    enc_ctx *e = arg;
    const tahq_config *c = &e->c;
    const tahq_layout *lay = &e->lay;
    const uint32_t G = c->tile, k = lay->tile_log2;
    const uint64_t t0 = tahq_cpu_part_start(lay->n_tiles, e->jobs, j, 8),
                   t1 = tahq_cpu_part_start(lay->n_tiles, e->jobs, j + 1, 8);
    uint8_t *payload = e->payload;
    const uint8_t *map = payload;
    uint8_t *flags = payload + lay->map_bytes;
    uint8_t *pivots = payload + lay->pivot_off;
    uint8_t *codes_out = payload + lay->code_off + code_offset(c, lay, map, t0);
    uint64_t n_flagged = 0;
    e->tile_status[j] = TAHQ_OK;
    if (e->fast_encode) { /* runs of tiles of one width: a row's (token, gain), all (none) */
        tahq_fast_run run = {
            codes_out, payload + lay->zero_off, payload + lay->scale_off, flags, pivots, t0 * k};
        const uint64_t T = lay->tiles_per_row;
        for (uint64_t t = t0; t < t1;) {
            uint64_t count = t1 - t;
            if (c->alloc == TAHQ_ALLOC_TILE)
                count = 1;
            else if (tahq_per_row(c->alloc) && T - t % T < count)
                count = T - t % T;
            const uint32_t bits = tile_bits(c, lay, map, t);
            tahq_status st = TAHQ_OK;
            if (e->reuse && bits == c->hi_bits) /* the key's pass packed these codes */
                tahq_fast_encode_run_coded(c, t, count, bits, e->known + t,
                                           e->hi_codes + t * (G / 8u * bits), &run);
            else if (e->reuse)
                st = tahq_fast_encode_run_known(c, e->x, t, count, bits, e->known + t, &run);
            else
                st = tahq_fast_encode_run(c, e->x, t, count, bits, &run);
            if (st != TAHQ_OK) {
                e->tile_status[j] = st;
                break;
            }
            t += count;
        }
        e->n_flagged[j] = (run.pivot_bit - t0 * k) / k;
        return;
    }
    bits_walk walk = bits_walk_at(c, lay, map, t0);
    for (uint64_t t = t0; t < t1; t++) {
        const float *tile_x = e->x + t * G;
        const uint32_t bits = bits_walk_next(&walk);
        uint32_t pivot, zero_bits, scale_bits;
        int flagged;
        tahq_status st = enc_tile_ref(e, tile_x, bits, t * G, codes_out, &zero_bits, &scale_bits,
                                      &flagged, &pivot);
        if (st != TAHQ_OK) {
            e->tile_status[j] = st;
            break;
        }
        tahq_put_meta_bits(payload + lay->zero_off + t * lay->meta_bytes, c->meta, zero_bits);
        tahq_put_meta_bits(payload + lay->scale_off + t * lay->meta_bytes, c->meta, scale_bits);
        codes_out += G / 8u * bits;
        if (flagged) {
            uint8_t p = (uint8_t)pivot;
            tahq_set_bit(flags, t);
            /* parked: the part's n-th pivot at bit (t0 + n) * k */
            tahq_pack_bits(pivots, (t0 + n_flagged) * k, &p, 1, k);
            n_flagged++;
        }
    }
    e->n_flagged[j] = n_flagged;
}

tahq_status tahq_encode_parallel(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                                 void *workspace, size_t workspace_bytes, uint8_t *out,
                                 size_t out_capacity, size_t *out_len, const tahq_parallel *par)
{
    /* the checks of tahq_encode, in its order, with the job count after its
     * pointers' and this encoder's workspace */
    tahq_status st = tahq_encode_check_pointers(cfg, shape, x, out, out_len);
    if (st != TAHQ_OK)
        return st;
    const uint32_t jobs = par ? par->jobs : 1u;
    if (jobs == 0 || jobs > TAHQ_JOBS_MAX)
        return TAHQ_ERR_CONFIG;
    size_t bound, ws_need;
    st = tahq_encode_bound(cfg, shape, &bound);
    if (st == TAHQ_OK)
        st = tahq_encode_parallel_workspace_size(cfg, shape, jobs, &ws_need);
    if (st == TAHQ_OK)
        st = tahq_encode_check_room(bound, out_capacity, ws_need, workspace, workspace_bytes);
    if (st != TAHQ_OK)
        return st;

    enc_ctx *e = &(enc_ctx){0};
    e->c = *cfg;
    e->shape = *shape;
    e->x = x;
    e->jobs = jobs;
    const uint64_t required = tahq_required_low_units(cfg, shape);
    e->lay = tahq_layout_compute(cfg, shape, required, 0);
    e->group = tahq_alloc_group_size(cfg, shape);
    /* low(n) = 0 marks nothing: no entropy or gain key is computed (the
     * reference computes no gain key then either) */
    e->ranked = e->group > 0 && tahq_low_count(e->group, cfg->hi_permille) > 0;
    if (e->group > 0) {
        uint8_t *ws = workspace;
        e->keys = (uint64_t *)(ws + (8u - (uintptr_t)ws % 8u) % 8u);
        e->rank = (uint32_t *)(e->keys + (uint64_t)jobs * e->group);
        e->known = (tahq_tile_meta *)(void *)(e->rank + rank_units(cfg, shape));
        e->hi_codes = (uint8_t *)(e->known + e->lay.n_tiles);
    }
    const tahq_layout *lay = &e->lay;
    const uint32_t k = lay->tile_log2;

    e->fast_stochastic = tahq_fast_tile_active();
    e->fast_encode = tahq_fast_encode_active();
    /* every row's gain key ran on the fast path before phase C (a failing
     * one ends the encode first) */
    e->reuse = e->fast_encode && e->ranked && cfg->alloc == TAHQ_ALLOC_GAIN;

    /* A: input check and ranks (nothing of out written yet) */
    tahq_cpu_run_jobs(par, enc_rows_job, e, jobs);
    uint64_t bad = UINT64_MAX;
    for (uint32_t j = 0; j < jobs; j++)
        if (e->bad_status[j] != TAHQ_OK && e->bad_index[j] < bad) {
            bad = e->bad_index[j];
            st = e->bad_status[j];
        }
    if (st != TAHQ_OK)
        return st;
    /* a gain key that failed (TAHQ_ERR_RANGE: a tile's metadata overflow at
     * one of the widths): the status of the first failing row, as the
     * reference's ranking stops there; tahq_encode zeroes the header then,
     * so no partial message survives */
    for (uint32_t j = 0; j < jobs; j++)
        if (e->gain_status[j] != TAHQ_OK) {
            memset(out, 0, TAHQ_HEADER_BYTES);
            return e->gain_status[j];
        }

    uint8_t *payload = out + TAHQ_HEADER_BYTES;
    e->payload = payload;
    memset(payload, 0, (size_t)(lay->map_bytes + lay->flag_bytes));
    const uint64_t park_bytes = (lay->n_tiles * k + 7u) / 8u;
    memset(payload + lay->pivot_off, 0, (size_t)park_bytes);

    /* B: ranking and map */
    if (e->ranked)
        tahq_cpu_run_jobs(par, enc_rank_job, e, jobs);

    /* C: tiles */
    tahq_cpu_run_jobs(par, enc_tiles_job, e, jobs);
    for (uint32_t j = 0; j < jobs; j++)
        if (e->tile_status[j] != TAHQ_OK) {
            memset(out, 0, TAHQ_HEADER_BYTES); /* no partial message survives */
            return e->tile_status[j];
        }

    /* D: pivots moved from their parked slots (from bit t0*k) to the
     * places of SPEC §8.2 (the n-th flagged tile at bit n*k). Destinations
     * never pass their sources and parts move in order, so no pivot is
     * overwritten before it is read. */
    uint8_t *pivots = payload + lay->pivot_off;
    uint64_t n_flagged = 0;
    for (uint32_t j = 0; j < jobs; j++) {
        const uint64_t t0 = tahq_cpu_part_start(lay->n_tiles, jobs, j, 8);
        if (t0 != n_flagged) {
            for (uint64_t i = 0; i < e->n_flagged[j]; i++) {
                uint8_t p;
                tahq_unpack_bits(pivots, (t0 + i) * k, &p, 1, k);
                tahq_pack_bits(pivots, (n_flagged + i) * k, &p, 1, k);
            }
        }
        n_flagged += e->n_flagged[j];
    }
    /* the parked bits after the last pivot: zero, as in tahq_encode */
    const uint64_t end_bit = n_flagged * k;
    if (end_bit & 7u)
        pivots[end_bit >> 3] &= (uint8_t)((1u << (end_bit & 7u)) - 1u);
    const uint64_t used = (end_bit + 7u) / 8u;
    if (park_bytes > used)
        memset(pivots + used, 0, (size_t)(park_bytes - used));

    /* E: header and CRC */
    const uint64_t payload_bytes = lay->pivot_off + used;
    tahq_header_write(out, cfg, shape, required, n_flagged, payload_bytes);
    uint32_t crc =
        crc_parallel(par, jobs, tahq_crc32c(0, out, TAHQ_HDR_CRC), payload, payload_bytes);
    tahq_put_u32(out + TAHQ_HDR_CRC, crc);
    *out_len = (size_t)(TAHQ_HEADER_BYTES + payload_bytes);
    return TAHQ_OK;
}

/* ---- decode ------------------------------------------------------------------ */

typedef struct dec_ctx {
    tahq_header h;
    tahq_layout lay;
    const uint8_t *payload;
    float *out;
    uint32_t jobs;
    tahq_fast_dec fd; /* the sections, for tahq_fast_decode_tiles */
    crc_ctx crc;      /* the payload's CRC, in parts run by dec_check_job */
    /* validation, per part */
    int bad[TAHQ_JOBS_MAX];
    uint64_t lows[TAHQ_JOBS_MAX];    /* low tiles of the part */
    uint64_t flagged[TAHQ_JOBS_MAX]; /* flagged tiles of the part */
} dec_ctx;

/* Part j of the payload's CRC (the payload's length is checked first), and
 * SPEC §8.4 step 5 for part j: the map count of its groups, its metadata
 * values, and the counts the decode needs (low and flagged tiles). One round
 * of jobs for both; the CRC's status comes first all the same. */
static void dec_check_job(void *arg, uint32_t j)
{
    dec_ctx *d = arg;
    if (j < d->crc.jobs)
        crc_job(&d->crc, j);
    const tahq_config *cfg = &d->h.config;
    const tahq_layout *lay = &d->lay;
    const uint8_t *payload = d->payload, *map = payload;
    int bad = 0;
    const uint64_t group = tahq_alloc_group_size(cfg, &d->h.shape);
    if (group > 0) {
        const uint64_t want = tahq_low_count(group, cfg->hi_permille);
        const uint64_t n_groups = tahq_per_row(cfg->alloc) ? d->h.shape.batch : lay->rows;
        const uint64_t g0 = tahq_cpu_part_start(n_groups, d->jobs, j, 8),
                       g1 = tahq_cpu_part_start(n_groups, d->jobs, j + 1, 8);
        for (uint64_t g = g0; g < g1 && !bad; g++)
            bad = popcount_range(map, g * group, group) != want;
    }
    const uint64_t t0 = tahq_cpu_part_start(lay->n_tiles, d->jobs, j, 8),
                   t1 = tahq_cpu_part_start(lay->n_tiles, d->jobs, j + 1, 8);
    d->lows[j] = low_tiles(cfg, lay, map, t0, t1);
    d->flagged[j] = popcount_range(payload + lay->map_bytes, t0, t1 - t0);
    /* ref/codec.c tests fl(v - v) == 0 on the widened values, i.e. v finite:
     * here the exponent field is tested directly (all ones = inf or NaN) */
    if (!bad)
        bad =
            tahq_fast_meta_bad(payload + lay->zero_off + t0 * lay->meta_bytes,
                               payload + lay->scale_off + t0 * lay->meta_bytes, t1 - t0, cfg->meta);
    d->bad[j] = bad;
}

/* Part j's tiles, as ref/codec.c's tahq_decode does each tile, in runs of
 * tiles of one code width (a row's tiles in token and gain mode). */
static void dec_tiles_job(void *arg, uint32_t j)
{
    dec_ctx *d = arg;
    const tahq_config *cfg = &d->h.config;
    const tahq_layout *lay = &d->lay;
    const uint8_t *map = d->payload;
    const uint64_t T = lay->tiles_per_row;
    const uint64_t t0 = tahq_cpu_part_start(lay->n_tiles, d->jobs, j, 8),
                   t1 = tahq_cpu_part_start(lay->n_tiles, d->jobs, j + 1, 8);
    uint64_t lows = 0, n_flagged = 0;
    for (uint32_t i = 0; i < j; i++) {
        lows += d->lows[i];
        n_flagged += d->flagged[i];
    }
    const uint8_t *codes_in =
        d->payload + lay->code_off +
        cfg->tile / 8u * (t0 * cfg->hi_bits - lows * (uint64_t)(cfg->hi_bits - cfg->lo_bits));
    for (uint64_t t = t0; t < t1;) {
        uint64_t n = t1 - t;
        uint32_t low = 0;
        switch (cfg->alloc) {
        case TAHQ_ALLOC_TOKEN:
        case TAHQ_ALLOC_GAIN: {
            const uint64_t row = t / T;
            low = tahq_get_bit(map, row);
            if ((row + 1) * T - t < n)
                n = (row + 1) * T - t;
            break;
        }
        case TAHQ_ALLOC_TILE: {
            low = tahq_get_bit(map, t);
            uint64_t m = 1;
            while (m < n && tahq_get_bit(map, t + m) == low)
                m++;
            n = m;
            break;
        }
        default:
            break;
        }
        tahq_fast_decode_tiles(&d->fd, t, n, low ? cfg->lo_bits : cfg->hi_bits, &codes_in,
                               &n_flagged);
        t += n;
    }
}

tahq_status tahq_decode_parallel(const uint8_t *msg, size_t len, float *out, size_t count,
                                 const tahq_parallel *par)
{
    if (!msg || !out)
        return TAHQ_ERR_NULL;
    const uint32_t jobs = par ? par->jobs : 1u;
    if (jobs == 0 || jobs > TAHQ_JOBS_MAX)
        return TAHQ_ERR_CONFIG;
    dec_ctx *d = &(dec_ctx){0};
    tahq_status st = tahq_parse_header_nocrc(msg, len, &d->h);
    if (st != TAHQ_OK)
        return st;
    const tahq_config *cfg = &d->h.config;
    d->lay = tahq_layout_compute(cfg, &d->h.shape, d->h.n_low, d->h.n_flagged);
    const tahq_layout *lay = &d->lay;
    d->payload = msg + TAHQ_HEADER_BYTES;
    d->out = out;
    d->jobs = jobs;

    /* the CRC (SPEC §8.4 step 4) and step 5, in parts; every failure of
     * step 5 is TAHQ_ERR_PAYLOAD */
    crc_split(&d->crc, jobs, d->payload, d->h.payload_bytes);
    tahq_cpu_run_jobs(par, dec_check_job, d, jobs);
    if (crc_join(&d->crc, tahq_crc32c(0, msg, TAHQ_HDR_CRC)) != d->h.crc)
        return TAHQ_ERR_CRC;
    int bad = 0;
    uint64_t lows = 0, flagged = 0;
    for (uint32_t j = 0; j < jobs; j++) {
        bad |= d->bad[j];
        lows += d->lows[j];
        flagged += d->flagged[j];
    }
    const uint8_t *payload = d->payload;
    if (cfg->alloc != TAHQ_ALLOC_NONE && !tahq_padding_is_zero(payload, lay->map_bits))
        bad = 1;
    /* the codes section holds exactly the codes the map implies */
    if (cfg->tile / 8u *
            (lay->n_tiles * cfg->hi_bits - lows * (uint64_t)(cfg->hi_bits - cfg->lo_bits)) !=
        lay->code_bytes)
        bad = 1;
    if (flagged != d->h.n_flagged || !tahq_padding_is_zero(payload + lay->map_bytes, lay->n_tiles))
        bad = 1;
    if (!tahq_padding_is_zero(payload + lay->pivot_off, d->h.n_flagged * lay->tile_log2))
        bad = 1;
    if (bad)
        return TAHQ_ERR_PAYLOAD;
    if ((uint64_t)count != lay->n_tiles * cfg->tile)
        return TAHQ_ERR_BUFFER;

    d->fd.zero = payload + lay->zero_off;
    d->fd.scale = payload + lay->scale_off;
    d->fd.flags = payload + lay->map_bytes;
    d->fd.pivots = payload + lay->pivot_off;
    d->fd.end = payload + lay->payload_bytes;
    d->fd.out = out;
    d->fd.tile = cfg->tile;
    d->fd.tile_log2 = lay->tile_log2;
    d->fd.meta_bytes = (uint32_t)lay->meta_bytes;
    d->fd.meta = cfg->meta;
    tahq_cpu_run_jobs(par, dec_tiles_job, d, jobs);
    return TAHQ_OK;
}
