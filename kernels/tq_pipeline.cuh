/* SPDX-License-Identifier: MIT */
/*
 * tq_pipeline.cuh - host-side orchestration of the tahq CUDA codec: argument
 * checks in the reference's order, workspace plans, the sequence of warp
 * programs, and the header and CRC finish. Templated on an executor X:
 *
 *   template <class P> tahq_status launch(const typename P::Args &, uint64_t nwarps, uint32_t wpb);
 *   tahq_status memset(void *dev, int v, size_t n);
 *   tahq_status h2d(void *dev, const void *host, size_t n);
 *   tahq_status d2h(void *host, const void *dev, size_t n);   (synchronous)
 *   tahq_status sync();
 *
 * tahq_cuda.cu instantiates it with the CUDA executor; test_device_math with
 * a host executor that runs the same warp programs on the CPU.
 */
#ifndef TQ_PIPELINE_CUH
#define TQ_PIPELINE_CUH

#include "tq_programs.cuh"
#include "../ref/tahq_ref_api.h"

/* The layout (SPEC 8.2), the header write and the header checks but the
 * CRC (SPEC 8.4) are the reference's (ref/tahq_ref_api.h); the little-endian
 * fields and header offsets are the scalar core's. */

/* Allocation modes with one map bit per row, ranked per sequence (SPEC 4.2):
 * token and gain (ref/internal.h tahq_per_row). */
inline bool tq_per_row(uint32_t alloc)
{
    return alloc == (uint32_t)TAHQ_ALLOC_TOKEN || alloc == (uint32_t)TAHQ_ALLOC_GAIN;
}

/* ---- CRC plan ------------------------------------------------------------------------ */

#define TQ_CRC_MAX_LEVELS 12

struct TqCrcPlan {
    uint64_t nseg;                         /* segments for the largest payload */
    uint64_t count[TQ_CRC_MAX_LEVELS + 2]; /* count[L]: values after level L (count[0] = nseg) */
    uint32_t nlevels;                      /* level programs to launch (>= 1) */
    size_t off[TQ_CRC_MAX_LEVELS + 2];     /* workspace offset of the values of level L >= 1 */
    size_t bytes;
};

inline size_t tq_align256(size_t x)
{
    return (x + 255u) & ~(size_t)255u;
}

/* Workspaces may have any alignment: the plans add this much and the code
 * rounds the pointer up to 256 bytes (as ref/ does for its 8-byte keys). */
#define TQ_WS_SLACK 255u
inline uint8_t *tq_ws_align(void *ws)
{
    return reinterpret_cast<uint8_t *>(((uintptr_t)ws + 255u) & ~(uintptr_t)255u);
}

/* Plan for payloads of at most pmax bytes; arrays from workspace offset base. */
inline void tq_crc_plan(uint64_t pmax, size_t base, TqCrcPlan *p)
{
    p->nseg = (pmax + 32u + TQ_CRC_SEG - 1u) / TQ_CRC_SEG;
    p->count[0] = p->nseg;
    for (uint32_t L = 1; L < TQ_CRC_MAX_LEVELS + 2; L++)
        p->count[L] = (p->count[L - 1] + 31u) / 32u;
    /* level program l reads count[l] values; the last one (count[l] <= 32) is final */
    uint32_t n = 1;
    while (p->count[n] > 32u && n < TQ_CRC_MAX_LEVELS)
        n++;
    p->nlevels = n;
    size_t off = base;
    for (uint32_t l = 1; l <= n; l++) {
        p->off[l] = off;
        off += tq_align256((size_t)p->count[l] * 4u);
    }
    p->bytes = off - base;
}

/* x^(8 * SEG * 32^level * 2^j), j = 0..4 */
inline void tq_crc_xp(uint32_t level, uint32_t xp[5])
{
    for (uint32_t j = 0; j < 5u; j++)
        xp[j] = tahq_gf2_xpow((uint64_t)8u * TQ_CRC_SEG << (5u * level + j));
}

template <class X>
tahq_status tq_run_crc(X &ex, const uint8_t *payload, const unsigned long long *plen, uint8_t *ws,
                       const TqCrcPlan &cp, tq_status_block *st)
{
    PCrcSeg::Args sa;
    sa.g.s = payload;
    sa.g.plen = plen;
    sa.out = reinterpret_cast<uint32_t *>(ws + cp.off[1]);
    tq_crc_xp(0, sa.xp);
    sa.pad = 0;
    tahq_status r = ex.template launch<PCrcSeg>(sa, cp.count[1], 4u);
    if (r != TAHQ_OK)
        return r;
    for (uint32_t l = 1; l <= cp.nlevels; l++) {
        PCrcLevel::Args la;
        la.g = sa.g;
        la.in = reinterpret_cast<const uint32_t *>(ws + cp.off[l]);
        la.out = l < cp.nlevels ? reinterpret_cast<uint32_t *>(ws + cp.off[l + 1]) : (uint32_t *)0;
        la.st = st;
        la.level = l;
        tq_crc_xp(l, la.xp);
        for (uint32_t m = 0; m < 16u; m++)
            la.xinv[m] = tahq_gf2_xpow_inv(8u * m);
        r = ex.template launch<PCrcLevel>(la, cp.count[l + 1], 8u);
        if (r != TAHQ_OK)
            return r;
    }
    return TAHQ_OK;
}

/* ---- encoder plan ---------------------------------------------------------------------- */

/* Row kernels keep a row in shared memory when it fits in this much per warp. */
#define TQ_ROW_CACHE_MAX (48u * 1024u)
/* and use as many warps per block as fit in this much shared memory */
#define TQ_ROW_BLOCK_SMEM (96u * 1024u)

struct TqEncPlan {
    uint32_t K, G;
    uint64_t rows, C, T, N, n_low, nchunks, nparts, bound;
    tahq_layout lay; /* with n_flagged = 0 */
    uint64_t pmax;   /* payload bytes with every tile flagged */
    uint32_t cached, wpb_row;
    size_t off_st, off_ent, off_map8, off_lt, off_piv8, off_compact, off_parts;
    TqCrcPlan crc;
    size_t total;
};

template <int K> inline size_t tq_row_smem(uint64_t C, uint64_t T, bool token, bool cached)
{
    if (token)
        return cached ? (size_t)C * 4u : 16u;
    size_t e = ((size_t)T * 4u + 15u) & ~(size_t)15u;
    return PRowTile<K>::EOFF + (cached ? e + (size_t)C * 4u : 0u);
}

inline size_t tq_row_smem_k(uint32_t K, uint64_t C, uint64_t T, bool token, bool cached)
{
    switch (K) {
    case 3:
        return tq_row_smem<3>(C, T, token, cached);
    case 4:
        return tq_row_smem<4>(C, T, token, cached);
    case 5:
        return tq_row_smem<5>(C, T, token, cached);
    case 6:
        return tq_row_smem<6>(C, T, token, cached);
    case 7:
        return tq_row_smem<7>(C, T, token, cached);
    default:
        return tq_row_smem<8>(C, T, token, cached);
    }
}

inline tahq_status tq_enc_plan(const tahq_config *cfg, const tahq_shape *shape, TqEncPlan *p)
{
    tahq_status st = tahq_check_config(cfg);
    if (st == TAHQ_OK)
        st = tahq_check_shape(cfg, shape);
    if (st != TAHQ_OK)
        return st;
    p->K = tahq_tile_log2(cfg->tile);
    p->G = cfg->tile;
    p->rows = (uint64_t)shape->batch * shape->seq_len;
    p->C = shape->channels;
    p->T = p->C / p->G;
    p->N = p->rows * p->T;
    p->n_low = tahq_required_low_units(cfg, shape);
    p->lay = tahq_layout_compute(cfg, shape, p->n_low, 0);
    tahq_layout full = tahq_layout_compute(cfg, shape, p->n_low, p->N);
    p->pmax = full.payload_bytes;
    p->bound = TAHQ_HEADER_BYTES + p->pmax;
    if (p->bound > (uint64_t)SIZE_MAX)
        return TAHQ_ERR_SHAPE;
    const uint32_t TPC = tq_chunk_floats(p->G) / p->G;
    p->nchunks = (p->N + TPC - 1u) / TPC;
    p->nparts = (p->nchunks + 1023u) / 1024u;
    /* token: the entropy pass (a row cache); per_row: token or gain (a value
     * per row, the map per row, chunk_lt) */
    const bool token = cfg->alloc == TAHQ_ALLOC_TOKEN, tile = cfg->alloc == TAHQ_ALLOC_TILE;
    const bool per_row = tq_per_row(cfg->alloc);
    p->cached = 0;
    p->wpb_row = 8;
    if (token || tile) {
        size_t sw = tq_row_smem_k(p->K, p->C, p->T, token, true);
        if (sw <= TQ_ROW_CACHE_MAX) {
            p->cached = 1;
            size_t w = TQ_ROW_BLOCK_SMEM / sw;
            p->wpb_row = (uint32_t)(w < 1 ? 1 : w > 8 ? 8 : w);
        }
    }
    size_t off = 0;
    p->off_st = off;
    off += 256;
    p->off_ent = off; /* token: entropies; gain: keys (4 bytes per row) */
    if (per_row)
        off += tq_align256((size_t)p->rows * 4u);
    else if (tile && !p->cached)
        off += tq_align256((size_t)p->N * 4u);
    p->off_map8 = off;
    if (per_row)
        off += tq_align256((size_t)p->rows);
    else if (tile)
        off += tq_align256((size_t)p->N);
    p->off_lt = off;
    if (per_row)
        off += tq_align256((size_t)p->nchunks * 8u);
    p->off_piv8 = off;
    off += tq_align256((size_t)p->N);
    p->off_compact = off;
    off += tq_align256((size_t)p->N);
    p->off_parts = off;
    off += tq_align256((size_t)p->nparts * 8u);
    tq_crc_plan(p->pmax, off, &p->crc);
    off += p->crc.bytes;
    p->total = off + TQ_WS_SLACK;
    return TAHQ_OK;
}

inline size_t tq_encode_workspace_bytes(const TqEncPlan &p)
{
    return p.total;
}

/* ---- encoder --------------------------------------------------------------------------- */

inline TqEncCfg tq_enc_cfg(const tahq_config *cfg)
{
    TqEncCfg c;
    c.hi = cfg->hi_bits;
    c.lo = cfg->lo_bits;
    c.meta = (uint32_t)cfg->meta;
    c.mb = tahq_meta_bytes((tahq_meta)c.meta);
    c.rounding = (uint32_t)cfg->rounding;
    c.tau_inf = tq_bits(cfg->tau) == 0x7F800000u ? 1u : 0u;
    c.tau = cfg->tau;
    c.pad = 0;
    c.seed = cfg->seed;
    return c;
}

inline tq_status_block tq_status_init(void)
{
    tq_status_block s;
    memset(&s, 0, sizeof s);
    s.bad = ~0ull;
    return s;
}

/* Where one encode writes: the message's payload sections and the
 * workspace's scratch arrays (TqEncPlan's offsets), and what the passes
 * share of the configuration. */
struct TqEncBufs {
    tq_status_block *st;
    uint8_t *payload, *map_sec, *flag_sec, *zero_sec, *scale_sec, *code_sec, *pivot_sec;
    float *ent;
    uint32_t *gkey; /* gain: the keys, in the entropies' place */
    uint8_t *map8, *piv8;
    uint64_t *chunk_lt;
    TqEncCfg c;
    uint32_t aligned;
    uint64_t k_seq;
    bool gain_pass;
};

inline TqEncBufs tq_enc_bufs(const tahq_config *cfg, const tahq_shape *shape, const TqEncPlan &p,
                             const float *x, uint8_t *ws, uint8_t *out)
{
    TqEncBufs b;
    const tahq_layout &L = p.lay;
    b.st = reinterpret_cast<tq_status_block *>(ws + p.off_st);
    b.payload = out + TAHQ_HEADER_BYTES;
    b.map_sec = b.payload;
    b.flag_sec = b.payload + L.map_bytes;
    b.zero_sec = b.payload + L.zero_off;
    b.scale_sec = b.payload + L.scale_off;
    b.code_sec = b.payload + L.code_off;
    b.pivot_sec = b.payload + L.pivot_off;
    b.ent = reinterpret_cast<float *>(ws + p.off_ent);
    b.gkey = reinterpret_cast<uint32_t *>(ws + p.off_ent);
    b.map8 = ws + p.off_map8;
    b.chunk_lt = reinterpret_cast<uint64_t *>(ws + p.off_lt);
    b.piv8 = ws + p.off_piv8;
    b.c = tq_enc_cfg(cfg);
    b.aligned = ((uintptr_t)x & 15u) == 0u ? 1u : 0u;
    /* gain: the keys are needed only when a sequence has low tokens (SPEC
     * 4.3); without them the tile pass checks the input values */
    b.k_seq = tahq_low_count(shape->seq_len, cfg->hi_permille);
    b.gain_pass = cfg->alloc == TAHQ_ALLOC_GAIN && b.k_seq > 0u;
    return b;
}

#define TQ_TRY(e)                    \
    do {                             \
        tahq_status tq_try_r_ = (e); \
        if (tq_try_r_ != TAHQ_OK)    \
            return tq_try_r_;        \
    } while (0)

/* Token and gain allocation: the per-row entropies or keys, the low tokens
 * of each sequence, and the precision map. */
template <int K, class X>
tahq_status tq_enc_rank_rows(X &ex, const tahq_config *cfg, const tahq_shape *shape,
                             const TqEncPlan &p, const float *x, const TqEncBufs &b)
{
    typedef TqGeo<K> Geo;
    if (cfg->alloc == TAHQ_ALLOC_TOKEN) {
        typename PEntropyToken<K>::Args ea;
        ea.x = x;
        ea.rows = p.rows;
        ea.C = p.C;
        ea.T = p.T;
        ea.aligned = b.aligned;
        ea.cached = p.cached;
        ea.ent = b.ent;
        ea.st = b.st;
        TQ_TRY(ex.template launch<PEntropyToken<K>>(ea, p.rows, p.wpb_row));
    } else if (b.gain_pass) {
        typename PGainToken<K>::Args ga;
        ga.x = x;
        ga.rows = p.rows;
        ga.C = p.C;
        ga.T = p.T;
        ga.aligned = b.aligned;
        ga.pad = 0;
        ga.c = b.c;
        ga.key = b.gkey;
        ga.sigma = (double *)0;
        ga.st = b.st;
        TQ_TRY(ex.template launch<PGainToken<K>>(ga, p.rows, 8u));
    }
    PSelectToken::Args sa;
    sa.ent = cfg->alloc == TAHQ_ALLOC_TOKEN ? b.ent : (const float *)0;
    sa.key32 = cfg->alloc == TAHQ_ALLOC_GAIN ? b.gkey : (const uint32_t *)0;
    sa.S = shape->seq_len;
    sa.k = b.k_seq;
    sa.T = p.T;
    sa.TPC = Geo::TPC;
    sa.pad = 0;
    sa.map8 = b.map8;
    sa.chunk_lt = b.chunk_lt;
    TQ_TRY(ex.template launch<PSelectToken>(sa, shape->batch, 4u));
    PPackBits::Args pa;
    pa.src8 = b.map8;
    pa.units = p.rows;
    pa.map_sec = b.map_sec;
    pa.flag_sec = (uint8_t *)0;
    return ex.template launch<PPackBits>(pa, (p.lay.map_bytes + 31u) / 32u, 8u);
}

/* Tile allocation: each row's entropies, low tiles and quantization in one
 * pass, then the map and the gate flags. */
template <int K, class X>
tahq_status tq_enc_tiles(X &ex, const tahq_config *cfg, const TqEncPlan &p, const float *x,
                         const TqEncBufs &b)
{
    typename PRowTile<K>::Args ra;
    ra.x = x;
    ra.rows = p.rows;
    ra.C = p.C;
    ra.T = p.T;
    ra.klow = tahq_low_count(p.T, cfg->hi_permille);
    ra.rowbytes = (uint64_t)(p.G / 8u) * (ra.klow * b.c.lo + (p.T - ra.klow) * b.c.hi);
    ra.aligned = b.aligned;
    ra.cached = p.cached;
    ra.c = b.c;
    ra.ent_g = b.ent;
    ra.zero_sec = b.zero_sec;
    ra.scale_sec = b.scale_sec;
    ra.code_sec = b.code_sec;
    ra.info8 = b.map8;
    ra.piv8 = b.piv8;
    ra.st = b.st;
    TQ_TRY(ex.template launch<PRowTile<K>>(ra, p.rows, p.wpb_row));
    PPackBits::Args pa;
    pa.src8 = b.map8;
    pa.units = p.N;
    pa.map_sec = b.map_sec;
    pa.flag_sec = b.flag_sec;
    return ex.template launch<PPackBits>(pa, (p.lay.flag_bytes + 31u) / 32u, 8u);
}

/* Every other allocation: the tiles quantized in flat chunks (token and
 * gain at the widths of the map written before). */
template <int K, class X>
tahq_status tq_enc_flat(X &ex, const tahq_config *cfg, const TqEncPlan &p, const float *x,
                        const TqEncBufs &b)
{
    typename PQuantFlat<K>::Args qa;
    qa.x = x;
    qa.N = p.N;
    qa.T = p.T;
    qa.aligned = b.aligned;
    qa.token = tq_per_row(cfg->alloc) ? 1u : 0u;
    qa.validate = (cfg->alloc == TAHQ_ALLOC_TOKEN || b.gain_pass) ? 0u : 1u;
    qa.pad = 0;
    qa.c = b.c;
    qa.map8 = b.map8;
    qa.chunk_lt = b.chunk_lt;
    qa.zero_sec = b.zero_sec;
    qa.scale_sec = b.scale_sec;
    qa.code_sec = b.code_sec;
    qa.flag_sec = b.flag_sec;
    qa.piv8 = b.piv8;
    qa.st = b.st;
    return ex.template launch<PQuantFlat<K>>(qa, p.nchunks, 8u);
}

/* flags -> pivots (compacted in tile order) -> pivot section */
template <int K, class X>
tahq_status tq_enc_pivots(X &ex, const TqEncPlan &p, uint8_t *ws, const TqEncBufs &b)
{
    typedef TqGeo<K> Geo;
    TqFlagChunks fc;
    fc.flag_sec = b.flag_sec;
    fc.N = p.N;
    fc.nchunks = p.nchunks;
    fc.TPC = Geo::TPC;
    fc.pad = 0;
    uint64_t *parts = reinterpret_cast<uint64_t *>(ws + p.off_parts);
    PFlagScanA::Args fa = {fc, parts};
    TQ_TRY(ex.template launch<PFlagScanA>(fa, p.nparts, 8u));
    PFlagScanB::Args fb = {parts, p.nparts, b.st};
    TQ_TRY(ex.template launch<PFlagScanB>(fb, 1u, 1u));
    PFlagScanC::Args fcc = {fc, parts, (uint64_t *)0, b.piv8, ws + p.off_compact};
    TQ_TRY(ex.template launch<PFlagScanC>(fcc, p.nparts, 8u));
    PPivotPack::Args pp;
    pp.compact = ws + p.off_compact;
    pp.pivot_sec = b.pivot_sec;
    pp.pivot_off = p.lay.pivot_off;
    pp.k = K;
    pp.pad = 0;
    pp.st = b.st;
    uint64_t maxpiv = (p.N * K + 7u) / 8u;
    return ex.template launch<PPivotPack>(pp, (maxpiv + 31u) / 32u, 8u);
}

/* The payload's CRC, the status of the passes, then the header (its CRC
 * combined with the payload's) written last. */
template <class X>
tahq_status tq_enc_finish(X &ex, const tahq_config *cfg, const tahq_shape *shape,
                          const TqEncPlan &p, uint8_t *ws, const TqEncBufs &b, uint8_t *out,
                          size_t *out_len)
{
    TQ_TRY(tq_run_crc(ex, b.payload, &b.st->payload, ws, p.crc, b.st));

    tq_status_block hs;
    TQ_TRY(ex.d2h(&hs, b.st, sizeof hs));
    if (hs.bad != ~0ull)
        return (hs.bad & 1u) ? TAHQ_ERR_RANGE : TAHQ_ERR_NONFINITE;
    if (hs.range)
        return TAHQ_ERR_RANGE;
    tahq_layout lay = tahq_layout_compute(cfg, shape, p.n_low, hs.n_flagged);
    uint8_t hdr[TAHQ_HEADER_BYTES];
    tahq_header_write(hdr, cfg, shape, p.n_low, hs.n_flagged, lay.payload_bytes);
    uint32_t state_h = ~tahq_crc32c(0, hdr, TAHQ_HDR_CRC);
    uint32_t crc = ~(tahq_gf2_mulmod(state_h, tahq_gf2_xpow(8u * lay.payload_bytes)) ^ hs.crc_raw);
    tahq_put_u32(hdr + TAHQ_HDR_CRC, crc);
    TQ_TRY(ex.h2d(out, hdr, TAHQ_HEADER_BYTES));
    TQ_TRY(ex.sync());
    *out_len = (size_t)(TAHQ_HEADER_BYTES + lay.payload_bytes);
    return TAHQ_OK;
}

/* One encode at pivot width K: the passes in order, each on the device
 * (or the host emulation) through the executor ex. */
template <int K, class X>
tahq_status tq_encode_k(X &ex, const tahq_config *cfg, const tahq_shape *shape, const TqEncPlan &p,
                        const float *x, uint8_t *ws, uint8_t *out, size_t *out_len)
{
    const TqEncBufs b = tq_enc_bufs(cfg, shape, p, x, ws, out);
    const tq_status_block init = tq_status_init();
    TQ_TRY(ex.h2d(b.st, &init, sizeof init));
    TQ_TRY(ex.memset(out, 0, TAHQ_HEADER_BYTES));
    if (tq_per_row(cfg->alloc))
        TQ_TRY((tq_enc_rank_rows<K>(ex, cfg, shape, p, x, b)));
    if (cfg->alloc == TAHQ_ALLOC_TILE)
        TQ_TRY((tq_enc_tiles<K>(ex, cfg, p, x, b)));
    else
        TQ_TRY((tq_enc_flat<K>(ex, cfg, p, x, b)));
    TQ_TRY(tq_enc_pivots<K>(ex, p, ws, b));
    return tq_enc_finish(ex, cfg, shape, p, ws, b, out, out_len);
}
#undef TQ_TRY

template <class X>
tahq_status tq_encode_impl(X &ex, const tahq_config *cfg, const tahq_shape *shape, const float *x,
                           void *workspace, size_t workspace_bytes, uint8_t *out,
                           size_t out_capacity, size_t *out_len)
{
    if (!cfg || !shape || !x || !out || !out_len)
        return TAHQ_ERR_NULL;
    *out_len = 0;
    TqEncPlan p;
    tahq_status st = tq_enc_plan(cfg, shape, &p);
    if (st != TAHQ_OK)
        return st;
    if (out_capacity < p.bound)
        return TAHQ_ERR_BUFFER;
    if (!workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < p.total)
        return TAHQ_ERR_BUFFER;
    uint8_t *ws = tq_ws_align(workspace);
    tahq_status r;
    switch (p.K) {
    case 3:
        r = tq_encode_k<3>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    case 4:
        r = tq_encode_k<4>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    case 5:
        r = tq_encode_k<5>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    case 6:
        r = tq_encode_k<6>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    case 7:
        r = tq_encode_k<7>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    default:
        r = tq_encode_k<8>(ex, cfg, shape, p, x, ws, out, out_len);
        break;
    }
    if (r != TAHQ_OK) {
        *out_len = 0;
        ex.sync();
    }
    return r;
}

/* ---- decoder ---------------------------------------------------------------------------- */

struct TqDecPlan {
    size_t off_st, off_parts, off_flagoff, off_lt;
    uint64_t nchunks_max, nparts_max;
    TqCrcPlan crc;
    size_t total;
};

inline void tq_dec_plan(size_t len, size_t count, TqDecPlan *p)
{
    p->nchunks_max = (count + 511u) / 512u + 1u;
    p->nparts_max = (p->nchunks_max + 1023u) / 1024u;
    size_t off = 0;
    p->off_st = off;
    off += 256;
    p->off_parts = off;
    off += tq_align256((size_t)p->nparts_max * 8u);
    p->off_flagoff = off;
    off += tq_align256((size_t)p->nchunks_max * 8u);
    p->off_lt = off;
    off += tq_align256((size_t)p->nchunks_max * 8u);
    tq_crc_plan(len > TAHQ_HEADER_BYTES ? (uint64_t)len - TAHQ_HEADER_BYTES : 0u, off, &p->crc);
    off += p->crc.bytes;
    p->total = off + TQ_WS_SLACK;
}

template <int K, class X>
tahq_status tq_decode_k(X &ex, const tahq_header &h, const tahq_layout &L, const uint8_t *msg,
                        size_t len, float *out, size_t count, uint8_t *ws, const TqDecPlan &p,
                        const uint8_t *hdr)
{
    typedef TqGeo<K> Geo;
    tahq_status r;
#define TQ_TRY(e)         \
    do {                  \
        r = (e);          \
        if (r != TAHQ_OK) \
            return r;     \
    } while (0)
    const tahq_config &cfg = h.config;
    const uint64_t N = L.n_tiles;
    const uint64_t P = h.payload_bytes;
    const uint8_t *pl = msg + TAHQ_HEADER_BYTES;
    const bool count_ok = (uint64_t)count == N * cfg.tile;
    tq_status_block *st = reinterpret_cast<tq_status_block *>(ws + p.off_st);
    tq_status_block init = tq_status_init();
    init.payload = P;
    init.status = 0xFFFFFFFFu;
    TQ_TRY(ex.h2d(st, &init, sizeof init));

    /* CRC over the payload */
    TqCrcPlan cp;
    tq_crc_plan(P, p.crc.off[1], &cp);
    TQ_TRY(tq_run_crc(ex, pl, &st->payload, ws, cp, st));

    /* payload checks (+ chunk_lt when the output will be written) */
    const uint32_t TPC = Geo::TPC;
    const uint64_t nchunks = (N + TPC - 1u) / TPC;
    PDecValidate::Args va;
    va.pl = pl;
    va.L.map_bits = L.map_bits;
    va.L.map_bytes = L.map_bytes;
    va.L.flag_off = L.map_bytes;
    va.L.zero_off = L.zero_off;
    va.L.scale_off = L.scale_off;
    va.L.code_off = L.code_off;
    va.L.pivot_off = L.pivot_off;
    va.L.N = N;
    va.L.T = L.tiles_per_row;
    va.L.rows = L.rows;
    va.L.n_flagged = h.n_flagged;
    va.alloc = (uint32_t)cfg.alloc;
    if (tq_per_row(cfg.alloc)) {
        va.ngroups = h.shape.batch;
        va.group_n = h.shape.seq_len;
        va.tpu = L.tiles_per_row;
    } else if (cfg.alloc == TAHQ_ALLOC_TILE) {
        va.ngroups = L.rows;
        va.group_n = L.tiles_per_row;
        va.tpu = 1;
    } else {
        va.ngroups = 0;
        va.group_n = 1;
        va.tpu = 1;
    }
    va.klow = tahq_low_count(va.group_n, cfg.hi_permille);
    va.nmeta = (N + 1023u) / 1024u;
    va.meta = (uint32_t)cfg.meta;
    va.mb = tahq_meta_bytes((tahq_meta)va.meta);
    va.k = K;
    va.TPC = TPC;
    va.pad = 0;
    uint64_t *chunk_lt = reinterpret_cast<uint64_t *>(ws + p.off_lt);
    va.chunk_lt = count_ok ? chunk_lt : (uint64_t *)0;
    va.st = st;
    TQ_TRY(ex.template launch<PDecValidate>(va, va.ngroups + va.nmeta + 1u, 8u));

    PDecFinalize::Args fa;
    fa.st = st;
    fa.state_h = ~tahq_crc32c(0, hdr, TAHQ_HDR_CRC);
    fa.xP = tahq_gf2_xpow(8u * P);
    fa.crc_expect = h.crc;
    fa.pad = 0;
    fa.n_flagged = h.n_flagged;
    TQ_TRY(ex.template launch<PDecFinalize>(fa, 1u, 1u));

    tq_status_block hs;
    if (!count_ok) {
        TQ_TRY(ex.d2h(&hs, st, sizeof hs));
        return hs.status != 0u ? (tahq_status)hs.status : TAHQ_ERR_BUFFER;
    }

    /* flags before each chunk (pivot indices) */
    TqFlagChunks fc;
    fc.flag_sec = pl + L.map_bytes;
    fc.N = N;
    fc.nchunks = nchunks;
    fc.TPC = TPC;
    fc.pad = 0;
    uint64_t *parts = reinterpret_cast<uint64_t *>(ws + p.off_parts);
    uint64_t *flagoff = reinterpret_cast<uint64_t *>(ws + p.off_flagoff);
    const uint64_t nparts = (nchunks + 1023u) / 1024u;
    PFlagScanA::Args a1 = {fc, parts};
    TQ_TRY(ex.template launch<PFlagScanA>(a1, nparts, 8u));
    PFlagScanB::Args a2 = {parts, nparts, st};
    TQ_TRY(ex.template launch<PFlagScanB>(a2, 1u, 1u));
    PFlagScanC::Args a3 = {fc, parts, flagoff, (const uint8_t *)0, (uint8_t *)0};
    TQ_TRY(ex.template launch<PFlagScanC>(a3, nparts, 8u));

    typename PDecode<K>::Args da;
    da.pl = pl;
    da.msg_lo = msg;
    da.msg_hi = msg + len;
    da.L = va.L;
    da.alloc = (uint32_t)cfg.alloc;
    da.hi = cfg.hi_bits;
    da.lo = cfg.lo_bits;
    da.meta = (uint32_t)cfg.meta;
    da.mb = va.mb;
    da.k = K;
    da.aligned = ((uintptr_t)out & 15u) == 0u ? 1u : 0u;
    da.pad = 0;
    da.chunk_lt = chunk_lt;
    da.flagoff = flagoff;
    da.out = out;
    da.st = st;
    TQ_TRY(ex.template launch<PDecode<K>>(da, nchunks, 8u));
    TQ_TRY(ex.d2h(&hs, st, sizeof hs));
    return (tahq_status)hs.status;
#undef TQ_TRY
}

template <class X>
tahq_status tq_decode_impl(X &ex, const uint8_t *msg, size_t len, float *out, size_t count,
                           void *workspace, size_t workspace_bytes)
{
    if (!msg || !out)
        return TAHQ_ERR_NULL;
    TqDecPlan p;
    tq_dec_plan(len, count, &p);
    if (!workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < p.total)
        return TAHQ_ERR_BUFFER;
    uint8_t hdr[TAHQ_HEADER_BYTES];
    memset(hdr, 0, sizeof hdr);
    size_t nh = len < TAHQ_HEADER_BYTES ? len : TAHQ_HEADER_BYTES;
    tahq_status r = TAHQ_OK;
    if (nh)
        r = ex.d2h(hdr, msg, nh);
    if (r != TAHQ_OK)
        return r;
    tahq_header h;
    memset(&h, 0, sizeof h);
    r = tahq_parse_header_nocrc(hdr, len, &h); /* reads hdr[0 .. min(len, 72) - 1] */
    if (r != TAHQ_OK)
        return r;
    tahq_layout L = tahq_layout_compute(&h.config, &h.shape, h.n_low, h.n_flagged);
    uint8_t *ws = tq_ws_align(workspace);
    switch (L.tile_log2) {
    case 3:
        r = tq_decode_k<3>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    case 4:
        r = tq_decode_k<4>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    case 5:
        r = tq_decode_k<5>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    case 6:
        r = tq_decode_k<6>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    case 7:
        r = tq_decode_k<7>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    default:
        r = tq_decode_k<8>(ex, h, L, msg, len, out, count, ws, p, hdr);
        break;
    }
    return r;
}

/* ---- fixpoint (SPEC 7.2) ----------------------------------------------------------------- */

inline size_t tq_fix_ws_bytes(uint64_t channels)
{
    return 256u + tq_align256((size_t)channels * 4u) + tq_align256((size_t)channels * 4u) +
           TQ_WS_SLACK;
}

template <class X>
tahq_status tq_fix_encode_impl(X &ex, const float *g, uint64_t rows, uint32_t channels,
                               uint32_t bits, tahq_meta meta, uint8_t *codes, float *steps,
                               void *workspace, size_t workspace_bytes)
{
    tahq_status r = tahq_fixpoint_encode_check(g, rows, channels, bits, meta, codes, steps);
    if (r != TAHQ_OK)
        return r;
    if (!workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < tq_fix_ws_bytes(channels))
        return TAHQ_ERR_BUFFER;
    uint8_t *ws = tq_ws_align(workspace);
    tq_status_block *st = reinterpret_cast<tq_status_block *>(ws);
    unsigned int *colmax = reinterpret_cast<unsigned int *>(ws + 256);
    float *steps_ws = reinterpret_cast<float *>(ws + 256 + tq_align256((size_t)channels * 4u));
#define TQ_TRY(e)         \
    do {                  \
        r = (e);          \
        if (r != TAHQ_OK) \
            return r;     \
    } while (0)
    const tq_status_block init = tq_status_init();
    TQ_TRY(ex.h2d(st, &init, sizeof init));
    TQ_TRY(ex.memset(colmax, 0, (size_t)channels * 4u));
    const uint64_t ncb = (channels + 31u) / 32u;
    PFixColMax::Args ca = {g, rows, channels, ncb, colmax, st};
    TQ_TRY(ex.template launch<PFixColMax>(ca, ncb * ((rows + TQ_FIX_ROWS - 1u) / TQ_FIX_ROWS), 8u));
    PFixSteps::Args sa = {colmax, steps_ws, channels, (1u << (bits - 1)) - 1u, (uint32_t)meta, st};
    TQ_TRY(ex.template launch<PFixSteps>(sa, ncb, 8u));
    const uint64_t n = rows * channels;
    PFixCodes::Args xa = {
        g, steps_ws, steps, codes, n, channels, ncb, (1u << (bits - 1)) - 1u, 1u << (bits - 1), st};
    TQ_TRY(ex.template launch<PFixCodes>(xa, ncb + rows * ((channels + 127u) / 128u), 8u));
    tq_status_block hs;
    TQ_TRY(ex.d2h(&hs, st, sizeof hs));
    if (hs.bad != ~0ull)
        return (hs.bad & 1u) ? TAHQ_ERR_RANGE : TAHQ_ERR_NONFINITE;
    if (hs.range)
        return TAHQ_ERR_RANGE;
    return TAHQ_OK;
#undef TQ_TRY
}

template <class X>
tahq_status tq_fix_decode_impl(X &ex, const uint8_t *codes, const float *steps, uint64_t rows,
                               uint32_t channels, uint32_t bits, float *out, void *workspace,
                               size_t workspace_bytes)
{
    tahq_status r = tahq_fixpoint_decode_check(codes, steps, rows, channels, bits, out);
    if (r != TAHQ_OK)
        return r;
    if (!workspace)
        return TAHQ_ERR_NULL;
    if (workspace_bytes < tq_fix_ws_bytes(channels))
        return TAHQ_ERR_BUFFER;
    tq_status_block *st = reinterpret_cast<tq_status_block *>(tq_ws_align(workspace));
#define TQ_TRY(e)         \
    do {                  \
        r = (e);          \
        if (r != TAHQ_OK) \
            return r;     \
    } while (0)
    const tq_status_block init = tq_status_init();
    TQ_TRY(ex.h2d(st, &init, sizeof init));
    const uint64_t n = rows * channels;
    const uint64_t ncb = (channels + 31u) / 32u;
    PFixDecValidate::Args va = {codes, steps, n, channels, ncb, bits, 0u, st};
    TQ_TRY(ex.template launch<PFixDecValidate>(va, ncb + (n + 127u) / 128u, 8u));
    PFixDecode::Args da = {codes, steps, out, n, channels, 1u << (bits - 1), 0u, st};
    TQ_TRY(ex.template launch<PFixDecode>(da, rows * ((channels + 127u) / 128u), 8u));
    tq_status_block hs;
    TQ_TRY(ex.d2h(&hs, st, sizeof hs));
    return hs.range ? TAHQ_ERR_PAYLOAD : TAHQ_OK;
#undef TQ_TRY
}

#endif /* TQ_PIPELINE_CUH */
