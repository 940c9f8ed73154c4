/* cmd_bench.c - tahq bench: single-thread encode / decode throughput on an
 * LLM-like tensor at the paper operating point, beside memcpy of the same
 * number of bytes measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_ops.h"
#include "commands.h"
#include "llm_tensor.h"
#include "util.h"

#define BENCH_CHANNELS 2048u /* 8 KiB of float32 per token */
#define BENCH_SEQ 1024u

/* Called through a volatile pointer so that the copy cannot be removed. */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;
static volatile uint32_t g_sink;

static void bench_help(void)
{
    printf("usage: tahq bench [--mib N] [--reps R] [--json]\n"
           "Single-thread throughput of encode and decode at the paper operating point\n"
           "(G=64 4/3 r=800 token tau=2 nearest fp16) on an LLM-like float32 tensor of\n"
           "N MiB (default 64; [N/8, 1024, 2048] if N is a multiple of 8, else\n"
           "[1, 128*N, 2048]), beside memcpy of the same bytes in the same run.\n"
           "Reported as GB/s (10^9 bytes/s) of float32 data, best of R runs (default 5).\n");
}

static int opt_mib(const cli_option *opt, const char *v)
{
    uint32_t *mib = opt->dst;
    if (cli_parse_u32(v, 1u << 20, mib) != 0 || *mib == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --mib (need 1..1048576)", v), -1;
    return 0;
}

static int opt_reps(const cli_option *opt, const char *v)
{
    uint32_t *reps = opt->dst;
    if (cli_parse_u32(v, 100000u, reps) != 0 || *reps == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --reps (need 1..100000)", v), -1;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    uint32_t mib = 64, reps = 5;
    int json = 0, npos = 0;
    const cli_option own[] = {CLI_FLAG("--json", &json), CLI_OPT("--mib", opt_mib, &mib),
                              CLI_OPT("--reps", opt_reps, &reps), CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int prc = cli_parse(argc, argv, tables, NULL, 0, &npos);
    if (prc == CLI_HELP)
        bench_help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;

    tahq_config cfg;
    tahq_config_default(&cfg);
    tahq_shape shape;
    uint64_t rows = (uint64_t)mib * 128u; /* 128 rows of 2048 float32 = 1 MiB */
    shape.channels = BENCH_CHANNELS;
    if (rows % BENCH_SEQ == 0) {
        shape.batch = (uint32_t)(rows / BENCH_SEQ);
        shape.seq_len = BENCH_SEQ;
    } else {
        shape.batch = 1;
        shape.seq_len = (uint32_t)rows;
    }
    uint64_t n = shape_count(&shape);
    size_t in_bytes = (size_t)n * sizeof(float);

    size_t cap = 0, wsz = 0;
    tahq_status st = tahq_encode_bound(&cfg, &shape, &cap);
    if (st == TAHQ_OK)
        st = tahq_encode_workspace_size(&cfg, &shape, &wsz);
    if (st != TAHQ_OK)
        return cli_fail(EXIT_RUNTIME, "size query failed: %s", tahq_strerror(st));

    float *x = malloc(in_bytes);
    float *y = malloc(in_bytes);
    float *cp = malloc(in_bytes);
    uint8_t *msg = malloc(cap);
    void *ws = wsz ? malloc(wsz) : NULL;
    if (!x || !y || !cp || !msg || (wsz && !ws)) {
        free(x);
        free(y);
        free(cp);
        free(msg);
        free(ws);
        return cli_fail(EXIT_RUNTIME, "out of memory (%u MiB tensor)", (unsigned)mib);
    }
    int rc = 0;
    if (llm_tensor_fill(x, shape.batch, shape.seq_len, shape.channels, LLM_DEFAULT_SEED) != 0) {
        rc = cli_fail(EXIT_RUNTIME, "out of memory");
        goto out;
    }
    /* touch every page of the outputs once before timing */
    memset(y, 0, in_bytes);
    memset(cp, 0, in_bytes);
    memset(msg, 0, cap);
    if (ws)
        memset(ws, 0, wsz);

    double best_cpy = 1e300, best_enc = 1e300, best_dec = 1e300;
    size_t len = 0;
    for (uint32_t r = 0; r < reps; ++r) {
        double t0 = cli_now();
        memcpy_fn(cp, x, in_bytes);
        double t1 = cli_now();
        g_sink += ((const uint32_t *)(const void *)cp)[(r * 7919u) % n];
        st = tahq_encode(&cfg, &shape, x, ws, wsz, msg, cap, &len);
        double t2 = cli_now();
        if (st != TAHQ_OK) {
            rc = cli_fail(EXIT_RUNTIME, "encode failed: %s", tahq_strerror(st));
            goto out;
        }
        st = tahq_decode(msg, len, y, (size_t)n);
        double t3 = cli_now();
        if (st != TAHQ_OK) {
            rc = cli_fail(EXIT_RUNTIME, "decode failed: %s", tahq_strerror(st));
            goto out;
        }
        g_sink += msg[len / 2u];
        if (t1 - t0 < best_cpy)
            best_cpy = t1 - t0;
        if (t2 - t1 < best_enc)
            best_enc = t2 - t1;
        if (t3 - t2 < best_dec)
            best_dec = t3 - t2;
    }
    double gb = (double)in_bytes / 1e9;
    double cpy = gb / best_cpy, enc = gb / best_enc, dec = gb / best_dec;
    double bpe = (double)len * 8.0 / (double)n;
    char txt[160];
    cli_config_text(&cfg, txt, sizeof txt);
    if (json) {
        rc = cli_json_print(
            stdout,
            json_pack("{s:s, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, "
                      "s:o, s:o}",
                      "command", "bench", "shape", cli_jshape(&shape), "input_bytes",
                      (json_int_t)in_bytes, "message_bytes", (json_int_t)len, "bits_per_element",
                      cli_jnum(bpe), "config", cli_jconfig(&cfg), "reps", (json_int_t)reps,
                      "threads", (json_int_t)1, "memcpy_gbps", cli_jnum(cpy), "encode_gbps",
                      cli_jnum(enc), "decode_gbps", cli_jnum(dec), "encode_over_memcpy",
                      cli_jnum(enc / cpy), "decode_over_memcpy", cli_jnum(dec / cpy),
                      "memcpy_s", cli_jnum(best_cpy), "encode_s", cli_jnum(best_enc),
                      "decode_s", cli_jnum(best_dec)));
    } else {
        printf("tahq bench: LLM-like tensor [%u, %u, %u], %zu bytes float32 (%.1f MiB); %s\n",
               (unsigned)shape.batch, (unsigned)shape.seq_len, (unsigned)shape.channels,
               in_bytes, (double)in_bytes / 1048576.0, txt);
        printf("single thread, best of %u runs, GB/s = 10^9 bytes of float32 per second\n",
               (unsigned)reps);
        printf("message: %zu bytes, %.4f bits/element\n", len, bpe);
        printf("memcpy  %8.3f GB/s  %9.3f ms\n", cpy, best_cpy * 1e3);
        printf("encode  %8.3f GB/s  %9.3f ms  %.4f x memcpy\n", enc, best_enc * 1e3, enc / cpy);
        printf("decode  %8.3f GB/s  %9.3f ms  %.4f x memcpy\n", dec, best_dec * 1e3, dec / cpy);
    }
out:
    free(x);
    free(y);
    free(cp);
    free(msg);
    free(ws);
    return rc;
}
