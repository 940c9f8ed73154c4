/* SPDX-License-Identifier: MIT */
/*
 * tq_programs.cuh - the warp programs of the tahq CUDA pipeline.
 *
 * Every program is a struct with
 *   Args                      its parameters (plain data, passed by value)
 *   kBlockSmem                bytes of shared memory shared by the block
 *   block_init(sb, tid, nthr) fills that region (before a __syncthreads)
 *   run<W>(args, warp, sw, sb) the body, run by one whole warp; sw is the
 *                             warp's own shared memory (16-byte aligned)
 * and is launched with one warp per work item (tq_kernel in tahq_cuda.cu, or
 * the host emulation in test_device_math). No warp reads what another warp of
 * the same launch writes.
 *
 * Lane layout of a tile (SPEC 2.5 and 5.2 orders follow from it):
 *   G <= 128: V = 4 values per lane, LPT = G/4 lanes per tile, element
 *             i of a tile in lane i/4 of its lane group, slot i%4;
 *             a warp-step covers 128 consecutive floats = 32/LPT tiles.
 *   G  = 256: V = 8, the whole warp holds one tile: lane l has elements
 *             4l..4l+3 (slots 0-3) and 128+4l..128+4l+3 (slots 4-7).
 * so every lane loads 16 contiguous bytes per access (two for G = 256).
 * tsum (SPEC 2.5) halves h = G/2 .. 4 across lanes (shfl_down by h/4) and
 * h = 2, 1 inside a lane (h = 128 inside a lane for G = 256); the FWHT
 * (SPEC 5.2) runs h = 1, 2 inside a lane, h = 4 .. 4*LPT/2 across lanes
 * (shfl_xor by h/4), h = 128 inside a lane for G = 256.
 *
 * A "chunk" is CH consecutive floats of the flattened tensor: TPC = CH/G
 * tiles, TPC a multiple of 8 so that a chunk owns whole bytes of the flag
 * bitmap; one warp encodes or decodes one chunk.
 */
#ifndef TQ_PROGRAMS_CUH
#define TQ_PROGRAMS_CUH

#include "tq_simt.cuh"

#if defined(__CUDA_ARCH__)
#define TQ_UNROLL _Pragma("unroll")
#else
#define TQ_UNROLL
#endif

#if defined(__CUDACC__)
#define TQ_PROG __device__ __forceinline__
#define TQ_PROGNI __device__
#else
#define TQ_PROG inline
#define TQ_PROGNI inline
#endif

/* ---- geometry ------------------------------------------------------------------ */

template <int K> struct TqGeo {
    static constexpr uint32_t G = 1u << K;
    static constexpr uint32_t V = G >= 256u ? 8u : 4u;           /* values per lane */
    static constexpr uint32_t LPT = G / V;                       /* lanes per tile */
    static constexpr uint32_t TPW = 32u / LPT;                   /* tiles per warp-step */
    static constexpr uint32_t WS = 32u * V;                      /* floats per warp-step */
    static constexpr uint32_t CH = G <= 64u ? 512u : 8u * G;     /* floats per chunk */
    static constexpr uint32_t NS = CH / WS;                      /* warp-steps per chunk */
    static constexpr uint32_t TPC = CH / G;                      /* tiles per chunk */
    static constexpr uint32_t PF = NS * V <= 32u ? NS : 32u / V; /* steps loaded at once */
    static constexpr uint32_t PFE = 32u / V;         /* steps loaded at once by the row sweeps */
    static constexpr uint32_t FWD_EXP = (K + 1) / 2; /* forward scale 2^-ceil(k/2) */
    static constexpr uint32_t INV_EXP = K / 2;       /* inverse scale 2^-floor(k/2) */
    static_assert(TPC % 8u == 0u && TPC <= 64u, "chunk must own whole flag bytes");
};

/* Floats per chunk for a tile size (host side). */
inline uint32_t tq_chunk_floats(uint32_t G)
{
    return G <= 64u ? 512u : 8u * G;
}

/* Uniform configuration of the tile coder. */
struct TqEncCfg {
    uint32_t hi, lo, meta, mb, rounding, tau_inf;
    float tau;
    uint32_t pad;
    uint64_t seed;
};

/* ---- functors for W::apply (per-lane scalar code with branches) ----------------- */

struct FnZero {
    TQ_HD float operator()(uint32_t meta, float lo) const
    {
        float z = tahq_core_meta_value((tahq_meta)meta,
                                       tahq_core_meta_round_down_bits((tahq_meta)meta, lo));
        return z == 0.0f ? 0.0f : z; /* canonical +0 (SPEC 5.3 step 2) */
    }
};
struct FnScale { /* SPEC 5.3 step 3 */
    TQ_HD float operator()(uint32_t meta, float hi, float z, uint32_t levels) const
    {
        float w = hi - z;
        return w != 0.0f
                   ? tahq_core_meta_value((tahq_meta)meta,
                                          tahq_core_meta_scale_bits((tahq_meta)meta, w, levels))
                   : 0.0f;
    }
};
/* SPEC 4.1 step 4: p = min(fl(a * inv), 1) with inv = fl(1 / sum); when inv
 * overflows (sum < 2^-128), p = fl(a / sum). Then h = p log2 p, computed as
 * ref/entropy.c computes it: -0 for p = 0 (log2(+0) is -150 here), which
 * leaves every non-zero partial sum unchanged, and H = 0 - sum maps both
 * zeros to +0. */
struct FnEntropyP {
    TQ_HD float operator()(float a, float inv, float sum) const
    {
        float p;
        if (tq_bits(inv) == 0x7F800000u) {
            p = a / sum;
        } else {
            p = a * inv;
            p = p < 1.0f ? p : 1.0f;
        }
        return p * tahq_core_log2(p);
    }
};
struct FnMetaBits {
    TQ_HD uint32_t operator()(uint32_t meta, float v) const
    {
        return tahq_core_meta_bits((tahq_meta)meta, v);
    }
};
struct FnMetaValue {
    TQ_HD float operator()(uint32_t meta, uint32_t b) const
    {
        return tahq_core_meta_value((tahq_meta)meta, b);
    }
};
struct FnMulmod {
    TQ_HD uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return tahq_gf2_mulmod(a, b);
    }
};
struct FnMulhi {
    TQ_HD uint32_t operator()(uint32_t a, uint32_t b) const
    {
        return tq_mulhi(a, b);
    }
};
struct FnFixStep { /* SPEC 7.2 step h from the channel max m */
    TQ_HD float operator()(uint32_t meta, float m, uint32_t levels) const
    {
        return m > 0.0f
                   ? tahq_core_meta_value((tahq_meta)meta,
                                          tahq_core_meta_scale_bits((tahq_meta)meta, m, levels))
                   : 0.0f;
    }
};

/* ---- small generic pieces -------------------------------------------------------- */

template <class W>
TQ_PROG typename W::I okey(typename W::F x) /* tahq_order_key (ref/tahq_core.h) in lanes */
{
    typedef typename W::I I;
    typedef typename W::U U;
    I w = as_i32(fbits(x));
    return w ^ as_i32(as_u32(w >> I(31)) >> U(1u));
}
template <class W> TQ_PROG typename W::F from_okey(typename W::I k)
{
    typedef typename W::I I;
    typedef typename W::U U;
    return ffloat(as_u32(k ^ as_i32(as_u32(k >> I(31)) >> U(1u))));
}

/* Philox4x32-10 on per-lane counters (SPEC 2.4): the lane form of
 * ref/rng.c, with the scalar core's constants. */
template <class W>
TQ_PROG void philox_v(typename W::U &c0, typename W::U &c1, typename W::U &c2, typename W::U &c3,
                      uint32_t k0, uint32_t k1)
{
    typedef typename W::U U;
    for (int r = 0; r < 10; r++) {
        U hi0 = W::apply(FnMulhi(), c0, TAHQ_PHILOX_M0);
        U lo0 = c0 * U(TAHQ_PHILOX_M0);
        U hi1 = W::apply(FnMulhi(), c2, TAHQ_PHILOX_M1);
        U lo1 = c2 * U(TAHQ_PHILOX_M1);
        U n0 = hi1 ^ c1 ^ U(k0);
        U n2 = hi0 ^ c3 ^ U(k1);
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += TAHQ_PHILOX_W0;
        k1 += TAHQ_PHILOX_W1;
    }
}

/* Copy n staged bytes to dst. The stage holds byte i of the range at offset
 * (dst & 15) + i, so 16-byte blocks of the stage and of global memory line up:
 * whole blocks are one 16-byte store, the (at most two) partial blocks are
 * byte stores. Only bytes of [dst, dst + n) are written. */
template <class W> TQ_PROG void flush_bytes(uint8_t *dst, const uint8_t *stage, uint32_t n)
{
    typedef typename W::U U;
    typedef typename W::B B;
    if (n == 0u)
        return;
    const uint32_t a = (uint32_t)((uintptr_t)dst & 15u);
    uint8_t *base = dst - a;
    const uint32_t nblk = (a + n + 15u) >> 4;
    const U lane = W::lane();
    for (uint32_t b0 = 0; b0 < nblk; b0 += 32u) {
        U blk = lane + U(b0);
        B inb = blk < U(nblk);
        U lo = blk * U(16u);
        B full = inb && (lo >= U(a)) && (lo + U(16u) <= U(a + n));
        U x, y, z, w;
        W::ld16(stage, u64(lo), full, x, y, z, w);
        W::st16(base, u64(lo), x, y, z, w, full);
        B part = inb && !full;
        if (W::any(part)) {
            TQ_UNROLL
            for (uint32_t j = 0; j < 16u; j++) {
                U p = lo + U(j);
                B m = part && (p >= U(a)) && (p < U(a + n));
                U byte = W::ld8(stage, u64(p), m);
                W::st8(base, u64(p), byte, m);
            }
        }
    }
}

/* Load n bytes from src into a stage laid out as in flush_bytes. 16-byte
 * loads only for blocks inside [lo_ok, hi_ok) (the message), bytes otherwise. */
template <class W>
TQ_PROG void fill_bytes(uint8_t *stage, const uint8_t *src, uint32_t n, const uint8_t *lo_ok,
                        const uint8_t *hi_ok)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    typedef typename W::B B;
    if (n == 0u)
        return;
    const uint32_t a = (uint32_t)((uintptr_t)src & 15u);
    const uint8_t *base = src - a;
    const uint32_t nblk = (a + n + 15u) >> 4;
    /* blocks [first_ok, last_ok) lie inside [lo_ok, hi_ok) */
    uint64_t first_ok = base >= lo_ok ? 0u : (uint64_t)((lo_ok - base + 15) >> 4);
    uint64_t last_ok = hi_ok <= base ? 0u : (uint64_t)((hi_ok - base) >> 4);
    const U lane = W::lane();
    for (uint32_t b0 = 0; b0 < nblk; b0 += 32u) {
        U blk = lane + U(b0);
        B inb = blk < U(nblk);
        U lo = blk * U(16u);
        B full = inb && (u64(blk) >= U64(first_ok)) && (u64(blk) < U64(last_ok));
        U x, y, z, w;
        W::ld16(base, u64(lo), full, x, y, z, w);
        W::st16(stage, u64(lo), x, y, z, w, full);
        B part = inb && !full;
        if (W::any(part)) {
            TQ_UNROLL
            for (uint32_t j = 0; j < 16u; j++) {
                U p = lo + U(j);
                B m = part && (p >= U(a)) && (p < U(a + n));
                U byte = W::ld8(base, u64(p), m);
                W::st8(stage, u64(p), byte, m);
            }
        }
    }
}

/* Exclusive offsets of up to 64 per-tile byte counts (lane j: tiles j, j+32)
 * into toff[]; returns the total. */
template <class W>
TQ_PROG uint32_t chunk_offsets(typename W::U bytes_a, typename W::U bytes_b, uint32_t ntiles,
                               uint32_t *toff)
{
    typedef typename W::U U;
    typedef typename W::B B;
    U lane = W::lane();
    U ia = warp_incl_u32<W>(bytes_a);
    uint32_t tot_a = W::bcast(ia, 31u);
    W::st(toff, u64(lane), ia - bytes_a, B(true));
    uint32_t total = tot_a;
    if (ntiles > 32u) {
        U ib = warp_incl_u32<W>(bytes_b) + U(tot_a);
        W::st(toff, u64(lane + U(32u)), ib - bytes_b, B(true));
        total = W::bcast(ib, 31u);
    }
    W::sync();
    return total;
}

/* k-th smallest (0-based) of the n distinct 64-bit keys key(i), i < n, by an
 * 8-bit radix select with a 256-bin histogram in shared memory. Returns 0 if
 * k == 0 and ~0 if k >= n, so that "key < result" marks exactly the k
 * smallest keys in every case. */
template <class W, class KeyFn>
TQ_PROG uint64_t radix_select(uint64_t n, uint64_t k, KeyFn key, uint32_t *hist)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    typedef typename W::B B;
    if (k == 0u)
        return 0u;
    if (k >= n)
        return ~(uint64_t)0;
    const U lane = W::lane();
    uint64_t prefix = 0u, rem = k;
    for (int p = 7; p >= 0; p--) {
        const uint32_t shift = 8u * (uint32_t)p;
        TQ_UNROLL
        for (uint32_t j = 0; j < 8u; j++)
            W::st(hist, u64(lane * U(8u) + U(j)), U(0u), B(true));
        W::sync();
        for (uint64_t i0 = 0; i0 < n; i0 += 32u) {
            U64 i = u64(lane) + U64(i0);
            B m = i < U64(n);
            U64 kk = key(i, m);
            B match = m;
            if (p < 7)
                match = match && ((kk >> U64((uint64_t)shift + 8u)) == U64(prefix >> (shift + 8u)));
            U dig = lo32(kk >> U64((uint64_t)shift)) & U(255u);
            W::atomic_add_u32(hist, u64(dig), U(1u), match);
        }
        W::sync();
        U h[8];
        U tot = U(0u);
        TQ_UNROLL
        for (uint32_t j = 0; j < 8u; j++) {
            h[j] = W::ld(hist, u64(lane * U(8u) + U(j)), B(true));
            tot = tot + h[j];
        }
        U incl = warp_incl_u32<W>(tot);
        U excl = incl - tot;
        B here = (u64(excl) <= U64(rem)) && (U64(rem) < u64(incl));
        uint32_t owner = tq_ctz32(W::ballot(here));
        U64 cum = u64(excl);
        U dsel = U(0u);
        U64 before = U64((uint64_t)0);
        B found = B(false);
        TQ_UNROLL
        for (uint32_t j = 0; j < 8u; j++) {
            B hit = !found && (U64(rem) < cum + u64(h[j]));
            dsel = sel(hit, lane * U(8u) + U(j), dsel);
            before = sel(hit, cum, before);
            found = found || hit;
            cum = cum + u64(h[j]);
        }
        uint32_t d = W::bcast(dsel, owner);
        uint64_t bef = W::bcast(before, owner);
        rem -= bef;
        prefix |= (uint64_t)d << shift;
        W::sync();
    }
    return prefix;
}

/* Walk the n units of group g in order with their precision bits bit(i):
 * optionally store map8[unit] (one byte per unit), and for every chunk whose
 * first tile lies in the group store chunk_lt[chunk] = number of low tiles
 * before that tile (all earlier groups hold exactly k_per_group low units).
 * tpu = tiles per unit (T for token allocation, 1 for tile allocation).
 * Returns the number of low units of the group. */
template <class W, class BitFn>
TQ_PROG uint64_t group_scan(uint64_t g, uint64_t n, uint64_t k_per_group, uint64_t tpu,
                            uint32_t TPC, BitFn bit, uint8_t *map8, uint64_t *chunk_lt)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    typedef typename W::B B;
    const U lane = W::lane();
    const uint64_t unit0 = g * n;
    uint64_t carry = 0;
    for (uint64_t i0 = 0; i0 < n; i0 += 32u) {
        U64 i = u64(lane) + U64(i0);
        B m = i < U64(n);
        B low = m && bit(i, m);
        U lu = b2u(low);
        if (map8)
            W::st8(map8, i + U64(unit0), lu, m);
        if (chunk_lt) {
            U incl = warp_incl_u32<W>(lu);
            U excl = incl - lu;
            uint64_t nb = n - i0 < 32u ? n - i0 : 32u;
            uint64_t ta = (unit0 + i0) * tpu, tb = (unit0 + i0 + nb) * tpu;
            uint64_t ca = (ta + TPC - 1u) / TPC, cb = (tb + TPC - 1u) / TPC;
            for (uint64_t c0 = ca; c0 < cb; c0 += 32u) {
                U64 c = u64(lane) + U64(c0);
                B mc = c < U64(cb);
                U64 t0 = c * U64((uint64_t)TPC);
                U64 u0 = t0 / U64(tpu);
                U li = lo32(u0 - U64(unit0 + i0)) & U(31u);
                U pre = W::shfl(excl, li);
                U bt = W::shfl(lu, li);
                U64 lt = U64(tpu) * (U64(g * k_per_group + carry) + u64(pre)) +
                         u64(bt) * (t0 - u0 * U64(tpu));
                W::st(chunk_lt, c, lt, mc);
            }
        }
        carry += popc(W::ballot(low));
    }
    return carry;
}

/* =================================================================================
 * Per-tile pieces of one warp-step (V values per lane), templated on K = log2 G.
 * ================================================================================= */

template <int K, class W> struct TileOps {
    typedef TqGeo<K> Geo;
    static constexpr uint32_t G = Geo::G, V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW;
    typedef typename W::F F;
    typedef typename W::D D;
    typedef typename W::U U;
    typedef typename W::I I;
    typedef typename W::U64 U64;
    typedef typename W::B B;

    /* float offset of (lane, slot s) inside a warp-step */
    static TQ_PROG U step_off(U lane, uint32_t s)
    {
        return V == 4u ? lane * U(4u) + U(s)
                       : (s < 4u ? lane * U(4u) + U(s) : lane * U(4u) + U(124u + s));
    }
    /* element index inside the tile of (lane, slot s) */
    static TQ_PROG U elem(U lane, uint32_t s)
    {
        return V == 4u ? (lane & U(LPT - 1u)) * U(4u) + U(s) : step_off(lane, s);
    }

    static TQ_PROG U grp_max_u(U x)
    {
        TQ_UNROLL
        for (unsigned m = LPT / 2u; m >= 1u; m >>= 1)
            x = vmaxu(x, W::shfl_xor(x, m));
        return x;
    }
    static TQ_PROG U grp_min_u(U x)
    {
        TQ_UNROLL
        for (unsigned m = LPT / 2u; m >= 1u; m >>= 1)
            x = vminu(x, W::shfl_xor(x, m));
        return x;
    }
    static TQ_PROG I grp_max_i(I x)
    {
        TQ_UNROLL
        for (unsigned m = LPT / 2u; m >= 1u; m >>= 1)
            x = vmaxi(x, W::shfl_xor(x, m));
        return x;
    }
    static TQ_PROG I grp_min_i(I x)
    {
        TQ_UNROLL
        for (unsigned m = LPT / 2u; m >= 1u; m >>= 1)
            x = vmini(x, W::shfl_xor(x, m));
        return x;
    }

    /* SPEC 2.5 tsum of the tile's values; the result is valid in the group's
     * first lane. x is consumed. */
    static TQ_PROG F tsum(F *x)
    {
        if constexpr (V == 8u)
            TQ_UNROLL
        for (uint32_t s = 0; s < 4u; s++)
            x[s] = x[s] + x[s + 4u]; /* h = 128 */
        TQ_UNROLL
        for (unsigned d = LPT / 2u; d >= 1u; d >>= 1) /* h = 4d */
            TQ_UNROLL
        for (uint32_t s = 0; s < 4u; s++)
            x[s] = x[s] + W::shfl_down(x[s], d, LPT);
        F a = x[0] + x[2]; /* h = 2 */
        F b = x[1] + x[3];
        return a + b; /* h = 1 */
    }

    /* SPEC 4.1 entropy of one tile (a unit of T = 1 tile); valid in the
     * group's first lane. */
    static TQ_PROG F tile_entropy(const F *v, U gbase)
    {
        F a[V], h[V];
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            a[s] = ffloat(fbits(v[s]) & U(0x7FFFFFFFu));
        F t[V];
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            t[s] = a[s];
        F total = W::shfl(tsum(t), gbase);
        F inv = F(1.0f) / total;
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            h[s] = W::apply(FnEntropyP(), a[s], inv, total);
        F hs = tsum(h);
        return sel(total == F(0.0f), F(0.0f), F(0.0f) - hs);
    }

    /* pick v[slot] without a run-time register index */
    static TQ_PROG F pick(const F *v, U slot)
    {
        F r = v[0];
        TQ_UNROLL
        for (uint32_t s = 1; s < V; s++)
            r = sel(slot == U(s), v[s], r);
        return r;
    }

    /* lane and slot of element d of the tile */
    static TQ_PROG void where(U d, U gbase, U &src_lane, U &slot)
    {
        if constexpr (V == 4u) {
            src_lane = gbase + (d >> U(2u));
            slot = d & U(3u);
        } else {
            src_lane = (d & U(127u)) >> U(2u);
            slot = (d & U(3u)) + ((d >> U(7u)) << U(2u));
        }
    }

    /* swap v[0] and v[d] of flagged tiles */
    static TQ_PROG void swap_pivot(F *v, U d, B flagged, U lane, U gl, U gbase)
    {
        U srcl, slot;
        where(d, gbase, srcl, slot);
        F xd = W::shfl(pick(v, slot), srcl);
        F x0 = W::shfl(v[0], gbase);
        B here = flagged && (lane == srcl);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            v[s] = sel(here && (slot == U(s)), x0, v[s]);
        v[0] = sel(flagged && (gl == U(0u)), xd, v[0]);
    }

    /* SPEC 5.2 FWHT, stages h = 1, 2, 4, ..., G/2 */
    static TQ_PROG void fwht(F *v, U gl)
    {
        TQ_UNROLL
        for (uint32_t p = 0; p < V; p += 2u) { /* h = 1 */
            F a = v[p], b = v[p + 1u];
            v[p] = a + b;
            v[p + 1u] = a - b;
        }
        TQ_UNROLL
        for (uint32_t p = 0; p < V; p += 4u) /* h = 2 */
            TQ_UNROLL
        for (uint32_t j = 0; j < 2u; j++) {
            F a = v[p + j], b = v[p + j + 2u];
            v[p + j] = a + b;
            v[p + j + 2u] = a - b;
        }
        TQ_UNROLL
        for (unsigned d = 1u; d < LPT; d <<= 1) { /* h = 4d, across lanes */
            B upper = (gl & U(d)) != U(0u);
            TQ_UNROLL
            for (uint32_t s = 0; s < V; s++) {
                F o = W::shfl_xor(v[s], d);
                v[s] = sel(upper, o - v[s], v[s] + o);
            }
        }
        if constexpr (V == 8u) /* h = 128 */
            TQ_UNROLL
        for (uint32_t s = 0; s < 4u; s++) {
            F a = v[s], b = v[s + 4u];
            v[s] = a + b;
            v[s + 4u] = a - b;
        }
    }

    static TQ_PROG void forward(F *v, U d, B flagged, U lane, U gl, U gbase)
    {
        F o[V];
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            o[s] = v[s];
        swap_pivot(v, d, flagged, lane, gl, gbase);
        fwht(v, gl);
        const float f = tq_float((127u - Geo::FWD_EXP) << 23);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            v[s] = sel(flagged, v[s] * F(f), o[s]);
    }

    static TQ_PROG void inverse(F *v, U d, B flagged, U lane, U gl, U gbase)
    {
        F o[V];
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            o[s] = v[s];
        fwht(v, gl);
        const float f = tq_float((127u - Geo::INV_EXP) << 23);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            v[s] = sel(flagged, v[s] * F(f), o[s]);
        swap_pivot(v, d, flagged, lane, gl, gbase);
        /* SPEC 1 rule 6, 6.1: a flagged tile can meet inf - inf (q*s beyond
         * binary32 with a large bf16/fp32 scale); its NaNs are 0x7FC00000,
         * not the platform's default NaN. Unflagged tiles hold no NaN. */
        const float qnan = tq_float(0x7FC00000u);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            v[s] = sel(flagged && (v[s] != v[s]), F(qnan), v[s]);
    }

    /* SPEC 5.1 gate: flagged and pivot d */
    static TQ_PROG void gate(const F *v, B valid, const TqEncCfg &c, U lane, B &flagged, U &d)
    {
        U a[V];
        U m1 = U(0u);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++) {
            a[s] = fbits(v[s]) & U(0x7FFFFFFFu);
            m1 = vmaxu(m1, a[s]);
        }
        m1 = grp_max_u(m1);
        U cand = U(G);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            cand = vminu(cand, sel(a[s] == m1, elem(lane, s), U(G)));
        d = grp_min_u(cand);
        U m2 = U(0u);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            m2 = vmaxu(m2, sel(elem(lane, s) != d, a[s], U(0u)));
        m2 = grp_max_u(m2);
        F m1f = ffloat(m1), m2f = ffloat(m2);
        flagged = valid && B(c.tau_inf == 0u) && (m1f > F(0.0f)) && (m1f >= F(c.tau) * m2f);
    }

    /* Smallest bad-input key (index << 1 | is_range) of the step, or ~0. */
    static TQ_PROG U64 bad_key(const F *v, B valid, U64 tile, U lane)
    {
        B anyb = B(false);
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++)
            anyb = anyb || ((fbits(v[s]) & U(0x7FFFFFFFu)) >= U(0x5F800000u));
        anyb = anyb && valid;
        U64 best = U64(~(uint64_t)0);
        if (W::any(anyb)) {
            TQ_UNROLL
            for (uint32_t s = 0; s < V; s++) {
                U a = fbits(v[s]) & U(0x7FFFFFFFu);
                B b = valid && (a >= U(0x5F800000u));
                U64 key = ((tile * U64((uint64_t)G) + u64(elem(lane, s))) << U64((uint64_t)1)) |
                          u64(b2u(a < U(0x7F800000u)));
                best = vminu64(best, sel(b, key, U64(~(uint64_t)0)));
            }
        }
        return best;
    }

    /* min and max of the tile's values as order keys (ref/quant.c), valid
     * in every lane of the group */
    static TQ_PROG void range_keys(const F *v, I &kmin, I &kmax)
    {
        kmin = okey<W>(v[0]);
        kmax = kmin;
        TQ_UNROLL
        for (uint32_t s = 1; s < V; s++) {
            I k = okey<W>(v[s]);
            kmin = vmini(kmin, k);
            kmax = vmaxi(kmax, k);
        }
        kmin = grp_min_i(kmin);
        kmax = grp_max_i(kmax);
    }

    /* SPEC 5.3 step 4: the codes q[slot] of the (transformed) values against
     * z and sc. */
    static TQ_PROG void codes_q(const F *v, F z, F sc, U bits, U64 tile, U lane, const TqEncCfg &c,
                                U *q)
    {
        U L = (U(1u) << bits) - U(1u);
        B zero_scale = sc == F(0.0f);
        if (c.rounding == (uint32_t)TAHQ_ROUND_STOCHASTIC) {
            /* element index n = tile*G + elem; four consecutive indices per
             * 16-byte group share one Philox block (SPEC 2.4 word(seed, n)) */
            TQ_UNROLL
            for (uint32_t half = 0; half < V / 4u; half++) {
                U64 n0 = tile * U64((uint64_t)G) + u64(elem(lane, 4u * half));
                U64 blk = n0 >> U64((uint64_t)2);
                U w0 = lo32(blk), w1 = lo32(blk >> U64((uint64_t)32)), w2 = U(0u), w3 = U(0u);
                philox_v<W>(w0, w1, w2, w3, (uint32_t)c.seed, (uint32_t)(c.seed >> 32));
                U word[4] = {w0, w1, w2, w3};
                TQ_UNROLL
                for (uint32_t j = 0; j < 4u; j++) {
                    uint32_t s = 4u * half + j;
                    F t = (v[s] - z) / sc;
                    F f0 = u2f(f2u(t));
                    F phi = t - f0;
                    F rho = u2f(word[j] >> U(8u)) * F(0x1p-24f);
                    U qq = f2u(f0) + b2u(rho < phi);
                    q[s] = sel(zero_scale, U(0u), vminu(qq, L));
                }
            }
        } else {
            TQ_UNROLL
            for (uint32_t s = 0; s < V; s++) {
                F t = (v[s] - z) / sc;
                U qq = f2u((t + F(0x1p23f)) - F(0x1p23f));
                q[s] = sel(zero_scale, U(0u), vminu(qq, L));
            }
        }
    }

    /* the codes of codes_q packed per lane: slots 0-3 in cw[0], 4-7 in cw[1] */
    static TQ_PROG void codes(const F *v, F z, F sc, U bits, U64 tile, U lane, const TqEncCfg &c,
                              U *cw)
    {
        U q[V];
        codes_q(v, z, sc, bits, tile, lane, c, q);
        TQ_UNROLL
        for (uint32_t h = 0; h < V / 4u; h++) {
            U w = U(0u);
            TQ_UNROLL
            for (uint32_t j = 0; j < 4u; j++)
                w = w | (q[4u * h + j] << (bits * U(j)));
            cw[h] = w;
        }
        if constexpr (V == 4u)
            cw[1] = U(0u);
    }

    /* SPEC 5.3 for one step, every lane of a group computing its tile's
     * zero-point and scale (used by the unit test; the chunk coder computes
     * them once per tile instead). */
    static TQ_PROG void quantize(const F *v, B valid, U bits, U64 tile, U lane, const TqEncCfg &c,
                                 F &z, F &sc, U *cw, B &range)
    {
        I kmin, kmax;
        range_keys(v, kmin, kmax);
        F lo = from_okey<W>(kmin), hi = from_okey<W>(kmax);
        U L = (U(1u) << bits) - U(1u);
        z = W::apply(FnZero(), c.meta, lo);
        sc = W::apply(FnScale(), c.meta, hi, z, L);
        range = valid && ((fbits(z) == U(0xFF800000u)) || (fbits(sc) == U(0x7F800000u)));
        codes(v, z, sc, bits, tile, lane, c, cw);
    }

    /* SPEC 2.5 tsum in binary64 (SPEC 4.3 step 1), in the lane order of tsum;
     * valid in the group's first lane. x is consumed. */
    static TQ_PROG D tsum_d(D *x)
    {
        if constexpr (V == 8u)
            TQ_UNROLL
        for (uint32_t s = 0; s < 4u; s++)
            x[s] = vdadd(x[s], x[s + 4u]); /* h = 128 */
        TQ_UNROLL
        for (unsigned d = LPT / 2u; d >= 1u; d >>= 1) /* h = 4d */
            TQ_UNROLL
        for (uint32_t s = 0; s < 4u; s++)
            x[s] = vdadd(x[s], W::shfl_down(x[s], d, LPT));
        D a = vdadd(x[0], x[2]); /* h = 2 */
        D b = vdadd(x[1], x[3]);
        return vdadd(a, b); /* h = 1 */
    }

    /* SPEC 4.3 step 1: e_b, the binary64 tree sum of the squared binary32
     * errors of the values v quantized to z, sc, q and reconstructed as the
     * decoder does (SPEC 6.1, before any inverse transform; ref/gain.c
     * tile_squared_error). The squares are exact. Valid in the group's first
     * lane. */
    static TQ_PROG D squared_error(const F *v, F z, F sc, const U *q)
    {
        D e[V];
        TQ_UNROLL
        for (uint32_t s = 0; s < V; s++) {
            F decoded = z + u2f(q[s]) * sc;
            D d = f2d(decoded - v[s]);
            e[s] = vdmul(d, d);
        }
        return tsum_d(e);
    }

    /* SPEC 4.3 steps 1-2 for the tiles of one step (ref/gain.c
     * tahq_token_gain_key, one loop iteration): gate, transform if flagged
     * (v is transformed in place), quantize at lo_bits and at hi_bits,
     * g = e_lo - e_hi, doubled for a flagged tile when log2 G is odd. Returns
     * g in the group's first lane (+0 for tiles that are not valid); range
     * collects tiles whose zero-point or scale overflows at either width. */
    static TQ_PROG D tile_gain(F *v, B valid, U64 tile, U lane, U gl, U gbase, const TqEncCfg &c,
                               B &range)
    {
        B fl;
        U d;
        gate(v, valid, c, lane, fl, d);
        if (W::any(fl))
            forward(v, d, fl, lane, gl, gbase);
        I kmin, kmax;
        range_keys(v, kmin, kmax);
        const F lo = from_okey<W>(kmin), hi = from_okey<W>(kmax);
        D err[2];
        TQ_UNROLL
        for (uint32_t w = 0; w < 2u; w++) { /* at lo_bits, at hi_bits */
            const U bits = U(w == 0u ? c.lo : c.hi);
            const U L = (U(1u) << bits) - U(1u);
            F z = W::apply(FnZero(), c.meta, lo);
            F sc = W::apply(FnScale(), c.meta, hi, z, L);
            range =
                range || (valid && ((fbits(z) == U(0xFF800000u)) || (fbits(sc) == U(0x7F800000u))));
            U q[V];
            codes_q(v, z, sc, bits, tile, lane, c, q);
            err[w] = squared_error(v, z, sc, q);
        }
        D g = vdsub(err[0], err[1]);
        if constexpr ((K & 1) != 0)
            g = sel(fl, vdmul(D(2.0), g), g); /* exact */
        return sel(valid, g, D(0.0));
    }

    /* Write the codes of a step into the code stage: lane pairs hold 8 codes
     * = `bits` bytes at tile offset toff + g8 * bits. */
    static TQ_PROG void stage_codes(const U *cw, B valid, U bits, U toff, U lane, uint8_t *cst,
                                    uint32_t ca)
    {
        U gl = lane & U(LPT - 1u);
        B even = (lane & U(1u)) == U(0u);
        TQ_UNROLL
        for (uint32_t h = 0; h < V / 4u; h++) {
            U partner = W::shfl_xor(cw[h], 1u);
            U64 w64 = u64(cw[h]) | (u64(partner) << u64(bits * U(4u)));
            U g8 = V == 4u ? (gl >> U(1u)) : (lane >> U(1u)) + U(16u * h);
            U off = U(ca) + toff + g8 * bits;
            TQ_UNROLL
            for (uint32_t j = 0; j < 8u; j++) {
                B m = valid && even && (U(j) < bits);
                W::st8(cst, u64(off + U(j)), lo32(w64 >> U64((uint64_t)(8u * j))) & U(255u), m);
            }
        }
    }

    /* Read the codes of a step back from a code stage (decoder). */
    static TQ_PROG void unstage_codes(const uint8_t *cst, uint32_t ca, B valid, U bits, U toff,
                                      U lane, U *q)
    {
        U gl = lane & U(LPT - 1u);
        B odd = (lane & U(1u)) != U(0u);
        U L = (U(1u) << bits) - U(1u);
        TQ_UNROLL
        for (uint32_t h = 0; h < V / 4u; h++) {
            U g8 = V == 4u ? (gl >> U(1u)) : (lane >> U(1u)) + U(16u * h);
            U off = U(ca) + toff + g8 * bits;
            U64 w64 = U64((uint64_t)0);
            TQ_UNROLL
            for (uint32_t j = 0; j < 8u; j++) {
                B m = valid && (U(j) < bits);
                w64 = w64 | (u64(W::ld8(cst, u64(off + U(j)), m)) << U64((uint64_t)(8u * j)));
            }
            U cw = lo32(sel(odd, w64 >> u64(bits * U(4u)), w64));
            TQ_UNROLL
            for (uint32_t j = 0; j < 4u; j++)
                q[4u * h + j] = (cw >> (bits * U(j))) & L;
        }
    }

    /* Metadata bytes of a value into a stage at off (mb bytes, LE). */
    static TQ_PROG void stage_meta(uint8_t *st, U off, U bits32, uint32_t mb, B m)
    {
        for (uint32_t j = 0; j < mb; j++)
            W::st8(st, u64(off + U(j)), (bits32 >> U(8u * j)) & U(255u), m);
    }
    static TQ_PROG U unstage_meta(const uint8_t *st, U off, uint32_t mb, B m)
    {
        U r = U(0u);
        for (uint32_t j = 0; j < mb; j++)
            r = r | (W::ld8(st, u64(off + U(j)), m) << U(8u * j));
        return r;
    }

    /* Bits of the TPW tiles of a step from a ballot of their first lanes. */
    static TQ_PROG uint32_t step_bits(B b)
    {
        uint32_t bal = W::ballot(b);
        uint32_t r = 0;
        TQ_UNROLL
        for (uint32_t t = 0; t < TPW; t++)
            r |= ((bal >> (t * LPT)) & 1u) << t;
        return r;
    }

    /* load the V floats of (lane) of a warp-step starting at float index base */
    static TQ_PROG void load_step(const float *src, uint64_t base, B m, bool aligned, F *v, U lane)
    {
        TQ_UNROLL
        for (uint32_t h = 0; h < V / 4u; h++)
            W::ld4f(src, u64(step_off(lane, 4u * h)) + U64(base), m, aligned, v[4u * h],
                    v[4u * h + 1u], v[4u * h + 2u], v[4u * h + 3u]);
    }
    static TQ_PROG void store_step(float *dst, uint64_t base, B m, bool aligned, const F *v, U lane)
    {
        TQ_UNROLL
        for (uint32_t h = 0; h < V / 4u; h++)
            W::st4f(dst, u64(step_off(lane, 4u * h)) + U64(base), v[4u * h], v[4u * h + 1u],
                    v[4u * h + 2u], v[4u * h + 3u], m, aligned);
    }
};

/* Shared-memory layout of the chunk coder of one warp (all 16-aligned). */
template <int K> struct TqStageLayout {
    typedef TqGeo<K> Geo;
    static constexpr uint32_t TOFF = 0;                                       /* 64 x u32 */
    static constexpr uint32_t CODES = 256;                                    /* CH + 32 */
    static constexpr uint32_t ZEROS = CODES + ((Geo::CH + 32u + 15u) & ~15u); /* TPC*4 + 32 */
    static constexpr uint32_t SCALES = ZEROS + ((Geo::TPC * 4u + 32u + 15u) & ~15u);
    static constexpr uint32_t KMIN = SCALES + ((Geo::TPC * 4u + 32u + 15u) & ~15u); /* 64 x i32 */
    static constexpr uint32_t KMAX = KMIN + 256u;                                   /* 64 x i32 */
    static constexpr uint32_t ZF = KMAX + 256u;                                     /* 64 x float */
    static constexpr uint32_t SF = ZF + 256u;                                       /* 64 x float */
    static constexpr uint32_t END = SF + 256u;
};

/* ---- the chunk coder, shared by the flat and the row programs ------------------- */

/* Bit j = bit(j) for the tiles j < nt (<= 64) of a chunk: one ballot pair. */
template <class W, class BitFn> TQ_PROG uint64_t chunk_mask(uint32_t nt, BitFn bit)
{
    typedef typename W::U U;
    typedef typename W::B B;
    const U lane = W::lane();
    B ma = lane < U(nt), mb = (lane + U(32u)) < U(nt);
    B a = ma && bit(lane, ma);
    B b = mb && bit(lane + U(32u), mb);
    return (uint64_t)W::ballot(a) | ((uint64_t)W::ballot(b) << 32);
}

template <class W> TQ_PROG typename W::B mask_bit(uint64_t mask, typename W::U j)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    return ((U64(mask) >> u64(vminu(j, U(63u)))) & U64((uint64_t)1)) != U64((uint64_t)0);
}

template <int K> struct ChunkEncoder {
    typedef TqGeo<K> Geo;
    typedef TqStageLayout<K> SL;

    /* Encode tiles [tfirst, tfirst + nt) whose floats start at src[fbase]
     * (nt <= TPC). Bit j of lowmask: tile j is low precision. code_start is
     * the byte offset of the first tile's codes in code_sec. Flags go to
     * flag_sec (whole bytes; tfirst % 8 == 0) if non-null, else to
     * info8[tile] = low | flag << 1. Per batch of warp-steps: gate and
     * transform every tile, reduce each tile's min/max into shared memory,
     * compute each tile's zero-point and scale once (one lane per tile), then
     * the codes. Bad inputs and metadata overflows accumulate into bad_acc /
     * range_acc. */
    template <class W>
    static TQ_PROG void run(const float *src, bool aligned, uint64_t fbase, uint64_t tfirst,
                            uint32_t nt, uint64_t code_start, const TqEncCfg &c, uint64_t lowmask,
                            bool validate, uint8_t *zero_sec, uint8_t *scale_sec, uint8_t *code_sec,
                            uint8_t *flag_sec, uint8_t *info8, uint8_t *piv8, uint8_t *sw,
                            typename W::U64 &bad_acc, typename W::B &range_acc)
    {
        typedef TileOps<K, W> T;
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::I I;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint32_t G = Geo::G, V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, NS = Geo::NS,
                       PF = Geo::PF, WS = Geo::WS;
        uint32_t *toff = reinterpret_cast<uint32_t *>(sw + SL::TOFF);
        uint8_t *cst = sw + SL::CODES;
        uint8_t *zst = sw + SL::ZEROS;
        uint8_t *sst = sw + SL::SCALES;
        int32_t *kmin_s = reinterpret_cast<int32_t *>(sw + SL::KMIN);
        int32_t *kmax_s = reinterpret_cast<int32_t *>(sw + SL::KMAX);
        float *zf = reinterpret_cast<float *>(sw + SL::ZF);
        float *sf = reinterpret_cast<float *>(sw + SL::SF);
        const U lane = W::lane();
        const U gl = lane & U(LPT - 1u);
        const U gbase = lane - gl;
        const U ti = lane / U(LPT);

        /* per-tile bytes and offsets */
        U ja = lane, jb = lane + U(32u);
        U ba = sel(ja < U(nt), sel(mask_bit<W>(lowmask, ja), U(c.lo), U(c.hi)) * U(G / 8u), U(0u));
        U bb = sel(jb < U(nt), sel(mask_bit<W>(lowmask, jb), U(c.lo), U(c.hi)) * U(G / 8u), U(0u));
        uint32_t ncode = chunk_offsets<W>(ba, bb, Geo::TPC, toff);

        uint8_t *dcode = code_sec + code_start;
        uint8_t *dzero = zero_sec + tfirst * c.mb;
        uint8_t *dscale = scale_sec + tfirst * c.mb;
        const uint32_t ca = (uint32_t)((uintptr_t)dcode & 15u);
        const uint32_t za = (uint32_t)((uintptr_t)dzero & 15u);
        const uint32_t sa = (uint32_t)((uintptr_t)dscale & 15u);
        uint64_t flags = 0;

        for (uint32_t sb = 0; sb < NS; sb += PF) {
            if (sb * TPW >= nt)
                break;
            F v[PF][V];
            B fl[PF];
            U dv[PF];
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                U tic = U((sb + p) * TPW) + ti;
                T::load_step(src, fbase + (uint64_t)(sb + p) * WS, tic < U(nt), aligned, v[p],
                             lane);
            }
            /* gate, transform, range */
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                const uint32_t s = sb + p;
                fl[p] = B(false);
                dv[p] = U(0u);
                if (s * TPW >= nt)
                    continue;
                U tic = U(s * TPW) + ti;
                B valid = tic < U(nt);
                U64 tile = u64(tic) + U64(tfirst);
                if (validate)
                    bad_acc = vminu64(bad_acc, T::bad_key(v[p], valid, tile, lane));
                T::gate(v[p], valid, c, lane, fl[p], dv[p]);
                if (W::any(fl[p]))
                    T::forward(v[p], dv[p], fl[p], lane, gl, gbase);
                I kmin, kmax;
                T::range_keys(v[p], kmin, kmax);
                B lead = valid && (gl == U(0u));
                W::st(kmin_s, u64(tic), kmin, lead);
                W::st(kmax_s, u64(tic), kmax, lead);
            }
            W::sync();
            /* zero-point and scale, one lane per tile of the batch */
            const uint32_t t_lo = sb * TPW;
            const uint32_t t_hi = (sb + PF) * TPW < nt ? (sb + PF) * TPW : nt;
            TQ_UNROLL
            for (uint32_t h = 0; h < 2u; h++) {
                if (h * 32u >= PF * TPW)
                    break;
                U j = lane + U(t_lo + 32u * h);
                B m = j < U(t_hi);
                F lo = from_okey<W>(W::ld((const int32_t *)kmin_s, u64(j), m));
                F hi = from_okey<W>(W::ld((const int32_t *)kmax_s, u64(j), m));
                U bits = sel(mask_bit<W>(lowmask, j), U(c.lo), U(c.hi));
                U L = (U(1u) << bits) - U(1u);
                F z = W::apply(FnZero(), c.meta, lo);
                F sc = W::apply(FnScale(), c.meta, hi, z, L);
                range_acc = range_acc ||
                            (m && ((fbits(z) == U(0xFF800000u)) || (fbits(sc) == U(0x7F800000u))));
                W::st(zf, u64(j), z, m);
                W::st(sf, u64(j), sc, m);
                T::stage_meta(zst, U(za) + j * U(c.mb), W::apply(FnMetaBits(), c.meta, z), c.mb, m);
                T::stage_meta(sst, U(sa) + j * U(c.mb), W::apply(FnMetaBits(), c.meta, sc), c.mb,
                              m);
            }
            W::sync();
            /* codes */
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                const uint32_t s = sb + p;
                if (s * TPW >= nt)
                    continue;
                U tic = U(s * TPW) + ti;
                B valid = tic < U(nt);
                U64 tile = u64(tic) + U64(tfirst);
                B low = valid && mask_bit<W>(lowmask, tic);
                U bits = sel(low, U(c.lo), U(c.hi));
                F z = W::ld((const float *)zf, u64(tic), valid);
                F sc = W::ld((const float *)sf, u64(tic), valid);
                U cw[2];
                T::codes(v[p], z, sc, bits, tile, lane, c, cw);
                U to = W::ld(toff, u64(tic), valid);
                T::stage_codes(cw, valid, bits, to, lane, cst, ca);
                B lead = valid && (gl == U(0u));
                W::st8(piv8, tile, dv[p], lead && fl[p]);
                if (info8)
                    W::st8(info8, tile, b2u(low) | (b2u(fl[p]) << U(1u)), lead);
                flags |= (uint64_t)T::step_bits(lead && fl[p]) << (s * TPW);
            }
            W::sync();
        }
        flush_bytes<W>(dcode, cst, ncode);
        flush_bytes<W>(dzero, zst, nt * c.mb);
        flush_bytes<W>(dscale, sst, nt * c.mb);
        if (flag_sec) {
            const uint32_t nfb = (nt + 7u) / 8u;
            B m = lane < U(nfb);
            W::st8(flag_sec, u64(lane) + U64(tfirst / 8u),
                   lo32(U64(flags) >> u64(vminu(lane, U(7u)) * U(8u))) & U(255u), m);
        }
        W::sync();
    }
};

/* =================================================================================
 * Encoder programs
 * ================================================================================= */

/* SPEC 2.5 psum as a binary counter (ref/entropy.c tahq_pairwise_acc; in
 * binary64, ref/gain.c gain_pairwise), on warp-uniform values. */
TQ_HD float tq_pw_add(float a, float b)
{
    return a + b;
}
TQ_HD double tq_pw_add(double a, double b)
{
    return tq_dadd(a, b);
}

template <class T> struct TqPairwise {
    T sum[64];
    uint64_t count; /* values pushed; its bits say which subtrees exist */
    uint32_t depth;
    TQ_PROG void reset()
    {
        count = 0;
        depth = 0;
    }
    TQ_PROG void push(T v)
    {
        uint64_t c = count;
        while (c & 1u) { /* a complete left subtree of the same size exists */
            v = tq_pw_add(sum[--depth], v);
            c >>= 1;
        }
        sum[depth++] = v;
        count++;
    }
    TQ_PROG T finish() const
    {
        T v = sum[depth - 1];
        for (uint32_t i = depth - 1; i > 0; i--)
            v = tq_pw_add(sum[i - 1], v);
        return v;
    }
};

/* Token allocation, pass 1: entropy of every token (SPEC 4.1), input check.
 * One warp per row; the row is kept in shared memory between the two sums
 * when it fits (cached), else read twice. */
template <int K> struct PEntropyToken {
    typedef TqGeo<K> Geo;
    struct Args {
        const float *x;
        uint64_t rows, C, T;
        uint32_t aligned, cached;
        float *ent;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &a)
    {
        return a.cached ? (size_t)a.C * 4u : 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    typedef TqPairwise<float> Pairwise;

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t r, uint8_t *sw, uint8_t *)
    {
        typedef TileOps<K, W> T;
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint32_t V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, WS = Geo::WS, PF = Geo::PFE;
        const U lane = W::lane();
        const U gl = lane & U(LPT - 1u);
        const U gbase = lane - gl;
        const U ti = lane / U(LPT);
        float *cache = reinterpret_cast<float *>(sw);
        const uint64_t base = r * a.C;
        const uint64_t nsteps = (a.C + WS - 1u) / WS;
        U64 bad = U64(~(uint64_t)0);
        Pairwise acc;
        acc.reset();
        for (uint64_t sb = 0; sb < nsteps; sb += PF) {
            F v[PF][V];
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                U64 tir = u64(ti) + U64((sb + p) * TPW);
                B valid = tir < U64(a.T);
                T::load_step(a.x, base + (sb + p) * WS, valid, a.aligned != 0, v[p], lane);
                if (a.cached)
                    T::store_step(cache, (sb + p) * WS, valid, true, v[p], lane);
            }
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                if (sb + p >= nsteps)
                    break;
                U64 tir = u64(ti) + U64((sb + p) * TPW);
                B valid = tir < U64(a.T);
                bad = vminu64(bad, T::bad_key(v[p], valid, tir + U64(r * a.T), lane));
                F t[V];
                TQ_UNROLL
                for (uint32_t s = 0; s < V; s++)
                    t[s] = ffloat(fbits(v[p][s]) & U(0x7FFFFFFFu));
                F x = T::tsum(t);
                TQ_UNROLL
                for (unsigned d = LPT; d < 32u; d <<= 1)
                    x = x + W::shfl_down(x, d);
                acc.push(W::bcast(x, 0u));
            }
        }
        float total = acc.finish();
        float H = 0.0f;
        if (total != 0.0f) {
            const float inv = 1.0f / total;
            acc.reset();
            W::sync();
            for (uint64_t sb = 0; sb < nsteps; sb += PF) {
                F v[PF][V];
                TQ_UNROLL
                for (uint32_t p = 0; p < PF; p++) {
                    U64 tir = u64(ti) + U64((sb + p) * TPW);
                    B valid = tir < U64(a.T);
                    if (a.cached)
                        T::load_step(cache, (sb + p) * WS, valid, true, v[p], lane);
                    else
                        T::load_step(a.x, base + (sb + p) * WS, valid, a.aligned != 0, v[p], lane);
                }
                TQ_UNROLL
                for (uint32_t p = 0; p < PF; p++) {
                    if (sb + p >= nsteps)
                        break;
                    F h[V];
                    TQ_UNROLL
                    for (uint32_t s = 0; s < V; s++)
                        h[s] = W::apply(FnEntropyP(), ffloat(fbits(v[p][s]) & U(0x7FFFFFFFu)), inv,
                                        total);
                    F x = T::tsum(h);
                    TQ_UNROLL
                    for (unsigned d = LPT; d < 32u; d <<= 1)
                        x = x + W::shfl_down(x, d);
                    acc.push(W::bcast(x, 0u));
                }
            }
            H = 0.0f - acc.finish();
        }
        (void)gbase;
        W::st(a.ent, U64(r), F(H), lane == U(0u));
        uint64_t wb = W::bcast(warp_min_u64<W>(bad), 0u);
        if (wb != ~(uint64_t)0)
            W::atomic_min_u64(&a.st->bad, U64(wb), lane == U(0u));
    }
};

/* Gain allocation, pass 1 (SPEC 4.3; ref/gain.c tahq_token_gain_key): the
 * key of every token, and the input check. One warp per row, one read of the
 * row: per warp-step, every tile's gate, transform and quantization at both
 * widths and its binary64 squared-error gain (TileOps::tile_gain); the gains
 * of the step's tiles by a shfl_down tree (aligned power-of-two subtrees),
 * the steps by the binary-counter pairwise sum, which together are the
 * padded pairwise tree of SPEC 2.5 over the row's tiles (as in
 * PEntropyToken). A tile whose zero-point or scale overflows the metadata at
 * either width sets st->range: the encode fails with ERR_RANGE (SPEC 4.3).
 * Launched only when low(S) > 0 (no key is needed otherwise). */
template <int K> struct PGainToken {
    typedef TqGeo<K> Geo;
    struct Args {
        const float *x;
        uint64_t rows, C, T;
        uint32_t aligned, pad;
        TqEncCfg c;
        uint32_t *key;
        double *sigma; /* the sums themselves (tests), or null */
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t r, uint8_t *, uint8_t *)
    {
        typedef TileOps<K, W> T;
        typedef typename W::F F;
        typedef typename W::D D;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint32_t V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, WS = Geo::WS;
        const U lane = W::lane();
        const U gl = lane & U(LPT - 1u);
        const U gbase = lane - gl;
        const U ti = lane / U(LPT);
        const uint64_t base = r * a.C;
        const uint64_t nsteps = (a.C + WS - 1u) / WS;
        U64 bad = U64(~(uint64_t)0);
        B range = B(false);
        TqPairwise<double> acc;
        acc.reset();
        for (uint64_t s = 0; s < nsteps; s++) {
            U64 tir = u64(ti) + U64(s * TPW);
            B valid = tir < U64(a.T);
            U64 tile = tir + U64(r * a.T);
            F v[V];
            T::load_step(a.x, base + s * WS, valid, a.aligned != 0, v, lane);
            bad = vminu64(bad, T::bad_key(v, valid, tile, lane));
            D g = T::tile_gain(v, valid, tile, lane, gl, gbase, a.c, range);
            TQ_UNROLL
            for (unsigned d = LPT; d < 32u; d <<= 1)
                g = vdadd(g, W::shfl_down(g, d));
            acc.push(W::bcast(g, 0u));
        }
        const double sigma = acc.finish();
        W::st(a.key, U64(r), U(tahq_gain_key_of(sigma)), lane == U(0u));
        if (a.sigma)
            W::st(a.sigma, U64(r), D(sigma), lane == U(0u));
        uint64_t wb = W::bcast(warp_min_u64<W>(bad), 0u);
        if (wb != ~(uint64_t)0)
            W::atomic_min_u64(&a.st->bad, U64(wb), lane == U(0u));
        if (W::any(range))
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

/* Token and gain allocation, pass 2: per sequence, the low(S) tokens with
 * the smallest (H, index) (token) or (gain key, index) (gain) get the low
 * bit-width (radix select), map8 per row, chunk_lt. */
struct PSelectToken {
    struct Args {
        const float *ent;      /* token: the entropies, or null */
        const uint32_t *key32; /* gain: the keys, or null */
        uint64_t S, k, T;
        uint32_t TPC, pad;
        uint8_t *map8;
        uint64_t *chunk_lt;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 1024u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t g, uint8_t *sw, uint8_t *)
    {
        typedef typename W::U64 U64;
        typedef typename W::B B;
        typedef typename W::U U;
        const float *E = a.ent ? a.ent + g * a.S : (const float *)0;
        const uint32_t *KG = a.key32 ? a.key32 + g * a.S : (const uint32_t *)0;
        uint32_t *hist = reinterpret_cast<uint32_t *>(sw);
        auto key = [&](U64 i, B m) -> U64 {
            U hi = KG ? W::ld(KG, i, m) : fbits(W::ld(E, i, m));
            return (u64(hi) << U64((uint64_t)32)) | i;
        };
        uint64_t thr = radix_select<W>(a.S, a.k, key, hist);
        /* no unit is low when k = 0 (and no key was computed in gain mode) */
        auto bit = [&](U64 i, B m) -> B { return a.k != 0u ? key(i, m) < U64(thr) : B(false); };
        group_scan<W>(g, a.S, a.k, a.T, a.TPC, bit, a.map8, a.chunk_lt);
    }
};

/* Pack one byte per unit (bit 0 = low, bit 1 = flagged) into the map and,
 * optionally, the flag bitmaps. One lane per output byte. */
struct PPackBits {
    struct Args {
        const uint8_t *src8;
        uint64_t units;
        uint8_t *map_sec;
        uint8_t *flag_sec;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint64_t nbytes = (a.units + 7u) / 8u;
        U64 j = u64(W::lane()) + U64(w * 32u);
        B m = j < U64(nbytes);
        U mb = U(0u), fb = U(0u);
        for (uint32_t i = 0; i < 8u; i++) {
            U64 u = j * U64((uint64_t)8) + U64((uint64_t)i);
            U v = W::ld8(a.src8, u, m && (u < U64(a.units)));
            mb = mb | ((v & U(1u)) << U(i));
            fb = fb | (((v >> U(1u)) & U(1u)) << U(i));
        }
        if (a.map_sec)
            W::st8(a.map_sec, j, mb, m);
        if (a.flag_sec)
            W::st8(a.flag_sec, j, fb, m);
    }
};

/* None / token / gain allocation: the tile coder over chunks. token: one map
 * bit per row (token and gain); validate: check the input values here (when
 * no earlier pass did). */
template <int K> struct PQuantFlat {
    typedef TqGeo<K> Geo;
    struct Args {
        const float *x;
        uint64_t N, T;
        uint32_t aligned, token, validate, pad;
        TqEncCfg c;
        const uint8_t *map8;
        const uint64_t *chunk_lt;
        uint8_t *zero_sec, *scale_sec, *code_sec, *flag_sec, *piv8;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return TqStageLayout<K>::END;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t ck, uint8_t *sw, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint32_t G = Geo::G, TPC = Geo::TPC;
        const uint64_t t0 = ck * TPC;
        const uint32_t nt = (uint32_t)(a.N - t0 < TPC ? a.N - t0 : TPC);
        uint64_t code_start;
        if (a.token)
            code_start =
                (G / 8u) * ((uint64_t)a.c.hi * t0 - (uint64_t)(a.c.hi - a.c.lo) * a.chunk_lt[ck]);
        else
            code_start = (uint64_t)(G / 8u) * a.c.hi * t0;
        uint64_t lowmask = 0;
        if (a.token) {
            /* row of tile t0 + j without a 64-bit division per lane */
            const uint64_t row0 = t0 / a.T, rem0 = t0 - row0 * a.T;
            auto bit_of = [&](U j, B m) -> B {
                U64 rel = U64(rem0) + u64(j);
                U64 drow =
                    a.T >= 64u ? u64(b2u(rel >= U64(a.T))) : u64(lo32(rel) / U((uint32_t)a.T));
                return W::ld8(a.map8, U64(row0) + drow, m) != U(0u);
            };
            lowmask = chunk_mask<W>(nt, bit_of);
        }
        U64 bad = U64(~(uint64_t)0);
        B range = B(false);
        ChunkEncoder<K>::template run<W>(
            a.x, a.aligned != 0, t0 * G, t0, nt, code_start, a.c, lowmask, a.validate != 0u,
            a.zero_sec, a.scale_sec, a.code_sec, a.flag_sec, (uint8_t *)0, a.piv8, sw, bad, range);
        const U lane = W::lane();
        uint64_t wb = W::bcast(warp_min_u64<W>(bad), 0u);
        if (wb != ~(uint64_t)0)
            W::atomic_min_u64(&a.st->bad, U64(wb), lane == U(0u));
        if (W::any(range))
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

/* Tile allocation: one warp per row does everything in one read of the row
 * (kept in shared memory when it fits): tile entropies, the radix select of
 * the row's low(T) tiles, then the tile coder. */
template <int K> struct PRowTile {
    typedef TqGeo<K> Geo;
    typedef TqStageLayout<K> SL;
    struct Args {
        const float *x;
        uint64_t rows, C, T, klow, rowbytes;
        uint32_t aligned, cached;
        TqEncCfg c;
        float *ent_g; /* row entropies when not cached (N floats) */
        uint8_t *zero_sec, *scale_sec, *code_sec, *info8, *piv8;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static constexpr uint32_t HIST = SL::END;
    static constexpr uint32_t EOFF = HIST + 1024u;
    static TQ_HD size_t e_bytes(const Args &a)
    {
        return ((size_t)a.T * 4u + 15u) & ~(size_t)15u;
    }
    static size_t smem_warp(const Args &a)
    {
        return EOFF + (a.cached ? e_bytes(a) + (size_t)a.C * 4u : 0u);
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t r, uint8_t *sw, uint8_t *)
    {
        typedef TileOps<K, W> T;
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint32_t G = Geo::G, V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, WS = Geo::WS,
                       TPC = Geo::TPC;
        const U lane = W::lane();
        const U gl = lane & U(LPT - 1u);
        const U gbase = lane - gl;
        const U ti = lane / U(LPT);
        uint32_t *hist = reinterpret_cast<uint32_t *>(sw + HIST);
        float *E = a.cached ? reinterpret_cast<float *>(sw + EOFF) : a.ent_g + r * a.T;
        float *cache = a.cached ? reinterpret_cast<float *>(sw + EOFF + e_bytes(a)) : (float *)0;
        const uint64_t base = r * a.C;
        const uint64_t nsteps = (a.C + WS - 1u) / WS;
        U64 bad = U64(~(uint64_t)0);

        /* phase 1: entropies (and the input check) */
        const uint32_t PF = Geo::PFE;
        for (uint64_t sb = 0; sb < nsteps; sb += PF) {
            F v[PF][V];
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                U64 tir = u64(ti) + U64((sb + p) * TPW);
                B valid = tir < U64(a.T);
                T::load_step(a.x, base + (sb + p) * WS, valid, a.aligned != 0, v[p], lane);
                if (a.cached)
                    T::store_step(cache, (sb + p) * WS, valid, true, v[p], lane);
            }
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                if (sb + p >= nsteps)
                    break;
                U64 tir = u64(ti) + U64((sb + p) * TPW);
                B valid = tir < U64(a.T);
                bad = vminu64(bad, T::bad_key(v[p], valid, tir + U64(r * a.T), lane));
                F H = T::tile_entropy(v[p], gbase);
                W::st(E, tir, H, valid && (gl == U(0u)));
            }
        }
        W::sync();

        /* phase 2: the low(T) tiles of the row */
        auto key = [&](U64 i, B m) -> U64 {
            return (u64(fbits(W::ld((const float *)E, i, m))) << U64((uint64_t)32)) | i;
        };
        const uint64_t thr = radix_select<W>(a.T, a.klow, key, hist);

        /* phase 3: code the row chunk by chunk */
        uint64_t lt_run = 0;
        U64 bad2 = U64(~(uint64_t)0);
        B range = B(false);
        for (uint64_t tr = 0; tr < a.T; tr += TPC) {
            const uint32_t nt = (uint32_t)(a.T - tr < TPC ? a.T - tr : TPC);
            auto bit_of = [&](U j, B m) -> B { return key(u64(j) + U64(tr), m) < U64(thr); };
            const uint64_t lowmask = chunk_mask<W>(nt, bit_of);
            const uint32_t nlow = tq_popc64(lowmask);
            uint64_t code_start =
                r * a.rowbytes +
                (uint64_t)(G / 8u) * ((uint64_t)a.c.hi * tr - (uint64_t)(a.c.hi - a.c.lo) * lt_run);
            if (a.cached)
                ChunkEncoder<K>::template run<W>(cache, true, tr * G, r * a.T + tr, nt, code_start,
                                                 a.c, lowmask, false, a.zero_sec, a.scale_sec,
                                                 a.code_sec, (uint8_t *)0, a.info8, a.piv8, sw,
                                                 bad2, range);
            else
                ChunkEncoder<K>::template run<W>(a.x, a.aligned != 0, base + tr * G, r * a.T + tr,
                                                 nt, code_start, a.c, lowmask, false, a.zero_sec,
                                                 a.scale_sec, a.code_sec, (uint8_t *)0, a.info8,
                                                 a.piv8, sw, bad2, range);
            lt_run += nlow;
        }
        uint64_t wb = W::bcast(warp_min_u64<W>(bad), 0u);
        if (wb != ~(uint64_t)0)
            W::atomic_min_u64(&a.st->bad, U64(wb), lane == U(0u));
        if (W::any(range))
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

/* ---- flag scan (encoder and decoder) -------------------------------------------- *
 * A: per 1024 chunks, the flag count -> parts[w]
 * B: one warp, exclusive scan of parts, total -> st->n_flagged
 * C: per chunk, flags before it -> flagoff[c] (decoder) or pivot compaction
 *    compact[flags before tile] = piv8[tile] (encoder) */

struct TqFlagChunks {
    const uint8_t *flag_sec;
    uint64_t N, nchunks;
    uint32_t TPC, pad;
};

template <class W>
TQ_PROG typename W::U64 chunk_flag_word(const TqFlagChunks &f, typename W::U64 c, typename W::B m)
{
    typedef typename W::U U;
    typedef typename W::U64 U64;
    typedef typename W::B B;
    U64 t0 = c * U64((uint64_t)f.TPC);
    U64 left = sel(m, U64(f.N) - t0, U64((uint64_t)0));
    U64 nt = sel(left < U64((uint64_t)f.TPC), left, U64((uint64_t)f.TPC));
    U64 w = U64((uint64_t)0);
    for (uint32_t j = 0; j < f.TPC / 8u; j++) {
        B mj = m && (U64((uint64_t)j * 8u) < nt);
        U byte = W::ld8(f.flag_sec, (t0 >> U64((uint64_t)3)) + U64((uint64_t)j), mj);
        w = w | (u64(byte) << U64((uint64_t)(8u * j)));
    }
    return w;
}

struct PFlagScanA {
    struct Args {
        TqFlagChunks f;
        uint64_t *parts;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::U64 U64;
        typedef typename W::B B;
        U64 sum = U64((uint64_t)0);
        for (uint32_t i = 0; i < 32u; i++) {
            U64 c = u64(W::lane()) + U64(w * 1024u + i * 32u);
            B m = c < U64(a.f.nchunks);
            sum = sum + u64(popc64(chunk_flag_word<W>(a.f, c, m)));
        }
        sum = warp_sum_u64<W>(sum);
        W::st(a.parts, U64(w), sum, W::lane() == typename W::U(0u));
    }
};

struct PFlagScanB {
    struct Args {
        uint64_t *parts;
        uint64_t nparts;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t, uint8_t *, uint8_t *)
    {
        typedef typename W::U64 U64;
        typedef typename W::B B;
        uint64_t carry = 0;
        for (uint64_t i0 = 0; i0 < a.nparts; i0 += 32u) {
            U64 i = u64(W::lane()) + U64(i0);
            B m = i < U64(a.nparts);
            U64 v = W::ld((const uint64_t *)a.parts, i, m);
            U64 incl = warp_incl_u64<W>(v);
            W::st(a.parts, i, incl - v + U64(carry), m);
            carry += W::bcast(incl, 31u);
        }
        W::st(&a.st->n_flagged, U64((uint64_t)0), (unsigned long long)carry,
              W::lane() == typename W::U(0u));
    }
};

struct PFlagScanC {
    struct Args {
        TqFlagChunks f;
        const uint64_t *parts;
        uint64_t *flagoff;   /* decoder, or null */
        const uint8_t *piv8; /* encoder, or null */
        uint8_t *compact;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        uint64_t carry = a.parts[w];
        for (uint32_t i = 0; i < 32u; i++) {
            U64 c = u64(W::lane()) + U64(w * 1024u + i * 32u);
            B m = c < U64(a.f.nchunks);
            U64 fw = chunk_flag_word<W>(a.f, c, m);
            U64 cnt = u64(popc64(fw));
            U64 incl = warp_incl_u64<W>(cnt);
            U64 off = incl - cnt + U64(carry);
            if (a.flagoff)
                W::st(a.flagoff, c, off, m);
            if (a.compact && W::any(fw != U64((uint64_t)0))) {
                U64 rank = off;
                U64 t0 = c * U64((uint64_t)a.f.TPC);
                for (uint32_t j = 0; j < a.f.TPC; j++) {
                    B set =
                        m && (((fw >> U64((uint64_t)j)) & U64((uint64_t)1)) != U64((uint64_t)0));
                    U p = W::ld8(a.piv8, t0 + U64((uint64_t)j), set);
                    W::st8(a.compact, rank, p, set);
                    rank = rank + u64(b2u(set));
                }
            }
            carry += W::bcast(incl, 31u);
        }
    }
};

/* Pivot section (SPEC 8.2 item 6): one lane per output byte; also the
 * payload size (the last field) into st->payload. */
struct PPivotPack {
    struct Args {
        const uint8_t *compact;
        uint8_t *pivot_sec;
        uint64_t pivot_off; /* payload offset of the pivot section */
        uint32_t k, pad;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint64_t nf = a.st->n_flagged;
        const uint64_t nb = (nf * a.k + 7u) / 8u;
        const U lane = W::lane();
        if (w == 0)
            W::st(&a.st->payload, U64((uint64_t)0), (unsigned long long)(a.pivot_off + nb),
                  lane == U(0u));
        U64 j = u64(lane) + U64(w * 32u);
        B m = j < U64(nb);
        U64 jb = j * U64((uint64_t)8);
        U64 f0 = jb / U64((uint64_t)a.k);
        U byte = U(0u);
        TQ_UNROLL
        for (uint32_t q = 0; q < 4u; q++) {
            U64 f = f0 + U64((uint64_t)q);
            U64 fk = f * U64((uint64_t)a.k);
            B mm = m && (f < U64(nf)) && (fk < jb + U64((uint64_t)8));
            U val = W::ld8(a.compact, f, mm);
            B left = fk >= jb;
            U shl = vminu(lo32(fk - jb), U(31u));
            U shr = vminu(lo32(jb - fk), U(31u));
            U part = sel(left, val << shl, val >> shr);
            byte = byte | sel(mm, part & U(255u), U(0u));
        }
        W::st8(a.pivot_sec, j, byte, m);
    }
};

/* ---- CRC-32C of the payload (SPEC 2.6) ------------------------------------------- *
 * The payload [s, e) is read as the 16-byte aligned stream [s16, e16) with
 * the bytes outside [s, e) taken as zero; leading zeros do not change the
 * raw CRC from register 0, trailing zeros multiply it by x^(8m), m = e16 - e,
 * which the last level undoes (x^-8m). The stream is cut into SEG-byte
 * segments aligned to its END (the first segment gets the missing bytes as
 * leading zeros), 32 segments per warp; each level combines 32 values of the
 * level below: combine(left, right) = left * x^(8|right|) ^ right, and every
 * right part is a whole power-of-two number of segments. */
#define TQ_CRC_SEG 256u

struct TqCrcGeom {
    const uint8_t *s;               /* first payload byte */
    const unsigned long long *plen; /* payload bytes (device) */
};

TQ_HD void tq_crc_counts(const uint8_t *s, uint64_t P, uint64_t *vlen, uint64_t *nseg,
                         uint32_t *trail)
{
    uintptr_t a = (uintptr_t)s, e = a + (uintptr_t)P;
    uintptr_t s16 = a & ~(uintptr_t)15, e16 = (e + 15u) & ~(uintptr_t)15;
    *vlen = (uint64_t)(e16 - s16);
    *nseg = (*vlen + TQ_CRC_SEG - 1u) / TQ_CRC_SEG;
    *trail = (uint32_t)(e16 - e);
}
TQ_HD uint64_t tq_crc_level_count(uint64_t nseg, uint32_t level) /* values after level */
{
    uint64_t n = nseg;
    for (uint32_t l = 0; l < level; l++)
        n = (n + 31u) / 32u;
    return n;
}

struct PCrcSeg {
    struct Args {
        TqCrcGeom g;
        uint32_t *out;
        uint32_t xp[5]; /* x^(8 SEG 2^j) */
        uint32_t pad;
    };
    static const uint32_t kBlockSmem = 256u * 32u * 4u; /* one table column per bank */
    static const uint32_t kStride = TQ_CRC_SEG + 4u;
    static size_t smem_warp(const Args &)
    {
        return 32u * kStride;
    }
    static TQ_PROG void block_init(uint8_t *sb, uint32_t tid, uint32_t nthr)
    {
        uint32_t *tab = reinterpret_cast<uint32_t *>(sb);
        for (uint32_t i = tid; i < 256u * 32u; i += nthr)
            tab[i] = tahq_gf2_crc_table_entry(i >> 5);
    }
    template <class W>
    static TQ_PROGNI void run(const Args &a, uint64_t g, uint8_t *sw, uint8_t *sb)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint64_t P = *a.g.plen;
        uint64_t vlen, nseg;
        uint32_t trail;
        tq_crc_counts(a.g.s, P, &vlen, &nseg, &trail);
        const uint64_t ng = (nseg + 31u) / 32u;
        if (g >= ng)
            return;
        const uint8_t *s16 = (const uint8_t *)((uintptr_t)a.g.s & ~(uintptr_t)15);
        const uint64_t lo_ok = (uint64_t)(a.g.s - s16); /* offsets from s16 */
        const uint64_t hi_ok = lo_ok + P;
        /* group start relative to s16 (may be negative for the first group) */
        const int64_t gstart = (int64_t)vlen - (int64_t)((ng - g) * 32u * TQ_CRC_SEG);
        const U lane = W::lane();
        uint32_t *stage = reinterpret_cast<uint32_t *>(sw);
        const uint32_t per_seg = TQ_CRC_SEG / 16u;
        TQ_UNROLL
        for (uint32_t it = 0; it < per_seg; it++) {
            U q = U(it * 32u) + lane; /* 16-byte block of the group */
            U seg = q / U(per_seg), within = q % U(per_seg);
            int64_t rel0 = gstart + (int64_t)it * 512;
            /* block offset from s16 = rel0 + 16*lane; full if inside [lo_ok, hi_ok) */
            U64 rel = U64((uint64_t)rel0) + u64(lane * U(16u)); /* two's complement */
            B nonneg = (rel0 >= 0) ? B(true) : (u64(lane * U(16u)) >= U64((uint64_t)(-rel0)));
            B full = nonneg && (rel >= U64(lo_ok)) && (rel + U64((uint64_t)16) <= U64(hi_ok));
            U x0, x1, x2, x3;
            W::ld16(s16, rel, full, x0, x1, x2, x3);
            B part =
                nonneg && !full && (rel + U64((uint64_t)16) > U64(lo_ok)) && (rel < U64(hi_ok));
            if (W::any(part)) {
                U wv[4] = {U(0u), U(0u), U(0u), U(0u)};
                TQ_UNROLL
                for (uint32_t j = 0; j < 16u; j++) {
                    U64 p = rel + U64((uint64_t)j);
                    B m = part && (p >= U64(lo_ok)) && (p < U64(hi_ok));
                    U byte = W::ld8(s16, p, m);
                    wv[j / 4u] = wv[j / 4u] | (byte << U(8u * (j % 4u)));
                }
                x0 = sel(part, wv[0], x0);
                x1 = sel(part, wv[1], x1);
                x2 = sel(part, wv[2], x2);
                x3 = sel(part, wv[3], x3);
            }
            U64 so = u64(seg * U(kStride / 4u) + within * U(4u));
            W::st(stage, so, x0, B(true));
            W::st(stage, so + U64((uint64_t)1), x1, B(true));
            W::st(stage, so + U64((uint64_t)2), x2, B(true));
            W::st(stage, so + U64((uint64_t)3), x3, B(true));
        }
        W::sync();
        const uint32_t *tab = reinterpret_cast<const uint32_t *>(sb);
        U crc = U(0u);
        for (uint32_t wi = 0; wi < TQ_CRC_SEG / 4u; wi++) {
            U word = W::ld((const uint32_t *)stage, u64(lane * U(kStride / 4u) + U(wi)), B(true));
            TQ_UNROLL
            for (uint32_t j = 0; j < 4u; j++) {
                U idx = ((crc ^ (word >> U(8u * j))) & U(255u)) * U(32u) + lane;
                crc = W::ld(tab, u64(idx), B(true)) ^ (crc >> U(8u));
            }
        }
        for (uint32_t j = 0; j < 5u; j++) {
            unsigned d = 1u << j;
            U r = W::shfl_down(crc, d);
            B comb = (lane & U(2u * d - 1u)) == U(0u);
            crc = sel(comb, W::apply(FnMulmod(), crc, a.xp[j]) ^ r, crc);
        }
        W::st(a.out, U64(g), crc, lane == U(0u));
        W::sync();
    }
};

struct PCrcLevel {
    struct Args {
        TqCrcGeom g;
        const uint32_t *in;
        uint32_t *out; /* or null: final level, result to st->crc_raw */
        tq_status_block *st;
        uint32_t level; /* values of `in` each cover SEG * 32^level bytes */
        uint32_t xp[5];
        uint32_t xinv[16]; /* x^(-8m), m = 0..15 */
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t g, uint8_t *, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint64_t P = *a.g.plen;
        uint64_t vlen, nseg;
        uint32_t trail;
        tq_crc_counts(a.g.s, P, &vlen, &nseg, &trail);
        const uint64_t nin = tq_crc_level_count(nseg, a.level);
        const uint64_t nout = (nin + 31u) / 32u;
        if (g >= nout)
            return;
        const U lane = W::lane();
        int64_t i0 = (int64_t)nin - (int64_t)((nout - g) * 32u);
        B m = (i0 >= 0) ? B(true) : (u64(lane) >= U64((uint64_t)(-i0)));
        U64 idx = U64((uint64_t)i0) + u64(lane);
        U c = W::ld(a.in, idx, m);
        for (uint32_t j = 0; j < 5u; j++) {
            unsigned d = 1u << j;
            U r = W::shfl_down(c, d);
            B comb = (lane & U(2u * d - 1u)) == U(0u);
            c = sel(comb, W::apply(FnMulmod(), c, a.xp[j]) ^ r, c);
        }
        if (a.out) {
            W::st(a.out, U64(g), c, lane == U(0u));
        } else {
            U fin = W::apply(FnMulmod(), c, a.xinv[trail]);
            W::st(&a.st->crc_raw, U64((uint64_t)0), (unsigned int)W::bcast(fin, 0u), lane == U(0u));
        }
    }
};

/* =================================================================================
 * Decoder programs
 * ================================================================================= */

struct TqDecLayout { /* payload offsets (SPEC 8.2) */
    uint64_t map_bits, map_bytes, flag_off, zero_off, scale_off, code_off, pivot_off;
    uint64_t N, T, rows, n_flagged;
};

/* SPEC 8.4 step 5 and the code-offset prefixes: warps [0, ngroups) check the
 * per-group map counts and write chunk_lt; the next nmeta warps check 1024
 * zero-points and scales each; the last warp checks the padding bits. */
struct PDecValidate {
    struct Args {
        const uint8_t *pl;
        TqDecLayout L;
        uint64_t ngroups, group_n, klow, tpu, nmeta;
        uint32_t alloc, meta, mb, k, TPC, pad;
        uint64_t *chunk_lt;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const U lane = W::lane();
        bool bad = false;
        if (w < a.ngroups) {
            const uint8_t *map = a.pl;
            auto bit = [&](U64 i, B m) -> B {
                U64 u = i + U64(w * a.group_n);
                U byte = W::ld8(map, u >> U64((uint64_t)3), m);
                return ((byte >> lo32(u & U64((uint64_t)7))) & U(1u)) != U(0u);
            };
            uint64_t cnt =
                group_scan<W>(w, a.group_n, a.klow, a.tpu, a.TPC, bit, (uint8_t *)0, a.chunk_lt);
            bad = cnt != a.klow;
        } else if (w < a.ngroups + a.nmeta) {
            const uint64_t mw = w - a.ngroups;
            const uint32_t sign = a.meta == (uint32_t)TAHQ_META_FP32 ? 0x80000000u : 0x8000u;
            B b = B(false);
            for (uint32_t i = 0; i < 32u; i++) {
                U64 t = u64(lane) + U64(mw * 1024u + i * 32u);
                B m = t < U64(a.L.N);
                U zb = U(0u), sb = U(0u);
                for (uint32_t j = 0; j < a.mb; j++) {
                    zb = zb |
                         (W::ld8(a.pl + a.L.zero_off, t * U64((uint64_t)a.mb) + U64((uint64_t)j), m)
                          << U(8u * j));
                    sb =
                        sb |
                        (W::ld8(a.pl + a.L.scale_off, t * U64((uint64_t)a.mb) + U64((uint64_t)j), m)
                         << U(8u * j));
                }
                F z = W::apply(FnMetaValue(), a.meta, zb);
                F s = W::apply(FnMetaValue(), a.meta, sb);
                B badz = !((z - z) == F(0.0f)) || (zb == U(sign));
                B bads = !((s - s) == F(0.0f)) || ((sb & U(sign)) != U(0u));
                b = b || (m && (badz || bads));
            }
            bad = W::any(b);
            /* the flag bytes of these 1024 tiles: popcount (padding included;
             * non-zero padding is an error of its own) */
            const uint64_t nfb = (a.L.N + 7u) / 8u;
            U cnt = U(0u);
            TQ_UNROLL
            for (uint32_t j = 0; j < 4u; j++) {
                U64 byte = u64(lane * U(4u) + U(j)) + U64(mw * 128u);
                cnt = cnt + popc(W::ld8(a.pl + a.L.flag_off, byte, byte < U64(nfb)));
            }
            uint32_t tot = W::bcast(warp_sum_u32<W>(cnt), 0u);
            if (tot)
                W::atomic_add_u64(&a.st->flag_count, U64((uint64_t)tot), lane == U(0u));
        } else {
            /* padding of the map, the flags and the pivots (SPEC 8.2) */
            const uint8_t *pl = a.pl;
            if (a.alloc != 0u && (a.L.map_bits & 7u) &&
                (pl[a.L.map_bytes - 1u] >> (a.L.map_bits & 7u)) != 0)
                bad = true;
            if ((a.L.N & 7u) && (pl[a.L.flag_off + (a.L.N + 7u) / 8u - 1u] >> (a.L.N & 7u)) != 0)
                bad = true;
            uint64_t nfk = a.L.n_flagged * a.k;
            if ((nfk & 7u) && (pl[a.L.pivot_off + nfk / 8u] >> (nfk & 7u)) != 0)
                bad = true;
        }
        if (bad)
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

/* CRC and payload verdict (SPEC 8.4 steps 4 and 5), into st->status. */
struct PDecFinalize {
    struct Args {
        tq_status_block *st;
        uint32_t state_h, xP, crc_expect, pad;
        uint64_t n_flagged;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t, uint8_t *, uint8_t *)
    {
        typedef typename W::U U;
        typedef typename W::U64 U64;
        uint32_t crc = ~(tahq_gf2_mulmod(a.state_h, a.xP) ^ a.st->crc_raw);
        uint32_t status = (uint32_t)TAHQ_OK;
        if (crc != a.crc_expect)
            status = (uint32_t)TAHQ_ERR_CRC;
        else if (a.st->range != 0u || a.st->flag_count != a.n_flagged)
            status = (uint32_t)TAHQ_ERR_PAYLOAD;
        W::st(&a.st->status, U64((uint64_t)0), (unsigned int)status, W::lane() == U(0u));
    }
};

/* Decode one chunk (SPEC 6.1): runs only when st->status is OK. */
template <int K> struct PDecode {
    typedef TqGeo<K> Geo;
    typedef TqStageLayout<K> SL;
    struct Args {
        const uint8_t *pl, *msg_lo, *msg_hi;
        TqDecLayout L;
        uint32_t alloc, hi, lo, meta, mb, k, aligned, pad;
        const uint64_t *chunk_lt, *flagoff;
        float *out;
        const tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return SL::END;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}

    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t ck, uint8_t *sw, uint8_t *)
    {
        typedef TileOps<K, W> T;
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        if (a.st->status != 0u)
            return;
        const uint32_t G = Geo::G, V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, WS = Geo::WS,
                       NS = Geo::NS, PF = Geo::PF, TPC = Geo::TPC;
        uint32_t *toff = reinterpret_cast<uint32_t *>(sw + SL::TOFF);
        uint8_t *cst = sw + SL::CODES;
        uint8_t *zst = sw + SL::ZEROS;
        uint8_t *sst = sw + SL::SCALES;
        float *zf = reinterpret_cast<float *>(sw + SL::ZF);
        float *sf = reinterpret_cast<float *>(sw + SL::SF);
        const U lane = W::lane();
        const U gl = lane & U(LPT - 1u);
        const U gbase = lane - gl;
        const U ti = lane / U(LPT);
        const uint64_t t0 = ck * TPC;
        const uint32_t nt = (uint32_t)(a.L.N - t0 < TPC ? a.L.N - t0 : TPC);
        const uint8_t *map = a.pl;
        uint64_t lowmask = 0;
        if (a.alloc == (uint32_t)TAHQ_ALLOC_TOKEN || a.alloc == (uint32_t)TAHQ_ALLOC_GAIN) {
            const uint64_t row0 = t0 / a.L.T, rem0 = t0 - row0 * a.L.T;
            auto bit_of = [&](U j, B m) -> B {
                U64 rel = U64(rem0) + u64(j);
                U64 drow = a.L.T >= 64u ? u64(b2u(rel >= U64(a.L.T)))
                                        : u64(lo32(rel) / U((uint32_t)a.L.T));
                U64 unit = U64(row0) + drow;
                U byte = W::ld8(map, unit >> U64((uint64_t)3), m);
                return ((byte >> lo32(unit & U64((uint64_t)7))) & U(1u)) != U(0u);
            };
            lowmask = chunk_mask<W>(nt, bit_of);
        } else if (a.alloc == (uint32_t)TAHQ_ALLOC_TILE) {
            auto bit_of = [&](U j, B m) -> B {
                U64 unit = u64(j) + U64(t0);
                U byte = W::ld8(map, unit >> U64((uint64_t)3), m);
                return ((byte >> lo32(unit & U64((uint64_t)7))) & U(1u)) != U(0u);
            };
            lowmask = chunk_mask<W>(nt, bit_of);
        }
        U ja = lane, jb = lane + U(32u);
        U ba = sel(ja < U(nt), sel(mask_bit<W>(lowmask, ja), U(a.lo), U(a.hi)) * U(G / 8u), U(0u));
        U bb = sel(jb < U(nt), sel(mask_bit<W>(lowmask, jb), U(a.lo), U(a.hi)) * U(G / 8u), U(0u));
        uint32_t ncode = chunk_offsets<W>(ba, bb, TPC, toff);
        const uint64_t lt = a.alloc == 0u ? 0u : a.chunk_lt[ck];
        const uint64_t code_start =
            (uint64_t)(G / 8u) * ((uint64_t)a.hi * t0 - (uint64_t)(a.hi - a.lo) * lt);
        const uint8_t *scode = a.pl + a.L.code_off + code_start;
        const uint8_t *szero = a.pl + a.L.zero_off + t0 * a.mb;
        const uint8_t *sscale = a.pl + a.L.scale_off + t0 * a.mb;
        const uint32_t ca = (uint32_t)((uintptr_t)scode & 15u);
        const uint32_t za = (uint32_t)((uintptr_t)szero & 15u);
        const uint32_t sa = (uint32_t)((uintptr_t)sscale & 15u);
        fill_bytes<W>(cst, scode, ncode, a.msg_lo, a.msg_hi);
        fill_bytes<W>(zst, szero, nt * a.mb, a.msg_lo, a.msg_hi);
        fill_bytes<W>(sst, sscale, nt * a.mb, a.msg_lo, a.msg_hi);
        uint64_t flags = 0;
        for (uint32_t j = 0; j < (nt + 7u) / 8u; j++)
            flags |= (uint64_t)a.pl[a.L.flag_off + t0 / 8u + j] << (8u * j);
        const uint64_t fo = flags ? a.flagoff[ck] : 0u;
        const uint8_t *piv = a.pl + a.L.pivot_off;
        W::sync();
        /* metadata values, one lane per tile */
        TQ_UNROLL
        for (uint32_t h = 0; h < 2u; h++) {
            if (h * 32u >= TPC)
                break;
            U j = lane + U(32u * h);
            B m = j < U(nt);
            W::st(
                zf, u64(j),
                W::apply(FnMetaValue(), a.meta, T::unstage_meta(zst, U(za) + j * U(a.mb), a.mb, m)),
                m);
            W::st(
                sf, u64(j),
                W::apply(FnMetaValue(), a.meta, T::unstage_meta(sst, U(sa) + j * U(a.mb), a.mb, m)),
                m);
        }
        W::sync();
        for (uint32_t sb = 0; sb < NS; sb += PF) {
            if (sb * TPW >= nt)
                break;
            TQ_UNROLL
            for (uint32_t p = 0; p < PF; p++) {
                const uint32_t s = sb + p;
                if (s * TPW >= nt)
                    continue;
                U tic = U(s * TPW) + ti;
                B valid = tic < U(nt);
                U bits = sel(mask_bit<W>(lowmask, tic), U(a.lo), U(a.hi));
                U to = W::ld(toff, u64(tic), valid);
                F z = W::ld((const float *)zf, u64(tic), valid);
                F sc = W::ld((const float *)sf, u64(tic), valid);
                U q[V];
                T::unstage_codes(cst, ca, valid, bits, to, lane, q);
                F v[V];
                TQ_UNROLL
                for (uint32_t j = 0; j < V; j++)
                    v[j] = z + u2f(q[j]) * sc;
                B flagged = valid && mask_bit<W>(flags, tic);
                if (W::any(flagged)) {
                    U64 below = U64(flags) & ((U64((uint64_t)1) << u64(tic)) - U64((uint64_t)1));
                    U64 pos = (U64(fo) + u64(popc64(below))) * U64((uint64_t)a.k);
                    U sh = lo32(pos & U64((uint64_t)7));
                    U64 byte = pos >> U64((uint64_t)3);
                    U w16 = W::ld8(piv, byte, flagged) |
                            (W::ld8(piv, byte + U64((uint64_t)1), flagged && (sh + U(a.k) > U(8u)))
                             << U(8u));
                    U d = (w16 >> sh) & U(G - 1u);
                    T::inverse(v, d, flagged, lane, gl, gbase);
                }
                T::store_step(a.out, t0 * G + (uint64_t)s * WS, valid, a.aligned != 0, v, lane);
            }
        }
    }
};

/* =================================================================================
 * Fixpoint (SPEC 7.2)
 * ================================================================================= */

#define TQ_FIX_ROWS 128u /* rows per warp in the column max */

struct PFixColMax {
    struct Args {
        const float *g;
        uint64_t rows, C, ncb;
        unsigned int *colmax;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const uint64_t cb = w % a.ncb, rs = w / a.ncb;
        const U lane = W::lane();
        U64 c = u64(lane) + U64(cb * 32u);
        B m = c < U64(a.C);
        U mx = U(0u);
        U64 bad = U64(~(uint64_t)0);
        uint64_t r0 = rs * TQ_FIX_ROWS, r1 = r0 + TQ_FIX_ROWS < a.rows ? r0 + TQ_FIX_ROWS : a.rows;
        for (uint64_t r = r0; r < r1; r++) {
            U64 i = c + U64(r * a.C);
            F v = W::ld(a.g, i, m);
            U ab = fbits(v) & U(0x7FFFFFFFu);
            mx = vmaxu(mx, ab);
            B b = m && (ab >= U(0x5F800000u));
            bad = vminu64(bad, sel(b, (i << U64((uint64_t)1)) | u64(b2u(ab < U(0x7F800000u))),
                                   U64(~(uint64_t)0)));
        }
        W::atomic_max_u32(a.colmax, c, mx, m);
        uint64_t wb = W::bcast(warp_min_u64<W>(bad), 0u);
        if (wb != ~(uint64_t)0)
            W::atomic_min_u64(&a.st->bad, U64(wb), lane == U(0u));
    }
};

struct PFixSteps {
    struct Args {
        const unsigned int *colmax;
        float *steps_ws;
        uint64_t C;
        uint32_t levels, meta;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const U lane = W::lane();
        U64 c = u64(lane) + U64(w * 32u);
        B m = c < U64(a.C);
        F mf = ffloat(W::ld((const uint32_t *)a.colmax, c, m));
        F h = W::apply(FnFixStep(), a.meta, mf, a.levels);
        W::st(a.steps_ws, c, h, m);
        B r = m && (fbits(h) == U(0x7F800000u));
        if (W::any(r))
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

struct PFixCodes {
    struct Args {
        const float *g;
        const float *steps_ws;
        float *steps;
        uint8_t *codes;
        uint64_t n, C, nsw;
        uint32_t levels, offset;
        const tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::I I;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        if (a.st->bad != ~0ull || a.st->range != 0u)
            return;
        const U lane = W::lane();
        if (w < a.nsw) {
            U64 c = u64(lane) + U64(w * 32u);
            B m = c < U64(a.C);
            W::st(a.steps, c, W::ld(a.steps_ws, c, m), m);
            return;
        }
        /* warp w - nsw: row r, columns [128 cb, 128 cb + 128) */
        const uint64_t ncb = (a.C + 127u) / 128u, wr = w - a.nsw;
        const uint64_t r = wr / ncb, cb = wr % ncb;
        TQ_UNROLL
        for (uint32_t j = 0; j < 4u; j++) {
            U64 c = u64(lane) + U64(cb * 128u + j * 32u);
            B m = c < U64(a.C);
            U64 i = c + U64(r * a.C);
            F x = W::ld(a.g, i, m);
            F h = W::ld(a.steps_ws, c, m);
            F t = x / h;
            F ab = ffloat(fbits(t) & U(0x7FFFFFFFu));
            I mag = f2i((ab + F(0x1p23f)) - F(0x1p23f));
            I q = sel((fbits(t) & U(0x80000000u)) != U(0u), I(0) - mag, mag);
            I L = I((int32_t)a.levels);
            q = vmini(vmaxi(q, I(0) - L), L);
            q = sel(h > F(0.0f), q, I(0));
            W::st8(a.codes, i, as_u32(q + I((int32_t)a.offset)), m);
        }
    }
};

struct PFixDecValidate {
    struct Args {
        const uint8_t *codes;
        const float *steps;
        uint64_t n, C, nsw;
        uint32_t bits, pad;
        tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::U U;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        const U lane = W::lane();
        B bad = B(false);
        if (w < a.nsw) {
            U64 c = u64(lane) + U64(w * 32u);
            B m = c < U64(a.C);
            F h = W::ld(a.steps, c, m);
            /* SPEC 7.2: sign bit set (-0 included), NaN or infinite */
            bad = m && (((fbits(h) & U(0x80000000u)) != U(0u)) || !((h - h) == F(0.0f)));
        } else {
            const uint64_t e0 = (w - a.nsw) * 128u;
            TQ_UNROLL
            for (uint32_t j = 0; j < 4u; j++) {
                U64 i = u64(lane) + U64(e0 + j * 32u);
                B m = i < U64(a.n);
                U code = W::ld8(a.codes, i, m);
                bad = bad || (m && ((code >= (U(1u) << U(a.bits))) || (code == U(0u))));
            }
        }
        if (W::any(bad))
            W::atomic_or_u32(&a.st->range, U(1u), lane == U(0u));
    }
};

struct PFixDecode {
    struct Args {
        const uint8_t *codes;
        const float *steps;
        float *out;
        uint64_t n, C;
        uint32_t offset, pad;
        const tq_status_block *st;
    };
    static const uint32_t kBlockSmem = 0;
    static size_t smem_warp(const Args &)
    {
        return 16u;
    }
    static TQ_PROG void block_init(uint8_t *, uint32_t, uint32_t) {}
    template <class W> static TQ_PROGNI void run(const Args &a, uint64_t w, uint8_t *, uint8_t *)
    {
        typedef typename W::F F;
        typedef typename W::I I;
        typedef typename W::U64 U64;
        typedef typename W::B B;
        if (a.st->range != 0u)
            return;
        const uint64_t ncb = (a.C + 127u) / 128u;
        const uint64_t r = w / ncb, cb = w % ncb;
        TQ_UNROLL
        for (uint32_t j = 0; j < 4u; j++) {
            U64 c = u64(W::lane()) + U64(cb * 128u + j * 32u);
            B m = c < U64(a.C);
            U64 i = c + U64(r * a.C);
            I q = as_i32(W::ld8(a.codes, i, m)) - I((int32_t)a.offset);
            F h = W::ld(a.steps, c, m);
            W::st(a.out, i, i2f(q) * h, m);
        }
    }
};

#endif /* TQ_PROGRAMS_CUH */
