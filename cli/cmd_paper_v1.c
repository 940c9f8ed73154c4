/* SPDX-License-Identifier: MIT */
/* cmd_paper_v1.c - tahq encode/decode --profile paper-v1: the authors'
 * headerless format (ref/SPEC.md Appendix A) through libtahq. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_ops.h"
#include "tahq_paper_v1.h"
#include "tahq_parallel.h"
#include "tahq_spec.h"
#include "commands.h"
#include "npy.h"
#include "paper_v1_cli.h"
#include "util.h"

int paper_v1_profile(const char *v)
{
    if (strcmp(v, "paper-v1") == 0)
        return 1;
    cli_fail(EXIT_USAGE, "--profile: unknown profile '%s' (paper-v1)", v);
    return -1;
}

/* The paper-v1 configuration from the parsed options: only --tile, --bits
 * and --ratio apply; the rest is fixed by the profile. */
static int to_paper_cfg(const enc_opts *o, tahq_paper_v1_config *p)
{
    tahq_config d;
    tahq_config_default(&d);
    const tahq_config *c = &o->cfg;
    if (c->alloc != d.alloc || c->rounding != d.rounding || c->meta != d.meta ||
        c->seed != d.seed || memcmp(&c->tau, &d.tau, sizeof d.tau) != 0)
        return cli_fail(EXIT_USAGE,
                        "--profile paper-v1 fixes alloc token, tau 2, nearest rounding, fp16 "
                        "metadata (only --tile, --bits and --ratio apply)");
    p->tile = c->tile;
    p->hi_bits = c->hi_bits;
    p->lo_bits = c->lo_bits;
    p->hi_permille = c->hi_permille;
    return 0;
}

static void cfg_text(const tahq_paper_v1_config *p, char *buf, size_t n)
{
    snprintf(buf, n, "paper-v1 G=%u %u/%u r=%u", (unsigned)p->tile, (unsigned)p->hi_bits,
             (unsigned)p->lo_bits, (unsigned)p->hi_permille);
}

void paper_v1_encode_help(void)
{
    printf("usage: tahq encode --profile paper-v1 IN OUT [--tile G] [--bits HI/LO]\n"
           "                   [--ratio PERMILLE] [--shape BxSxC | --batch B --seq S]\n"
           "                   [--threads N] [--json]\n"
           "Compress a float32 tensor in the authors' headerless format (ref/SPEC.md\n"
           "Appendix A): token allocation, fp16 zero/scale, MSB-first bit stream.\n"
           "Decoding needs the same shape and options (tahq decode --profile paper-v1).\n"
           "Defaults: --tile 64 --bits 4/3 --ratio 800. --threads N > 1: the fast codec\n"
           "(tahq_paper_v1_encode_parallel) on N threads, the same message.\n");
}

int paper_v1_encode(const enc_opts *opts, const char **pos, int npos, int json, uint32_t threads)
{
    enc_opts o = *opts;
    if (npos != 2)
        return cli_fail(EXIT_USAGE, "need IN and OUT (see tahq encode --help)");
    tahq_paper_v1_config pc;
    int rc = to_paper_cfg(&o, &pc);
    if (rc)
        return rc;
    tahq_shape shape = {1, 1, 1};
    size_t cap = 0, wsz = 0;
    tahq_status st = tahq_paper_v1_check(&pc, &shape);
    if (st == TAHQ_ERR_CONFIG)
        return cli_fail(EXIT_USAGE, "invalid paper-v1 configuration: %s", tahq_strerror(st));
    npy_tensor t;
    if ((rc = load_input(pos[0], &o, &t, &shape)) != 0)
        return rc;
    st = tahq_paper_v1_encode_bound(&pc, &shape, &cap);
    if (st == TAHQ_OK)
        st = threads > 1 ? tahq_paper_v1_encode_parallel_workspace_size(&pc, &shape, &wsz)
                         : tahq_paper_v1_workspace_size(&pc, &shape, &wsz);
    if (st != TAHQ_OK) {
        npy_free(&t);
        return cli_fail(EXIT_RUNTIME, "%s: shape [%u, %u, %u]: %s (%s)", pos[0],
                        (unsigned)shape.batch, (unsigned)shape.seq_len, (unsigned)shape.channels,
                        tahq_strerror(st), tahq_status_name(st));
    }
    uint8_t *msg = malloc(cap ? cap : 1);
    void *ws = malloc(wsz ? wsz : 1);
    size_t len = 0;
    if (!msg || !ws) {
        free(msg);
        free(ws);
        npy_free(&t);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    tahq_parallel par;
    tahq_parallel_threads(&par, threads);
    st = threads > 1
             ? tahq_paper_v1_encode_parallel(&pc, &shape, t.data, ws, wsz, msg, cap, &len, &par)
             : tahq_paper_v1_encode(&pc, &shape, t.data, ws, wsz, msg, cap, &len);
    free(ws);
    npy_free(&t);
    if (st != TAHQ_OK) {
        free(msg);
        return cli_fail(EXIT_RUNTIME, "%s: encode failed: %s (%s)", pos[0], tahq_strerror(st),
                        tahq_status_name(st));
    }
    rc = cli_write_file(pos[1], msg, len);
    free(msg);
    if (rc)
        return rc;
    uint64_t n = shape_count(&shape);
    char txt[96];
    cfg_text(&pc, txt, sizeof txt);
    if (json) {
        return cli_json_print(
            stdout,
            json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:o}", "command",
                      "encode", "profile", "paper-v1", "input", cli_jstr(pos[0]), "output",
                      cli_jstr(pos[1]), "shape", cli_jshape(&shape), "config", "tile",
                      (json_int_t)pc.tile, "hi_bits", (json_int_t)pc.hi_bits, "lo_bits",
                      (json_int_t)pc.lo_bits, "hi_permille", (json_int_t)pc.hi_permille, "elements",
                      (json_int_t)n, "bytes", (json_int_t)len, "bits_per_element",
                      cli_jnum((double)len * 8.0 / (double)n)));
    } else {
        printf("%s -> %s: [%u, %u, %u] %llu elements, %zu bytes, %.4f bits/element (%s)\n", pos[0],
               pos[1], (unsigned)shape.batch, (unsigned)shape.seq_len, (unsigned)shape.channels,
               (unsigned long long)n, len, (double)len * 8.0 / (double)n, txt);
    }
    return 0;
}

void paper_v1_decode_help(void)
{
    printf("usage: tahq decode --profile paper-v1 IN OUT --shape BxSxC [--tile G]\n"
           "                   [--bits HI/LO] [--ratio PERMILLE] [--threads N] [--json]\n"
           "Decompress a paper-v1 message (ref/SPEC.md Appendix A). The format has no\n"
           "header: the shape and the options must be those of the encoder. OUT is a\n"
           "float32 .npy of shape [B, S, C], or raw float32 if OUT ends in .f32 (no other).\n"
           "--threads N > 1: the fast codec (tahq_paper_v1_decode_parallel), the same floats.\n");
}

int paper_v1_decode(const enc_opts *opts, const char **pos, int npos, int json, uint32_t threads)
{
    enc_opts o = *opts;
    if (npos != 2)
        return cli_fail(EXIT_USAGE, "need IN and OUT (see tahq decode --help)");
    const int raw_out = tensor_out_raw(pos[1]);
    if (raw_out < 0)
        return EXIT_USAGE;
    tahq_paper_v1_config pc;
    int rc = to_paper_cfg(&o, &pc);
    if (rc)
        return rc;
    if (!o.shape_text)
        return cli_fail(EXIT_USAGE, "--profile paper-v1 needs --shape BxSxC (the format has no "
                                    "header)");
    npy_tensor dims;
    if (npy_parse_shape_text(o.shape_text, &dims) != 0 || dims.ndim < 2 || dims.ndim > 3)
        return cli_fail(EXIT_USAGE, "--shape: invalid value '%s' (expected BxSxC or ROWSxC)",
                        o.shape_text);
    uint64_t B = dims.ndim == 3 ? dims.dims[0] : 1u, S = dims.dims[dims.ndim - 2u],
             C = dims.dims[dims.ndim - 1u];
    if (B > UINT32_MAX || S > UINT32_MAX || C > UINT32_MAX)
        return cli_fail(EXIT_USAGE, "--shape: '%s' too large", o.shape_text);
    tahq_shape shape = {(uint32_t)B, (uint32_t)S, (uint32_t)C};
    tahq_status st = tahq_paper_v1_check(&pc, &shape);
    if (st != TAHQ_OK)
        return cli_fail(st == TAHQ_ERR_CONFIG ? EXIT_USAGE : EXIT_RUNTIME,
                        "paper-v1 configuration/shape [%u, %u, %u]: %s (%s)", (unsigned)B,
                        (unsigned)S, (unsigned)C, tahq_strerror(st), tahq_status_name(st));
    uint8_t *msg;
    size_t len;
    size_t most = 0; /* the longest stream of this configuration and shape */
    st = tahq_paper_v1_encode_bound(&pc, &shape, &most);
    if (st != TAHQ_OK)
        return cli_fail(EXIT_RUNTIME, "paper-v1 shape [%u, %u, %u]: %s (%s)", (unsigned)B,
                        (unsigned)S, (unsigned)C, tahq_strerror(st), tahq_status_name(st));
    if ((rc = cli_read_file_max(pos[0], most, &msg, &len)) != 0)
        return rc;
    uint64_t n = B * S * C;
    float *y = malloc((size_t)n * sizeof *y);
    if (!y) {
        free(msg);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    tahq_parallel par;
    tahq_parallel_threads(&par, threads);
    st = threads > 1 ? tahq_paper_v1_decode_parallel(msg, len, &pc, &shape, y, (size_t)n, &par)
                     : tahq_paper_v1_decode(msg, len, &pc, &shape, y, (size_t)n);
    free(msg);
    if (st != TAHQ_OK) {
        free(y);
        return cli_fail(EXIT_RUNTIME, "%s: decode failed: %s (%s)", pos[0], tahq_strerror(st),
                        tahq_status_name(st));
    }
    uint64_t d3[3] = {B, S, C};
    if (raw_out)
        rc = raw_f32_write(pos[1], n, y);
    else
        rc = npy_write(pos[1], 3, d3, y);
    free(y);
    if (rc)
        return rc;
    if (json) {
        return cli_json_print(
            stdout, json_pack("{s:s, s:s, s:o, s:o, s:[I, I, I], s:I, s:I}", "command", "decode",
                              "profile", "paper-v1", "input", cli_jstr(pos[0]), "output",
                              cli_jstr(pos[1]), "shape", (json_int_t)B, (json_int_t)S,
                              (json_int_t)C, "elements", (json_int_t)n, "bytes", (json_int_t)len));
    } else {
        printf("%s -> %s: [%u, %u, %u] %llu elements from %zu bytes (paper-v1)\n", pos[0], pos[1],
               (unsigned)B, (unsigned)S, (unsigned)C, (unsigned long long)n, len);
    }
    return 0;
}
