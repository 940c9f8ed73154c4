/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_codec - GPU cross-checks of the CUDA codec against libtahq.
 *
 *   test_cuda_codec families   for every tile size and allocation mode, at
 *                              least TAHQ_GPU_TEST_TILES tiles (default
 *                              1,000,000) over many sub-tensors, each with its
 *                              own configuration (bit-widths, ratio, tau,
 *                              rounding, metadata type) and kind of data:
 *                              GPU message == tahq_encode message byte for
 *                              byte, GPU decode of the CPU message == tahq_decode
 *                              bit for bit (and so tahq_decode of the GPU
 *                              message, the same bytes).
 *   test_cuda_codec edges      SPEC edge cases: tiny and huge rows, S not a
 *                              multiple of 8, unaligned pointers, invalid
 *                              inputs, metadata overflow, extreme tau, zero
 *                              and constant tensors, argument errors.
 *   test_cuda_codec corrupt    corrupted / truncated / inconsistent messages:
 *                              tahq_cuda_decode status == tahq_decode status,
 *                              output untouched unless valid.
 *   test_cuda_codec fixpoint   SPEC 7.2 against tahq_fixpoint_*.
 *
 * Output buffers are poisoned before every run (two different patterns on
 * alternate runs, so an unwritten byte shows as a mismatch); every CUDA
 * call and every launch is checked. Without a usable GPU (no device, no
 * driver, or compute capability below 9.0) the program says why and exits
 * 77, which CTest reports as Skipped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tahq_cuda.h"
#include "tq_testdata.h"

#define CU(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static uint64_t g_checks, g_fails;
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        g_checks++;                                                                \
        if (!(cond)) {                                                             \
            g_fails++;                                                             \
            if (g_fails <= 40) {                                                   \
                fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                      \
                fprintf(stderr, "\n");                                             \
            }                                                                      \
        }                                                                          \
    } while (0)

static double now_s(void)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static uint32_t bits_of(float x)
{
    uint32_t w;
    memcpy(&w, &x, 4);
    return w;
}

static int gpu_available(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("SKIP: no usable GPU: cudaGetDeviceCount: %s\n", cudaGetErrorString(e));
        return 0;
    }
    if (n == 0) {
        printf("SKIP: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp p;
    CU(cudaGetDeviceProperties(&p, 0));
    if (p.major < 9) {
        printf("SKIP: device 0 (%s) has compute capability %d.%d; the kernels are built for 9.0 "
               "(sm_90 + compute_90)\n",
               p.name, p.major, p.minor);
        return 0;
    }
    printf("device 0: %s, compute capability %d.%d, %d SMs, %.1f GiB\n", p.name, p.major, p.minor,
           p.multiProcessorCount, (double)p.totalGlobalMem / (1u << 30));
    return 1;
}

/* ---- device buffers, grown on demand ----------------------------------------------- */

struct DevBuf {
    void *p = nullptr;
    size_t n = 0;
    void *get(size_t bytes)
    {
        if (bytes > n) {
            if (p)
                CU(cudaFree(p));
            n = bytes + (bytes >> 3) + 4096;
            CU(cudaMalloc(&p, n));
        }
        return p;
    }
    ~DevBuf()
    {
        if (p)
            cudaFree(p);
    }
};

static DevBuf d_x, d_out, d_ws, d_msg, d_dec, d_dws;
static cudaStream_t g_stream;

/* ---- one cross-check ------------------------------------------------------------------ */

struct Case {
    tahq_config cfg;
    tahq_shape shape;
    std::vector<float> x;
    tahq_status st_ref = TAHQ_OK;
    std::vector<uint8_t> msg; /* reference message */
    std::vector<float> dec;   /* tahq_decode of it */
    char what[200];
};

static void cpu_reference(Case &c)
{
    size_t bound = 0, wsb = 0;
    if (tahq_encode_bound(&c.cfg, &c.shape, &bound) != TAHQ_OK) {
        c.st_ref = TAHQ_ERR_SHAPE;
        return;
    }
    tahq_encode_workspace_size(&c.cfg, &c.shape, &wsb);
    std::vector<uint64_t> ws(wsb / 8 + 1);
    c.msg.resize(bound);
    size_t len = 0;
    c.st_ref = tahq_encode(&c.cfg, &c.shape, c.x.data(), ws.data(), wsb, c.msg.data(), bound, &len);
    c.msg.resize(c.st_ref == TAHQ_OK ? len : 0);
    if (c.st_ref == TAHQ_OK) {
        c.dec.resize(c.x.size());
        tahq_status s = tahq_decode(c.msg.data(), len, c.dec.data(), c.dec.size());
        if (s != TAHQ_OK) {
            fprintf(stderr, "%s: reference decode failed: %d\n", c.what, s);
            exit(1);
        }
    }
}

static uint64_t g_tiles, g_msg_bytes, g_float_bytes, g_runs;

/* GPU encode vs reference bytes, GPU decode of the reference message vs
 * reference floats. x_off (floats), out_off, msg_off (bytes) shift the device
 * pointers off their 256-byte alignment. */
static void gpu_check(const Case &c, int poison, size_t x_off = 0, size_t out_off = 0,
                      size_t msg_off = 0, size_t dec_off = 0)
{
    g_runs++;
    const size_t n = c.x.size();
    float *dx = (float *)d_x.get((n + x_off) * 4) + x_off;
    CU(cudaMemcpyAsync(dx, c.x.data(), n * 4, cudaMemcpyHostToDevice, g_stream));
    size_t bound = 0, wsb = 0;
    tahq_status sb = tahq_cuda_encode_bound(&c.cfg, &c.shape, &bound);
    CHECK(sb == TAHQ_OK, "%s: bound", c.what);
    CHECK(tahq_cuda_encode_workspace_size(&c.cfg, &c.shape, &wsb) == TAHQ_OK, "%s: ws size",
          c.what);
    uint8_t *dout = (uint8_t *)d_out.get(bound + out_off) + out_off;
    void *dws = d_ws.get(wsb);
    const uint8_t pat = poison ? 0x5A : 0xCD;
    CU(cudaMemsetAsync(dout, pat, bound, g_stream));
    CU(cudaMemsetAsync(dws, pat ^ 0xFF, wsb, g_stream));
    size_t len = 777;
    tahq_status st = tahq_cuda_encode(&c.cfg, &c.shape, dx, dws, wsb, dout, bound, &len, g_stream);
    CU(cudaGetLastError());
    CHECK(st != TAHQ_CUDA_ERR_RUNTIME, "%s: CUDA error %s", c.what,
          cudaGetErrorString(tahq_cuda_last_error()));
    CHECK(st == c.st_ref, "%s: encode status %d vs reference %d", c.what, (int)st, (int)c.st_ref);
    if (st != TAHQ_OK || c.st_ref != TAHQ_OK) {
        CHECK(len == 0, "%s: out_len %zu on error", c.what, len);
        if (st != TAHQ_OK && st != TAHQ_CUDA_ERR_RUNTIME) {
            uint8_t hdr[72];
            CU(cudaMemcpy(hdr, dout, 72, cudaMemcpyDeviceToHost));
            bool zero = true;
            for (int i = 0; i < 72; i++)
                zero = zero && hdr[i] == 0;
            CHECK(zero, "%s: header not zero after an error", c.what);
        }
        return;
    }
    CHECK(len == c.msg.size(), "%s: length %zu vs %zu", c.what, len, c.msg.size());
    std::vector<uint8_t> got(len);
    CU(cudaMemcpy(got.data(), dout, len, cudaMemcpyDeviceToHost));
    if (len == c.msg.size() && memcmp(got.data(), c.msg.data(), len) != 0) {
        size_t i = 0;
        while (got[i] == c.msg[i])
            i++;
        CHECK(false, "%s: message differs at byte %zu of %zu (gpu %02x ref %02x, poison %02x)",
              c.what, i, len, got[i], c.msg[i], pat);
    } else {
        g_checks++;
    }
    g_tiles += n / c.cfg.tile;
    g_msg_bytes += len;

    /* decode the reference message on the GPU */
    const size_t mlen = c.msg.size();
    uint8_t *dmsg = (uint8_t *)d_msg.get(mlen + msg_off) + msg_off;
    CU(cudaMemcpyAsync(dmsg, c.msg.data(), mlen, cudaMemcpyHostToDevice, g_stream));
    size_t dwsb = 0;
    CHECK(tahq_cuda_decode_workspace_size(mlen, n, &dwsb) == TAHQ_OK, "%s: decode ws", c.what);
    void *ddws = d_dws.get(dwsb);
    float *ddec = (float *)d_dec.get((n + dec_off) * 4) + dec_off;
    CU(cudaMemsetAsync(ddec, pat, n * 4, g_stream));
    tahq_status sd = tahq_cuda_decode(dmsg, mlen, ddec, n, ddws, dwsb, g_stream);
    CHECK(sd == TAHQ_OK, "%s: decode status %d (%s)", c.what, (int)sd,
          sd == TAHQ_CUDA_ERR_RUNTIME ? cudaGetErrorString(tahq_cuda_last_error()) : "");
    std::vector<float> dec(n);
    CU(cudaMemcpy(dec.data(), ddec, n * 4, cudaMemcpyDeviceToHost));
    if (memcmp(dec.data(), c.dec.data(), n * 4) != 0) {
        size_t i = 0;
        while (bits_of(dec[i]) == bits_of(c.dec[i]))
            i++;
        CHECK(false, "%s: decoded value %zu differs (gpu %08x ref %08x)", c.what, i,
              bits_of(dec[i]), bits_of(c.dec[i]));
    } else {
        g_checks++;
    }
    g_float_bytes += n * 4;
}

/* Fill and run the reference for cases[] on all host cores. */
static void prepare_parallel(std::vector<Case> &cases, const std::vector<int> &kinds,
                             const std::vector<uint64_t> &seeds)
{
    unsigned nt = std::thread::hardware_concurrency();
    if (nt < 1)
        nt = 1;
    if (nt > 32)
        nt = 32;
    std::atomic<size_t> next(0);
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&]() {
            for (;;) {
                size_t i = next.fetch_add(1);
                if (i >= cases.size())
                    return;
                Case &c = cases[i];
                uint64_t rows = (uint64_t)c.shape.batch * c.shape.seq_len;
                c.x.resize(rows * c.shape.channels);
                tq_fill(c.x.data(), rows, c.shape.channels, c.cfg.tile, kinds[i], seeds[i]);
                cpu_reference(c);
            }
        });
    for (auto &t : th)
        t.join();
}

/* ---- suites ----------------------------------------------------------------------------- */

static void suite_families(void)
{
    uint64_t target = 1000000;
    if (const char *e = getenv("TAHQ_GPU_TEST_TILES"))
        target = strtoull(e, nullptr, 10);
    const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
    TqRng r(2026);
    for (uint32_t G : Gs)
        for (int alloc = 0; alloc < 4; alloc++) { /* none, token, tile, gain */
            double t0 = now_s();
            std::vector<Case> cases;
            std::vector<int> kinds;
            std::vector<uint64_t> seeds;
            uint64_t tiles = 0;
            for (uint64_t i = 0; tiles < target; i++) {
                Case c;
                c.cfg = tq_config_of(i * 3u + (uint64_t)alloc, G);
                c.cfg.alloc = (tahq_alloc)alloc;
                /* sub-tensor of 16K..64K tiles: varied S and T, rows per
                 * sequence not a multiple of 8, some single-token sequences */
                uint32_t T = 1u + r.below(i % 4 == 0 ? 96 : 24);
                if (G * T > 16384u)
                    T = 16384u / G;
                uint32_t want = 16384u + r.below(49152u);
                uint32_t rows = want / T + 1u;
                uint32_t S = i % 9 == 0 ? 1u : 1u + r.below(rows < 700u ? rows : 700u);
                uint32_t B = rows / S + 1u;
                c.shape.batch = B;
                c.shape.seq_len = S;
                c.shape.channels = G * T;
                int kind = (int)(i % TQ_DATA_KINDS);
                snprintf(c.what, sizeof c.what,
                         "G%u alloc%d sub%" PRIu64
                         " %ux%ux%u %s hi%u lo%u r%u tau%08x rnd%d meta%d",
                         G, alloc, i, B, S, G * T, tq_data_name(kind), c.cfg.hi_bits, c.cfg.lo_bits,
                         c.cfg.hi_permille, bits_of(c.cfg.tau), c.cfg.rounding, c.cfg.meta);
                tiles += (uint64_t)B * S * T;
                cases.push_back(c);
                kinds.push_back(kind);
                seeds.push_back(r.next());
            }
            prepare_parallel(cases, kinds, seeds);
            double t1 = now_s();
            uint64_t compared = 0, errors = 0;
            for (size_t i = 0; i < cases.size(); i++) {
                gpu_check(cases[i], (int)(i & 1), 0, 0, 0, 0);
                if (cases[i].st_ref == TAHQ_OK)
                    compared += cases[i].x.size() / G;
                else
                    errors++;
            }
            double t2 = now_s();
            printf("family G=%-3u alloc=%s: %zu sub-tensors, %" PRIu64 " tiles compared, %" PRIu64
                   " encode errors matched; cpu %.1f s, gpu %.1f s\n",
                   G,
                   alloc == 0   ? "none "
                   : alloc == 1 ? "token"
                   : alloc == 2 ? "tile "
                                : "gain ",
                   cases.size(), compared, errors, t1 - t0, t2 - t1);
            CHECK(compared >= target / 2, "family G%u alloc%d: too few tiles compared", G, alloc);
        }
}

static Case make_case(const tahq_config &cfg, uint32_t B, uint32_t S, uint32_t C, int kind,
                      uint64_t seed, const char *what)
{
    Case c;
    c.cfg = cfg;
    c.shape.batch = B;
    c.shape.seq_len = S;
    c.shape.channels = C;
    c.x.resize((size_t)B * S * C);
    tq_fill(c.x.data(), (uint64_t)B * S, C, cfg.tile, kind, seed);
    snprintf(c.what, sizeof c.what, "%s (G%u %ux%ux%u %s alloc%d)", what, cfg.tile, B, S, C,
             tq_data_name(kind), cfg.alloc);
    return c;
}

/* Shapes at the edges: one tile, S not a multiple of 8, S = 1, many short
 * rows, rows too long for the cache and the longest cached row, and data
 * of each hard kind. */
static void add_shape_cases(std::vector<Case> &cs, const tahq_config &cfg, TqRng &r)
{
    const uint32_t G = cfg.tile;
    cs.push_back(make_case(cfg, 1, 1, G, TQ_DATA_GAUSS, r.next(), "single tile"));
    cs.push_back(make_case(cfg, 3, 13, G * 3, TQ_DATA_LLM, r.next(), "S=13, T=3"));
    cs.push_back(make_case(cfg, 2, 1, G * 5, TQ_DATA_SPARSE, r.next(), "S=1"));
    cs.push_back(make_case(cfg, 1, 20000, G, TQ_DATA_TIES, r.next(), "20000 one-tile rows"));
    cs.push_back(make_case(cfg, 1, 3, 65536, TQ_DATA_LLM, r.next(), "C=65536 (rows not cached)"));
    cs.push_back(
        make_case(cfg, 1, 5, 12288, TQ_DATA_GAUSS, r.next(), "C=12288 (largest cached row)"));
    cs.push_back(make_case(cfg, 1, 2, 16384 + G, TQ_DATA_WIDE, r.next(), "C=16384+G"));
    cs.push_back(make_case(cfg, 2, 33, G * 7, TQ_DATA_DENORM, r.next(), "denormals"));
    cs.push_back(make_case(cfg, 2, 17, G * 9, TQ_DATA_CONST, r.next(), "constant tiles"));
    cs.push_back(make_case(cfg, 2, 17, G * 9, TQ_DATA_HALFWAY, r.next(), "rounding ties"));
}

/* Values at the edges: zeros, a constant off the fp16 grid, metadata
 * overflow, invalid inputs, extreme tau, stochastic rounding at extreme
 * ratios and widths. */
static void add_value_cases(std::vector<Case> &cs, const tahq_config &cfg, TqRng &r)
{
    const uint32_t G = cfg.tile;
    {
        Case z = make_case(cfg, 2, 9, G * 4, TQ_DATA_GAUSS, r.next(), "all zero");
        for (size_t i = 0; i < z.x.size(); i++)
            z.x[i] = (i & 1) ? -0.0f : 0.0f;
        cs.push_back(z);
    }
    {
        Case k =
            make_case(cfg, 2, 9, G * 4, TQ_DATA_GAUSS, r.next(), "all 0.1 (off the fp16 grid)");
        for (auto &v : k.x)
            v = 0.1f;
        cs.push_back(k);
    }
    {
        tahq_config c2 = cfg;
        c2.meta = TAHQ_META_FP16;
        Case o = make_case(c2, 1, 4, G * 4, TQ_DATA_GAUSS, r.next(), "fp16 overflow (RANGE)");
        o.x[o.x.size() / 2] = 1.0e5f;
        cs.push_back(o);
        c2.meta = TAHQ_META_FP32;
        Case o2 = make_case(c2, 1, 4, G * 4, TQ_DATA_WIDE, r.next(), "near 2^64, fp32");
        o2.x[1] = 18446742974197923840.0f; /* largest float below 2^64 */
        o2.x[2] = -18446742974197923840.0f;
        cs.push_back(o2);
    }
    {
        static const uint32_t badv[] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x5F800000u,
                                        0xDF800000u};
        for (int b = 0; b < 5; b++) {
            Case e = make_case(cfg, 2, 6, G * 3, TQ_DATA_GAUSS, r.next(), "invalid input");
            e.x[r.below((uint32_t)e.x.size())] = tq_f_of(badv[b]);
            e.x[r.below((uint32_t)e.x.size())] = tq_f_of(badv[(b + 3) % 5]);
            cs.push_back(e);
        }
    }
    {
        static const uint32_t taus[] = {0x00000000u, 0x00000001u, 0x7F7FFFFFu, 0x7F800000u,
                                        0x3F800000u};
        for (uint32_t t : taus) {
            tahq_config c3 = cfg;
            c3.tau = tq_f_of(t);
            cs.push_back(make_case(c3, 2, 5, G * 6, TQ_DATA_LLM, r.next(), "tau edge"));
        }
    }
    {
        tahq_config c4 = cfg;
        c4.rounding = TAHQ_ROUND_STOCHASTIC;
        c4.seed = 0xFFFFFFFFFFFFFFFFull;
        c4.hi_bits = 8;
        c4.lo_bits = 1;
        c4.hi_permille = 0;
        cs.push_back(
            make_case(c4, 3, 7, G * 5, TQ_DATA_HALFWAY, r.next(), "stochastic, r=0, 8/1 bits"));
        c4.hi_permille = 1000;
        c4.meta = TAHQ_META_BF16;
        cs.push_back(
            make_case(c4, 3, 7, G * 5, TQ_DATA_DENORM, r.next(), "stochastic, r=1000, bf16"));
    }
}

/* Gain allocation only (SPEC 4.3). */
static void add_gain_cases(std::vector<Case> &cs, const tahq_config &cfg, TqRng &r)
{
    const uint32_t G = cfg.tile;
    /* SPEC 4.3: a tile whose scale overflows fp16 at lo_bits only
     * (range 1e5: 1e5 at 1 bit, 33334 at 2 bits) fails the encode
     * when its sequence has low tokens (the keys are computed),
     * not when low(S) = 0 */
    tahq_config c5 = cfg;
    c5.meta = TAHQ_META_FP16;
    c5.tau = tq_f_of(0x7F800000u);
    c5.lo_bits = 1;
    c5.hi_bits = 3;
    const uint32_t seqs[] = {8, 4, 1000};
    for (uint32_t S : seqs) {
        Case o =
            make_case(c5, 2, S, G * 3, TQ_DATA_GAUSS, r.next(), "fp16 overflow at lo_bits only");
        const size_t t = (size_t)S * 3 + (size_t)r.below(S * 3); /* a tile of sequence 1 */
        for (uint32_t j = 0; j < G; j++)
            o.x[t * G + j] = (float)r.below(100000u);
        o.x[t * G] = 100000.0f;
        o.x[t * G + G - 1] = 0.0f;
        cs.push_back(o);
    }
    tahq_config c6 = cfg;
    c6.lo_bits = c6.hi_bits; /* equal widths: every gain +0, ties by row */
    cs.push_back(make_case(c6, 2, 50, G * 6, TQ_DATA_LLM, r.next(), "gain, equal widths"));
}

/* No allocation only. */
static void add_plain_cases(std::vector<Case> &cs, uint32_t G, TqRng &r)
{
    for (uint32_t b = 1; b <= 8; b++) { /* SPEC 7.1: the plain per-tile quantizer */
        tahq_config cp;
        tahq_config_plain(&cp, G, b);
        cs.push_back(
            make_case(cp, 4, 100, G * 8, (int)(b % TQ_DATA_KINDS), r.next(), "plain profile"));
    }
}

/* Argument errors of tahq_cuda_encode / tahq_cuda_decode (nothing is
 * touched). */
static void check_argument_errors(void)
{
    tahq_config cfg;
    tahq_config_default(&cfg);
    tahq_shape shape = {1, 4, 256};
    size_t bound = 0, wsb = 0, len = 5;
    tahq_cuda_encode_bound(&cfg, &shape, &bound);
    tahq_cuda_encode_workspace_size(&cfg, &shape, &wsb);
    float *dx = (float *)d_x.get(1024 * 4);
    uint8_t *dout = (uint8_t *)d_out.get(bound);
    void *dws = d_ws.get(wsb);
    CHECK(tahq_cuda_encode(nullptr, &shape, dx, dws, wsb, dout, bound, &len, g_stream) ==
              TAHQ_ERR_NULL,
          "null cfg");
    CHECK(tahq_cuda_encode(&cfg, &shape, nullptr, dws, wsb, dout, bound, &len, g_stream) ==
              TAHQ_ERR_NULL,
          "null x");
    CHECK(tahq_cuda_encode(&cfg, &shape, dx, dws, wsb, dout, bound - 1, &len, g_stream) ==
              TAHQ_ERR_BUFFER,
          "small out");
    CHECK(tahq_cuda_encode(&cfg, &shape, dx, dws, wsb - 1, dout, bound, &len, g_stream) ==
              TAHQ_ERR_BUFFER,
          "small ws");
    CHECK(tahq_cuda_encode(&cfg, &shape, dx, nullptr, wsb, dout, bound, &len, g_stream) ==
              TAHQ_ERR_NULL,
          "null ws");
    tahq_config bad = cfg;
    bad.lo_bits = 5;
    CHECK(tahq_cuda_encode(&bad, &shape, dx, dws, wsb, dout, bound, &len, g_stream) ==
              TAHQ_ERR_CONFIG,
          "config");
    tahq_shape bs = {0, 4, 256};
    CHECK(tahq_cuda_encode(&cfg, &bs, dx, dws, wsb, dout, bound, &len, g_stream) == TAHQ_ERR_SHAPE,
          "shape");
    CHECK(tahq_cuda_decode(nullptr, 100, (float *)dx, 1024, dws, wsb, g_stream) == TAHQ_ERR_NULL,
          "decode null");
}

static void suite_edges(void)
{
    TqRng r(77);
    const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
    int n = 0;
    for (uint32_t G : Gs)
        for (int alloc = 0; alloc < 4; alloc++) { /* none, token, tile, gain */
            tahq_config cfg;
            tahq_config_default(&cfg);
            cfg.tile = G;
            cfg.alloc = (tahq_alloc)alloc;
            std::vector<Case> cs;
            add_shape_cases(cs, cfg, r);
            add_value_cases(cs, cfg, r);
            if (alloc == TAHQ_ALLOC_GAIN)
                add_gain_cases(cs, cfg, r);
            if (alloc == 0)
                add_plain_cases(cs, G, r);
            for (auto &c : cs) {
                cpu_reference(c);
                int k = n++;
                /* unaligned device pointers on some runs */
                gpu_check(c, k & 1, (size_t)(k % 3 == 1), (size_t)(k % 16), (size_t)(k % 7),
                          (size_t)(k % 5 == 2));
            }
        }
    check_argument_errors();
}

static void decode_status(const std::vector<uint8_t> &m, size_t len, size_t count, const char *what,
                          size_t off)
{
    std::vector<float> a(count + 1, tq_f_of(0x7FC00001u));
    tahq_status sr = tahq_decode(m.data(), len, a.data(), count);
    uint8_t *dmsg = (uint8_t *)d_msg.get(m.size() + off + 16) + off;
    CU(cudaMemcpy(dmsg, m.data(), m.size(), cudaMemcpyHostToDevice));
    size_t dwsb = 0;
    tahq_cuda_decode_workspace_size(len, count, &dwsb);
    void *ddws = d_dws.get(dwsb);
    float *ddec = (float *)d_dec.get((count + 1) * 4);
    CU(cudaMemset(ddec, 0x7F, (count + 1) * 4));
    tahq_status sg = tahq_cuda_decode(dmsg, len, ddec, count, ddws, dwsb, g_stream);
    CHECK(sg == sr, "%s: decode status %d vs reference %d", what, (int)sg, (int)sr);
    std::vector<float> b(count + 1);
    CU(cudaMemcpy(b.data(), ddec, (count + 1) * 4, cudaMemcpyDeviceToHost));
    if (sr != TAHQ_OK) {
        bool untouched = true;
        for (size_t i = 0; i <= count; i++)
            untouched = untouched && bits_of(b[i]) == 0x7F7F7F7Fu;
        CHECK(untouched, "%s: output written for an invalid message", what);
    } else {
        CHECK(memcmp(a.data(), b.data(), count * 4) == 0, "%s: decoded values", what);
        CHECK(bits_of(b[count]) == 0x7F7F7F7Fu, "%s: wrote past count", what);
    }
}

static void put_crc(uint8_t *msg, size_t len)
{
    uint32_t c = tahq_crc32c(0, msg, 68);
    c = tahq_crc32c(c, msg + 72, len - 72);
    for (int i = 0; i < 4; i++)
        msg[68 + i] = (uint8_t)(c >> (8 * i));
}

static void suite_corrupt(void)
{
    TqRng r(99);
    const uint32_t Gs[] = {8, 16, 32, 64, 128, 256};
    int k = 0;
    for (uint32_t G : Gs)
        for (int i = 0; i < 16; i++) {
            tahq_config cfg = tq_config_of((uint64_t)i, G);
            if (i >= 12)
                cfg.alloc = TAHQ_ALLOC_GAIN;
            Case c = make_case(cfg, 1u + r.below(3), 1u + r.below(30), G * (1u + r.below(12)),
                               (int)r.below(5), r.next(), "corrupt base");
            cpu_reference(c);
            if (c.st_ref != TAHQ_OK)
                continue;
            const std::vector<uint8_t> &m = c.msg;
            const size_t len = m.size(), count = c.x.size();
            char w[240];
            for (int j = 0; j < 10; j++) {
                std::vector<uint8_t> bad(m);
                size_t pos = r.below((uint32_t)len);
                bad[pos] ^= (uint8_t)(1u << r.below(8));
                if (j >= 5 && pos >= 72)
                    put_crc(bad.data(), len);
                snprintf(w, sizeof w, "%s: flip byte %zu%s", c.what, pos,
                         j >= 5 ? " (crc fixed)" : "");
                decode_status(bad, len, count, w, (size_t)(k++ % 9));
            }
            decode_status(m, len, count, "valid", 0);
            decode_status(m, len - 1, count, "truncated", 1);
            decode_status(m, 71, count, "header only", 2);
            decode_status(m, 3, count, "3 bytes", 3);
            decode_status(m, 0, count, "empty", 0);
            decode_status(m, len, count + 1, "count+1", 5);
            decode_status(m, len, count - 1, "count-1", 6);
            {
                std::vector<uint8_t> m2(m);
                m2.push_back(0);
                decode_status(m2, len + 1, count, "one byte too long", 7);
                std::vector<uint8_t> b2(m);
                b2[69] ^= 0x10;
                decode_status(b2, len, count + G, "crc and count wrong", 8);
            }
            { /* version and alloc relabelled (SPEC 8.1: alloc 3 iff version 3) */
                static const struct {
                    uint16_t version;
                    int alloc; /* -1: unchanged */
                } hv[] = {{1, -1}, {2, -1}, {3, -1}, {4, -1}, {1, 3},
                          {3, 1},  {3, 0},  {3, 2},  {3, 4},  {2, 3}};
                for (size_t j = 0; j < sizeof hv / sizeof hv[0]; j++)
                    for (int fix = 0; fix < 2; fix++) {
                        std::vector<uint8_t> b(m);
                        b[4] = (uint8_t)hv[j].version;
                        b[5] = (uint8_t)(hv[j].version >> 8);
                        if (hv[j].alloc >= 0)
                            b[11] = (uint8_t)hv[j].alloc;
                        if (fix)
                            put_crc(b.data(), len);
                        snprintf(w, sizeof w, "%s: version %u alloc %d%s", c.what, hv[j].version,
                                 hv[j].alloc, fix ? " (crc fixed)" : "");
                        decode_status(b, len, count, w, (size_t)(k++ % 9));
                    }
            }
            tahq_header h;
            if (tahq_parse_header(m.data(), len, &h) != TAHQ_OK)
                continue;
            const uint64_t N = (uint64_t)h.shape.batch * h.shape.seq_len * (h.shape.channels / G);
            const uint64_t mb = h.config.meta == TAHQ_META_FP32 ? 4 : 2;
            const bool per_row =
                h.config.alloc == TAHQ_ALLOC_TOKEN || h.config.alloc == TAHQ_ALLOC_GAIN;
            const uint64_t map_bits = per_row ? (uint64_t)h.shape.batch * h.shape.seq_len
                                      : h.config.alloc == TAHQ_ALLOC_TILE ? N
                                                                          : 0;
            const uint64_t map_bytes = (map_bits + 7) / 8, flag_bytes = (N + 7) / 8;
            const uint64_t zero_off = 72 + map_bytes + flag_bytes, scale_off = zero_off + N * mb;
            {
                std::vector<uint8_t> b(m);
                uint8_t *z = b.data() + zero_off + mb * r.below((uint32_t)N);
                if (mb == 2) {
                    z[0] = 0x00;
                    z[1] = 0x80;
                } else {
                    z[0] = z[1] = 0;
                    z[2] = 0xC0;
                    z[3] = 0x7F;
                }
                put_crc(b.data(), len);
                decode_status(b, len, count, "zero-point -0 / NaN", 0);
            }
            {
                std::vector<uint8_t> b(m);
                b[scale_off + mb * r.below((uint32_t)N) + mb - 1] |= 0x80;
                put_crc(b.data(), len);
                decode_status(b, len, count, "negative scale", 1);
            }
            if (map_bits) { /* one extra low unit: map count wrong */
                std::vector<uint8_t> b(m);
                for (uint64_t u = 0; u < map_bits; u++)
                    if (!((b[72 + u / 8] >> (u % 8)) & 1)) {
                        b[72 + u / 8] |= (uint8_t)(1u << (u % 8));
                        break;
                    }
                put_crc(b.data(), len);
                decode_status(b, len, count, "map count", 2);
            }
            { /* one extra flag: count differs from the header */
                std::vector<uint8_t> b(m);
                for (uint64_t t = 0; t < N; t++)
                    if (!((b[72 + map_bytes + t / 8] >> (t % 8)) & 1)) {
                        b[72 + map_bytes + t / 8] |= (uint8_t)(1u << (t % 8));
                        break;
                    }
                put_crc(b.data(), len);
                decode_status(b, len, count, "flag count", 3);
            }
            if (N % 8) {
                std::vector<uint8_t> b(m);
                b[72 + map_bytes + flag_bytes - 1] |= 0x80;
                put_crc(b.data(), len);
                decode_status(b, len, count, "flag padding", 4);
            }
            uint32_t k = 0;
            while ((1u << k) < G)
                k++;
            if (h.n_flagged > 0 && (h.n_flagged * k) % 8) {
                std::vector<uint8_t> b(m);
                b[len - 1] |= 0x80;
                put_crc(b.data(), len);
                decode_status(b, len, count, "pivot padding", 5);
            }
        }
}

static void suite_fixpoint(void)
{
    TqRng r(5);
    DevBuf dg, dc, ds, dw, dd;
    for (int i = 0; i < 300; i++) {
        uint64_t rows = 1u + r.below(i % 10 == 0 ? 20000 : 600);
        uint32_t C = 1u + r.below(i % 7 == 0 ? 5000 : 300);
        uint32_t bits = 2u + r.below(7);
        tahq_meta meta = (tahq_meta)r.below(3);
        std::vector<float> g(rows * C);
        int kind = (int)r.below(TQ_DATA_KINDS);
        tq_fill(g.data(), rows, C, 1,
                kind == TQ_DATA_CONST || kind == TQ_DATA_HALFWAY ? TQ_DATA_GAUSS : kind, r.next());
        if (i % 10 == 9)
            g[r.below((uint32_t)g.size())] = tq_f_of(r.below(2) ? 0x7FC00000u : 0x5F900000u);
        std::vector<uint8_t> cr(rows * C), cg(rows * C);
        std::vector<float> sr(C), sg(C);
        tahq_status a = tahq_fixpoint_encode(g.data(), rows, C, bits, meta, cr.data(), sr.data());
        size_t wsb = 0;
        tahq_cuda_fixpoint_workspace_size(C, &wsb);
        float *d_g = (float *)dg.get(g.size() * 4);
        uint8_t *d_c = (uint8_t *)dc.get(cr.size());
        float *d_s = (float *)ds.get(C * 4);
        void *d_w = dw.get(wsb);
        CU(cudaMemcpy(d_g, g.data(), g.size() * 4, cudaMemcpyHostToDevice));
        CU(cudaMemset(d_c, 0xCC, cr.size()));
        CU(cudaMemset(d_s, 0xCC, C * 4));
        tahq_status b =
            tahq_cuda_fixpoint_encode(d_g, rows, C, bits, meta, d_c, d_s, d_w, wsb, g_stream);
        CHECK(a == b, "fixpoint %d encode status %d vs %d", i, (int)b, (int)a);
        if (a != TAHQ_OK || b != TAHQ_OK)
            continue;
        CU(cudaMemcpy(cg.data(), d_c, cg.size(), cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(sg.data(), d_s, C * 4, cudaMemcpyDeviceToHost));
        CHECK(cr == cg, "fixpoint %d codes", i);
        CHECK(memcmp(sr.data(), sg.data(), C * 4) == 0, "fixpoint %d steps", i);
        if (i % 7 == 3)
            cr[r.below((uint32_t)cr.size())] = r.below(2) ? 0 : 0xFF;
        if (i % 7 == 5)
            sr[r.below(C)] = (i % 14 == 5) ? -1.0f : -0.0f; /* -0 is rejected too */
        std::vector<float> dr(rows * C), dgot(rows * C);
        a = tahq_fixpoint_decode(cr.data(), sr.data(), rows, C, bits, dr.data());
        CU(cudaMemcpy(d_c, cr.data(), cr.size(), cudaMemcpyHostToDevice));
        CU(cudaMemcpy(d_s, sr.data(), C * 4, cudaMemcpyHostToDevice));
        float *d_o = (float *)dd.get(dr.size() * 4);
        CU(cudaMemset(d_o, 0x7F, dr.size() * 4));
        b = tahq_cuda_fixpoint_decode(d_c, d_s, rows, C, bits, d_o, d_w, wsb, g_stream);
        CHECK(a == b, "fixpoint %d decode status %d vs %d", i, (int)b, (int)a);
        CU(cudaMemcpy(dgot.data(), d_o, dr.size() * 4, cudaMemcpyDeviceToHost));
        if (a == TAHQ_OK)
            CHECK(memcmp(dr.data(), dgot.data(), dr.size() * 4) == 0, "fixpoint %d decoded values",
                  i);
        else {
            bool untouched = true;
            for (float v : dgot)
                untouched = untouched && bits_of(v) == 0x7F7F7F7Fu;
            CHECK(untouched, "fixpoint %d: output written on error", i);
        }
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *suite = argc > 1 ? argv[1] : "all";
    if (!gpu_available())
        return 77;
    /* a blocking stream: the legacy default stream's cudaMemset/cudaMemcpy
     * used by the checks are ordered with it */
    CU(cudaStreamCreate(&g_stream));
    double t0 = now_s();
    bool all = strcmp(suite, "all") == 0, known = all;
    if (all || strcmp(suite, "families") == 0) {
        known = true;
        suite_families();
    }
    if (all || strcmp(suite, "edges") == 0) {
        known = true;
        suite_edges();
    }
    if (all || strcmp(suite, "corrupt") == 0) {
        known = true;
        suite_corrupt();
    }
    if (all || strcmp(suite, "fixpoint") == 0) {
        known = true;
        suite_fixpoint();
    }
    if (!known) {
        fprintf(stderr, "unknown suite %s (families, edges, corrupt, fixpoint, all)\n", suite);
        return 2;
    }
    CU(cudaStreamSynchronize(g_stream));
    CU(cudaGetLastError());
    printf("test_cuda_codec %s: %" PRIu64 " checks, %" PRIu64 " failures; %" PRIu64
           " GPU runs, %" PRIu64
           " tiles, %.1f MB of messages and %.1f MB of decoded floats compared; %.1f s\n",
           suite, g_checks, g_fails, g_runs, g_tiles, g_msg_bytes / 1e6, g_float_bytes / 1e6,
           now_s() - t0);
    CU(cudaStreamDestroy(g_stream));
    return g_fails ? 1 : 0;
}
