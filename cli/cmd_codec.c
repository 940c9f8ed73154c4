/* SPDX-License-Identifier: MIT */
/* cmd_codec.c - tahq encode, decode, inspect, roundtrip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_ops.h"
#include "commands.h"
#include "npy.h"
#include "paper_v1_cli.h"
#include "util.h"

#define MAX_POS 4

/* --threads of encode, decode and roundtrip (1: tahq_encode / tahq_decode). */
static uint32_t g_threads = 1;

/* The arguments of encode, decode and roundtrip: --json, the encoder and
 * shape options (one table each, shared with the other commands) and, with
 * profile non-NULL, --profile. Returns 0 to go on, or the exit status (0
 * after --help, printed by help, or by the paper-v1 help pv1_help when
 * --profile paper-v1 came first). *pv1 is 1 with --profile paper-v1. */
static int parse_codec_args(int argc, char **argv, enc_opts *o, const char **pos, int *npos,
                            int *json, int *pv1, void (*help)(void), void (*pv1_help)(void))
{
    const char *profile = NULL;
    cli_option own[] = {CLI_FLAG("--json", json), CLI_OPT("--threads", opt_threads, &g_threads),
                        CLI_VALUE("--profile", &profile), CLI_END};
    if (!pv1)
        own[2] = (cli_option)CLI_END;
    cli_option cfg[ENC_CONFIG_OPTIONS + 1], shp[SHAPE_OPTIONS + 1];
    enc_config_options(o, cfg);
    shape_options(o, shp);
    const cli_option *const tables[] = {own, cfg, shp, NULL};
    int rc = cli_parse(argc, argv, tables, pos, MAX_POS, npos);
    if (rc == EXIT_USAGE)
        return rc;
    if (pv1) {
        *pv1 = 0;
        if (profile && (*pv1 = paper_v1_profile(profile)) < 0)
            return EXIT_USAGE;
    }
    if (rc == CLI_HELP) {
        if (pv1 && *pv1)
            pv1_help();
        else
            help();
        return 0;
    }
    return -1;
}

static int check_shape_for(const char *what, const tahq_config *cfg, const tahq_shape *shape)
{
    tahq_status st = tahq_check_shape(cfg, shape);
    if (st == TAHQ_OK)
        return 0;
    return cli_fail(EXIT_RUNTIME,
                    "%s: shape [%u, %u, %u] does not fit tile %u (C must be a multiple of G; "
                    "B, S >= 1; at most 2^40 elements): %s",
                    what, (unsigned)shape->batch, (unsigned)shape->seq_len,
                    (unsigned)shape->channels, (unsigned)cfg->tile, tahq_strerror(st));
}

/* Encode with a readable error; 0 or exit code. */
static int encode_or_fail(const char *what, const tahq_config *cfg, const tahq_shape *shape,
                          const float *x, uint8_t **msg, size_t *len)
{
    int rc = check_shape_for(what, cfg, shape);
    if (rc)
        return rc;
    int st = run_encode_threads(cfg, shape, x, g_threads, msg, len);
    if (st != TAHQ_OK)
        return cli_fail(EXIT_RUNTIME, "%s: encode failed: %s (%s)", what, cli_status_text(st),
                        st == CLI_ERR_NOMEM ? "malloc" : tahq_status_name(st));
    return 0;
}

/* ------------------------------------------------------------------ */

static void encode_help(void)
{
    printf("usage: tahq encode IN OUT [options] [--json]\n"
           "Compress a float32 tensor into a tahq message (format %u).\n"
           "IN is a .npy file ('<f4', C order, [rows, C] or [B, S, C]) or a raw\n"
           "little-endian float32 file with --shape. OUT receives the message.\n\n",
           (unsigned)TAHQ_FORMAT_VERSION);
    enc_opts_help(stdout);
    printf("  --json                   print the result as JSON\n");
    printf("  --threads N              split the work over N threads (1..%u; default 1);\n"
           "                           the output is the same for every N\n",
           (unsigned)TAHQ_JOBS_MAX);
    printf("  --profile paper-v1       the authors' headerless format instead (see\n"
           "                           tahq encode --profile paper-v1 --help)\n");
}

int cmd_encode(int argc, char **argv)
{
    enc_opts o;
    enc_opts_init(&o);
    const char *pos[MAX_POS];
    int npos = 0, json = 0, pv1 = 0;
    int done = parse_codec_args(argc, argv, &o, pos, &npos, &json, &pv1, encode_help,
                                paper_v1_encode_help);
    if (done >= 0)
        return done;
    if (pv1)
        return paper_v1_encode(&o, pos, npos, json, g_threads);
    if (npos != 2)
        return cli_fail(EXIT_USAGE, "need IN and OUT (see tahq encode --help)");
    int rc = enc_opts_check(&o);
    if (rc)
        return rc;
    npy_tensor t;
    tahq_shape shape;
    if ((rc = load_input(pos[0], &o, &t, &shape)) != 0)
        return rc;
    uint8_t *msg = NULL;
    size_t len = 0;
    rc = encode_or_fail(pos[0], &o.cfg, &shape, t.data, &msg, &len);
    npy_free(&t);
    if (rc)
        return rc;
    tahq_header h;
    tahq_status st = tahq_parse_header(msg, len, &h);
    if (st != TAHQ_OK) {
        free(msg);
        return cli_fail(EXIT_RUNTIME, "%s: own message does not parse: %s (%s)", pos[1],
                        tahq_strerror(st), tahq_status_name(st));
    }
    if ((rc = cli_write_file(pos[1], msg, len)) != 0) {
        free(msg);
        return rc;
    }
    free(msg);
    uint64_t n = shape_count(&shape);
    double bpe = (double)len * 8.0 / (double)n;
    if (json) {
        int jrc = cli_json_print(
            stdout,
            json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:I, s:I}", "command", "encode",
                      "input", cli_jstr(pos[0]), "output", cli_jstr(pos[1]), "shape",
                      cli_jshape(&shape), "config", cli_jconfig(&o.cfg), "elements", (json_int_t)n,
                      "bytes", (json_int_t)len, "bits_per_element", cli_jnum(bpe), "n_low",
                      (json_int_t)h.n_low, "n_flagged", (json_int_t)h.n_flagged));
        if (jrc)
            return jrc;
    } else {
        char txt[160];
        cli_config_text(&o.cfg, txt, sizeof txt);
        printf("%s -> %s: [%u, %u, %u] %llu elements, %zu bytes, %.4f bits/element, "
               "%llu low units, %llu flagged tiles (%s)\n",
               pos[0], pos[1], (unsigned)shape.batch, (unsigned)shape.seq_len,
               (unsigned)shape.channels, (unsigned long long)n, len, bpe,
               (unsigned long long)h.n_low, (unsigned long long)h.n_flagged, txt);
    }
    return 0;
}

/* ------------------------------------------------------------------ */

/* Reads a message and parses its header; with check_crc = 0 without the CRC,
 * for a caller whose next library call checks it (a message's CRC is then
 * computed once). */
static int read_message(const char *path, uint8_t **msg, size_t *len, tahq_header *h, int check_crc)
{
    int rc = cli_read_message(path, msg, len);
    if (rc)
        return rc;
    tahq_status st =
        check_crc ? tahq_parse_header(*msg, *len, h) : tahq_parse_header_nocrc(*msg, *len, h);
    if (st != TAHQ_OK) {
        free(*msg);
        *msg = NULL;
        return cli_fail(EXIT_RUNTIME, "%s: not a valid tahq message: %s (%s)", path,
                        tahq_strerror(st), tahq_status_name(st));
    }
    return 0;
}

static void decode_help(void)
{
    printf("usage: tahq decode IN.tahq OUT [--threads N] [--json]\n"
           "Decompress a tahq message. OUT is a float32 .npy of shape [B, S, C], or a\n"
           "raw little-endian float32 file if OUT ends in .f32; other names are refused.\n"
           "  --threads N          decode on N threads (1..%u; default 1); the output is\n"
           "                       the same for every N\n"
           "  --profile paper-v1   the authors' headerless format: needs --shape and the\n"
           "                       encoder's options (tahq decode --profile paper-v1 --help)\n",
           (unsigned)TAHQ_JOBS_MAX);
}

int cmd_decode(int argc, char **argv)
{
    enc_opts o;
    enc_opts_init(&o);
    const char *pos[MAX_POS];
    int npos = 0, json = 0, pv1 = 0;
    int done = parse_codec_args(argc, argv, &o, pos, &npos, &json, &pv1, decode_help,
                                paper_v1_decode_help);
    if (done >= 0)
        return done;
    if (pv1)
        return paper_v1_decode(&o, pos, npos, json, g_threads);
    /* a message carries its configuration and shape */
    if (o.first_given)
        return cli_fail(EXIT_USAGE,
                        "%s applies only with --profile paper-v1 (see tahq decode "
                        "--help)",
                        o.first_given);
    if (npos != 2)
        return cli_fail(EXIT_USAGE, "need IN.tahq and OUT (see tahq decode --help)");
    const int raw_out = tensor_out_raw(pos[1]);
    if (raw_out < 0)
        return EXIT_USAGE;
    uint8_t *msg;
    size_t len;
    tahq_header h;
    int rc = read_message(pos[0], &msg, &len, &h, 0);
    if (rc)
        return rc;
    float *y;
    uint64_t n;
    int st = run_decode_threads(msg, len, g_threads, &y, &n);
    free(msg);
    if (st == TAHQ_ERR_CRC) /* the one check read_message left to the decoder */
        return cli_fail(EXIT_RUNTIME, "%s: not a valid tahq message: %s (%s)", pos[0],
                        tahq_strerror(st), tahq_status_name(st));
    if (st != TAHQ_OK)
        return cli_fail(EXIT_RUNTIME, "%s: decode failed: %s (%s)", pos[0], cli_status_text(st),
                        tahq_status_name(st));
    uint64_t dims[3] = {h.shape.batch, h.shape.seq_len, h.shape.channels};
    if (raw_out)
        rc = raw_f32_write(pos[1], n, y);
    else
        rc = npy_write(pos[1], 3, dims, y);
    free(y);
    if (rc)
        return rc;
    if (json) {
        int jrc =
            cli_json_print(stdout, json_pack("{s:s, s:o, s:o, s:o, s:I, s:I}", "command", "decode",
                                             "input", cli_jstr(pos[0]), "output", cli_jstr(pos[1]),
                                             "shape", cli_jshape(&h.shape), "elements",
                                             (json_int_t)n, "bytes", (json_int_t)len));
        if (jrc)
            return jrc;
    } else {
        printf("%s -> %s: [%u, %u, %u] %llu elements from %zu bytes\n", pos[0], pos[1],
               (unsigned)h.shape.batch, (unsigned)h.shape.seq_len, (unsigned)h.shape.channels,
               (unsigned long long)n, len);
    }
    return 0;
}

/* ------------------------------------------------------------------ */

/* Above this many bytes of --tiles output, stderr says how much follows
 * (a large message gives millions of tiles). */
#define TILES_SIZE_NOTE (16u << 20)

/* The size of the --json tile records, from the first one (released). */
static void say_tiles_size(json_t *first, uint64_t n_tiles)
{
    char *t = cli_json_text(first);
    double bytes = t ? (double)(strlen(t) + 4u) * (double)n_tiles : 0.0;
    free(t);
    if (bytes > (double)TILES_SIZE_NOTE)
        fprintf(stderr, "tahq inspect: --tiles --json: %llu tile records, about %.1f MB, follow\n",
                (unsigned long long)n_tiles, bytes / 1e6);
}

static void inspect_help(void)
{
    printf("usage: tahq inspect IN.tahq [--tiles] [--json]\n"
           "Print the header of a tahq message, its size in bits per element (all\n"
           "bytes counted), the high/low precision split and the flagged tile count.\n"
           "--tiles adds one line per tile: bits, flagged, pivot, zero-point, scale and\n"
           "the largest per-element error bound (SPEC section 6) of the tile.\n");
}

/* inspect --tiles: one line per tile. */
static void print_tile_table(const tahq_tile_info *info, const double *bound, uint64_t n_tiles,
                             uint64_t per_row)
{
    if (n_tiles * 96u > TILES_SIZE_NOTE)
        fprintf(stderr, "tahq inspect: --tiles: %llu lines of 96 bytes (%.1f MB) follow\n",
                (unsigned long long)n_tiles, (double)n_tiles * 96.0 / 1e6);
    printf("%8s %8s %5s %4s %7s %5s %15s %15s %15s\n", "tile", "row", "col", "bits", "flagged",
           "pivot", "zero", "scale", "bound");
    for (uint64_t t = 0; t < n_tiles; ++t) {
        double bmax = bound[t];
        char piv[16];
        if (info[t].flagged)
            snprintf(piv, sizeof piv, "%u", (unsigned)info[t].pivot);
        else
            snprintf(piv, sizeof piv, "-");
        printf("%8llu %8llu %5llu %4u %7s %5s %15.9g %15.9g %15.9g\n", (unsigned long long)t,
               (unsigned long long)(t / per_row), (unsigned long long)(t % per_row),
               (unsigned)info[t].bits, info[t].flagged ? "yes" : "no", piv, (double)info[t].zero,
               (double)info[t].scale, bmax);
    }
}

int cmd_inspect(int argc, char **argv)
{
    const char *pos[MAX_POS];
    int npos = 0, json = 0, tiles = 0;
    const cli_option own[] = {CLI_FLAG("--json", &json), CLI_FLAG("--tiles", &tiles), CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int prc = cli_parse(argc, argv, tables, pos, MAX_POS, &npos);
    if (prc == CLI_HELP)
        inspect_help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;
    if (npos != 1)
        return cli_fail(EXIT_USAGE, "need one IN.tahq (see tahq inspect --help)");
    const char *path = pos[0];
    uint8_t *msg;
    size_t len;
    tahq_header h;
    int rc = read_message(path, &msg, &len, &h, 1);
    if (rc)
        return rc;

    const tahq_config *c = &h.config;
    uint64_t n = shape_count(&h.shape);
    uint64_t rows = (uint64_t)h.shape.batch * h.shape.seq_len;
    uint64_t per_row = h.shape.channels / c->tile;
    uint64_t n_tiles = rows * per_row;

    tahq_tile_info *info = malloc(n_tiles ? (size_t)n_tiles * sizeof *info : 1u);
    if (!info) {
        free(msg);
        return cli_fail(EXIT_RUNTIME, "%s: out of memory", path);
    }
    tahq_status st = tahq_tile_infos(msg, len, info, (size_t)n_tiles);
    if (st != TAHQ_OK) {
        free(info);
        free(msg);
        return cli_fail(EXIT_RUNTIME, "%s: tile infos: %s (%s)", path, tahq_strerror(st),
                        tahq_status_name(st));
    }
    double *bound = NULL;
    if (tiles) {
        int bst = run_tile_bound(msg, len, n_tiles, &bound);
        if (bst != TAHQ_OK) {
            free(info);
            free(msg);
            return cli_fail(EXIT_RUNTIME, "%s: error bound: %s (%s)", path, cli_status_text(bst),
                            tahq_status_name(bst));
        }
    }

    /* units of the precision split */
    const char *unit = cli_alloc_per_row(c->alloc)   ? "token"
                       : c->alloc == TAHQ_ALLOC_TILE ? "tile"
                                                     : "none";
    uint64_t n_units = cli_alloc_per_row(c->alloc) ? rows : n_tiles;
    uint64_t low_tiles_hdr = cli_alloc_per_row(c->alloc) ? h.n_low * per_row : h.n_low;
    uint64_t flagged = 0, low_tiles = 0;
    for (uint64_t t = 0; t < n_tiles; ++t) {
        flagged += info[t].flagged ? 1u : 0u;
        low_tiles += (info[t].bits == c->lo_bits && c->lo_bits != c->hi_bits) ? 1u : 0u;
    }
    int consistent =
        flagged == h.n_flagged && (c->lo_bits == c->hi_bits || low_tiles == low_tiles_hdr);
    if (c->lo_bits == c->hi_bits)
        low_tiles = low_tiles_hdr;
    double bpe = (double)len * 8.0 / (double)n;

    if (json) {
        json_t *out = json_pack(
            "{s:s, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:o, s:s, s:I, s:I, s:I, s:I, "
            "s:I, s:I}",
            "command", "inspect", "file", cli_jstr(path), "bytes", (json_int_t)len, "header_bytes",
            (json_int_t)TAHQ_HEADER_BYTES, "payload_bytes", (json_int_t)h.payload_bytes, "version",
            (json_int_t)h.version, "config", cli_jconfig(c), "shape", cli_jshape(&h.shape),
            "elements", (json_int_t)n, "tiles", (json_int_t)n_tiles, "bits_per_element",
            cli_jnum(bpe), "unit", unit, "units", (json_int_t)n_units, "n_low", (json_int_t)h.n_low,
            "low_tiles", (json_int_t)low_tiles, "high_tiles", (json_int_t)(n_tiles - low_tiles),
            "n_flagged", (json_int_t)h.n_flagged, "crc32c", (json_int_t)h.crc);
        /* the tiles are streamed, one record built, printed and released
         * at a time: no document of every tile is held in memory */
        /* cli_json_put releases what it prints */
        int jrc = cli_json_put(stdout, "", out, 0, tiles) == 0
                      ? 0
                      : cli_fail(EXIT_RUNTIME, "out of memory (JSON output)");
        for (uint64_t t = 0; !jrc && tiles && t < n_tiles; ++t) {
            double bmax = bound[t];
            json_t *ti = json_pack(
                "{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "tile", (json_int_t)t, "row",
                (json_int_t)(t / per_row), "col", (json_int_t)(t % per_row), "bits",
                (json_int_t)info[t].bits, "flagged", (json_int_t)info[t].flagged, "pivot",
                (json_int_t)info[t].pivot, "zero", cli_jnum((double)info[t].zero), "scale",
                cli_jnum((double)info[t].scale), "bound", cli_jnum(bmax));
            if (t == 0 && ti)
                say_tiles_size(json_incref(ti), n_tiles);
            if (cli_json_put(stdout, t ? ",\n  " : ", \"tile_info\": [\n  ", ti, 0, 0) != 0)
                jrc = cli_fail(EXIT_RUNTIME, "out of memory (JSON output)");
        }
        if (!jrc && tiles)
            printf("%s]}\n", n_tiles ? "\n" : ", \"tile_info\": [");
        else if (!jrc)
            putchar('\n');
        if (!jrc && (fflush(stdout) != 0 || ferror(stdout)))
            jrc = cli_fail(EXIT_RUNTIME, "cannot write the JSON output");
        if (jrc) {
            free(bound);
            free(info);
            free(msg);
            return jrc;
        }
    } else {
        char txt[160];
        cli_config_text(c, txt, sizeof txt);
        printf("file            %s\n", path);
        printf("message bytes   %zu (header %u, payload %llu)\n", len, (unsigned)TAHQ_HEADER_BYTES,
               (unsigned long long)h.payload_bytes);
        printf("format version  %u\n", (unsigned)h.version);
        printf("config          %s seed=%llu\n", txt, (unsigned long long)c->seed);
        printf("shape           B=%u S=%u C=%u (%llu elements, %llu tiles of %u)\n",
               (unsigned)h.shape.batch, (unsigned)h.shape.seq_len, (unsigned)h.shape.channels,
               (unsigned long long)n, (unsigned long long)n_tiles, (unsigned)c->tile);
        printf("bits/element    %.4f (all message bytes counted)\n", bpe);
        printf("precision       alloc %s: %llu of %llu units low (%u bits), %llu high "
               "(%u bits); tiles: %llu low, %llu high\n",
               unit, (unsigned long long)h.n_low, (unsigned long long)n_units, (unsigned)c->lo_bits,
               (unsigned long long)(n_units - h.n_low), (unsigned)c->hi_bits,
               (unsigned long long)low_tiles, (unsigned long long)(n_tiles - low_tiles));
        printf("flagged tiles   %llu (%.2f%%)\n", (unsigned long long)h.n_flagged,
               n_tiles ? 100.0 * (double)h.n_flagged / (double)n_tiles : 0.0);
        printf("crc32c          0x%08x\n", (unsigned)h.crc);
        if (tiles)
            print_tile_table(info, bound, n_tiles, per_row);
    }
    free(bound);
    free(info);
    free(msg);
    if (!consistent)
        return cli_fail(EXIT_RUNTIME,
                        "%s: FAIL: tile infos disagree with the header (flagged %llu vs %llu, "
                        "low tiles %llu vs %llu)",
                        path, (unsigned long long)flagged, (unsigned long long)h.n_flagged,
                        (unsigned long long)low_tiles, (unsigned long long)low_tiles_hdr);
    return 0;
}

/* ------------------------------------------------------------------ */

static void roundtrip_help(void)
{
    printf("usage: tahq roundtrip IN [options] [--json]\n"
           "Encode IN, decode the message, and report the relative MSE\n"
           "(sum (x - y)^2 / sum x^2), the SQNR in dB, the largest |error|, the largest\n"
           "|error| / bound (bound: SPEC section 6 per-element error bound) and bits per\n"
           "element. Exits 1 if any element exceeds its bound.\n\n");
    enc_opts_help(stdout);
    printf("  --json                   print the result as JSON\n");
    printf("  --threads N              encode and decode over N threads (1..%u; default 1);\n"
           "                           the output is the same for every N\n",
           (unsigned)TAHQ_JOBS_MAX);
}

int cmd_roundtrip(int argc, char **argv)
{
    enc_opts o;
    enc_opts_init(&o);
    const char *pos[MAX_POS];
    int npos = 0, json = 0;
    int done = parse_codec_args(argc, argv, &o, pos, &npos, &json, NULL, roundtrip_help, NULL);
    if (done >= 0)
        return done;
    if (npos != 1)
        return cli_fail(EXIT_USAGE, "need one IN (see tahq roundtrip --help)");
    int rc = enc_opts_check(&o);
    if (rc)
        return rc;
    npy_tensor t;
    tahq_shape shape;
    if ((rc = load_input(pos[0], &o, &t, &shape)) != 0)
        return rc;
    uint8_t *msg = NULL;
    size_t len = 0;
    if ((rc = encode_or_fail(pos[0], &o.cfg, &shape, t.data, &msg, &len)) != 0) {
        npy_free(&t);
        return rc;
    }
    float *y = NULL;
    double *bound = NULL;
    uint64_t n = 0;
    int st = run_decode_threads(msg, len, g_threads, &y, &n);
    if (st == TAHQ_OK && n != t.count)
        st = TAHQ_ERR_SHAPE;
    tahq_header h; /* decoded above: the CRC is right */
    if (st == TAHQ_OK)
        st = tahq_parse_header_nocrc(msg, len, &h);
    if (st == TAHQ_OK)
        st = run_tile_bound(msg, len, n / h.config.tile, &bound);
    rt_stats s;
    if (st == TAHQ_OK) {
        compute_stats(t.data, y, bound, h.config.tile, n, &s);
        st = check_flagged_tiles_l2(msg, len, t.data, y, bound, n, &s);
    }
    free(msg);
    if (st != TAHQ_OK) {
        free(y);
        free(bound);
        npy_free(&t);
        return cli_fail(EXIT_RUNTIME, "%s: decoding the own message failed: %s", pos[0],
                        cli_status_text(st));
    }
    free(y);
    free(bound);
    npy_free(&t);
    double bpe = (double)len * 8.0 / (double)n;
    if (json) {
        int jrc = cli_json_print(
            stdout,
            json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:I, "
                      "s:I, s:I, s:b}",
                      "command", "roundtrip", "input", cli_jstr(pos[0]), "shape",
                      cli_jshape(&shape), "config", cli_jconfig(&o.cfg), "elements", (json_int_t)n,
                      "bytes", (json_int_t)len, "bits_per_element", cli_jnum(bpe), "rel_mse",
                      cli_jnum(s.rel_mse), "sqnr_db", cli_jnum(s.sqnr_db), "max_abs_err",
                      cli_jnum(s.max_abs_err), "max_err_over_bound", cli_jnum(s.max_err_over_bound),
                      "n_over_bound", (json_int_t)s.n_over_bound, "max_tile_l2_over_bound",
                      cli_jnum(s.max_l2_over_bound), "n_tiles_over_l2_bound",
                      (json_int_t)s.n_tiles_over_l2, "n_low", (json_int_t)h.n_low, "n_flagged",
                      (json_int_t)h.n_flagged, "ok", !(s.n_over_bound || s.n_tiles_over_l2)));
        if (jrc)
            return jrc;
    } else {
        char txt[160];
        cli_config_text(&o.cfg, txt, sizeof txt);
        printf("input           %s [%u, %u, %u] (%llu elements)\n", pos[0], (unsigned)shape.batch,
               (unsigned)shape.seq_len, (unsigned)shape.channels, (unsigned long long)n);
        printf("config          %s seed=%llu\n", txt, (unsigned long long)o.cfg.seed);
        printf("message bytes   %zu (%.4f bits/element)\n", len, bpe);
        printf("relative MSE    %.6e\n", s.rel_mse);
        printf("SQNR            %.3f dB\n", s.sqnr_db);
        printf("max |error|     %.9g\n", s.max_abs_err);
        printf("max error/bound %.6f\n", s.max_err_over_bound);
        printf("max tile L2/bound %.6f (flagged tiles, SPEC 6.3)\n", s.max_l2_over_bound);
        printf("low units       %llu\n", (unsigned long long)h.n_low);
        printf("flagged tiles   %llu\n", (unsigned long long)h.n_flagged);
    }
    if (s.n_over_bound)
        return cli_fail(EXIT_RUNTIME,
                        "FAIL: %llu elements exceed their error bound (first: element %llu, "
                        "|error| %.17g > bound %.17g)",
                        (unsigned long long)s.n_over_bound, (unsigned long long)s.first_over,
                        s.first_over_err, s.first_over_bound);
    if (s.n_tiles_over_l2)
        return cli_fail(
            EXIT_RUNTIME, "FAIL: %llu flagged tiles exceed their L2 error bound (first: tile %llu)",
            (unsigned long long)s.n_tiles_over_l2, (unsigned long long)s.first_tile_over_l2);
    if (!json)
        printf("ok: every element within its error bound, every flagged tile within its L2 "
               "bound\n");
    return 0;
}
