/* SPDX-License-Identifier: MIT */
#include "codec_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

void enc_opts_init(enc_opts *o)
{
    memset(o, 0, sizeof *o);
    tahq_config_default(&o->cfg);
}

void enc_opts_help(FILE *f)
{
    fputs("Encode options (defaults: the paper operating point):\n"
          "  --tile G                 tile size, power of two 8..256 (64)\n"
          "  --bits HI/LO             bits of high / low precision units, or one number (4/3)\n"
          "  --ratio PERMILLE         high-precision share in 1/1000, 0..1000 (800)\n"
          "  --alloc none|token|tile|gain  low-width units: tokens by entropy, tiles by\n"
          "                           entropy, or tokens by the error the low width adds\n"
          "                           (gain, SPEC 4.3, header version 3) (token)\n"
          "  --tau T|inf              outlier gate threshold, >= 0 or inf = never (2)\n"
          "  --rounding nearest|stochastic   rounding of codes (nearest)\n"
          "  --seed N                 stochastic rounding seed, 0..2^64-1 (0)\n"
          "  --meta fp16|bf16|fp32    type of zero-points and scales (fp16)\n"
          "  --batch B --seq S        split the rows into B sequences of S tokens\n"
          "  --shape ROWSxC|BxSxC     shape of a raw little-endian float32 input\n",
          f);
}

static int bad_value(const char *opt, const char *val, const char *want)
{
    cli_fail(EXIT_USAGE, "invalid value '%s' for %s (need %s)", val, opt, want);
    return -1;
}

/* Every handler below takes dst = the enc_opts and notes the option. */
static enc_opts *given(const cli_option *opt)
{
    enc_opts *o = opt->dst;
    if (!o->first_given)
        o->first_given = opt->name;
    return o;
}

static int opt_tile(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (cli_parse_u32(v, UINT32_MAX, &c->tile) != 0)
        return bad_value(opt->name, v, "a power of two 8..256");
    return 0;
}

static int opt_bits(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    const char *slash = strchr(v, '/');
    char hi[24];
    size_t n = slash ? (size_t)(slash - v) : strlen(v);
    if (n == 0 || n >= sizeof hi)
        return bad_value(opt->name, v, "HI/LO or BITS, e.g. 4/3");
    memcpy(hi, v, n);
    hi[n] = '\0';
    if (cli_parse_u32(hi, UINT32_MAX, &c->hi_bits) != 0)
        return bad_value(opt->name, v, "HI/LO or BITS, e.g. 4/3");
    if (slash) {
        if (cli_parse_u32(slash + 1, UINT32_MAX, &c->lo_bits) != 0)
            return bad_value(opt->name, v, "HI/LO or BITS, e.g. 4/3");
    } else {
        c->lo_bits = c->hi_bits;
    }
    return 0;
}

static int opt_ratio(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (cli_parse_u32(v, 1000u, &c->hi_permille) != 0)
        return bad_value(opt->name, v, "permille, an integer 0..1000");
    return 0;
}

static int opt_alloc(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (strcmp(v, "none") == 0)
        c->alloc = TAHQ_ALLOC_NONE;
    else if (strcmp(v, "token") == 0)
        c->alloc = TAHQ_ALLOC_TOKEN;
    else if (strcmp(v, "tile") == 0)
        c->alloc = TAHQ_ALLOC_TILE;
    else if (strcmp(v, "gain") == 0)
        c->alloc = TAHQ_ALLOC_GAIN;
    else
        return bad_value(opt->name, v, "none, token, tile or gain");
    return 0;
}

static int opt_tau(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    float t;
    if (cli_parse_float(v, &t) != 0 || !(t >= 0.0f))
        return bad_value(opt->name, v, "a number >= 0 or inf");
    c->tau = t;
    return 0;
}

static int opt_rounding(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (strcmp(v, "nearest") == 0)
        c->rounding = TAHQ_ROUND_NEAREST_EVEN;
    else if (strcmp(v, "stochastic") == 0)
        c->rounding = TAHQ_ROUND_STOCHASTIC;
    else
        return bad_value(opt->name, v, "nearest or stochastic");
    return 0;
}

static int opt_seed(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (cli_parse_u64(v, &c->seed) != 0)
        return bad_value(opt->name, v, "an integer 0..2^64-1");
    return 0;
}

static int opt_meta(const cli_option *opt, const char *v)
{
    tahq_config *c = &given(opt)->cfg;
    if (strcmp(v, "fp16") == 0)
        c->meta = TAHQ_META_FP16;
    else if (strcmp(v, "bf16") == 0)
        c->meta = TAHQ_META_BF16;
    else if (strcmp(v, "fp32") == 0)
        c->meta = TAHQ_META_FP32;
    else
        return bad_value(opt->name, v, "fp16, bf16 or fp32");
    return 0;
}

static int opt_batch(const cli_option *opt, const char *v)
{
    enc_opts *o = given(opt);
    if (cli_parse_u32(v, UINT32_MAX, &o->batch) != 0 || o->batch == 0)
        return bad_value(opt->name, v, "an integer >= 1");
    return 0;
}

static int opt_seq(const cli_option *opt, const char *v)
{
    enc_opts *o = given(opt);
    if (cli_parse_u32(v, UINT32_MAX, &o->seq) != 0 || o->seq == 0)
        return bad_value(opt->name, v, "an integer >= 1");
    return 0;
}

static int opt_shape(const cli_option *opt, const char *v)
{
    given(opt)->shape_text = v;
    return 0;
}

void enc_config_options(enc_opts *o, cli_option t[ENC_CONFIG_OPTIONS + 1])
{
    const cli_option v[ENC_CONFIG_OPTIONS + 1] = {CLI_OPT("--tile", opt_tile, o),
                                                  CLI_OPT("--bits", opt_bits, o),
                                                  CLI_OPT("--ratio", opt_ratio, o),
                                                  CLI_OPT("--alloc", opt_alloc, o),
                                                  CLI_OPT("--tau", opt_tau, o),
                                                  CLI_OPT("--rounding", opt_rounding, o),
                                                  CLI_OPT("--seed", opt_seed, o),
                                                  CLI_OPT("--meta", opt_meta, o),
                                                  CLI_END};
    memcpy(t, v, sizeof v);
}

void shape_options(enc_opts *o, cli_option t[SHAPE_OPTIONS + 1])
{
    const cli_option v[SHAPE_OPTIONS + 1] = {CLI_OPT("--batch", opt_batch, o),
                                             CLI_OPT("--seq", opt_seq, o),
                                             CLI_OPT("--shape", opt_shape, o), CLI_END};
    memcpy(t, v, sizeof v);
}

/* The option that sets a tahq_config field, for the error message. */
static const char *option_of_field(const char *why)
{
    static const struct {
        const char *field, *option;
    } map[] = {{"tile:", "--tile"},         {"hi_bits:", "--bits"}, {"lo_bits:", "--bits"},
               {"hi_permille:", "--ratio"}, {"alloc:", "--alloc"},  {"rounding:", "--rounding"},
               {"meta:", "--meta"},         {"tau:", "--tau"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strncmp(why, map[i].field, strlen(map[i].field)) == 0)
            return map[i].option;
    return NULL;
}

int enc_opts_check(const enc_opts *o)
{
    char why[160];
    if (tahq_config_explain(&o->cfg, why, sizeof why) != TAHQ_OK) {
        const char *option = option_of_field(why);
        if (option)
            return cli_fail(EXIT_USAGE, "invalid configuration: %s (option %s)", why, option);
        return cli_fail(EXIT_USAGE, "invalid configuration: %s", why);
    }
    return 0;
}

uint64_t shape_count(const tahq_shape *s)
{
    return (uint64_t)s->batch * s->seq_len * s->channels;
}

int tensor_out_raw(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || cli_has_suffix(path, ".npy"))
        return 0;
    /* a device or a FIFO (/dev/stdout, a pipe) has no extension to honour */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return 0;
    if (cli_has_suffix(path, ".f32"))
        return 1;
    cli_fail(EXIT_USAGE,
             "%s: unknown output type; give a name ending in .npy (float32 "
             "[B, S, C]) or .f32 (raw little-endian float32)",
             path);
    return -1;
}

int load_input(const char *path, const enc_opts *o, npy_tensor *t, tahq_shape *shape)
{
    int rc;
    if (o->shape_text)
        rc = raw_f32_read(path, o->shape_text, t);
    else if (cli_has_suffix(path, ".f32"))
        return cli_fail(EXIT_USAGE, "%s: raw float32 input needs --shape ROWSxC or BxSxC", path);
    else
        rc = npy_read(path, t);
    if (rc)
        return rc;

    uint64_t C = t->dims[t->ndim - 1u];
    uint64_t B = 1, S = 1;
    if (t->ndim == 3) {
        B = t->dims[0];
        S = t->dims[1];
    } else if (t->ndim == 2) {
        S = t->dims[0];
    }
    uint64_t rows = B * S;
    if (o->batch && o->seq) {
        if ((uint64_t)o->batch * o->seq != rows) {
            npy_free(t);
            return cli_fail(EXIT_USAGE, "%s: --batch %u --seq %u does not match %llu rows", path,
                            (unsigned)o->batch, (unsigned)o->seq, (unsigned long long)rows);
        }
        B = o->batch;
        S = o->seq;
    } else if (o->batch || o->seq) {
        uint64_t given = o->batch ? o->batch : o->seq;
        if (rows % given != 0) {
            npy_free(t);
            return cli_fail(EXIT_USAGE, "%s: %llu rows are not divisible by %s %llu", path,
                            (unsigned long long)rows, o->batch ? "--batch" : "--seq",
                            (unsigned long long)given);
        }
        B = o->batch ? given : rows / given;
        S = o->batch ? rows / given : given;
    }
    if (B > UINT32_MAX || S > UINT32_MAX || C > UINT32_MAX) {
        npy_free(t);
        return cli_fail(EXIT_RUNTIME, "%s: a dimension exceeds 2^32-1", path);
    }
    shape->batch = (uint32_t)B;
    shape->seq_len = (uint32_t)S;
    shape->channels = (uint32_t)C;
    return 0;
}

int run_encode(const tahq_config *cfg, const tahq_shape *shape, const float *x, uint8_t **msg,
               size_t *len)
{
    return run_encode_threads(cfg, shape, x, 1, msg, len);
}

int run_encode_threads(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                       uint32_t threads, uint8_t **msg, size_t *len)
{
    *msg = NULL;
    *len = 0;
    size_t cap = 0, wsz = 0;
    tahq_status st = tahq_encode_bound(cfg, shape, &cap);
    if (st != TAHQ_OK)
        return st;
    st = threads > 1 ? tahq_encode_parallel_workspace_size(cfg, shape, threads, &wsz)
                     : tahq_encode_workspace_size(cfg, shape, &wsz);
    if (st != TAHQ_OK)
        return st;
    void *ws = NULL;
    if (wsz) {
        ws = malloc(wsz);
        if (!ws)
            return CLI_ERR_NOMEM;
    }
    uint8_t *out = malloc(cap ? cap : 1u);
    if (!out) {
        free(ws);
        return CLI_ERR_NOMEM;
    }
    if (threads > 1) {
        tahq_parallel par;
        tahq_parallel_threads(&par, threads);
        st = tahq_encode_parallel(cfg, shape, x, ws, wsz, out, cap, len, &par);
    } else {
        st = tahq_encode(cfg, shape, x, ws, wsz, out, cap, len);
    }
    free(ws);
    if (st != TAHQ_OK) {
        free(out);
        *len = 0;
        return st;
    }
    *msg = out;
    return TAHQ_OK;
}

int run_decode(const uint8_t *msg, size_t len, float **out, uint64_t *count)
{
    return run_decode_threads(msg, len, 1, out, count);
}

int run_decode_threads(const uint8_t *msg, size_t len, uint32_t threads, float **out,
                       uint64_t *count)
{
    *out = NULL;
    *count = 0;
    tahq_header h; /* the size only: tahq_decode checks the CRC, once */
    tahq_status st = tahq_parse_header_nocrc(msg, len, &h);
    if (st != TAHQ_OK)
        return st;
    uint64_t n = shape_count(&h.shape);
    if (n > SIZE_MAX / sizeof(float))
        return CLI_ERR_NOMEM;
    float *y = malloc(n ? (size_t)n * sizeof(float) : 1u);
    if (!y)
        return CLI_ERR_NOMEM;
    if (threads > 1) {
        tahq_parallel par;
        tahq_parallel_threads(&par, threads);
        st = tahq_decode_parallel(msg, len, y, (size_t)n, &par);
    } else {
        st = tahq_decode(msg, len, y, (size_t)n);
    }
    if (st != TAHQ_OK) {
        free(y);
        return st;
    }
    *out = y;
    *count = n;
    return TAHQ_OK;
}

int run_tile_bound(const uint8_t *msg, size_t len, uint64_t n_tiles, double **bound)
{
    *bound = NULL;
    if (n_tiles > SIZE_MAX / sizeof(double))
        return CLI_ERR_NOMEM;
    double *b = malloc(n_tiles ? (size_t)n_tiles * sizeof(double) : 1u);
    if (!b)
        return CLI_ERR_NOMEM;
    tahq_status st = tahq_tile_error_bound(msg, len, b, (size_t)n_tiles);
    if (st != TAHQ_OK) {
        free(b);
        return st;
    }
    *bound = b;
    return TAHQ_OK;
}

void compute_stats(const float *x, const float *y, const double *bound, uint32_t tile, uint64_t n,
                   rt_stats *s)
{
    memset(s, 0, sizeof *s);
    s->count = n;
    for (uint64_t i = 0; i < n; ++i) {
        double xv = (double)x[i];
        double e = fabs(xv - (double)y[i]);
        s->sum_sq_x += xv * xv;
        s->sum_sq_err += e * e;
        if (e > s->max_abs_err || e != e)
            s->max_abs_err = e;
        if (bound) {
            double b = bound[i / tile];
            double ratio;
            if (e == 0.0)
                ratio = 0.0;
            else if (b > 0.0)
                ratio = e / b;
            else
                ratio = INFINITY;
            if (ratio > s->max_err_over_bound || ratio != ratio)
                s->max_err_over_bound = ratio;
            if (!(e <= b)) {
                if (s->n_over_bound == 0) {
                    s->first_over = i;
                    s->first_over_err = e;
                    s->first_over_bound = b;
                }
                s->n_over_bound++;
            }
        }
    }
    if (s->sum_sq_x > 0.0)
        s->rel_mse = s->sum_sq_err / s->sum_sq_x;
    else
        s->rel_mse = s->sum_sq_err == 0.0 ? 0.0 : INFINITY;
    s->sqnr_db = s->rel_mse > 0.0 ? -10.0 * log10(s->rel_mse) : INFINITY;
}

int check_flagged_tiles_l2(const uint8_t *msg, size_t len, const float *x, const float *y,
                           const double *bound, uint64_t n, rt_stats *s)
{
    s->n_flagged_checked = 0;
    s->n_tiles_over_l2 = 0;
    s->max_l2_over_bound = 0.0;
    s->first_tile_over_l2 = 0;
    tahq_header h; /* the sizes only: tahq_tile_infos checks the CRC */
    tahq_status st = tahq_parse_header_nocrc(msg, len, &h);
    if (st != TAHQ_OK)
        return st;
    uint64_t G = h.config.tile, n_tiles = n / G;
    if (n_tiles > SIZE_MAX / sizeof(tahq_tile_info))
        return CLI_ERR_NOMEM;
    tahq_tile_info *info = malloc(n_tiles ? (size_t)n_tiles * sizeof *info : 1u);
    if (!info)
        return CLI_ERR_NOMEM;
    st = tahq_tile_infos(msg, len, info, (size_t)n_tiles);
    if (st != TAHQ_OK) {
        free(info);
        return st;
    }
    for (uint64_t t = 0; t < n_tiles; ++t) {
        if (!info[t].flagged)
            continue;
        /* in double: each square and sum of G <= 256 terms has relative
         * error about 2^-53 * G, far below the 2^-40 margin of E */
        double sq = 0.0;
        for (uint64_t i = t * G; i < (t + 1u) * G; ++i) {
            double e = (double)x[i] - (double)y[i];
            sq += e * e;
        }
        double l2 = sqrt(sq), E = bound[t];
        double ratio = l2 == 0.0 ? 0.0 : (E > 0.0 ? l2 / E : INFINITY);
        s->n_flagged_checked++;
        if (ratio > s->max_l2_over_bound || ratio != ratio)
            s->max_l2_over_bound = ratio;
        if (!(l2 <= E)) {
            if (s->n_tiles_over_l2 == 0)
                s->first_tile_over_l2 = t;
            s->n_tiles_over_l2++;
        }
    }
    free(info);
    return TAHQ_OK;
}

int opt_threads(const cli_option *opt, const char *v)
{
    uint32_t *t = opt->dst;
    if (cli_parse_u32(v, TAHQ_JOBS_MAX, t) != 0 || *t == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --threads (need 1..%u)", v,
                        (unsigned)TAHQ_JOBS_MAX),
               -1;
    return 0;
}
