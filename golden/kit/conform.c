/* SPDX-License-Identifier: MIT */
/* conform.c - the conformance runner (`tahq conform`): check the outputs of
 * another implementation against a golden vector set (golden/README.md describes the manifest, the
 * candidate directory layout and the --run protocol). The message comparison
 * by field is in conform_diff.c, running the candidate in conform_run.c. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "codec_ops.h"
#include "conform.h"
#include "golden_common.h"
#include "golden_paper_v1.h"
#include "npy.h"
#include "sha256.h"
#include "tahq_golden.h"
#include "util.h"

typedef struct file_ref {
    const char *path;
    uint64_t bytes;
    const char *sha;
} file_ref;

typedef struct gcase {
    const char *id, *kind, *expected_status;
    tahq_config cfg;
    tahq_shape shape;
    int has_cfg;
    file_ref input, message, decoded;
    char cfg_json[512];
    int pv1;      /* kind paper_v1 or paper_v1_decode: pcfg, not cfg */
    int dec_only; /* kind decode or paper_v1_decode: a crafted valid message, decoded only */
    tahq_paper_v1_config pcfg;
    const json_t *flags; /* array of strings */
} gcase;

typedef struct check {
    const char *task; /* "encode", "decode", "error" */
    int pass;         /* exact verdict */
    char detail[768];
    const char *field;
    int64_t tile;
    /* tolerant mode */
    int tol_done, tol_pass;
    char tol_detail[768];
    /* --run: the candidate's run behind this check, when it failed */
    const conform_run *run;
} check;

typedef conform_options opts;

/* ---------------------------------------------------------------- helpers */

/* A file of the set (links followed) or of the candidate (never through a
 * link), read only as a regular file of at most cap bytes: a FIFO, a device
 * or a huge file is a failure with its reason in why, never a hang. */
#define SET_FILE 0
#define CANDIDATE_FILE 1
static char last_why[200];
static int read_quiet(const char *path, int whose, uint64_t cap, uint8_t **data, size_t *len)
{
    return conform_read_capped(path, whose == CANDIDATE_FILE, cap, data, len, last_why,
                               sizeof last_why);
}

/* What a candidate's output may hold: twice the expected size and 4 KiB
 * (larger is a wrong output anyway, and is not read). */
static uint64_t out_cap(uint64_t expected)
{
    return expected * 2u + 4096u;
}
#define ERR_FILE_CAP 65536u

/* Something (a file, a link, a FIFO ...) is at p: reading it then says
 * what is wrong with it, rather than "missing". */
static int file_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Paths too long for the buffer become "" (and then fail to open). */
static void vpath(char *buf, size_t n, const opts *o, const char *rel)
{
    int r = snprintf(buf, n, "%s/%s", o->vectors, rel);
    if (r < 0 || (size_t)r >= n)
        buf[0] = '\0';
}

static void cpath(char *buf, size_t n, const char *dir, const char *id, const char *ext)
{
    int r = snprintf(buf, n, "%s/%s%s", dir, id, ext);
    if (r < 0 || (size_t)r >= n)
        buf[0] = '\0';
}

/* First word of the form err_[a-z]+ or "ok" in text (the status name). */
static void status_word(const char *text, char *out, size_t n)
{
    snprintf(out, n, "%s", "(none)");
    const char *p = strstr(text, "err_");
    if (p) {
        size_t k = 4;
        while ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '_')
            ++k;
        snprintf(out, n, "%.*s", (int)k, p);
        return;
    }
    const char *s = text;
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        ++s;
    if (strncmp(s, "ok", 2) == 0)
        snprintf(out, n, "ok");
}

static int valid_status_name(const char *s)
{
    for (int i = 0; i < TAHQ_STATUS_COUNT; ++i)
        if (strcmp(tahq_status_name(i), s) == 0)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- manifest */

static int parse_file_ref(const json_t *c, const char *key, file_ref *f, char *err, size_t n)
{
    const json_t *o = json_object_get(c, key);
    if (golden_json_str(o, "path", &f->path) || golden_json_u64(o, "bytes", &f->bytes) ||
        golden_json_str(o, "sha256", &f->sha)) {
        snprintf(err, n, "\"%s\" needs path, bytes, sha256", key);
        return -1;
    }
    if (strlen(f->sha) != 64 || strspn(f->sha, "0123456789abcdef") != 64) {
        snprintf(err, n, "\"%s\".sha256 is not 64 lowercase hex digits", key);
        return -1;
    }
    if (strstr(f->path, "..") || f->path[0] == '/') {
        snprintf(err, n, "\"%s\".path must be relative, without '..'", key);
        return -1;
    }
    return 0;
}

static int parse_case(const json_t *c, gcase *g, char *err, size_t n)
{
    memset(g, 0, sizeof *g);
    const json_t *flags = json_is_object(c) ? json_object_get(c, "flags") : NULL;
    const char *desc;
    if (golden_json_str(c, "id", &g->id) || golden_json_str(c, "kind", &g->kind) ||
        golden_json_str(c, "expected_status", &g->expected_status) ||
        golden_json_str(c, "description", &desc) || !json_is_array(flags) ||
        json_array_size(flags) == 0) {
        snprintf(err, n, "a case needs id, kind, flags (non-empty), description, expected_status");
        return -1;
    }
    for (const char *p = g->id; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
            snprintf(err, n, "case id '%s': only a-z, 0-9 and '-'", g->id);
            return -1;
        }
    size_t fi;
    const json_t *f;
    json_array_foreach(flags, fi, f) if (!json_is_string(f))
    {
        snprintf(err, n, "case %s: flags must be strings", g->id);
        return -1;
    }
    g->flags = flags;
    if (!valid_status_name(g->expected_status)) {
        snprintf(err, n, "case %s: expected_status '%s' is not a tahq status name", g->id,
                 g->expected_status);
        return -1;
    }
    int enc = strcmp(g->kind, "encode") == 0, encerr = strcmp(g->kind, "encode_error") == 0,
        decerr = strcmp(g->kind, "decode_error") == 0;
    g->pv1 = strcmp(g->kind, GOLDEN_KIND_PAPER_V1) == 0 ||
             strcmp(g->kind, GOLDEN_KIND_PAPER_V1_DECODE) == 0;
    g->dec_only =
        strcmp(g->kind, "decode") == 0 || strcmp(g->kind, GOLDEN_KIND_PAPER_V1_DECODE) == 0;
    if (g->pv1 && !g->dec_only) /* judged like encode, with the paper-v1 config and tolerance */
        enc = 1;
    if (!enc && !encerr && !decerr && !g->dec_only) {
        snprintf(err, n, "case %s: unknown kind '%s'", g->id, g->kind);
        return -1;
    }
    if ((enc || g->dec_only) != (strcmp(g->expected_status, "ok") == 0)) {
        snprintf(err, n, "case %s: expected_status must be ok exactly for the valid kinds", g->id);
        return -1;
    }
    if (parse_file_ref(c, "input", &g->input, err, n))
        return -1;
    if (enc || encerr || g->dec_only) {
        const json_t *sh = json_object_get(c, "shape");
        if (g->pv1) {
            if (golden_pv1_config_parse(json_object_get(c, "config"), &g->pcfg, err, n))
                return -1;
            tahq_config_default(&g->cfg);
            g->cfg.tile = g->pcfg.tile;
        } else if (golden_config_parse(json_object_get(c, "config"), &g->cfg, err, n)) {
            return -1;
        }
        /* only a case that expects err_config may carry a configuration
         * SPEC 3.3 refuses (golden/v2 cfgerr-*) */
        const int config_error_case = encerr && strcmp(g->expected_status, "err_config") == 0;
        if (g->pv1 ? tahq_paper_v1_check(&g->pcfg, &(tahq_shape){1, 1, g->pcfg.tile}) != TAHQ_OK
                   : (tahq_check_config(&g->cfg) != TAHQ_OK) != config_error_case) {
            snprintf(err, n,
                     config_error_case ? "case %s: expects err_config, but its config is valid"
                                       : "case %s: config is not valid",
                     g->id);
            return -1;
        }
        if (!json_is_array(sh) || json_array_size(sh) != 3) {
            snprintf(err, n, "case %s: shape must be [B, S, C]", g->id);
            return -1;
        }
        uint64_t d[3];
        size_t i;
        const json_t *e;
        json_array_foreach(sh, i, e)
        {
            /* an integral number, written as an integer or not (1, 1.0, 1e0) */
            double v = json_number_value(e);
            if (!json_is_number(e) || v < 1 || v > 4294967295.0 || v != floor(v)) {
                snprintf(err, n, "case %s: shape entries must be integers >= 1", g->id);
                return -1;
            }
            d[i] = (uint64_t)v;
        }
        g->shape.batch = (uint32_t)d[0];
        g->shape.seq_len = (uint32_t)d[1];
        g->shape.channels = (uint32_t)d[2];
        g->has_cfg = 1;
        if (g->pv1)
            golden_pv1_config_json(g->cfg_json, sizeof g->cfg_json, &g->pcfg);
        else
            golden_config_json(g->cfg_json, sizeof g->cfg_json, &g->cfg);
    }
    if (enc && (parse_file_ref(c, "message", &g->message, err, n) ||
                parse_file_ref(c, "decoded", &g->decoded, err, n)))
        return -1;
    if (g->dec_only && parse_file_ref(c, "decoded", &g->decoded, err, n))
        return -1;
    return 0;
}

static int verify_file(const opts *o, const gcase *g, const file_ref *f, char *err, size_t n)
{
    char p[4096];
    vpath(p, sizeof p, o, f->path);
    uint8_t *d;
    size_t len;
    if (read_quiet(p, SET_FILE, f->bytes, &d, &len)) {
        snprintf(err, n, "case %s: %.250s: %.120s (the manifest says %llu bytes)", g->id, p,
                 last_why, (unsigned long long)f->bytes);
        return -1;
    }
    char hex[65];
    sha256_hex(d, len, hex);
    free(d);
    if (len != f->bytes || strcmp(hex, f->sha) != 0) {
        snprintf(err, n, "case %s: %.300s does not match its size/sha256 in the manifest", g->id,
                 p);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- comparisons */

/* The exact check of a candidate message: the first differing field
 * (conform_diff.c). */
static void cmp_message(check *k, const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen)
{
    k->pass = conform_diff_message(exp, elen, got, glen, k->detail, sizeof k->detail, &k->field,
                                   &k->tile);
}

static void cmp_decoded(check *k, const gcase *g, const float *exp, const npy_tensor *got)
{
    uint64_t n = (uint64_t)g->shape.batch * g->shape.seq_len * g->shape.channels;
    if (got->count != n || got->dims[got->ndim - 1] != g->shape.channels) {
        k->pass = 0;
        k->field = "shape";
        snprintf(k->detail, sizeof k->detail,
                 "shape: expected [%u, %u, %u], got %u dims with %" PRIu64 " elements",
                 (unsigned)g->shape.batch, (unsigned)g->shape.seq_len, (unsigned)g->shape.channels,
                 (unsigned)got->ndim, got->count);
        return;
    }
    uint64_t first = n, ndiff = 0;
    for (uint64_t i = 0; i < n; ++i)
        if (f2u(exp[i]) != f2u(got->data[i])) {
            if (first == n)
                first = i;
            ++ndiff;
        }
    if (!ndiff) {
        k->pass = 1;
        snprintf(k->detail, sizeof k->detail, "%" PRIu64 " values bit-identical", n);
        return;
    }
    k->pass = 0;
    k->field = "values";
    uint32_t C = g->shape.channels, G = g->cfg.tile;
    uint64_t row = first / C;
    uint32_t c = (uint32_t)(first % C);
    k->tile = (int64_t)(row * (C / G) + c / G);
    snprintf(k->detail, sizeof k->detail,
             "first difference at element %" PRIu64 " [b=%" PRIu64 ", s=%" PRIu64
             ", c=%u] (tile %" PRId64 ", element %u): expected %.9g (0x%08x), got %.9g "
             "(0x%08x); %" PRIu64 " of %" PRIu64 " values differ",
             first, row / g->shape.seq_len, row % g->shape.seq_len, c, k->tile, c % G,
             (double)exp[first], f2u(exp[first]), (double)got->data[first], f2u(got->data[first]),
             ndiff, n);
}

/* Tolerant check of a candidate message: config/shape header exact, the
 * message valid, every value it decodes to within the SPEC §6 bound (computed
 * from the candidate's own message) of the input; mismatch rates of the
 * other fields against the expected message. */
static void tol_message(check *k, const gcase *g, const float *x, const uint8_t *exp, size_t elen,
                        const uint8_t *got, size_t glen)
{
    k->tol_done = 1;
    k->tol_pass = 0;
    tahq_header hg, he;
    tahq_status st = tahq_parse_header(got, glen, &hg);
    if (st != TAHQ_OK || tahq_parse_header(exp, elen, &he) != TAHQ_OK) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "candidate message is invalid: %s",
                 tahq_status_name(st));
        return;
    }
    if (memcmp(got, exp, 40) != 0 || hg.n_low != he.n_low) {
        snprintf(k->tol_detail, sizeof k->tol_detail,
                 "header fields (config, shape, n_low) differ from the expected message");
        return;
    }
    uint64_t n = (uint64_t)g->shape.batch * g->shape.seq_len * g->shape.channels;
    float *y = NULL;
    double *bd = NULL;
    uint64_t cnt;
    int s1 = run_decode(got, glen, &y, &cnt);
    const uint32_t G = hg.config.tile;
    int s2 = s1 == TAHQ_OK ? run_tile_bound(got, glen, n / G, &bd) : s1;
    if (s1 != TAHQ_OK || s2 != TAHQ_OK) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "candidate message does not decode: %s",
                 s1 != TAHQ_OK ? tahq_status_name(s1) : tahq_status_name(s2));
        free(y);
        free(bd);
        return;
    }
    uint64_t over = 0, first_over = n;
    for (uint64_t i = 0; i < n; ++i)
        if (!(fabs((double)x[i] - (double)y[i]) <= bd[i / G])) {
            if (first_over == n)
                first_over = i;
            ++over;
        }
    golden_layout L;
    golden_layout_of(&he, &L);
    uint64_t map_d = 0, flag_d = 0, zp_d = 0, sc_d = 0;
    for (uint64_t b = 0; b < L.map_bits; ++b)
        map_d += ((exp[L.map_off + b / 8] ^ got[L.map_off + b / 8]) >> (b % 8)) & 1;
    for (uint64_t t = 0; t < L.N; ++t) {
        flag_d += ((exp[L.flags_off + t / 8] ^ got[L.flags_off + t / 8]) >> (t % 8)) & 1;
        zp_d += memcmp(exp + L.zp_off + t * L.mb, got + L.zp_off + t * L.mb, L.mb) != 0;
        sc_d += memcmp(exp + L.sc_off + t * L.mb, got + L.sc_off + t * L.mb, L.mb) != 0;
    }
    k->tol_pass = over == 0;
    int len = snprintf(k->tol_detail, sizeof k->tol_detail,
                       "%s: %" PRIu64 " of %" PRIu64 " values beyond the SPEC 6 bound; "
                       "mismatch rates: map %.3g, flags %.3g, zero-points %.3g, scales %.3g",
                       over ? "FAIL" : "within bound", over, n,
                       L.map_bits ? (double)map_d / (double)L.map_bits : 0.0,
                       (double)flag_d / (double)L.N, (double)zp_d / (double)L.N,
                       (double)sc_d / (double)L.N);
    if (over && len > 0 && (size_t)len < sizeof k->tol_detail)
        snprintf(k->tol_detail + len, sizeof k->tol_detail - (size_t)len,
                 "; first at element %" PRIu64 ": |%.9g - %.9g| > %.3g", first_over,
                 (double)x[first_over], (double)y[first_over], bd[first_over / G]);
    free(y);
    free(bd);
}

/* Tolerant check of a candidate decode: within the bound of the expected message. */
static void tol_decoded(check *k, const gcase *g, const float *x, const float *yexp,
                        const uint8_t *msg, size_t mlen, const npy_tensor *got)
{
    k->tol_done = 1;
    k->tol_pass = 0;
    uint64_t n = (uint64_t)g->shape.batch * g->shape.seq_len * g->shape.channels;
    if (got->count != n) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "wrong number of values");
        return;
    }
    double *bd = NULL;
    const uint32_t G = g->cfg.tile;
    if (run_tile_bound(msg, mlen, n / G, &bd) != TAHQ_OK) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "bound of the expected message failed");
        return;
    }
    uint64_t over = 0, diff = 0, first_over = n;
    for (uint64_t i = 0; i < n; ++i) {
        diff += f2u(yexp[i]) != f2u(got->data[i]);
        if (!(fabs((double)x[i] - (double)got->data[i]) <= bd[i / G])) {
            if (first_over == n)
                first_over = i;
            ++over;
        }
    }
    k->tol_pass = over == 0;
    int len = snprintf(k->tol_detail, sizeof k->tol_detail,
                       "%s: %" PRIu64 " of %" PRIu64 " values beyond the SPEC 6 bound; "
                       "mismatch rate against the expected values %.3g",
                       over ? "FAIL" : "within bound", over, n, (double)diff / (double)n);
    if (over && len > 0 && (size_t)len < sizeof k->tol_detail)
        snprintf(k->tol_detail + len, sizeof k->tol_detail - (size_t)len,
                 "; first at element %" PRIu64 ": |%.9g - %.9g| > %.3g", first_over,
                 (double)x[first_over], (double)got->data[first_over], bd[first_over]);
    free(bd);
}

static int load_npy_quiet(const char *path, int whose, uint64_t cap, npy_tensor *t, char *err,
                          size_t n)
{
    uint8_t *d;
    size_t len;
    memset(t, 0, sizeof *t);
    if (read_quiet(path, whose, cap, &d, &len)) {
        snprintf(err, n, "%s: %s", path, last_why);
        return -1;
    }
    char e[256];
    int rc = npy_parse(d, len, t, e, sizeof e);
    free(d);
    if (rc) {
        snprintf(err, n, "%s: not a float32 .npy: %s", path, e);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- --run */

static void shq(char *out, size_t n, const char *s)
{
    size_t k = 0;
    if (k + 1 < n)
        out[k++] = '\'';
    for (; *s && k + 5 < n; ++s) {
        if (*s == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *s;
        }
    }
    if (k + 1 < n)
        out[k++] = '\'';
    out[k] = '\0';
}

/* Run "CMD ARGS 2>errfile"; on a non-zero exit write the status word of
 * stderr to errpath ("ok" when the exit status is 0 and want_err). */
/* ---------------------------------------------------------------- --run */

/* The candidate runs of one case: encode first, then decode. */
typedef struct case_run {
    conform_run runs[2];
    int nruns;
    char dir[4096]; /* the case's folder of input copies, "" when none */
} case_run;

static const char *const out_suffixes[] = {".bin", ".npy", ".err"};

/* Copy a set file into the private folder (the candidate never gets the
 * set's own files). */
static int copy_in(const opts *o, const file_ref *f, const char *to, char *err, size_t n)
{
    char from[4096];
    vpath(from, sizeof from, o, f->path);
    if (!to[0] || conform_copy_in(from, f->bytes, to) != 0) {
        snprintf(err, n, "cannot copy %.300s into the temporary folder (%.300s): %s", from, to,
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* Copy the case's inputs into tmp, remove its stale outputs from cdir and
 * build its commands. Returns the number of commands, or -1 with err. */
static int prepare_case(const opts *o, const gcase *g, const char *tmp, const char *cdir,
                        case_run *cr, conform_cmd *cmds, char (*args)[12000], char *err, size_t n)
{
    char in[4096], out[4096], qi[4200], qo[4200], qc[1200];
    memset(cr, 0, sizeof *cr);
    /* the input copies go to a folder made now, which the candidate (of
     * an earlier case) cannot have filled with links */
    if (conform_case_dir(tmp, cr->dir, sizeof cr->dir) != 0) {
        snprintf(err, n, "cannot create a folder in %.300s: %s", tmp, strerror(errno));
        cr->dir[0] = '\0';
        return -1;
    }
    tmp = cr->dir;
    for (size_t e = 0; e < sizeof out_suffixes / sizeof out_suffixes[0]; ++e) {
        cpath(out, sizeof out, cdir, g->id, out_suffixes[e]);
        remove(out);
    }
    int nc = 0;
    shq(qc, sizeof qc, g->cfg_json);
    if (strcmp(g->kind, "decode_error") != 0 && !g->dec_only) {
        cpath(in, sizeof in, tmp, g->id, ".in.npy");
        if (copy_in(o, &g->input, in, err, n))
            return -1;
        cpath(out, sizeof out, cdir, g->id, ".bin");
        shq(qi, sizeof qi, in);
        shq(qo, sizeof qo, out);
        snprintf(args[nc], sizeof args[nc], "encode %s %s --config %s", qi, qo, qc);
        nc++;
    }
    if (strcmp(g->kind, "encode_error") != 0) {
        /* decode: of a copy of the expected message (encode, paper_v1) or of
         * the input message (decode_error, decode, paper_v1_decode) */
        int dec_err = strcmp(g->kind, "decode_error") == 0 || g->dec_only;
        cpath(in, sizeof in, tmp, g->id, dec_err ? ".in.bin" : ".msg.bin");
        if (copy_in(o, dec_err ? &g->input : &g->message, in, err, n))
            return -1;
        cpath(out, sizeof out, cdir, g->id, ".npy");
        shq(qi, sizeof qi, in);
        shq(qo, sizeof qo, out);
        if (g->pv1) /* no header: the decoder needs the config and the shape */
            snprintf(args[nc], sizeof args[nc], "decode %s %s --config %s --shape %ux%ux%u", qi, qo,
                     qc, (unsigned)g->shape.batch, (unsigned)g->shape.seq_len,
                     (unsigned)g->shape.channels);
        else
            snprintf(args[nc], sizeof args[nc], "decode %s %s", qi, qo);
        nc++;
    }
    for (int i = 0; i < nc; ++i) {
        cmds[i].args = args[i];
        cmds[i].result = &cr->runs[i];
    }
    cr->nruns = nc;
    return nc;
}

static int run_not_ok(const conform_run *r)
{
    return !r->ran || conform_run_failed(r);
}

/* After the candidate's runs of a case: the candidate directory gets what
 * --candidate mode expects (ID.err with the status name; no output of a
 * failed run), and the private copies and stderr files are removed. */
static void finish_case(const gcase *g, const char *cdir, case_run *cr)
{
    char p[4096];
    int err_kind = strcmp(g->kind, "encode_error") == 0 || strcmp(g->kind, "decode_error") == 0;
    if (err_kind) {
        const conform_run *r = &cr->runs[0];
        cpath(p, sizeof p, cdir, g->id, ".err");
        (void)conform_write_text(p, run_not_ok(r) ? r->word : "ok");
    } else if (g->dec_only) {
        if (run_not_ok(&cr->runs[0])) {
            cpath(p, sizeof p, cdir, g->id, ".npy");
            remove(p);
        }
    } else {
        if (run_not_ok(&cr->runs[0])) {
            cpath(p, sizeof p, cdir, g->id, ".bin");
            remove(p);
            cpath(p, sizeof p, cdir, g->id, ".err");
            (void)conform_write_text(p, cr->runs[0].word);
        }
        if (run_not_ok(&cr->runs[1])) {
            cpath(p, sizeof p, cdir, g->id, ".npy");
            remove(p);
        }
    }
    if (cr->dir[0]) /* the input copies and whatever the candidate put there */
        conform_rmtree(cr->dir);
    cr->dir[0] = '\0';
}

/* The verdicts of the checks of a case in the light of its runs: a run that
 * must succeed (encode, decode of a valid message) and failed fails its
 * check, whatever it left behind; an error case whose candidate crashed or
 * timed out fails. A failed check keeps the failed run for its report. */
static void apply_runs(const opts *o, const gcase *g, check *ks, int nk, const case_run *cr)
{
    for (int j = 0; j < nk; ++j) {
        check *k = &ks[j];
        const conform_run *r = &cr->runs[strcmp(k->task, "decode") == 0 && !g->dec_only ? 1 : 0];
        char what[200];
        conform_run_text(r, o->timeout, what, sizeof what);
        if (strcmp(k->task, "error") == 0) {
            /* the right err_* word does not excuse a crash (golden/README) */
            if (r->timed_out || conform_run_crashed(r)) {
                k->pass = 0;
                k->tol_done = 1;
                k->tol_pass = 0;
                snprintf(k->detail, sizeof k->detail, "expected %s, but the candidate's %s %s",
                         g->expected_status, r->op, what);
            }
            if (!k->pass && run_not_ok(r))
                k->run = r;
            continue;
        }
        if (!run_not_ok(r))
            continue;
        int enc = strcmp(k->task, "encode") == 0;
        k->pass = 0;
        k->tol_done = 1;
        k->tol_pass = 0;
        k->field = enc ? "message" : "values";
        k->tile = -1;
        int named = r->ran && strcmp(r->word, "(none)") != 0;
        snprintf(k->detail, sizeof k->detail, "no %s: the candidate's %s %s%s%s",
                 enc ? "message" : "output", enc ? "encode" : "decode", what,
                 named ? ", naming " : "", named ? r->word : "");
        snprintf(k->tol_detail, sizeof k->tol_detail, "no %s", enc ? "message" : "output");
        k->run = r;
    }
}

/* ---------------------------------------------------------------- paper-v1 */

/* A paper_v1 case (golden/README.md): the message by fields (bitmap, flags,
 * pivots exact; codes within a mismatch rate, each by 1; zero points and
 * scales within 1 fp16 ulp) and the decoded tensor within 2^-14 of each
 * tile's max. Both verdicts (exact and tolerant) follow this rule, except
 * that the tolerant one also accepts another token bitmap that is a
 * lowest-entropy selection within the entropy tolerance (conform_pv1.c);
 * the detail says whether the output was bit-exact and gives the rates. */
/* The verdict of a paper_v1 case without --tolerance is already the
 * field-tolerance rule of golden/README (not bit equality): its detail
 * names that rule, so that "outside tolerance" is never read as the
 * --tolerance judgement. */
static void name_pv1_rule(char *detail, size_t n)
{
    static const char *const words[2] = {"outside tolerance", "within tolerance"};
    for (int i = 0; i < 2; ++i) {
        size_t w = strlen(words[i]);
        if (strncmp(detail, words[i], w) == 0) {
            char rest[768];
            snprintf(rest, sizeof rest, "%s", detail + w);
            snprintf(detail, n, "%s the paper-v1 field tolerance%.700s", i ? "within" : "outside",
                     rest);
            return;
        }
    }
}

static int eval_paper_v1(const opts *o, const gcase *g, const char *cdir, check *ks)
{
    char p[4096], e[300];
    uint8_t *exp = NULL, *got = NULL;
    size_t elen = 0, glen = 0;
    npy_tensor yexp, ygot;
    memset(&yexp, 0, sizeof yexp);
    memset(&ygot, 0, sizeof ygot);
    vpath(p, sizeof p, o, g->message.path);
    read_quiet(p, SET_FILE, g->message.bytes, &exp, &elen);
    vpath(p, sizeof p, o, g->decoded.path);
    int have_y = load_npy_quiet(p, SET_FILE, g->decoded.bytes, &yexp, e, sizeof e) == 0;

    check *k = &ks[0];
    memset(k, 0, sizeof *k);
    k->task = "encode";
    k->tile = -1;
    k->tol_done = 1;
    cpath(p, sizeof p, cdir, g->id, ".bin");
    if (!exp) {
        snprintf(k->detail, sizeof k->detail, "expected message unreadable");
        k->field = "message";
    } else if (read_quiet(p, CANDIDATE_FILE, out_cap(g->message.bytes), &got, &glen)) {
        snprintf(k->detail, sizeof k->detail, "%s.bin: %s", g->id,
                 errno == ENOENT ? "missing" : last_why);
        k->field = "message";
    } else {
        int exact = 0;
        k->pass = golden_pv1_compare_message(&g->pcfg, &g->shape, exp, elen, got, glen, &exact,
                                             k->detail, sizeof k->detail, &k->field);
        name_pv1_rule(k->detail, sizeof k->detail);
    }
    k->tol_pass = k->pass;
    snprintf(k->tol_detail, sizeof k->tol_detail, "%s", k->detail);
    /* --tolerance: a token bitmap that differs passes if it is a
     * lowest-entropy selection within the entropy tolerance (conform_pv1.c) */
    if (o->tolerance && !k->pass && got && k->field && strcmp(k->field, "token_bitmap") == 0) {
        npy_tensor x;
        vpath(p, sizeof p, o, g->input.path);
        if (load_npy_quiet(p, SET_FILE, g->input.bytes, &x, e, sizeof e) == 0) {
            const char *tf;
            k->tol_pass = conform_pv1_ties(&g->pcfg, &g->shape, x.data, got, glen, k->tol_detail,
                                           sizeof k->tol_detail, &tf);
            npy_free(&x);
        } else {
            snprintf(k->tol_detail, sizeof k->tol_detail, "%s", e);
        }
    }
    free(got);
    free(exp);

    k = &ks[1];
    memset(k, 0, sizeof *k);
    k->task = "decode";
    k->tile = -1;
    k->tol_done = 1;
    cpath(p, sizeof p, cdir, g->id, ".npy");
    uint64_t cnt = (uint64_t)g->shape.batch * g->shape.seq_len * g->shape.channels;
    if (!file_exists(p)) {
        snprintf(k->detail, sizeof k->detail, "missing %s.npy", g->id);
        k->field = "values";
    } else if (load_npy_quiet(p, CANDIDATE_FILE, out_cap(g->decoded.bytes), &ygot, e, sizeof e)) {
        snprintf(k->detail, sizeof k->detail, "%s", e);
        k->field = "values";
    } else if (!have_y || ygot.count != cnt || yexp.count != cnt) {
        snprintf(k->detail, sizeof k->detail, "decoded tensor has %llu values, expected %llu",
                 (unsigned long long)ygot.count, (unsigned long long)cnt);
        k->field = "values";
    } else {
        int exact = 0;
        k->pass = golden_pv1_compare_decoded(&g->pcfg, yexp.data, ygot.data, cnt, &exact, k->detail,
                                             sizeof k->detail);
        name_pv1_rule(k->detail, sizeof k->detail);
        if (!k->pass)
            k->field = "values";
    }
    k->tol_pass = k->pass;
    snprintf(k->tol_detail, sizeof k->tol_detail, "%s", k->detail);
    npy_free(&yexp);
    npy_free(&ygot);
    return 2;
}

/* ---------------------------------------------------------------- one case */

/* A decode or paper_v1_decode case: the candidate's decoding of a crafted
 * valid message, bit for bit in every mode (they pin SPEC rules, such as the
 * canonical NaN of §1 rule 6, that allow no tolerance). */
static int eval_decode_only(const opts *o, const gcase *g, const char *cdir, check *ks)
{
    char p[4096], e[300];
    npy_tensor yexp, ygot;
    memset(&yexp, 0, sizeof yexp);
    memset(&ygot, 0, sizeof ygot);
    vpath(p, sizeof p, o, g->decoded.path);
    int have_y = load_npy_quiet(p, SET_FILE, g->decoded.bytes, &yexp, e, sizeof e) == 0;
    check *k = &ks[0];
    memset(k, 0, sizeof *k);
    k->task = "decode";
    k->tile = -1;
    k->tol_done = 1;
    k->field = "values";
    cpath(p, sizeof p, cdir, g->id, ".npy");
    if (!file_exists(p))
        snprintf(k->detail, sizeof k->detail, "missing %s.npy", g->id);
    else if (load_npy_quiet(p, CANDIDATE_FILE, out_cap(g->decoded.bytes), &ygot, e, sizeof e))
        snprintf(k->detail, sizeof k->detail, "%s", e);
    else if (!have_y)
        snprintf(k->detail, sizeof k->detail, "expected tensor unreadable");
    else
        cmp_decoded(k, g, yexp.data, &ygot);
    if (k->pass)
        k->field = NULL;
    k->tol_pass = k->pass;
    snprintf(k->tol_detail, sizeof k->tol_detail, "decode cases are exact: %.700s", k->detail);
    npy_free(&yexp);
    npy_free(&ygot);
    return 1;
}

static int eval_case(const opts *o, const gcase *g, const char *cdir, check *ks)
{
    int nk = 0;
    char p[4096], e[300];
    if (g->dec_only)
        return eval_decode_only(o, g, cdir, ks);
    if (g->pv1)
        return eval_paper_v1(o, g, cdir, ks);
    if (strcmp(g->kind, "encode") != 0) {
        check *k = &ks[nk++];
        memset(k, 0, sizeof *k);
        k->task = "error";
        k->tile = -1;
        cpath(p, sizeof p, cdir, g->id, ".err");
        uint8_t *d;
        size_t n;
        if (read_quiet(p, CANDIDATE_FILE, ERR_FILE_CAP, &d, &n)) {
            snprintf(k->detail, sizeof k->detail, "%s %s.err (expected %s)",
                     errno == ENOENT ? "missing" : last_why, g->id, g->expected_status);
            k->field = "status";
            return nk;
        }
        char *z = malloc(n + 1), word[64];
        if (z) {
            memcpy(z, d, n);
            z[n] = '\0';
            status_word(z, word, sizeof word);
            free(z);
        } else {
            snprintf(word, sizeof word, "(unreadable)");
        }
        free(d);
        k->pass = strcmp(word, g->expected_status) == 0;
        k->field = "status";
        snprintf(k->detail, sizeof k->detail, "expected %s, got %s", g->expected_status, word);
        k->tol_done = 1;
        k->tol_pass = k->pass;
        snprintf(k->tol_detail, sizeof k->tol_detail, "error codes are exact");
        return nk;
    }
    /* encode case: message and decoded tensor */
    uint8_t *exp = NULL, *got = NULL;
    size_t elen = 0, glen = 0;
    npy_tensor x, yexp, ygot;
    memset(&x, 0, sizeof x);
    memset(&yexp, 0, sizeof yexp);
    memset(&ygot, 0, sizeof ygot);
    vpath(p, sizeof p, o, g->message.path);
    read_quiet(p, SET_FILE, g->message.bytes, &exp, &elen);
    vpath(p, sizeof p, o, g->input.path);
    int have_x = load_npy_quiet(p, SET_FILE, g->input.bytes, &x, e, sizeof e) == 0;
    vpath(p, sizeof p, o, g->decoded.path);
    int have_y = load_npy_quiet(p, SET_FILE, g->decoded.bytes, &yexp, e, sizeof e) == 0;

    check *k = &ks[nk++];
    memset(k, 0, sizeof *k);
    k->task = "encode";
    k->tile = -1;
    cpath(p, sizeof p, cdir, g->id, ".bin");
    if (read_quiet(p, CANDIDATE_FILE, out_cap(g->message.bytes), &got, &glen)) {
        char ep[4096], word[64] = "(none)", why[200];
        int missing = errno == ENOENT;
        snprintf(why, sizeof why, "%s", last_why);
        cpath(ep, sizeof ep, cdir, g->id, ".err");
        uint8_t *d;
        size_t n;
        if (!missing) {
            snprintf(k->detail, sizeof k->detail, "%s.bin: %s", g->id, why);
        } else if (read_quiet(ep, CANDIDATE_FILE, ERR_FILE_CAP, &d, &n) == 0) {
            char *z = malloc(n + 1);
            if (z) {
                memcpy(z, d, n);
                z[n] = '\0';
                status_word(z, word, sizeof word);
                free(z);
            }
            free(d);
            if (strcmp(word, "(none)") == 0)
                snprintf(k->detail, sizeof k->detail,
                         "no message, and %s.err names no status (err_*)", g->id);
            else
                snprintf(k->detail, sizeof k->detail, "no message: the candidate reported %s",
                         word);
        } else {
            snprintf(k->detail, sizeof k->detail, "missing %s.bin", g->id);
        }
        k->field = "message";
        snprintf(k->tol_detail, sizeof k->tol_detail, "no message");
        k->tol_done = 1;
    } else {
        cmp_message(k, exp, elen, got, glen);
        if (o->tolerance) {
            if (k->pass) {
                k->tol_done = 1;
                k->tol_pass = 1;
                snprintf(k->tol_detail, sizeof k->tol_detail, "bit-exact");
            } else if (have_x) {
                tol_message(k, g, x.data, exp, elen, got, glen);
            }
        }
    }
    free(got);

    k = &ks[nk++];
    memset(k, 0, sizeof *k);
    k->task = "decode";
    k->tile = -1;
    cpath(p, sizeof p, cdir, g->id, ".npy");
    if (!file_exists(p)) {
        snprintf(k->detail, sizeof k->detail, "missing %s.npy", g->id);
        k->field = "values";
        k->tol_done = 1;
        snprintf(k->tol_detail, sizeof k->tol_detail, "no output");
    } else if (load_npy_quiet(p, CANDIDATE_FILE, out_cap(g->decoded.bytes), &ygot, e, sizeof e)) {
        snprintf(k->detail, sizeof k->detail, "%s", e);
        k->field = "values";
        k->tol_done = 1;
        snprintf(k->tol_detail, sizeof k->tol_detail, "unreadable output");
    } else if (have_y) {
        cmp_decoded(k, g, yexp.data, &ygot);
        if (o->tolerance) {
            if (k->pass) {
                k->tol_done = 1;
                k->tol_pass = 1;
                snprintf(k->tol_detail, sizeof k->tol_detail, "bit-exact");
            } else if (have_x) {
                tol_decoded(k, g, x.data, yexp.data, exp, elen, &ygot);
            }
        }
    }
    free(exp);
    npy_free(&x);
    npy_free(&yexp);
    npy_free(&ygot);
    return nk;
}

static const char *const kind_names[6] = {"encode",       "encode_error",
                                          "decode_error", GOLDEN_KIND_PAPER_V1,
                                          "decode",       GOLDEN_KIND_PAPER_V1_DECODE};

unsigned conform_kind_bit(const char *kind)
{
    for (unsigned i = 0; i < 6; ++i)
        if (strcmp(kind, kind_names[i]) == 0)
            return 1u << i;
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---------------------------------------------------------------- reporting */

typedef struct report {
    const opts *o;
    const char *set;
    size_t n_all, n_sel;
    size_t n_pass, n_tol_pass, n_tol_only, n_timeout, n_done;
    size_t by_task[3][2]; /* encode, decode, error: pass, total */
    int started;
    /* JUnit: the <testcase> elements, wrapped at the end */
    FILE *jf;
    char *jbuf;
    size_t jlen;
    size_t j_fail, j_err;
    double j_time;
    int json_failed; /* a part of the --json output could not be built */
} report;

static void report_begin(report *R)
{
    if (R->started)
        return;
    R->started = 1;
    const opts *o = R->o;
    if (o->json) {
        /* streamed: the head's members, then one case per line as it is
         * judged, then the summary */
        char *head =
            cli_json_text(json_pack("{s:o, s:o, s:s}", "vectors", cli_jstr(o->vectors), "set",
                                    cli_jstr(R->set), "mode", o->run ? "run" : "candidate"));
        size_t hl = head ? strlen(head) : 0;
        if (hl >= 2)
            printf("%.*s, \"cases\": [", (int)(hl - 1), head); /* without its '}' */
        else
            R->json_failed = 1;
        free(head);
    } else if (o->tap) {
        printf("TAP version 13\n1..%zu\n", R->n_sel);
    }
}

static json_t *json_run(const conform_run *r)
{
    return json_pack("{s:o, s:b, s:o, s:o, s:b, s:o, s:o}", "op",
                     cli_jstr(r->op[0] ? r->op : "(not run)"), "ran", r->ran, "exit_status",
                     r->ran && r->exited && !r->timed_out ? json_integer(r->status) : json_null(),
                     "signal", r->ran && !r->exited ? json_integer(r->sig) : json_null(),
                     "timed_out", r->timed_out, "status_word",
                     cli_jstr(r->word[0] ? r->word : "(none)"), "stderr_tail", cli_jstr(r->tail));
}

/* The lines of a case's report (without its heading). */
static void case_lines(FILE *f, const opts *o, const check *ks, int nk)
{
    for (int j = 0; j < nk; ++j) {
        const check *k = &ks[j];
        if (!k->pass || o->verbose)
            fprintf(f, "  %s: %s: %s\n", k->task, k->pass ? "pass" : "FAIL", k->detail);
        if (o->tolerance && !k->pass)
            fprintf(f, "  %s (tolerant): %s: %s\n", k->task,
                    k->tol_done && k->tol_pass ? "pass" : "FAIL", k->tol_detail);
        if (k->run && !k->pass) {
            const conform_run *r = k->run;
            if (!r->ran)
                continue;
            if (!r->tail[0]) {
                fprintf(f, "    the candidate's %s wrote nothing on stderr\n", r->op);
                continue;
            }
            int lines = 1;
            for (const char *c = r->tail; *c; ++c)
                lines += *c == '\n';
            fprintf(f, "    stderr of the candidate's %s (last %d line%s):\n", r->op, lines,
                    lines == 1 ? "" : "s");
            const char *s = r->tail;
            while (*s) {
                const char *e = strchr(s, '\n');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                fprintf(f, "    | %.*s\n", (int)len, s);
                s += len + (e ? 1 : 0);
            }
        }
    }
}

static void report_case(report *R, const gcase *g, const check *ks, int nk, const case_run *cr)
{
    const opts *o = R->o;
    report_begin(R);
    int pass = 1, tpass = 1, timeout = 0;
    for (int j = 0; j < nk; ++j) {
        pass &= ks[j].pass;
        tpass &= ks[j].tol_done && ks[j].tol_pass;
        int t = strcmp(ks[j].task, "encode") == 0 ? 0 : strcmp(ks[j].task, "decode") == 0 ? 1 : 2;
        R->by_task[t][1]++;
        R->by_task[t][0] += ks[j].pass != 0;
    }
    double secs = 0;
    if (cr)
        for (int r = 0; r < cr->nruns; ++r) {
            timeout |= cr->runs[r].timed_out;
            secs += cr->runs[r].seconds;
        }
    if (timeout)
        pass = tpass = 0;
    int tol_only = o->tolerance && !pass && tpass;
    const char *head = pass ? "PASS" : timeout ? "TIMEOUT" : tol_only ? "TOLERANT" : "FAIL";
    R->n_done++;
    R->n_pass += pass;
    R->n_tol_pass += tpass;
    R->n_tol_only += tol_only;
    R->n_timeout += timeout;
    int ok = o->tolerance ? tpass : pass;

    char *block = NULL;
    size_t blen = 0;
    FILE *bf = open_memstream(&block, &blen);
    if (bf) {
        case_lines(bf, o, ks, nk);
        fclose(bf);
    }
    const char *text = block ? block : "";

    if (o->json) {
        json_t *jc = json_pack("{s:o, s:o, s:b, s:s}", "id", cli_jstr(g->id), "kind",
                               cli_jstr(g->kind), "pass", pass, "verdict",
                               pass       ? "pass"
                               : timeout  ? "timeout"
                               : tol_only ? "tolerant"
                                          : "fail");
        if (jc && o->tolerance && json_object_set_new(jc, "tolerant_pass", json_boolean(tpass)))
            json_decref(jc), jc = NULL;
        json_t *jks = jc ? json_array() : NULL;
        for (int j = 0; jks && j < nk; ++j) {
            const check *k = &ks[j];
            json_t *jk = json_pack(
                "{s:s, s:b, s:o, s:o, s:o}", "task", k->task, "pass", k->pass, "field",
                k->field && !k->pass ? cli_jstr(k->field) : json_null(), "tile",
                k->tile >= 0 && !k->pass ? json_integer((json_int_t)k->tile) : json_null(),
                "detail", cli_jstr(k->detail));
            if (jk && o->tolerance &&
                (json_object_set_new(jk, "tolerant_pass",
                                     json_boolean(k->tol_done && k->tol_pass)) ||
                 json_object_set_new(jk, "tolerant_detail", cli_jstr(k->tol_detail))))
                json_decref(jk), jk = NULL;
            if (jk && k->run && !k->pass && json_object_set_new(jk, "candidate", json_run(k->run)))
                json_decref(jk), jk = NULL;
            if (!jk || json_array_append_new(jks, jk))
                json_decref(jks), jks = NULL;
        }
        if (!jks || json_object_set_new(jc, "checks", jks))
            json_decref(jc), jc = NULL;
        char *line = cli_json_text(jc);
        if (line)
            printf("%s\n  %s", R->n_done > 1 ? "," : "", line);
        else
            R->json_failed = 1;
        free(line);
    } else if (o->tap) {
        printf("%s %zu - %s (%s)%s\n", ok ? "ok" : "not ok", R->n_done, g->id, g->kind,
               pass       ? ""
               : timeout  ? ": TIMEOUT"
               : tol_only ? ": TOLERANT"
                          : "");
        if (!pass) {
            const check *first = NULL;
            for (int j = 0; j < nk && !first; ++j)
                if (!ks[j].pass)
                    first = &ks[j];
            printf("  ---\n  verdict: %s\n", timeout ? "timeout" : tol_only ? "tolerant" : "fail");
            if (first) {
                /* an "ok" line's message is why it passes (tolerantly) */
                printf("  message: ");
                conform_yaml_str(stdout, tol_only ? first->tol_detail : first->detail);
                printf("\n  task: %s\n", first->task);
                if (first->field)
                    printf("  field: %s\n", first->field);
            }
            printf("  detail: ");
            conform_yaml_str(stdout, text);
            printf("\n  ...\n");
        }
    } else if (!pass || o->verbose || (o->tolerance && !tpass)) {
        printf("%s %s (%s)\n%s", head, g->id, g->kind, text);
    }

    if (R->jf) {
        FILE *f = R->jf;
        fprintf(f, "    <testcase classname=\"tahq.conform.%s\" name=\"%s\" time=\"%.3f\">\n",
                g->kind, g->id, secs);
        R->j_time += secs;
        if (!ok) {
            const check *first = NULL;
            for (int j = 0; j < nk && !first; ++j)
                if (!ks[j].pass)
                    first = &ks[j];
            const char *el = timeout ? "error" : "failure";
            R->j_err += timeout != 0;
            R->j_fail += !timeout;
            fprintf(f, "      <%s type=\"%s\" message=\"", el, head);
            if (first) {
                fprintf(f, "%s: ", first->task);
                conform_xml_str(f, first->detail);
            }
            fputs("\">", f);
            conform_xml_str(f, text);
            fprintf(f, "</%s>\n", el);
        } else if (tol_only) {
            fputs("      <system-out>TOLERANT: passes the tolerant judgement, not the exact "
                  "one\n",
                  f);
            conform_xml_str(f, text);
            fputs("</system-out>\n", f);
        }
        fputs("    </testcase>\n", f);
    }
    free(block);
}

static void report_end(report *R)
{
    const opts *o = R->o;
    report_begin(R);
    size_t n_fail = R->n_sel - R->n_pass, n_tol_fail = R->n_sel - R->n_tol_pass;
    size_t skipped = R->n_all - R->n_sel;
    char sel[128];
    snprintf(sel, sizeof sel, "%zu cases selected, %zu skipped", R->n_sel, skipped);
    char tmo[64] = "";
    if (R->n_timeout)
        snprintf(tmo, sizeof tmo, "; %zu timed out", R->n_timeout);
    if (o->json) {
        json_t *sum =
            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:[I, I], s:[I, I], s:[I, I]}", "cases",
                      (json_int_t)R->n_all, "selected", (json_int_t)R->n_sel, "skipped",
                      (json_int_t)skipped, "passed", (json_int_t)R->n_pass, "failed",
                      (json_int_t)n_fail, "timed_out", (json_int_t)R->n_timeout, "encode",
                      (json_int_t)R->by_task[0][0], (json_int_t)R->by_task[0][1], "decode",
                      (json_int_t)R->by_task[1][0], (json_int_t)R->by_task[1][1], "errors",
                      (json_int_t)R->by_task[2][0], (json_int_t)R->by_task[2][1]);
        if (sum && o->tolerance &&
            (json_object_set_new(sum, "tolerant_passed", json_integer((json_int_t)R->n_tol_pass)) ||
             json_object_set_new(sum, "tolerant_only", json_integer((json_int_t)R->n_tol_only)) ||
             json_object_set_new(sum, "tolerant_failed", json_integer((json_int_t)n_tol_fail))))
            json_decref(sum), sum = NULL;
        char *text = cli_json_text(sum);
        if (text)
            printf("\n], \"summary\": %s}\n", text);
        else
            R->json_failed = 1;
        free(text);
        return;
    }
    const char *pre = o->tap ? "# " : "";
    printf("%sconform: %s: exact %zu passed, %zu failed (encode %zu/%zu, decode %zu/%zu, "
           "error codes %zu/%zu)%s\n",
           pre, sel, R->n_pass, n_fail, R->by_task[0][0], R->by_task[0][1], R->by_task[1][0],
           R->by_task[1][1], R->by_task[2][0], R->by_task[2][1], tmo);
    if (o->tolerance)
        printf("%sconform: tolerant (SPEC 6 bound, integer fields exact): %zu passed (%zu exact, "
               "%zu tolerant), %zu failed\n",
               pre, R->n_tol_pass, R->n_tol_pass - R->n_tol_only, R->n_tol_only, n_tol_fail);
}

/* The JUnit document: the suite's counts, then the collected testcases. */
static int junit_write(report *R, cli_out *out)
{
    if (R->jf) {
        fclose(R->jf);
        R->jf = NULL;
    }
    char *doc = NULL;
    size_t dlen = 0;
    FILE *f = open_memstream(&doc, &dlen);
    if (!f) {
        cli_out_abort(out);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    size_t skipped = R->n_all - R->n_sel;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"tahq conform\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "time=\"%.3f\">\n",
            R->n_sel, R->j_fail, R->j_err, R->j_time);
    fprintf(f, "  <testsuite name=\"tahq conform ");
    conform_xml_str(f, R->set);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\">\n",
            R->n_sel, R->j_fail, R->j_err, R->j_time);
    fprintf(f, "    <properties>\n      <property name=\"vectors\" value=\"");
    conform_xml_str(f, R->o->vectors);
    fprintf(f,
            "\"/>\n      <property name=\"mode\" value=\"%s\"/>\n"
            "      <property name=\"tolerance\" value=\"%s\"/>\n"
            "      <property name=\"cases_in_set\" value=\"%zu\"/>\n"
            "      <property name=\"cases_not_selected\" value=\"%zu\"/>\n"
            "    </properties>\n",
            R->o->run ? "run" : "candidate", R->o->tolerance ? "true" : "false", R->n_all, skipped);
    if (R->jbuf)
        fwrite(R->jbuf, 1, R->jlen, f);
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0 || !doc) {
        free(doc);
        cli_out_abort(out);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    cli_out_write(out, doc, dlen);
    free(doc);
    return cli_out_commit(out);
}

#define USAGE(...) cli_fail(EXIT_USAGE, __VA_ARGS__)

static int has_flag(const gcase *g, const char *flag)
{
    size_t i;
    const json_t *f;
    json_array_foreach(g->flags, i, f) if (strcmp(json_string_value(f), flag) == 0) return 1;
    return 0;
}

static int selected(const opts *o, const gcase *g)
{
    if (o->kinds && !(o->kinds & conform_kind_bit(g->kind)))
        return 0;
    if (o->ncases) {
        int any = 0;
        for (int i = 0; i < o->ncases && !any; ++i)
            any = strstr(g->id, o->cases[i]) != NULL;
        if (!any)
            return 0;
    }
    for (int i = 0; i < o->nexcludes; ++i)
        if (strstr(g->id, o->excludes[i]))
            return 0;
    if (o->nflags) {
        int any = 0;
        for (int i = 0; i < o->nflags && !any; ++i)
            any = has_flag(g, o->flags[i]);
        if (!any)
            return 0;
    }
    for (int i = 0; i < o->nxflags; ++i)
        if (has_flag(g, o->xflags[i]))
            return 0;
    return 1;
}

typedef struct state {
    gcase *cs;
    json_t *doc;
    size_t *sel; /* indices of the selected cases */
    case_run *cr;
    char tmp[4096];
    int have_tmp;
    conform_sched *sched;
    cli_out jout;
    int have_jout;
    report R;
} state;

static void state_free(state *S)
{
    conform_sched_free(S->sched);
    S->sched = NULL;
    if (S->have_tmp)
        conform_rmtree(S->tmp);
    S->have_tmp = 0;
    if (S->have_jout)
        cli_out_abort(&S->jout);
    S->have_jout = 0;
    if (S->R.jf)
        fclose(S->R.jf);
    S->R.jf = NULL;
    free(S->R.jbuf);
    free(S->cr);
    free(S->sel);
    free(S->cs);
    json_decref(S->doc);
    S->doc = NULL;
}

/* Evaluate and report selected case number i (its runs in cr, or NULL). */
static void judge(state *S, const opts *o, size_t i, const char *cdir)
{
    const gcase *g = &S->cs[S->sel[i]];
    check ks[2];
    int nk = eval_case(o, g, cdir, ks);
    for (int j = 0; j < nk; ++j)
        ks[j].run = NULL;
    if (o->run)
        apply_runs(o, g, ks, nk, &S->cr[i]);
    report_case(&S->R, g, ks, nk, o->run ? &S->cr[i] : NULL);
    if (o->run && !o->workdir)
        for (size_t e = 0; e < sizeof out_suffixes / sizeof out_suffixes[0]; ++e) {
            char p[4096];
            cpath(p, sizeof p, cdir, g->id, out_suffixes[e]);
            remove(p);
        }
}

/* The first case's run said that the command cannot run at all: exit
 * status 126 or 127 (the shell's "cannot execute" and "not found"), or an
 * interpreter that could not open its script (python's "can't open file",
 * a shell's "No such file or directory" for its script), naming no err_*
 * status. */
static int cannot_run(const conform_run *r)
{
    if (!r->ran || !r->exited || r->timed_out)
        return 0;
    if (r->status == 126 || r->status == 127)
        return 1;
    return (r->status == 1 || r->status == 2) && strcmp(r->word, "(none)") == 0 &&
           (strstr(r->tail, "can't open file") || strstr(r->tail, "No such file or directory") ||
            strstr(r->tail, "not found"));
}

/* A progress line on stderr: every tenth of the cases (at least every
 * case when there are few) or every 10 s, with the time left estimated
 * from the time so far. */
typedef struct progress {
    int on;
    size_t n, step, next;
    double start, last;
} progress;

static progress progress_start(int on, size_t n)
{
    progress P = {on, n, n / 10 ? n / 10 : 1, 0, cli_now(), cli_now()};
    P.next = P.step;
    return P;
}

static void progress_line(progress *P, size_t done, size_t failed)
{
    if (!P->on)
        return;
    double t = cli_now();
    if (done < P->n && done < P->next && t - P->last < 10.0)
        return;
    P->last = t;
    while (P->next <= done)
        P->next += P->step;
    double spent = t - P->start;
    double left = done ? spent / (double)done * (double)(P->n - done) : 0.0;
    fprintf(stderr,
            "conform: %zu/%zu cases done (%.0f%%), %zu failed, %.0f s so far, about %.0f s left\n",
            done, P->n, 100.0 * (double)done / (double)P->n, failed, spent, left);
    fflush(stderr);
}

static int run_all(state *S, const opts *o, const char *cdir)
{
    size_t n = S->R.n_sel, next_start = 0, next_print = 0;
    char *done = calloc(n ? n : 1, 1);
    static char args[2][12000];
    if (!done)
        return cli_fail(EXIT_USAGE, "out of memory");
    progress P = progress_start(o->progress, n);
    int rc = 0, limit = 1; /* the first case runs alone: can the command run at all? */
    while (next_print < n) {
        while (next_start < n && conform_sched_running(S->sched) < limit) {
            const gcase *g = &S->cs[S->sel[next_start]];
            conform_cmd cmds[2];
            char err[800];
            int nc =
                prepare_case(o, g, S->tmp, cdir, &S->cr[next_start], cmds, args, err, sizeof err);
            if (nc < 0) {
                free(done);
                return cli_fail(EXIT_USAGE, "%s", err);
            }
            if (conform_sched_start(S->sched, next_start, cmds, nc) != 0) {
                free(done);
                return cli_fail(EXIT_USAGE, "out of memory");
            }
            next_start++;
        }
        long id = conform_sched_wait(S->sched);
        if (id < 0) {
            free(done);
            return -1; /* a termination signal */
        }
        const gcase *g = &S->cs[S->sel[id]];
        finish_case(g, cdir, &S->cr[id]);
        if (limit == 1 && id == 0) {
            const conform_run *r = &S->cr[0].runs[0];
            if (cannot_run(r)) {
                char said[sizeof r->tail]; /* its stderr tail, as one line */
                snprintf(said, sizeof said, "%s", r->tail);
                for (char *c = said; *c; ++c)
                    if (*c == '\n' || *c == '\t')
                        *c = '|';
                free(done);
                return cli_fail(EXIT_USAGE,
                                "the candidate command cannot be run (exit status %d on the "
                                "first case, %s%s%s)",
                                r->status, g->id, said[0] ? "; its stderr: " : "", said);
            }
            limit = o->jobs;
        }
        done[id] = 1;
        while (next_print < n && done[next_print]) {
            judge(S, o, next_print++, cdir);
            progress_line(&P, S->R.n_done,
                          S->R.n_done - (o->tolerance ? S->R.n_tol_pass : S->R.n_pass));
        }
        fflush(stdout);
        if (conform_signal_pending()) { /* judging took a while: stop now */
            free(done);
            return -1;
        }
    }
    free(done);
    return rc;
}

/* 1 if dir (existing or not) is the set folder or inside it. */
static int workdir_in_set(const char *dir, const char *set)
{
    char rs[PATH_MAX], rd[PATH_MAX], probe[PATH_MAX];
    if (!realpath(set, rs))
        return 0;
    /* the nearest existing folder on the way to dir decides */
    snprintf(probe, sizeof probe, "%s", dir);
    while (!realpath(probe, rd)) {
        char *slash = strrchr(probe, '/');
        if (!slash)
            return realpath(".", rd) && (strcmp(rd, rs) == 0 || (strncmp(rd, rs, strlen(rs)) == 0 &&
                                                                 rd[strlen(rs)] == '/'));
        if (slash == probe) {
            snprintf(probe, sizeof probe, "/");
        } else {
            *slash = '\0';
        }
    }
    size_t n = strlen(rs);
    return strcmp(rd, rs) == 0 || (strncmp(rd, rs, n) == 0 && (rd[n] == '/' || n == 1));
}

/* Read the manifest p of the set, parse every case and check every file of
 * the set against its size and sha256. 0, or the exit status after a
 * message (S freed). *setp gets the set's name, *ncp the number of cases. */
static int load_manifest(const opts *o, const char *p, state *S, const char **setp, size_t *ncp)
{
    char err[512];
    int rc;
    uint8_t *text;
    size_t tlen;
    char why[200];
    /* a regular file of a sane size: a FIFO or device here must not hang */
    if (conform_read_capped(p, 0, (uint64_t)1 << 28, &text, &tlen, why, sizeof why) != 0)
        return cli_fail(EXIT_RUNTIME, "%s: %s", p, why);
    S->doc = golden_json_load((const char *)text, tlen, err, sizeof err);
    free(text);
    if (!S->doc)
        return cli_fail(EXIT_RUNTIME, "%s: %s", p, err);
    const json_t *root = S->doc;
    const json_t *cases = json_is_object(root) ? json_object_get(root, "cases") : NULL;
    const char *schema;
    uint64_t fv, ncases;
    if (golden_json_str(root, "schema", &schema) || strcmp(schema, GOLDEN_SCHEMA) != 0 ||
        golden_json_str(root, "set", setp) || golden_json_u64(root, "format_version", &fv) ||
        golden_json_u64(root, "n_cases", &ncases) || !json_is_array(cases) ||
        json_array_size(cases) != ncases) {
        state_free(S);
        return cli_fail(EXIT_RUNTIME,
                        "%s: not a %s manifest (schema, set, format_version, n_cases, cases)", p,
                        GOLDEN_SCHEMA);
    }
    if (fv != TAHQ_FORMAT_VERSION) {
        state_free(S);
        return cli_fail(EXIT_RUNTIME, "%s: vectors for format %" PRIu64 ", this is format %u", p,
                        fv, (unsigned)TAHQ_FORMAT_VERSION);
    }
    S->cs = calloc(json_array_size(cases) + 1, sizeof *S->cs);
    S->sel = calloc(json_array_size(cases) + 1, sizeof *S->sel);
    if (!S->cs || !S->sel) {
        state_free(S);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    size_t nc = 0;
    *ncp = 0;
    for (; nc < json_array_size(cases); ++nc) {
        const json_t *c = json_array_get(cases, nc);
        if (parse_case(c, &S->cs[nc], err, sizeof err)) {
            state_free(S);
            return cli_fail(EXIT_RUNTIME, "%s: %s", p, err);
        }
        for (size_t j = 0; j < nc; ++j)
            if (strcmp(S->cs[j].id, S->cs[nc].id) == 0) {
                /* report before freeing: the id lives in cs and doc */
                rc = cli_fail(EXIT_RUNTIME, "%s: duplicate case id %s", p, S->cs[nc].id);
                state_free(S);
                return rc;
            }
        int bad = verify_file(o, &S->cs[nc], &S->cs[nc].input, err, sizeof err);
        if (!bad && S->cs[nc].dec_only)
            bad = verify_file(o, &S->cs[nc], &S->cs[nc].decoded, err, sizeof err);
        else if (!bad && (strcmp(S->cs[nc].kind, "encode") == 0 || S->cs[nc].pv1))
            bad = verify_file(o, &S->cs[nc], &S->cs[nc].message, err, sizeof err) ||
                  verify_file(o, &S->cs[nc], &S->cs[nc].decoded, err, sizeof err);
        if (bad) {
            state_free(S);
            return cli_fail(EXIT_RUNTIME, "%s", err);
        }
    }
    *ncp = nc;
    return 0;
}

/* A --flag or --exclude-flag that no case has is a typo: say so instead of
 * silently selecting, or excluding, nothing. 0, or the exit status after a
 * message (S freed). */
static int check_flags_used(const opts *o, state *S, size_t nc)
{
    int rc;
    for (int which = 0; which < 2; ++which) {
        const char *const *fl = which ? o->xflags : o->flags;
        for (int i = 0; i < (which ? o->nxflags : o->nflags); ++i) {
            int used = 0;
            for (size_t c = 0; c < nc && !used; ++c)
                used = has_flag(&S->cs[c], fl[i]);
            if (!used) {
                rc = USAGE("%s '%s': no case of %s has this flag (see the \"flags\" of its "
                           "manifest)",
                           which ? "--exclude-flag" : "--flag", fl[i], o->vectors);
                state_free(S);
                return rc;
            }
        }
    }
    return 0;
}

/* --run: the candidate on every selected case, in a private temporary
 * folder (or --workdir), the signal mask held. Returns what run_all does
 * (0, an exit status, or -1 for a stop by signal); *sig gets the
 * termination signal received, 0 if none. */
static int run_candidate(state *S, const opts *o, int *sig)
{
    int rc;
    const char *cdir;
    S->cr = calloc(S->R.n_sel, sizeof *S->cr);
    if (!S->cr)
        return cli_fail(EXIT_RUNTIME, "out of memory");
    if (o->workdir && workdir_in_set(o->workdir, o->vectors)) {
        /* the stale outputs removed there before each case would be
         * the set's own files */
        return USAGE("%s: is inside the vector set %s; --workdir must be a folder outside it",
                     o->workdir, o->vectors);
    }
    if (o->workdir && mkdir(o->workdir, 0755) != 0 && errno != EEXIST) {
        return cli_fail(EXIT_USAGE, "%s: cannot create: %s", o->workdir, strerror(errno));
    }
    if (o->workdir && !is_dir(o->workdir))
        return USAGE("%s: not a folder (--workdir)", o->workdir);
    if (conform_signals_begin() != 0 || conform_tmpdir(S->tmp, sizeof S->tmp) != 0) {
        rc = cli_fail(EXIT_USAGE, "cannot create a temporary folder: %s", strerror(errno));
        conform_signals_end();
        return rc;
    }
    S->have_tmp = 1;
    cdir = o->workdir ? o->workdir : S->tmp;
    S->sched = conform_sched_new(o->run, o->jobs, o->timeout);
    rc = S->sched ? run_all(S, o, cdir) : cli_fail(EXIT_USAGE, "out of memory");
    /* kill what still runs and remove the temporary folder before the
     * signal mask comes back */
    conform_sched_free(S->sched);
    S->sched = NULL;
    conform_rmtree(S->tmp);
    S->have_tmp = 0;
    *sig = conform_signals_end();
    if (rc < 0 && !*sig)
        *sig = SIGTERM; /* not reached: a stop is always a signal */
    return rc;
}

int conform_main(const conform_options *opts_in)
{
    opts o = *opts_in;
    int rc = 0;
    if (!is_dir(o.vectors))
        return USAGE("%s: no such folder (--vectors needs a golden set folder, e.g. golden/v1)",
                     o.vectors);
    char p[4096], err[512];
    if (snprintf(p, sizeof p, "%s/manifest.json", o.vectors) >= (int)sizeof p)
        return USAGE("--vectors: path too long");
    if (access(p, F_OK) != 0)
        return USAGE("%s: not a golden set (no manifest.json)", o.vectors);
    if (o.candidate && !is_dir(o.candidate))
        return USAGE("%s: no such folder (--candidate)", o.candidate);
    if (o.run && conform_check_command(o.run, err, sizeof err))
        return USAGE("%s (--run '%s')", err, o.run);

    state S;
    memset(&S, 0, sizeof S);
    const char *set;
    size_t nc;
    if ((rc = load_manifest(&o, p, &S, &set, &nc)) != 0)
        return rc;
    if ((rc = check_flags_used(&o, &S, nc)) != 0)
        return rc;
    if (o.check_only) {
        if (o.json) {
            rc = cli_json_print(stdout, json_pack("{s:o, s:o, s:I, s:b}", "vectors",
                                                  cli_jstr(o.vectors), "set", cli_jstr(set),
                                                  "cases", (json_int_t)nc, "valid", 1));
            state_free(&S);
            return rc;
        } else {
            printf("conform: %s (set %s): %zu cases, manifest valid, every file matches its "
                   "sha256\n",
                   o.vectors, set, nc);
        }
        state_free(&S);
        return 0;
    }
    size_t n_sel = 0;
    for (size_t i = 0; i < nc; ++i)
        if (selected(&o, &S.cs[i]))
            S.sel[n_sel++] = i;
    if (n_sel == 0) {
        state_free(&S);
        return USAGE("no case selected (%zu cases in %s; see --case, --exclude, --flag, "
                     "--exclude-flag, --kind, --profile)",
                     nc, o.vectors);
    }
    S.R.o = &o;
    S.R.set = set;
    S.R.n_all = nc;
    S.R.n_sel = n_sel;
    if (o.junit) {
        /* conform's own output: a path it cannot write is a usage error,
         * not a failing candidate */
        rc = cli_out_open(&S.jout, o.junit);
        if (rc) {
            state_free(&S);
            return EXIT_USAGE;
        }
        S.have_jout = 1;
        S.R.jf = open_memstream(&S.R.jbuf, &S.R.jlen);
        if (!S.R.jf) {
            state_free(&S);
            return cli_fail(EXIT_RUNTIME, "out of memory");
        }
    }

    int sig = 0;
    if (o.run) {
        rc = run_candidate(&S, &o, &sig);
    } else {
        progress P = progress_start(o.progress, n_sel);
        for (size_t i = 0; i < n_sel; ++i) {
            judge(&S, &o, i, o.candidate);
            progress_line(&P, S.R.n_done, S.R.n_done - (o.tolerance ? S.R.n_tol_pass : S.R.n_pass));
        }
    }
    if (sig) {
        state_free(&S);
        conform_die_by_signal(sig);
    }
    if (rc) {
        state_free(&S);
        return rc;
    }
    report_end(&S.R);
    fflush(stdout);
    if (o.junit) {
        S.have_jout = 0;
        rc = junit_write(&S.R, &S.jout);
        if (rc) {
            state_free(&S);
            return EXIT_USAGE;
        }
    }
    size_t fails = o.tolerance ? n_sel - S.R.n_tol_pass : n_sel - S.R.n_pass;
    int json_failed = S.R.json_failed;
    state_free(&S);
    if (json_failed)
        return cli_fail(EXIT_RUNTIME, "out of memory (JSON output)");
    return fails ? EXIT_RUNTIME : 0;
}
