/* SPDX-License-Identifier: MIT */
/*
 * test_device_math - CPU-side checks of the CUDA codec's code, no GPU needed.
 *
 *  1. The scalar __host__ __device__ primitives as C++ compiles them (the
 *     scalar core ref/tahq_core.h: binary16/bfloat16, metadata rounding,
 *     log2; Philox, CRC-32C and its GF(2) combine algebra,
 *     zero-point/scale/codes) against libtahq, compiled as C, bit for bit,
 *     on dense samples and edge values.
 *  2. The warp-level tile operations of tq_programs.cuh (the lane-layout
 *     tree sum, tile entropy, gate, pivot swap + FWHT both ways, quantizer)
 *     run on the emulated warp HostW, against libtahq, for every tile size.
 *  3. The gain program (SPEC 4.3) alone: the key of every token and the
 *     metadata-overflow flag against libtahq's tahq_token_gain_key.
 *  4. The whole GPU pipeline (tq_pipeline.cuh: every warp program in launch
 *     order) run by the host executor, against tahq_encode / tahq_decode /
 *     tahq_fixpoint_*: message bytes, decoded floats, and the status of
 *     invalid inputs and corrupted messages, for every allocation mode
 *     (gain with its own set of cases).
 *
 * Usage: test_device_math [--quick]. Exit status 0 when every check passes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#include "tq_host_exec.h"
#include "tq_testdata.h"

/* libtahq's key of one token in gain allocation, tahq_token_gain_key
 * (ref/gain.c), the reference for the gain program, is declared in
 * ref/tahq_ref_api.h (through tq_pipeline.cuh). */

static uint64_t g_checks, g_fails;
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        g_checks++;                                                                \
        if (!(cond)) {                                                             \
            g_fails++;                                                             \
            if (g_fails <= 30) {                                                   \
                fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                      \
                fprintf(stderr, "\n");                                             \
            }                                                                      \
        }                                                                          \
    } while (0)

static uint32_t bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, 4);
    return w;
}
static float float_of(uint32_t w)
{
    float x;
    memcpy(&x, &w, 4);
    return x;
}

static bool g_quick = false;

/* ======================================================================== 1 */

/* A scalar model of one tile built on the scalar core's metadata grid
 * (SPEC 2.2, 5.3) as C++ compiles it: the values test_scalar compares with
 * libtahq. */
/* ---- SPEC 5.3 zero-point and scale of one tile ------------------------------- *
 * From the tile's min lo and max hi: z = down(lo) (+0 if zero), s = +0 if
 * w = fl(hi - z) = 0, else the search above. *range is set on overflow. */
static void tq_zero_scale(uint32_t meta, float lo, float hi, uint32_t levels, float *zero,
                          float *scale, uint32_t *range)
{
    float z =
        tahq_core_meta_value((tahq_meta)meta, tahq_core_meta_round_down_bits((tahq_meta)meta, lo));
    uint32_t bad = tq_bits(z) == 0xFF800000u ? 1u : 0u;
    if (z == 0.0f)
        z = 0.0f; /* canonical +0 */
    float w = hi - z;
    float s = 0.0f;
    if (w != 0.0f) {
        s = tahq_core_meta_value((tahq_meta)meta,
                                 tahq_core_meta_scale_bits((tahq_meta)meta, w, levels));
        if (tq_bits(s) == 0x7F800000u)
            bad = 1u;
    }
    *zero = z;
    *scale = s;
    *range = bad;
}

/* ---- SPEC 5.3 codes for one value --------------------------------------------- */

/* nearest-even code of v against (z, s), s > 0 (ref/quant.c codes_nearest) */
static uint32_t tq_code_nearest(float v, float z, float s, uint32_t levels)
{
    return tahq_nearest_code((v - z) / s, levels);
}

/* stochastic code with the random word of the element (ref/quant.c codes_stochastic) */
static uint32_t tq_code_stochastic(float v, float z, float s, uint32_t levels, uint32_t word)
{
    return tahq_stochastic_code((v - z) / s, word, levels);
}

static void test_scalar(void)
{
    /* binary16 / bfloat16, every 16-bit pattern back to float */
    for (uint32_t h = 0; h < 65536u; h++) {
        CHECK(bits_of(tahq_core_f16_to_f32((uint16_t)h)) == bits_of(tahq_f16_to_f32((uint16_t)h)),
              "f16 %04x", h);
        CHECK(bits_of(tahq_core_bf16_to_f32((uint16_t)h)) == bits_of(tahq_bf16_to_f32((uint16_t)h)),
              "bf16 %04x", h);
    }
    /* float -> 16 bits and metadata rounding on a dense sample of patterns */
    const uint32_t stride = g_quick ? 4093u : 509u;
    uint64_t n = 0;
    for (uint64_t w = 0; w < 0x100000000ull; w += stride) {
        float x = float_of((uint32_t)w);
        CHECK(tahq_core_f32_to_f16(x) == tahq_f32_to_f16(x), "f32->f16 %08x", (uint32_t)w);
        CHECK(tahq_core_f32_to_bf16(x) == tahq_f32_to_bf16(x), "f32->bf16 %08x", (uint32_t)w);
        for (uint32_t m = 0; m < 3u; m++) {
            CHECK(bits_of(tahq_core_meta_round_down((tahq_meta)m, x)) ==
                      bits_of(tahq_meta_round_down((tahq_meta)m, x)),
                  "down %u %08x", m, (uint32_t)w);
            CHECK(bits_of(tahq_core_meta_round_up((tahq_meta)m, x)) ==
                      bits_of(tahq_meta_round_up((tahq_meta)m, x)),
                  "up %u %08x", m, (uint32_t)w);
        }
        n++;
    }
    /* boundaries of the binary16 ranges, every pattern near them */
    const uint32_t edges[] = {0x477FF000u, 0x477FE000u, 0x38800000u, 0x33000000u, 0x33800000u,
                              0x387FC000u, 0x7F800000u, 0x00000000u, 0x7F7FFFFFu, 0x00800000u};
    for (uint32_t e : edges)
        for (uint32_t d = 0; d < 4096u; d++)
            for (uint32_t sgn = 0; sgn < 2u; sgn++) {
                uint32_t w = ((e + d - 2048u) & 0x7FFFFFFFu) | (sgn << 31);
                float x = float_of(w);
                CHECK(tahq_core_f32_to_f16(x) == tahq_f32_to_f16(x), "edge f16 %08x", w);
                for (uint32_t m = 0; m < 3u; m++) {
                    CHECK(bits_of(tahq_core_meta_round_down((tahq_meta)m, x)) ==
                              bits_of(tahq_meta_round_down((tahq_meta)m, x)),
                          "edge down %u %08x", m, w);
                    CHECK(bits_of(tahq_core_meta_round_up((tahq_meta)m, x)) ==
                              bits_of(tahq_meta_round_up((tahq_meta)m, x)),
                          "edge up %u %08x", m, w);
                }
            }
    /* log2 over every positive finite pattern of a dense sample, (0, 1] fully
     * in the quick mode's stride */
    const uint32_t lstride = g_quick ? 997u : 31u;
    for (uint32_t w = 1; w <= 0x3F800000u; w += lstride)
        CHECK(bits_of(tahq_core_log2(float_of(w))) == bits_of(tahq_log2(float_of(w))), "log2 %08x",
              w);
    for (uint32_t w = 0x3F800000u; w < 0x7F800000u; w += 104729u)
        CHECK(bits_of(tahq_core_log2(float_of(w))) == bits_of(tahq_log2(float_of(w))), "log2 %08x",
              w);
    CHECK(bits_of(tahq_core_log2(1.0f)) == 0u, "log2(1) = +0");
    /* SPEC 4.1 step 4 as FnEntropyP computes it: h = p log2 p is -0 for
     * p = 0 (log2(+0) is -150), as ref/entropy.c computes it; the entropy
     * programs below check that H is the reference's all the same. */
    CHECK(bits_of(FnEntropyP()(0.0f, 1.0f, 1.0f)) == 0x80000000u, "0 log 0 = -0");
    CHECK(bits_of(FnEntropyP()(1.0f, 1.0f, 1.0f)) == 0u, "1 log 1 = +0");

    /* CRC-32C: table, raw register, GF(2) algebra */
    {
        TqRng r(2);
        std::vector<uint8_t> buf(4096);
        for (auto &b : buf)
            b = (uint8_t)r.u32();
        for (size_t len : {0, 1, 7, 68, 100, 1000, 4096}) {
            uint32_t ref = tahq_crc32c(0, buf.data(), len);
            CHECK(~tahq_gf2_crc_raw_bytes(0xFFFFFFFFu, buf.data(), len) == ref, "crc len %zu", len);
        }
        CHECK(tahq_gf2_mulmod(tahq_gf2_xinv(), 0x40000000u) == 0x80000000u, "x * x^-1 = 1");
        for (uint64_t m = 0; m < 40; m++)
            CHECK(tahq_gf2_mulmod(tahq_gf2_xpow(m * 77u + 3u), tahq_gf2_xpow_inv(m * 77u + 3u)) ==
                      0x80000000u,
                  "x^n x^-n %" PRIu64, m);
        for (int i = 0; i < 300; i++) {
            size_t a = r.below(2048), b = r.below(2048);
            /* raw(s, A || B) = raw(s, A) * x^(8|B|) ^ raw(0, B) */
            uint32_t s = r.u32();
            uint32_t whole = tahq_gf2_crc_raw_bytes(s, buf.data(), a + b);
            uint32_t comb =
                tahq_gf2_mulmod(tahq_gf2_crc_raw_bytes(s, buf.data(), a), tahq_gf2_xpow(8u * b)) ^
                tahq_gf2_crc_raw_bytes(0, buf.data() + a, b);
            CHECK(whole == comb, "combine %zu %zu", a, b);
            /* leading zeros change nothing; trailing zeros are undone by x^-8m */
            std::vector<uint8_t> z(a + b + 16, 0);
            memcpy(z.data() + a, buf.data(), b);
            CHECK(tahq_gf2_crc_raw_bytes(0, z.data(), a + b) ==
                      tahq_gf2_crc_raw_bytes(0, buf.data(), b),
                  "lead zeros");
            uint32_t m = r.below(16);
            std::vector<uint8_t> t(b + m, 0);
            memcpy(t.data(), buf.data(), b);
            CHECK(tahq_gf2_mulmod(tahq_gf2_crc_raw_bytes(0, t.data(), b + m),
                                  tahq_gf2_xpow_inv(8u * m)) ==
                      tahq_gf2_crc_raw_bytes(0, buf.data(), b),
                  "trail zeros %u", m);
        }
        for (uint32_t v = 0; v < 256u; v++) {
            uint8_t byte = (uint8_t)v;
            CHECK(tahq_gf2_crc_table_entry(v) == tahq_gf2_crc_raw_bytes(0, &byte, 1), "table %u",
                  v);
        }
    }

    /* zero-point, scale and codes of single tiles (scalar path) */
    {
        TqRng r(3);
        const int ntiles = g_quick ? 3000 : 30000;
        for (int it = 0; it < ntiles; it++) {
            uint32_t G = 8u << r.below(6);
            uint32_t bits = 1u + r.below(8);
            uint32_t meta = r.below(3);
            uint32_t rounding = r.below(2);
            uint64_t seed = r.next(), elem0 = (uint64_t)r.below(1u << 20) * G;
            float v[256];
            tq_fill(v, 1, G, G, (int)r.below(TQ_DATA_KINDS), r.next());
            float zr, sr;
            uint8_t cr[256];
            tahq_status st = tahq_quantize_tile(v, G, bits, (tahq_meta)meta,
                                                (tahq_rounding)rounding, seed, elem0, &zr, &sr, cr);
            float lo = v[0], hi = v[0];
            for (uint32_t i = 1; i < G; i++) {
                lo = tahq_order_key(v[i]) < tahq_order_key(lo) ? v[i] : lo;
                hi = tahq_order_key(v[i]) > tahq_order_key(hi) ? v[i] : hi;
            }
            float z, s;
            uint32_t range;
            tq_zero_scale(meta, lo, hi, (1u << bits) - 1u, &z, &s, &range);
            CHECK((st == TAHQ_ERR_RANGE) == (range != 0u), "range %d", it);
            if (st != TAHQ_OK)
                continue;
            CHECK(bits_of(z) == bits_of(zr) && bits_of(s) == bits_of(sr),
                  "z/s tile %d G%u b%u meta%u lo %a hi %a z %a/%a s %a/%a", it, G, bits, meta, lo,
                  hi, z, zr, s, sr);
            for (uint32_t i = 0; i < G; i++) {
                uint32_t q = 0;
                if (s != 0.0f)
                    q = rounding ? tq_code_stochastic(v[i], z, s, (1u << bits) - 1u,
                                                      tahq_random_word(seed, elem0 + i))
                                 : tq_code_nearest(v[i], z, s, (1u << bits) - 1u);
                CHECK(q == cr[i], "code tile %d i %u", it, i);
            }
        }
    }
    printf("scalar primitives: %" PRIu64 " dense samples, %" PRIu64 " checks so far\n", n,
           g_checks);
}

/* ======================================================================== 2 */

template <int K> static void test_tile_ops(void)
{
    typedef TqGeo<K> Geo;
    typedef TileOps<K, HostW> T;
    typedef HostW::F F;
    typedef HostW::U U;
    typedef HostW::B B;
    const uint32_t G = Geo::G, V = Geo::V, LPT = Geo::LPT, TPW = Geo::TPW, WS = Geo::WS;
    TqRng r(100 + K);
    const int steps = g_quick ? 200 : 1500;
    for (int it = 0; it < steps; it++) {
        std::vector<float> buf(WS);
        tq_fill(buf.data(), 1, WS, G, (int)r.below(TQ_DATA_KINDS), r.next());
        if (r.below(3) == 0) /* a tie for the largest magnitude */
            buf[r.below(WS)] = -buf[r.below(WS)];
        U lane = HostW::lane();
        U gl = lane & U(LPT - 1u), gbase = lane - gl;
        F v[V];
        for (uint32_t s = 0; s < V; s++) {
            U off = T::step_off(lane, s);
            for (int l = 0; l < 32; l++)
                v[s].v[l] = buf[off.v[l]];
        }
        /* tsum and entropy per tile */
        {
            F t[V];
            for (uint32_t s = 0; s < V; s++)
                t[s] = v[s];
            F sum = T::tsum(t);
            F ent = T::tile_entropy(v, gbase);
            for (uint32_t ti = 0; ti < TPW; ti++) {
                float ref = tahq_tree_sum(&buf[ti * G], G);
                CHECK(bits_of(sum.v[ti * LPT]) == bits_of(ref), "K%d tsum", K);
                float eref = tahq_entropy(&buf[ti * G], 1, G);
                CHECK(bits_of(ent.v[ti * LPT]) == bits_of(eref), "K%d entropy %g %g", K,
                      ent.v[ti * LPT], eref);
            }
        }
        /* gate */
        TqEncCfg c;
        memset(&c, 0, sizeof c);
        static const uint32_t taus[] = {0x40000000u, 0x7F800000u, 0u, 0x3FC00000u, 0x3F800000u};
        c.tau = float_of(taus[r.below(5)]);
        c.tau_inf = bits_of(c.tau) == 0x7F800000u;
        c.meta = r.below(3);
        c.mb = tahq_meta_bytes((tahq_meta)c.meta);
        c.rounding = r.below(2);
        c.seed = r.next();
        B flagged;
        U d;
        T::gate(v, B(true), c, lane, flagged, d);
        for (uint32_t ti = 0; ti < TPW; ti++) {
            uint32_t piv;
            int fl = tahq_gate(&buf[ti * G], G, c.tau, &piv);
            for (uint32_t l = ti * LPT; l < (ti + 1) * LPT; l++) {
                CHECK((int)flagged.v[l] == fl, "K%d gate flag", K);
                CHECK(d.v[l] == piv, "K%d pivot %u %u", K, d.v[l], piv);
            }
        }
        /* forward transform of every tile (flag all), then inverse */
        F w[V];
        for (uint32_t s = 0; s < V; s++)
            w[s] = v[s];
        T::forward(w, d, B(true), lane, gl, gbase);
        std::vector<float> ref(buf);
        for (uint32_t ti = 0; ti < TPW; ti++)
            tahq_hadamard_forward(&ref[ti * G], G, d.v[ti * LPT]);
        for (uint32_t s = 0; s < V; s++) {
            U off = T::step_off(lane, s);
            for (int l = 0; l < 32; l++)
                CHECK(bits_of(w[s].v[l]) == bits_of(ref[off.v[l]]), "K%d forward", K);
        }
        F u[V];
        for (uint32_t s = 0; s < V; s++)
            u[s] = w[s];
        T::inverse(u, d, B(true), lane, gl, gbase);
        std::vector<float> inv(ref);
        for (uint32_t ti = 0; ti < TPW; ti++)
            tahq_hadamard_inverse(&inv[ti * G], G, d.v[ti * LPT]);
        for (uint32_t s = 0; s < V; s++) {
            U off = T::step_off(lane, s);
            for (int l = 0; l < 32; l++)
                CHECK(bits_of(u[s].v[l]) == bits_of(inv[off.v[l]]), "K%d inverse", K);
        }
        /* quantize the transformed values with per-tile bit-widths */
        U bits = U(1u) + (lane / U(LPT)) % U(8u);
        c.hi = 8;
        F z, sc;
        U cw[2];
        B range;
        uint64_t tile0 = r.below(1u << 16);
        T::quantize(w, B(true), bits, u64(lane / U(LPT)) + HostW::U64((uint64_t)tile0), lane, c, z,
                    sc, cw, range);
        for (uint32_t ti = 0; ti < TPW; ti++) {
            uint32_t b = bits.v[ti * LPT];
            float zr, sr;
            uint8_t codes[256];
            tahq_status st =
                tahq_quantize_tile(&ref[ti * G], G, b, (tahq_meta)c.meta, (tahq_rounding)c.rounding,
                                   c.seed, (tile0 + ti) * G, &zr, &sr, codes);
            CHECK((st == TAHQ_ERR_RANGE) == range.v[ti * LPT], "K%d range", K);
            if (st != TAHQ_OK)
                continue;
            CHECK(bits_of(z.v[ti * LPT]) == bits_of(zr), "K%d zero", K);
            CHECK(bits_of(sc.v[ti * LPT]) == bits_of(sr), "K%d scale", K);
            for (uint32_t s = 0; s < V; s++) {
                U e = T::elem(lane, s);
                for (uint32_t l = ti * LPT; l < (ti + 1) * LPT; l++) {
                    uint32_t q = (cw[s / 4u].v[l] >> (b * (s % 4u))) & ((1u << b) - 1u);
                    CHECK(q == codes[e.v[l]], "K%d code", K);
                }
            }
        }
    }
}

/* ======================================================================== 3 */

struct AlignedBuf {
    std::vector<uint8_t> raw;
    uint8_t *p;
    size_t n;
    explicit AlignedBuf(size_t bytes, size_t align = 256, size_t offset = 0)
        : raw(bytes + align + offset + 16), n(bytes)
    {
        p = reinterpret_cast<uint8_t *>(((uintptr_t)raw.data() + align - 1) &
                                        ~(uintptr_t)(align - 1)) +
            offset;
    }
};

static void put_crc(uint8_t *msg, size_t len)
{
    uint32_t c = tahq_crc32c(0, msg, 68);
    c = tahq_crc32c(c, msg + TAHQ_HEADER_BYTES, len - TAHQ_HEADER_BYTES);
    tahq_put_u32(msg + 68, c);
}

static uint64_t g_cases, g_msgs_bytes, g_tiles;

/* Encode x with the reference and the emulated GPU pipeline; compare. Then
 * decode the reference message both ways; compare. Returns the reference
 * message (empty on an encode error). */
static std::vector<uint8_t> cross_check(const tahq_config &cfg, const tahq_shape &shape,
                                        const float *x, bool poison_twice, size_t out_offset,
                                        const char *what)
{
    g_cases++;
    size_t bound = 0, wsref = 0;
    tahq_status sb = tahq_encode_bound(&cfg, &shape, &bound);
    CHECK(sb == TAHQ_OK, "%s: bound %d", what, sb);
    if (sb != TAHQ_OK)
        return {};
    tahq_encode_workspace_size(&cfg, &shape, &wsref);
    std::vector<uint64_t> wr(wsref / 8 + 1);
    std::vector<uint8_t> ref(bound);
    size_t len_ref = 0;
    tahq_status st_ref =
        tahq_encode(&cfg, &shape, x, wr.data(), wsref, ref.data(), bound, &len_ref);

    TqEncPlan plan;
    CHECK(tq_enc_plan(&cfg, &shape, &plan) == TAHQ_OK, "%s: plan", what);
    CHECK(plan.bound == bound, "%s: bound %zu vs %" PRIu64, what, bound, plan.bound);
    AlignedBuf ws(plan.total, 256, out_offset * 5); /* workspaces of any alignment */
    uint8_t firsts[2] = {0xCD, 0x5A};
    std::vector<uint8_t> got[2];
    for (int pass = 0; pass < (poison_twice ? 2 : 1); pass++) {
        AlignedBuf out(bound, 256, out_offset);
        memset(out.p, firsts[pass], bound);
        memset(ws.p, 0xEE - pass, plan.total);
        TqHostExec ex;
        size_t len = 12345;
        tahq_status st = tq_encode_impl(ex, &cfg, &shape, x, ws.p, plan.total, out.p, bound, &len);
        CHECK(st == st_ref, "%s: encode status %d vs ref %d", what, st, st_ref);
        if (st != TAHQ_OK || st_ref != TAHQ_OK) {
            CHECK(len == 0, "%s: out_len on error", what);
            bool zero = true;
            for (int i = 0; i < 72; i++)
                zero = zero && out.p[i] == 0;
            CHECK(zero, "%s: header not zeroed on error", what);
            return {};
        }
        CHECK(len == len_ref, "%s: len %zu vs %zu", what, len, len_ref);
        got[pass].assign(out.p, out.p + len);
        if (len == len_ref && memcmp(out.p, ref.data(), len) != 0) {
            size_t i = 0;
            while (out.p[i] == ref[i])
                i++;
            CHECK(false, "%s: message differs at byte %zu of %zu (gpu %02x ref %02x)", what, i, len,
                  out.p[i], ref[i]);
        } else {
            g_checks++;
        }
    }
    if (poison_twice)
        CHECK(got[0] == got[1], "%s: some byte not written", what);
    g_msgs_bytes += len_ref;
    g_tiles += (uint64_t)shape.batch * shape.seq_len * (shape.channels / cfg.tile);

    /* decode the reference message */
    const size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;
    std::vector<float> dref(count);
    CHECK(tahq_decode(ref.data(), len_ref, dref.data(), count) == TAHQ_OK, "%s: ref decode", what);
    TqDecPlan dp;
    tq_dec_plan(len_ref, count, &dp);
    AlignedBuf dws(dp.total);
    AlignedBuf msg(len_ref, 256, out_offset);
    memcpy(msg.p, ref.data(), len_ref);
    for (int pass = 0; pass < (poison_twice ? 2 : 1); pass++) {
        AlignedBuf outf(count * 4, 256, pass ? 4 : 0); /* also an unaligned output */
        memset(outf.p, pass ? 0x7F : 0xFF, count * 4);
        TqHostExec ex;
        tahq_status st = tq_decode_impl(ex, msg.p, len_ref, reinterpret_cast<float *>(outf.p),
                                        count, dws.p, dp.total);
        CHECK(st == TAHQ_OK, "%s: decode status %d", what, st);
        if (memcmp(outf.p, dref.data(), count * 4) != 0) {
            size_t i = 0;
            const float *o = reinterpret_cast<const float *>(outf.p);
            while (bits_of(o[i]) == bits_of(dref[i]))
                i++;
            CHECK(false, "%s: decoded float %zu differs (%08x vs %08x)", what, i, bits_of(o[i]),
                  bits_of(dref[i]));
        } else {
            g_checks++;
        }
    }
    return ref;
}

/* decode status of a (possibly corrupted) message, emulated vs reference */
static void decode_status_check(const std::vector<uint8_t> &m, size_t len, size_t count,
                                const char *what)
{
    std::vector<float> a(count + 1), b(count + 1);
    for (size_t i = 0; i <= count; i++)
        a[i] = b[i] = float_of(0x7FC00001u);
    tahq_status sr = tahq_decode(m.data(), len, a.data(), count);
    TqDecPlan dp;
    tq_dec_plan(len, count, &dp);
    AlignedBuf dws(dp.total);
    AlignedBuf msg(len + 1, 256, 3);
    memcpy(msg.p, m.data(), len);
    TqHostExec ex;
    tahq_status sg = tq_decode_impl(ex, msg.p, len, b.data(), count, dws.p, dp.total);
    CHECK(sg == sr, "%s: decode status %d vs ref %d", what, sg, sr);
    if (sr != TAHQ_OK) {
        bool untouched = true;
        for (size_t i = 0; i <= count; i++)
            untouched = untouched && bits_of(b[i]) == 0x7FC00001u;
        CHECK(untouched, "%s: output written for an invalid message", what);
    } else {
        CHECK(memcmp(a.data(), b.data(), count * 4) == 0, "%s: decoded values", what);
    }
}

/* SPEC 1 rule 6: a valid message whose flagged tile meets inf - inf (its
 * scale patched to 2^127, CRC fixed) decodes to the same bytes as libtahq,
 * every NaN 0x7FC00000; for every G and both wide metadata types. */
static void test_nan_decode(void)
{
    const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
    const tahq_meta metas[] = {TAHQ_META_FP32, TAHQ_META_BF16};
    for (uint32_t G : Gs)
        for (tahq_meta meta : metas) {
            tahq_config cfg;
            tahq_config_plain(&cfg, G, 4);
            cfg.tau = 0.0f; /* every non-zero tile flagged */
            cfg.meta = meta;
            tahq_shape shape = {1, 2, 2 * G};
            const size_t count = (size_t)4 * G;
            std::vector<float> x(count);
            for (size_t i = 0; i < count; i++)
                x[i] = (float)((i * 7) % 13) - 5.0f;
            size_t bound = 0, wsz = 0, len = 0;
            tahq_encode_bound(&cfg, &shape, &bound);
            tahq_encode_workspace_size(&cfg, &shape, &wsz);
            std::vector<uint64_t> ws(wsz / 8 + 1);
            std::vector<uint8_t> m(bound);
            CHECK(tahq_encode(&cfg, &shape, x.data(), ws.data(), wsz, m.data(), bound, &len) ==
                      TAHQ_OK,
                  "nan G%u: encode", G);
            tahq_header h;
            if (tahq_parse_header(m.data(), len, &h) != TAHQ_OK)
                continue;
            tahq_layout L = tahq_layout_compute(&h.config, &h.shape, h.n_low, h.n_flagged);
            for (uint32_t t = 0; t < 4; t += 3) { /* the first and the last tile */
                std::vector<uint8_t> bad(m);
                uint8_t *sp = bad.data() + 72 + L.scale_off + L.meta_bytes * t;
                if (L.meta_bytes == 4)
                    sp[0] = 0, sp[1] = 0, sp[2] = 0x00, sp[3] = 0x7F; /* 2^127 */
                else
                    sp[0] = 0x00, sp[1] = 0x7F;
                put_crc(bad.data(), len);
                char what[64];
                snprintf(what, sizeof what, "nan G%u meta%d tile %u", G, (int)meta, t);
                decode_status_check(bad, len, count, what); /* the bytes of libtahq's decode */
                std::vector<float> y(count);
                CHECK(tahq_decode(bad.data(), len, y.data(), count) == TAHQ_OK, "%s: ref decode",
                      what);
                size_t nans = 0;
                for (size_t i = 0; i < count; i++)
                    if (y[i] != y[i]) {
                        nans++;
                        CHECK(bits_of(y[i]) == 0x7FC00000u, "%s: NaN %08x", what, bits_of(y[i]));
                    }
                CHECK(nans > 0, "%s: no NaN: the case tests nothing", what);
            }
        }
}

/* Every tile size of the SPEC. */
static const uint32_t k_tiles[] = {8, 16, 32, 64, 128, 256};

/* Six random bit flips of a valid message, the last three with the CRC
 * fixed when the flip is in the payload (the payload checks must catch it,
 * or it decodes): statuses must match the reference. */
static void random_flips(const std::vector<uint8_t> &m, size_t count, TqRng &r, const char *what)
{
    const size_t len = m.size();
    for (int c = 0; c < 6; c++) {
        std::vector<uint8_t> bad(m);
        size_t pos = r.below((uint32_t)len);
        bad[pos] ^= (uint8_t)(1u << r.below(8));
        if (c >= 3 && pos >= 72)
            put_crc(bad.data(), len);
        char w2[240];
        snprintf(w2, sizeof w2, "%s corrupt %d at %zu", what, c, pos);
        decode_status_check(bad, len, count, w2);
    }
}

/* One to three elements set to NaN, an infinity, |x| >= 2^64 or FLT_MAX. */
static void poke_invalid(std::vector<float> &x, TqRng &r)
{
    static const uint32_t badv[] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x5F800000u,
                                    0xDF800000u, 0x7F7FFFFFu, 0xFFC00001u};
    const size_t n = x.size();
    for (int k = 0; k < 1 + (int)r.below(3); k++)
        x[r.below((uint32_t)n)] = float_of(badv[r.below(7)]);
}

/* A zero-point made NaN / -0, a scale made negative and set padding bits
 * of the flags and the map, each with the CRC fixed. */
static void bad_payload_fields(const std::vector<uint8_t> &m, size_t count, TqRng &r)
{
    const size_t len = m.size();
    tahq_layout L;
    tahq_header h;
    if (tahq_parse_header(m.data(), len, &h) != TAHQ_OK)
        return;
    L = tahq_layout_compute(&h.config, &h.shape, h.n_low, h.n_flagged);
    std::vector<uint8_t> bad(m);
    uint8_t *zp = bad.data() + 72 + L.zero_off + L.meta_bytes * r.below((uint32_t)L.n_tiles);
    if (L.meta_bytes == 2) {
        zp[0] = 0x00, zp[1] = 0x80; /* -0 */
    } else {
        zp[0] = 0, zp[1] = 0, zp[2] = 0xC0, zp[3] = 0x7F; /* NaN */
    }
    put_crc(bad.data(), len);
    decode_status_check(bad, len, count, "bad zero");
    std::vector<uint8_t> bad2(m);
    uint8_t *sp = bad2.data() + 72 + L.scale_off + L.meta_bytes * r.below((uint32_t)L.n_tiles);
    sp[L.meta_bytes - 1] |= 0x80;
    put_crc(bad2.data(), len);
    decode_status_check(bad2, len, count, "negative scale");
    if (L.n_tiles % 8) { /* a padding bit of the flags */
        std::vector<uint8_t> bad3(m);
        bad3[72 + L.map_bytes + L.flag_bytes - 1] |= 0x80;
        put_crc(bad3.data(), len);
        decode_status_check(bad3, len, count, "flag padding");
    }
    if (L.map_bits % 8) {
        std::vector<uint8_t> bad4(m);
        bad4[72 + L.map_bytes - 1] |= 0x80;
        put_crc(bad4.data(), len);
        decode_status_check(bad4, len, count, "map padding");
    }
}

/* Corrupted forms of a valid message of tile size G: statuses must match
 * the reference. */
static void corrupt_messages(const std::vector<uint8_t> &m, size_t count, uint32_t G, TqRng &r,
                             const char *what)
{
    size_t len = m.size();
    random_flips(m, count, r, what);
    decode_status_check(m, len - 1, count, "truncated");
    decode_status_check(m, 71, count, "short");
    decode_status_check(m, 3, count, "tiny");
    decode_status_check(m, len, count + 1, "count+1");
    decode_status_check(m, len, count - 1, "count-1");
    {
        std::vector<uint8_t> m2(m);
        m2.push_back(0);
        decode_status_check(m2, len + 1, count, "long");
    }
    {
        std::vector<uint8_t> bad(m);
        bad[70] ^= 1; /* CRC wrong and count wrong: CRC first */
        decode_status_check(bad, len, count + G, "crc+count");
    }
    bad_payload_fields(m, count, r);
}

/* Random configurations, shapes and data against the reference, and every
 * third message corrupted. */
static void pipeline_random(TqRng &r)
{
    const int per_g = g_quick ? 60 : 400;
    for (uint32_t G : k_tiles) {
        for (int i = 0; i < per_g; i++) {
            tahq_config cfg = tq_config_of((uint64_t)i, G);
            tahq_shape shape;
            shape.batch = 1u + r.below(3);
            shape.seq_len = 1u + r.below(i % 5 == 0 ? 40 : 9);
            uint32_t T = 1u + r.below(i % 7 == 0 ? 70 : 9);
            shape.channels = T * G;
            std::vector<float> x((size_t)shape.batch * shape.seq_len * shape.channels + 8);
            int kind = (int)r.below(TQ_DATA_KINDS);
            size_t xoff = (i % 11 == 0) ? 1 : 0; /* an input that is not 16-byte aligned */
            tq_fill(x.data() + xoff, (uint64_t)shape.batch * shape.seq_len, shape.channels, G, kind,
                    r.next());
            char what[160];
            snprintf(what, sizeof what,
                     "G%u cfg%d %ux%ux%u %s hi%u lo%u r%u alloc%d tau%08x rnd%d meta%d", G, i,
                     shape.batch, shape.seq_len, shape.channels, tq_data_name(kind), cfg.hi_bits,
                     cfg.lo_bits, cfg.hi_permille, cfg.alloc, bits_of(cfg.tau), cfg.rounding,
                     cfg.meta);
            std::vector<uint8_t> m =
                cross_check(cfg, shape, x.data() + xoff, i % 4 == 0, (size_t)(i % 3), what);
            if (m.empty() || i % 3 != 0)
                continue;
            corrupt_messages(m, (size_t)shape.batch * shape.seq_len * shape.channels, G, r, what);
        }
    }
}

/* Inputs the encoder refuses and metadata overflows: the status must be the
 * reference's. */
static void pipeline_refused(TqRng &r)
{
    /* invalid inputs: first bad element in index order decides */
    for (int i = 0; i < (g_quick ? 30 : 120); i++) {
        uint32_t G = k_tiles[r.below(6)];
        tahq_config cfg = tq_config_of((uint64_t)i * 5u + 1u, G);
        tahq_shape shape = {1u + r.below(2), 1u + r.below(6), G * (1u + r.below(5))};
        size_t n = (size_t)shape.batch * shape.seq_len * shape.channels;
        std::vector<float> x(n);
        tq_fill(x.data(), (uint64_t)shape.batch * shape.seq_len, shape.channels, G, TQ_DATA_GAUSS,
                r.next());
        poke_invalid(x, r);
        char what[96];
        snprintf(what, sizeof what, "invalid input %d G%u alloc%d", i, G, cfg.alloc);
        cross_check(cfg, shape, x.data(), false, 0, what);
    }
    /* metadata overflow: fp16 with values beyond 65504 (and fp32 fine) */
    for (int i = 0; i < 24; i++) {
        uint32_t G = k_tiles[i % 6];
        tahq_config cfg = tq_config_of((uint64_t)i, G);
        cfg.meta = (tahq_meta)(i % 3);
        tahq_shape shape = {1, 3, G * 2};
        std::vector<float> x((size_t)3 * G * 2);
        tq_fill(x.data(), 3, G * 2, G, TQ_DATA_WIDE, (uint64_t)i);
        x[r.below((uint32_t)x.size())] = (i & 1) ? -1.0e19f : 7.0e4f;
        char what[64];
        snprintf(what, sizeof what, "meta range %d", i);
        cross_check(cfg, shape, x.data(), false, 0, what);
    }
}

/* argument errors in the reference's order */
static void pipeline_argument_errors(void)
{
    tahq_config cfg;
    tahq_config_default(&cfg);
    tahq_shape shape = {1, 4, 128};
    TqHostExec ex;
    std::vector<float> x(512, 1.0f);
    TqEncPlan p;
    tq_enc_plan(&cfg, &shape, &p);
    AlignedBuf ws(p.total), out(p.bound);
    size_t len;
    CHECK(tq_encode_impl(ex, (tahq_config *)0, &shape, x.data(), ws.p, p.total, out.p, p.bound,
                         &len) == TAHQ_ERR_NULL,
          "null cfg");
    tahq_config bad = cfg;
    bad.tile = 48;
    CHECK(tq_encode_impl(ex, &bad, &shape, x.data(), ws.p, p.total, out.p, p.bound, &len) ==
              TAHQ_ERR_CONFIG,
          "config");
    tahq_shape bs = {1, 4, 100};
    CHECK(tq_encode_impl(ex, &cfg, &bs, x.data(), ws.p, p.total, out.p, p.bound, &len) ==
              TAHQ_ERR_SHAPE,
          "shape");
    CHECK(tq_encode_impl(ex, &cfg, &shape, x.data(), ws.p, p.total, out.p, p.bound - 1, &len) ==
              TAHQ_ERR_BUFFER,
          "out small");
    CHECK(tq_encode_impl(ex, &cfg, &shape, x.data(), ws.p, p.total - 1, out.p, p.bound, &len) ==
              TAHQ_ERR_BUFFER,
          "ws small");
    CHECK(tq_encode_impl(ex, &cfg, &shape, x.data(), (void *)0, p.total, out.p, p.bound, &len) ==
              TAHQ_ERR_NULL,
          "ws null");
}

static void test_pipeline(void)
{
    TqRng r(7);
    pipeline_random(r);
    /* the plain per-tile quantizer (SPEC 7.1) is a profile of the codec */
    for (uint32_t G : k_tiles)
        for (uint32_t b = 1; b <= 8; b++) {
            tahq_config cfg;
            tahq_config_plain(&cfg, G, b);
            tahq_shape shape = {2, 3, G * (1u + b % 3u)};
            std::vector<float> x((size_t)2 * 3 * shape.channels);
            tq_fill(x.data(), 6, shape.channels, G, (int)(b % TQ_DATA_KINDS), r.next());
            char what[64];
            snprintf(what, sizeof what, "plain G%u b%u", G, b);
            cross_check(cfg, shape, x.data(), b == 4, 0, what);
        }
    pipeline_refused(r);
    pipeline_argument_errors();
    printf("pipeline emulation: %" PRIu64 " cases, %" PRIu64 " tiles, %" PRIu64 " message bytes\n",
           g_cases, g_tiles, g_msgs_bytes);
}

/* ======================================================================== gain */

/* A random gain configuration: every field's values, equal widths included. */
static tahq_config gain_config(TqRng &r, uint32_t G)
{
    tahq_config c;
    tahq_config_default(&c);
    c.tile = G;
    c.alloc = TAHQ_ALLOC_GAIN;
    c.hi_bits = 1u + r.below(8);
    c.lo_bits = r.below(5) == 0 ? c.hi_bits : 1u + r.below(c.hi_bits);
    static const uint32_t permille[] = {0, 1, 500, 800, 999, 1000, 333, 875, 100};
    c.hi_permille = permille[r.below(9)];
    static const uint32_t taus[] = {0x40000000u /*2*/,      0x7F800000u /*inf*/, 0x00000000u /*0*/,
                                    0x3FC00000u /*1.5*/,    0x3F800000u /*1*/,   0x41200000u /*10*/,
                                    0x00000001u /*2^-149*/, 0x7F7FFFFFu /*max*/};
    c.tau = float_of(taus[r.below(8)]);
    c.rounding = (tahq_rounding)r.below(2);
    c.meta = (tahq_meta)r.below(3);
    c.seed = r.next();
    return c;
}

static uint64_t g_gain_keys, g_gain_neg, g_gain_range_rows, g_gain_flagged;

/* SPEC 2.5 psum in binary64 by its recursive definition (padding with +0),
 * independent of the binary counter the kernels and ref/ use. */
static double psum64(const double *w, uint32_t n, uint32_t P)
{
    if (P == 1)
        return n ? w[0] : 0.0;
    uint32_t h = P / 2;
    return psum64(w, n < h ? n : h, h) + psum64(w + h, n > h ? n - h : 0, h);
}

/* SPEC 4.3 steps 1-3 written from the SPEC text with libtahq's public
 * primitives: the full binary64 sum of a token (its key is checked against
 * tahq_token_gain_key, the sum against the gain program's). */
static tahq_status spec_gain_sigma(const tahq_config &cfg, const float *row, uint32_t T,
                                   uint64_t elem0, double *sigma)
{
    const uint32_t G = cfg.tile;
    std::vector<double> gains(T);
    for (uint32_t t = 0; t < T; t++) {
        float v[256];
        memcpy(v, row + (size_t)t * G, G * 4);
        uint32_t pivot;
        const int flagged = tahq_gate(v, G, cfg.tau, &pivot);
        if (flagged) {
            tahq_hadamard_forward(v, G, pivot);
            g_gain_flagged++;
        }
        double e[2];
        const uint32_t widths[2] = {cfg.lo_bits, cfg.hi_bits};
        for (int w = 0; w < 2; w++) {
            float z, s;
            uint8_t q[256];
            tahq_status st = tahq_quantize_tile(v, G, widths[w], cfg.meta, cfg.rounding, cfg.seed,
                                                elem0 + (uint64_t)t * G, &z, &s, q);
            if (st != TAHQ_OK)
                return st;
            double D[256];
            for (uint32_t i = 0; i < G; i++) {
                const float dq = (float)q[i] * s;
                const float vh = z + dq;
                const float d = vh - v[i];
                D[i] = (double)d * (double)d;
            }
            for (uint32_t h = G / 2; h >= 1; h /= 2)
                for (uint32_t j = 0; j < h; j++)
                    D[j] = D[j] + D[j + h];
            e[w] = D[0];
        }
        double g = e[0] - e[1];
        if (flagged && (tahq_tile_log2(G) & 1u))
            g = 2.0 * g;
        gains[t] = g;
    }
    uint32_t P = 1;
    while (P < T)
        P *= 2;
    *sigma = psum64(gains.data(), T, P);
    return TAHQ_OK;
}

/* The gain program on its own: one launch over `rows` rows of T tiles, every
 * row's key against tahq_token_gain_key, the range flag against "some row
 * gives ERR_RANGE". */
template <int K> static void test_gain_keys(void)
{
    const uint32_t G = TqGeo<K>::G;
    TqRng r(300 + K);
    const int iters = g_quick ? 40 : 300;
    for (int it = 0; it < iters; it++) {
        tahq_config cfg = gain_config(r, G);
        const uint32_t T = 1u + r.below(it % 5 == 0 ? 70 : 12);
        const uint64_t rows = 1u + r.below(5);
        const uint64_t C = (uint64_t)T * G;
        const int kind = (int)r.below(TQ_DATA_KINDS);
        const size_t xoff = it % 7 == 3 ? 1 : 0;
        std::vector<float> x(rows * C + 4);
        tq_fill(x.data() + xoff, rows, (uint32_t)C, G, kind, r.next());
        const float *xp = x.data() + xoff;
        std::vector<uint32_t> kref(rows), kgot(rows, 0xDEADBEEFu);
        std::vector<double> sref(rows), sgot(rows, -1.0);
        std::vector<int> ok(rows);
        bool any_range = false;
        for (uint64_t row = 0; row < rows; row++) {
            tahq_status st = tahq_token_gain_key(&cfg, xp + row * C, T, row * C, &kref[row]);
            ok[row] = st == TAHQ_OK;
            CHECK(st == TAHQ_OK || st == TAHQ_ERR_RANGE, "gain key status %d", st);
            any_range = any_range || st == TAHQ_ERR_RANGE;
            tahq_status s2 = spec_gain_sigma(cfg, xp + row * C, T, row * C, &sref[row]);
            CHECK(s2 == st, "gain: SPEC text status %d vs ref %d", s2, st);
            if (st == TAHQ_OK && s2 == TAHQ_OK)
                CHECK(tahq_gain_key_of(sref[row]) == kref[row],
                      "gain: key of the SPEC-text sum %08x vs ref %08x",
                      tahq_gain_key_of(sref[row]), kref[row]);
        }
        tq_status_block sb = tq_status_init();
        typename PGainToken<K>::Args a;
        a.x = xp;
        a.rows = rows;
        a.C = C;
        a.T = T;
        a.aligned = ((uintptr_t)xp & 15u) == 0u ? 1u : 0u;
        a.pad = 0;
        a.c = tq_enc_cfg(&cfg);
        a.key = kgot.data();
        a.sigma = sgot.data();
        a.st = &sb;
        TqHostExec ex;
        ex.launch<PGainToken<K>>(a, rows, 8u);
        CHECK(sb.bad == ~0ull, "K%d gain: input flagged bad", K);
        CHECK((sb.range != 0u) == any_range,
              "K%d gain it %d: range %u vs ref %d (%s meta%d hi%u lo%u)", K, it, sb.range,
              (int)any_range, tq_data_name(kind), (int)cfg.meta, cfg.hi_bits, cfg.lo_bits);
        for (uint64_t row = 0; row < rows; row++) {
            if (!ok[row]) {
                g_gain_range_rows++;
                continue;
            }
            CHECK(kgot[row] == kref[row],
                  "K%d gain it %d row %" PRIu64 ": key %08x vs ref %08x (%s T%u hi%u lo%u "
                  "tau%08x rnd%d meta%d)",
                  K, it, row, kgot[row], kref[row], tq_data_name(kind), T, cfg.hi_bits, cfg.lo_bits,
                  bits_of(cfg.tau), (int)cfg.rounding, (int)cfg.meta);
            uint64_t b1, b2;
            memcpy(&b1, &sgot[row], 8);
            memcpy(&b2, &sref[row], 8);
            CHECK(b1 == b2, "K%d gain it %d row %" PRIu64 ": sum %a vs SPEC text %a", K, it, row,
                  sgot[row], sref[row]);
            g_gain_keys++;
            g_gain_neg += kref[row] < 0x80000000u;
        }
    }
}

/* Header fields of a valid message changed (CRC fixed, or not): the decode
 * status must be the reference's (SPEC 8.4 order). */
static void header_variants(const std::vector<uint8_t> &m, size_t count, const char *what)
{
    const size_t len = m.size();
    struct {
        uint16_t version;
        int alloc; /* -1: unchanged */
    } v[] = {{1, -1}, {2, -1}, {3, -1}, {0, -1}, {4, -1}, {0x0103, -1}, {3, 1}, {3, 0},
             {3, 2},  {1, 3},  {3, 3},  {1, 1},  {3, 4},  {1, 4},       {2, 3}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (int fix = 0; fix < 2; fix++) {
            std::vector<uint8_t> bad(m);
            tahq_put_u16(bad.data() + 4, v[i].version);
            if (v[i].alloc >= 0)
                bad[11] = (uint8_t)v[i].alloc;
            if (fix)
                put_crc(bad.data(), len);
            char w[200];
            snprintf(w, sizeof w, "%s: version %u alloc %d crc %s", what, v[i].version, v[i].alloc,
                     fix ? "fixed" : "stale");
            decode_status_check(bad, len, count, w);
            if (i % 5 == 0) {
                decode_status_check(bad, 72, count, w); /* header only */
                decode_status_check(bad, 7, count, w);
            }
        }
}

/* Counts of the random gain messages, for the summary. */
struct GainCounts {
    uint64_t msgs, lowmsgs, flagmsgs;
};

/* Corrupted and mislabelled forms of a valid gain message (case i): the
 * decode status must be the reference's. */
static void gain_corrupt(const std::vector<uint8_t> &m, size_t count, int i, TqRng &r,
                         const char *what)
{
    size_t len = m.size();
    random_flips(m, count, r, what);
    decode_status_check(m, len - 1, count, "gain truncated");
    decode_status_check(m, len, count + 1, "gain count+1");
    if (i % 6 == 0)
        header_variants(m, count, what);
    tahq_layout L;
    tahq_header h;
    if (tahq_parse_header(m.data(), len, &h) != TAHQ_OK)
        return;
    L = tahq_layout_compute(&h.config, &h.shape, h.n_low, h.n_flagged);
    if (L.map_bits % 8) {
        std::vector<uint8_t> bad4(m);
        bad4[72 + L.map_bytes - 1] |= 0x80;
        put_crc(bad4.data(), len);
        decode_status_check(bad4, len, count, "gain map padding");
    }
    /* one more low token in the first sequence: map count wrong */
    std::vector<uint8_t> bad5(m);
    for (uint32_t s = 0; s < h.shape.seq_len; s++)
        if (!((bad5[72 + s / 8] >> (s % 8)) & 1u)) {
            bad5[72 + s / 8] |= (uint8_t)(1u << (s % 8));
            break;
        }
    put_crc(bad5.data(), len);
    decode_status_check(bad5, len, count, "gain map count");
}

/* Random gain configurations, shapes and data (whole tokens equal in some:
 * ties in the keys) against the reference; every third message corrupted. */
static void gain_random(TqRng &r, GainCounts &n)
{
    const int per_g = g_quick ? 40 : 240;
    for (uint32_t G : k_tiles) {
        for (int i = 0; i < per_g; i++) {
            tahq_config cfg = gain_config(r, G);
            tahq_shape shape;
            shape.batch = 1u + r.below(4);
            shape.seq_len = 1u + r.below(i % 5 == 0 ? 40 : 9);
            uint32_t T = 1u + r.below(i % 7 == 0 ? 70 : 9);
            shape.channels = T * G;
            const size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;
            std::vector<float> x(count + 8);
            int kind = (int)r.below(TQ_DATA_KINDS);
            size_t xoff = (i % 11 == 0) ? 1 : 0;
            tq_fill(x.data() + xoff, (uint64_t)shape.batch * shape.seq_len, shape.channels, G, kind,
                    r.next());
            if (i % 13 == 5) /* whole tokens equal: ties in the keys */
                for (size_t row = 1; row < (size_t)shape.batch * shape.seq_len; row += 2)
                    memcpy(x.data() + xoff + row * shape.channels,
                           x.data() + xoff + (row - 1) * shape.channels,
                           (size_t)shape.channels * 4);
            char what[200];
            snprintf(what, sizeof what,
                     "gain G%u case%d %ux%ux%u %s hi%u lo%u r%u tau%08x rnd%d meta%d", G, i,
                     shape.batch, shape.seq_len, shape.channels, tq_data_name(kind), cfg.hi_bits,
                     cfg.lo_bits, cfg.hi_permille, bits_of(cfg.tau), cfg.rounding, cfg.meta);
            std::vector<uint8_t> m =
                cross_check(cfg, shape, x.data() + xoff, i % 4 == 0, (size_t)(i % 3), what);
            if (m.empty())
                continue;
            CHECK(tahq_get_u16(m.data() + 4) == TAHQ_GAIN_VERSION && m[11] == TAHQ_ALLOC_GAIN,
                  "%s: version", what);
            n.msgs++;
            n.lowmsgs += tahq_get_u64(m.data() + 40) > 0;
            n.flagmsgs += tahq_get_u64(m.data() + 48) > 0;
            if (i % 3 == 0)
                gain_corrupt(m, count, i, r, what);
        }
    }
}

/* an alloc-1 message relabelled as version 3, alloc 3 (same layout) */
static void gain_relabelled(void)
{
    tahq_config cfg = tq_config_of(1, 64);
    cfg.alloc = TAHQ_ALLOC_TOKEN;
    tahq_shape shape = {2, 5, 128};
    std::vector<float> x(2 * 5 * 128);
    tq_fill(x.data(), 10, 128, 64, TQ_DATA_LLM, 5);
    std::vector<uint8_t> m = cross_check(cfg, shape, x.data(), false, 0, "token for relabelling");
    if (m.empty())
        return;
    std::vector<uint8_t> g(m);
    tahq_put_u16(g.data() + 4, TAHQ_GAIN_VERSION);
    g[11] = TAHQ_ALLOC_GAIN;
    put_crc(g.data(), g.size());
    decode_status_check(g, g.size(), x.size(), "token relabelled gain");
    header_variants(m, x.size(), "token message");
}

/* ERR_RANGE at the low width only (fp16: a tile range of 1e5 needs a
 * scale of 1e5 at 1 bit, above 65504, and 33334 at 2 bits): the encode
 * fails when the sequence has low tokens (the keys are computed), and
 * succeeds when low(S) = 0, and with wider metadata. */
static void gain_low_width_range(TqRng &r)
{
    for (int i = 0; i < 72; i++) {
        uint32_t G = k_tiles[i % 6];
        tahq_config cfg = gain_config(r, G);
        cfg.lo_bits = 1;
        cfg.hi_bits = 2u + r.below(7);
        cfg.meta = (i / 6) % 3 == 2 ? TAHQ_META_BF16 : TAHQ_META_FP16;
        static const uint32_t perm[] = {800, 1000, 0, 500};
        cfg.hi_permille = perm[(i / 18) % 4];
        if (i % 2)
            cfg.tau = float_of(0x7F800000u);
        tahq_shape shape = {1u + r.below(3), (i % 3 == 0) ? 4u : 1u + r.below(12),
                            G * (1u + r.below(4))};
        size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;
        std::vector<float> x(count);
        tq_fill(x.data(), (uint64_t)shape.batch * shape.seq_len, shape.channels, G, TQ_DATA_GAUSS,
                r.next());
        /* one tile of the last sequence: values in [0, 1e5] */
        size_t t = (size_t)(shape.batch - 1) * shape.seq_len * (shape.channels / G) +
                   r.below(shape.seq_len * (shape.channels / G));
        for (uint32_t j = 0; j < G; j++)
            x[t * G + j] = (float)r.below(100000u);
        x[t * G + r.below(G)] = 100000.0f;
        x[t * G + r.below(G)] = 0.0f;
        size_t bound = 0, wsz = 0, len = 0;
        tahq_encode_bound(&cfg, &shape, &bound);
        tahq_encode_workspace_size(&cfg, &shape, &wsz);
        std::vector<uint64_t> wsr(wsz / 8 + 1);
        std::vector<uint8_t> out(bound);
        tahq_status st =
            tahq_encode(&cfg, &shape, x.data(), wsr.data(), wsz, out.data(), bound, &len);
        const bool lowtok = tahq_low_count(shape.seq_len, cfg.hi_permille) > 0;
        if (cfg.meta == TAHQ_META_FP16 && cfg.tau == float_of(0x7F800000u))
            CHECK((st == TAHQ_ERR_RANGE) == lowtok, "low-width range %d: ref status %d", i, st);
        char what[96];
        snprintf(what, sizeof what, "gain low-width range %d G%u r%u meta%d status %d", i, G,
                 cfg.hi_permille, (int)cfg.meta, st);
        cross_check(cfg, shape, x.data(), i % 4 == 0, (size_t)(i % 3), what);
    }
}

/* invalid inputs (first bad element decides, before any overflow) and
 * overflows at both widths */
static void gain_refused(TqRng &r)
{
    for (int i = 0; i < (g_quick ? 30 : 120); i++) {
        uint32_t G = k_tiles[r.below(6)];
        tahq_config cfg = gain_config(r, G);
        tahq_shape shape = {1u + r.below(2), 1u + r.below(6), G * (1u + r.below(5))};
        size_t n = (size_t)shape.batch * shape.seq_len * shape.channels;
        std::vector<float> x(n);
        tq_fill(x.data(), (uint64_t)shape.batch * shape.seq_len, shape.channels, G,
                i % 4 == 3 ? TQ_DATA_WIDE : TQ_DATA_GAUSS, r.next());
        if (i % 2 == 0)
            poke_invalid(x, r);
        else
            x[r.below((uint32_t)n)] = (i & 2) ? -1.0e19f : 7.0e4f;
        char what[96];
        snprintf(what, sizeof what, "gain invalid/range %d G%u meta%d", i, G, (int)cfg.meta);
        cross_check(cfg, shape, x.data(), false, 0, what);
    }
}

/* Gain allocation through the whole pipeline: random configurations, shapes
 * and data against tahq_encode / tahq_decode byte for byte (the decode of
 * every version-3 message included), corrupted and mislabelled messages,
 * invalid inputs, and metadata overflows at the low width only. */
static void test_gain_pipeline(void)
{
    TqRng r(11);
    const uint64_t cases0 = g_cases;
    GainCounts n = {0, 0, 0};
    gain_random(r, n);
    gain_relabelled();
    gain_low_width_range(r);
    gain_refused(r);
    printf("gain pipeline emulation: %" PRIu64
           " cases against libtahq (random configurations: %" PRIu64
           " messages equal byte for byte and decoded bit for bit, %" PRIu64
           " with low tokens, %" PRIu64 " with flagged tiles; the rest statuses)\n",
           g_cases - cases0, n.msgs, n.lowmsgs, n.flagmsgs);
}

static void test_fixpoint(void)
{
    TqRng r(9);
    for (int i = 0; i < (g_quick ? 40 : 200); i++) {
        uint64_t rows = 1u + r.below(300);
        uint32_t C = 1u + r.below(100);
        uint32_t bits = 2u + r.below(7);
        tahq_meta meta = (tahq_meta)r.below(3);
        std::vector<float> g(rows * C);
        int kind = (int)r.below(TQ_DATA_KINDS);
        tq_fill(g.data(), rows, C, 1,
                kind == TQ_DATA_CONST || kind == TQ_DATA_HALFWAY ? TQ_DATA_GAUSS : kind, r.next());
        if (i % 10 == 9)
            g[r.below((uint32_t)g.size())] = float_of(r.below(2) ? 0x7FC00000u : 0x5F900000u);
        std::vector<uint8_t> cr(rows * C), cg(rows * C, 0xCC);
        std::vector<float> sr(C), sg(C, -1.0f);
        tahq_status a = tahq_fixpoint_encode(g.data(), rows, C, bits, meta, cr.data(), sr.data());
        AlignedBuf ws(tq_fix_ws_bytes(C));
        TqHostExec ex;
        tahq_status b =
            tq_fix_encode_impl(ex, g.data(), rows, C, bits, meta, cg.data(), sg.data(), ws.p, ws.n);
        CHECK(a == b, "fixpoint %d status %d vs %d", i, b, a);
        if (a != TAHQ_OK || b != TAHQ_OK)
            continue;
        CHECK(cr == cg, "fixpoint %d codes", i);
        CHECK(memcmp(sr.data(), sg.data(), C * 4) == 0, "fixpoint %d steps", i);
        std::vector<float> dr(rows * C), dg(rows * C, -7.0f);
        if (i % 7 == 3)
            cr[r.below((uint32_t)cr.size())] = r.below(2) ? 0 : 0xFF;
        if (i % 7 == 5)
            sr[r.below(C)] = (i % 14 == 5) ? -1.0f : -0.0f; /* -0 is rejected too */
        a = tahq_fixpoint_decode(cr.data(), sr.data(), rows, C, bits, dr.data());
        b = tq_fix_decode_impl(ex, cr.data(), sr.data(), rows, C, bits, dg.data(), ws.p, ws.n);
        CHECK(a == b, "fixpoint decode %d status %d vs %d", i, b, a);
        if (a == TAHQ_OK)
            CHECK(memcmp(dr.data(), dg.data(), dr.size() * 4) == 0, "fixpoint decode %d values", i);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            g_quick = true;
    clock_t t0 = clock();
    test_scalar();
    test_tile_ops<3>();
    test_tile_ops<4>();
    test_tile_ops<5>();
    test_tile_ops<6>();
    test_tile_ops<7>();
    test_tile_ops<8>();
    printf("warp tile ops: %" PRIu64 " checks so far\n", g_checks);
    test_gain_keys<3>();
    test_gain_keys<4>();
    test_gain_keys<5>();
    test_gain_keys<6>();
    test_gain_keys<7>();
    test_gain_keys<8>();
    printf("gain keys: %" PRIu64
           " token keys equal to tahq_token_gain_key and binary64 sums equal to the SPEC "
           "text's (%" PRIu64 " negative gains, %" PRIu64 " flagged tiles), %" PRIu64
           " rows with ERR_RANGE\n",
           g_gain_keys, g_gain_neg, g_gain_flagged, g_gain_range_rows);
    test_nan_decode();
    test_pipeline();
    test_gain_pipeline();
    test_fixpoint();
    printf("test_device_math: %" PRIu64 " checks, %" PRIu64 " failures, %.1f s\n", g_checks,
           g_fails, (double)(clock() - t0) / CLOCKS_PER_SEC);
    return g_fails ? 1 : 0;
}
