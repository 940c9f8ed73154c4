/* cmd_conform.c - tahq conform: check the outputs of another implementation
 * against a golden vector set (golden/README.md describes the manifest, the
 * candidate directory layout and the --run protocol). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec_ops.h"
#include "commands.h"
#include "golden_common.h"
#include "golden_paper_v1.h"
#include "npy.h"
#include "sha256.h"
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
    int pv1; /* kind paper_v1: pcfg, not cfg */
    tahq_paper_v1_config pcfg;
} gcase;

typedef struct check {
    const char *task; /* "encode", "decode", "error" */
    int pass;         /* exact verdict */
    char detail[512];
    const char *field;
    int64_t tile;
    /* tolerant mode */
    int tol_done, tol_pass;
    char tol_detail[512];
} check;

typedef struct opts {
    const char *vectors, *candidate, *run, *workdir, *only;
    int json, tolerance, check_only, keep, verbose;
} opts;

/* ---------------------------------------------------------------- helpers */

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static int read_quiet(const char *path, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 65536, n = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        uint8_t *t = realloc(b, cap * 2);
        if (!t) {
            free(b);
            b = NULL;
            break;
        }
        b = t;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!b || err) {
        free(b);
        return -1;
    }
    *data = b;
    *len = n;
    return 0;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
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

static int parse_file_ref(const json_node *c, const char *key, file_ref *f, char *err, size_t n)
{
    const json_node *o = json_get(c, key);
    if (!o || json_get_str(o, "path", &f->path) || json_get_u64(o, "bytes", &f->bytes) ||
        json_get_str(o, "sha256", &f->sha)) {
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

static int parse_case(const json_node *c, gcase *g, char *err, size_t n)
{
    memset(g, 0, sizeof *g);
    const json_node *flags = json_get(c, "flags");
    const char *desc;
    if (json_get_str(c, "id", &g->id) || json_get_str(c, "kind", &g->kind) ||
        json_get_str(c, "expected_status", &g->expected_status) ||
        json_get_str(c, "description", &desc) || !flags || flags->type != JSON_ARR ||
        flags->count == 0) {
        snprintf(err, n, "a case needs id, kind, flags (non-empty), description, expected_status");
        return -1;
    }
    for (const char *p = g->id; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
            snprintf(err, n, "case id '%s': only a-z, 0-9 and '-'", g->id);
            return -1;
        }
    for (const json_node *f = flags->child; f; f = f->next)
        if (f->type != JSON_STR) {
            snprintf(err, n, "case %s: flags must be strings", g->id);
            return -1;
        }
    if (!valid_status_name(g->expected_status)) {
        snprintf(err, n, "case %s: expected_status '%s' is not a tahq status name", g->id,
                 g->expected_status);
        return -1;
    }
    int enc = strcmp(g->kind, "encode") == 0, encerr = strcmp(g->kind, "encode_error") == 0,
        decerr = strcmp(g->kind, "decode_error") == 0;
    g->pv1 = strcmp(g->kind, GOLDEN_KIND_PAPER_V1) == 0;
    if (g->pv1) /* judged like encode, with the paper-v1 config and tolerance */
        enc = 1;
    if (!enc && !encerr && !decerr) {
        snprintf(err, n, "case %s: unknown kind '%s'", g->id, g->kind);
        return -1;
    }
    if (enc != (strcmp(g->expected_status, "ok") == 0)) {
        snprintf(err, n, "case %s: expected_status must be ok exactly for kind encode", g->id);
        return -1;
    }
    if (parse_file_ref(c, "input", &g->input, err, n))
        return -1;
    if (enc || encerr) {
        const json_node *sh = json_get(c, "shape");
        if (g->pv1) {
            if (golden_pv1_config_parse(json_get(c, "config"), &g->pcfg, err, n))
                return -1;
            tahq_config_default(&g->cfg);
            g->cfg.tile = g->pcfg.tile;
        } else if (golden_config_parse(json_get(c, "config"), &g->cfg, err, n)) {
            return -1;
        }
        if (g->pv1 ? tahq_paper_v1_check(&g->pcfg, &(tahq_shape){1, 1, g->pcfg.tile}) != TAHQ_OK
                   : tahq_check_config(&g->cfg) != TAHQ_OK) {
            snprintf(err, n, "case %s: config is not valid", g->id);
            return -1;
        }
        if (!sh || sh->type != JSON_ARR || sh->count != 3) {
            snprintf(err, n, "case %s: shape must be [B, S, C]", g->id);
            return -1;
        }
        uint64_t d[3];
        int i = 0;
        for (const json_node *e = sh->child; e; e = e->next, ++i) {
            if (e->type != JSON_NUM || e->num < 1 || e->num > 4294967295.0 ||
                e->num != floor(e->num)) {
                snprintf(err, n, "case %s: shape entries must be integers >= 1", g->id);
                return -1;
            }
            d[i] = (uint64_t)e->num;
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
    return 0;
}

static int verify_file(const opts *o, const gcase *g, const file_ref *f, char *err, size_t n)
{
    char p[4096];
    vpath(p, sizeof p, o, f->path);
    uint8_t *d;
    size_t len;
    if (read_quiet(p, &d, &len)) {
        snprintf(err, n, "case %s: cannot read %.300s", g->id, p);
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

static void cmp_message(check *k, const uint8_t *exp, size_t elen, const uint8_t *got,
                        size_t glen)
{
    size_t m = elen < glen ? elen : glen;
    size_t i = 0;
    while (i < m && exp[i] == got[i])
        ++i;
    if (i == m && elen == glen) {
        k->pass = 1;
        snprintf(k->detail, sizeof k->detail, "%zu bytes identical", elen);
        return;
    }
    k->pass = 0;
    char where[256];
    const char *section = "length";
    if (i < m) {
        golden_locate(exp, elen, i, where, sizeof where, &section, &k->tile);
        size_t ndiff = 0;
        for (size_t j = i; j < m; ++j)
            ndiff += exp[j] != got[j];
        snprintf(k->detail, sizeof k->detail,
                 "first difference at byte %zu: expected 0x%02x, got 0x%02x, in %s; %zu of %zu "
                 "common bytes differ%s",
                 i, exp[i], got[i], where, ndiff, m, elen != glen ? "; lengths differ" : "");
    } else {
        snprintf(k->detail, sizeof k->detail,
                 "length: expected %zu bytes, got %zu (the first %zu bytes agree)", elen, glen, m);
    }
    k->field = section;
}

static void cmp_decoded(check *k, const gcase *g, const float *exp, const npy_tensor *got)
{
    uint64_t n = (uint64_t)g->shape.batch * g->shape.seq_len * g->shape.channels;
    if (got->count != n || got->dims[got->ndim - 1] != g->shape.channels) {
        k->pass = 0;
        k->field = "shape";
        snprintf(k->detail, sizeof k->detail,
                 "shape: expected [%u, %u, %u], got %u dims with %" PRIu64 " elements",
                 (unsigned)g->shape.batch, (unsigned)g->shape.seq_len,
                 (unsigned)g->shape.channels, (unsigned)got->ndim, got->count);
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
             (double)exp[first], f2u(exp[first]), (double)got->data[first],
             f2u(got->data[first]), ndiff, n);
}

/* Tolerant check of a candidate message: config/shape header exact, the
 * message valid, every value it decodes to within the SPEC §6 bound (computed
 * from the candidate's own message) of the input; mismatch rates of the
 * other fields against the expected message. */
static void tol_message(check *k, const gcase *g, const float *x, const uint8_t *exp,
                        size_t elen, const uint8_t *got, size_t glen)
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
    int s2 = s1 == TAHQ_OK ? run_bound(got, glen, n, &bd) : s1;
    if (s1 != TAHQ_OK || s2 != TAHQ_OK) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "candidate message does not decode: %s",
                 s1 != TAHQ_OK ? tahq_status_name(s1) : tahq_status_name(s2));
        free(y);
        free(bd);
        return;
    }
    uint64_t over = 0, first_over = n;
    for (uint64_t i = 0; i < n; ++i)
        if (!(fabs((double)x[i] - (double)y[i]) <= bd[i])) {
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
                 (double)x[first_over], (double)y[first_over], bd[first_over]);
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
    if (run_bound(msg, mlen, n, &bd) != TAHQ_OK) {
        snprintf(k->tol_detail, sizeof k->tol_detail, "bound of the expected message failed");
        return;
    }
    uint64_t over = 0, diff = 0, first_over = n;
    for (uint64_t i = 0; i < n; ++i) {
        diff += f2u(yexp[i]) != f2u(got->data[i]);
        if (!(fabs((double)x[i] - (double)got->data[i]) <= bd[i])) {
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

static int load_npy_quiet(const char *path, npy_tensor *t, char *err, size_t n)
{
    uint8_t *d;
    size_t len;
    memset(t, 0, sizeof *t);
    if (read_quiet(path, &d, &len)) {
        snprintf(err, n, "cannot read %s", path);
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
static int run_cmd(const char *cmd, const char *args, const char *wd, const char *id,
                   const char *errpath, int want_err)
{
    char stderr_path[4096], line[16384], q[4200];
    snprintf(stderr_path, sizeof stderr_path, "%s/%s.stderr", wd, id);
    shq(q, sizeof q, stderr_path);
    snprintf(line, sizeof line, "%s %s </dev/null 2>%s", cmd, args, q);
    fflush(stdout);
    int st = system(line);
    int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    uint8_t *txt = NULL;
    size_t tl = 0;
    if (!ok || want_err) {
        char word[64] = "ok";
        if (!ok) {
            read_quiet(stderr_path, &txt, &tl);
            char *z = malloc(tl + 1);
            if (z) {
                if (tl)
                    memcpy(z, txt, tl);
                z[tl] = '\0';
                status_word(z, word, sizeof word);
                free(z);
            }
            free(txt);
        }
        FILE *f = fopen(errpath, "w");
        if (f) {
            fprintf(f, "%s\n", word);
            fclose(f);
        }
    }
    return ok;
}

static int copy_file(const char *from, const char *to)
{
    uint8_t *d;
    size_t n;
    if (read_quiet(from, &d, &n))
        return -1;
    FILE *f = fopen(to, "wb");
    int rc = -1;
    if (f) {
        rc = fwrite(d, 1, n, f) == n ? 0 : -1;
        if (fclose(f) != 0)
            rc = -1;
    }
    free(d);
    return rc;
}

static void run_case(const opts *o, const gcase *g, const char *wd)
{
    char in[4096], out[4096], err[4096], qi[4200], qo[4200], qc[1200], args[12000];
    vpath(in, sizeof in, o, g->input.path);
    cpath(err, sizeof err, wd, g->id, ".err");
    remove(err);
    shq(qi, sizeof qi, in);
    if (strcmp(g->kind, "decode_error") != 0) {
        cpath(out, sizeof out, wd, g->id, ".bin");
        remove(out);
        shq(qo, sizeof qo, out);
        shq(qc, sizeof qc, g->cfg_json);
        snprintf(args, sizeof args, "encode %s %s --config %s", qi, qo, qc);
        run_cmd(o->run, args, wd, g->id, err, strcmp(g->kind, "encode_error") == 0);
    }
    if (strcmp(g->kind, "encode") == 0 || g->pv1) {
        /* decode the expected message, handed over as a copy outside expected/ */
        char msg[4096], tmp[4096];
        vpath(msg, sizeof msg, o, g->message.path);
        cpath(tmp, sizeof tmp, wd, g->id, ".in.bin");
        cpath(out, sizeof out, wd, g->id, ".npy");
        remove(out);
        if (copy_file(msg, tmp) == 0) {
            char derr[4096];
            cpath(derr, sizeof derr, wd, g->id, ".decode.err");
            shq(qi, sizeof qi, tmp);
            shq(qo, sizeof qo, out);
            if (g->pv1) /* no header: the decoder needs the config and the shape */
                snprintf(args, sizeof args, "decode %s %s --config %s --shape %ux%ux%u", qi, qo,
                         qc, (unsigned)g->shape.batch, (unsigned)g->shape.seq_len,
                         (unsigned)g->shape.channels);
            else
                snprintf(args, sizeof args, "decode %s %s", qi, qo);
            run_cmd(o->run, args, wd, g->id, derr, 0);
        }
    } else if (strcmp(g->kind, "decode_error") == 0) {
        cpath(out, sizeof out, wd, g->id, ".npy");
        remove(out);
        shq(qo, sizeof qo, out);
        snprintf(args, sizeof args, "decode %s %s", qi, qo);
        run_cmd(o->run, args, wd, g->id, err, 1);
    }
}

/* ---------------------------------------------------------------- paper-v1 */

/* A paper_v1 case (golden/README.md): the message by fields (bitmap, flags,
 * pivots exact; codes within a mismatch rate, each by 1; zero points and
 * scales within 1 fp16 ulp) and the decoded tensor within 2^-14 of each
 * tile's max. Both verdicts (exact and tolerant) follow this rule; the
 * detail says whether the output was bit-exact and gives the rates. */
static int eval_paper_v1(const opts *o, const gcase *g, const char *cdir, check *ks)
{
    char p[4096], e[300];
    uint8_t *exp = NULL, *got = NULL;
    size_t elen = 0, glen = 0;
    npy_tensor yexp, ygot;
    memset(&yexp, 0, sizeof yexp);
    memset(&ygot, 0, sizeof ygot);
    vpath(p, sizeof p, o, g->message.path);
    read_quiet(p, &exp, &elen);
    vpath(p, sizeof p, o, g->decoded.path);
    int have_y = load_npy_quiet(p, &yexp, e, sizeof e) == 0;

    check *k = &ks[0];
    memset(k, 0, sizeof *k);
    k->task = "encode";
    k->tile = -1;
    k->tol_done = 1;
    cpath(p, sizeof p, cdir, g->id, ".bin");
    if (!exp) {
        snprintf(k->detail, sizeof k->detail, "expected message unreadable");
        k->field = "message";
    } else if (read_quiet(p, &got, &glen)) {
        snprintf(k->detail, sizeof k->detail, "missing %s.bin", g->id);
        k->field = "message";
    } else {
        int exact = 0;
        k->pass = golden_pv1_compare_message(&g->pcfg, &g->shape, exp, elen, got, glen, &exact,
                                             k->detail, sizeof k->detail, &k->field);
    }
    k->tol_pass = k->pass;
    snprintf(k->tol_detail, sizeof k->tol_detail, "%s", k->detail);
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
    } else if (load_npy_quiet(p, &ygot, e, sizeof e)) {
        snprintf(k->detail, sizeof k->detail, "%s", e);
        k->field = "values";
    } else if (!have_y || ygot.count != cnt || yexp.count != cnt) {
        snprintf(k->detail, sizeof k->detail, "decoded tensor has %llu values, expected %llu",
                 (unsigned long long)ygot.count, (unsigned long long)cnt);
        k->field = "values";
    } else {
        int exact = 0;
        k->pass = golden_pv1_compare_decoded(&g->pcfg, yexp.data, ygot.data, cnt, &exact,
                                             k->detail, sizeof k->detail);
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

static int eval_case(const opts *o, const gcase *g, const char *cdir, check *ks)
{
    int nk = 0;
    char p[4096], e[300];
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
        if (read_quiet(p, &d, &n)) {
            snprintf(k->detail, sizeof k->detail, "missing %s.err (expected %s)", g->id,
                     g->expected_status);
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
    read_quiet(p, &exp, &elen);
    vpath(p, sizeof p, o, g->input.path);
    int have_x = load_npy_quiet(p, &x, e, sizeof e) == 0;
    vpath(p, sizeof p, o, g->decoded.path);
    int have_y = load_npy_quiet(p, &yexp, e, sizeof e) == 0;

    check *k = &ks[nk++];
    memset(k, 0, sizeof *k);
    k->task = "encode";
    k->tile = -1;
    cpath(p, sizeof p, cdir, g->id, ".bin");
    if (read_quiet(p, &got, &glen)) {
        char ep[4096], word[64] = "(none)";
        cpath(ep, sizeof ep, cdir, g->id, ".err");
        uint8_t *d;
        size_t n;
        if (read_quiet(ep, &d, &n) == 0) {
            char *z = malloc(n + 1);
            if (z) {
                memcpy(z, d, n);
                z[n] = '\0';
                status_word(z, word, sizeof word);
                free(z);
            }
            free(d);
            snprintf(k->detail, sizeof k->detail, "no message: the candidate reported %s", word);
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
    } else if (load_npy_quiet(p, &ygot, e, sizeof e)) {
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

/* ---------------------------------------------------------------- command */

static void help(void)
{
    printf("usage: tahq conform --vectors DIR (--candidate DIR | --run CMD | --check)\n"
           "                    [--tolerance] [--case TEXT] [--workdir DIR] [--json] [-v]\n"
           "Check another implementation against a golden vector set (golden/README.md).\n"
           "  --vectors DIR    the set (DIR/manifest.json, inputs/, expected/)\n"
           "  --candidate DIR  files the candidate produced: ID.bin (encode), ID.npy\n"
           "                   (decode of the expected message), ID.err (status name of\n"
           "                   an invalid case)\n"
           "  --run CMD        run the candidate: 'CMD encode IN.npy OUT.bin --config JSON'\n"
           "                   and 'CMD decode IN.bin OUT.npy'; a failure exits non-zero\n"
           "                   and names the status (err_crc, ...) on stderr\n"
           "  --workdir DIR    where --run writes (default: a new directory in /tmp,\n"
           "                   removed afterwards)\n"
           "  --check          only validate the manifest and every file's size and sha256\n"
           "  --tolerance      also judge non-bit-exact candidates: values within the\n"
           "                   SPEC 6 bound, header fields and error codes exact; the exit\n"
           "                   status then follows the tolerant verdict\n"
           "  --case TEXT      only the cases whose id contains TEXT\n"
           "  -v               print passing cases too\n"
           "Exit status: 0 every selected case passed, 1 a case failed or the set is\n"
           "invalid, 2 usage error.\n");
}

static void rm_workdir(const char *wd, gcase *cs, size_t n)
{
    static const char *ext[6] = {".bin", ".npy", ".err", ".stderr", ".in.bin", ".decode.err"};
    char p[4096];
    for (size_t i = 0; i < n; ++i)
        for (int e = 0; e < 6; ++e) {
            cpath(p, sizeof p, wd, cs[i].id, ext[e]);
            remove(p);
        }
    rmdir(wd);
}

int cmd_conform(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v;
        int r;
        if (cli_is_help(a)) {
            help();
            return 0;
        }
        if ((r = cli_opt_value(argc, argv, &i, "--vectors", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o.vectors = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "--candidate", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o.candidate = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "--run", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o.run = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "--workdir", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o.workdir = v;
        } else if ((r = cli_opt_value(argc, argv, &i, "--case", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o.only = v;
        } else if (cli_opt_flag(a, "--json")) {
            o.json = 1;
        } else if (cli_opt_flag(a, "--tolerance")) {
            o.tolerance = 1;
        } else if (cli_opt_flag(a, "--check")) {
            o.check_only = 1;
        } else if (cli_opt_flag(a, "-v")) {
            o.verbose = 1;
        } else {
            return cli_fail(EXIT_USAGE, "unknown argument '%s' (see tahq conform --help)", a);
        }
    }
    if (!o.vectors)
        return cli_fail(EXIT_USAGE, "need --vectors DIR (see tahq conform --help)");
    if (!!o.candidate + !!o.run + o.check_only != 1)
        return cli_fail(EXIT_USAGE, "need exactly one of --candidate, --run, --check");

    char p[4096], err[512];
    snprintf(p, sizeof p, "%s/manifest.json", o.vectors);
    uint8_t *text;
    size_t tlen;
    int rc = cli_read_file(p, &text, &tlen);
    if (rc)
        return rc;
    json_doc doc;
    if (json_parse(&doc, (const char *)text, tlen)) {
        free(text);
        return cli_fail(EXIT_RUNTIME, "%s: %s", p, doc.err);
    }
    free(text);
    const json_node *root = doc.root, *cases = json_get(root, "cases");
    const char *schema, *set;
    uint64_t fv, ncases;
    if (json_get_str(root, "schema", &schema) || strcmp(schema, GOLDEN_SCHEMA) != 0 ||
        json_get_str(root, "set", &set) || json_get_u64(root, "format_version", &fv) ||
        json_get_u64(root, "n_cases", &ncases) || !cases || cases->type != JSON_ARR ||
        cases->count != ncases) {
        json_free(&doc);
        return cli_fail(EXIT_RUNTIME,
                        "%s: not a %s manifest (schema, set, format_version, n_cases, cases)", p,
                        GOLDEN_SCHEMA);
    }
    if (fv != TAHQ_FORMAT_VERSION) {
        json_free(&doc);
        return cli_fail(EXIT_RUNTIME, "%s: vectors for format %" PRIu64 ", this is format %u", p,
                        fv, (unsigned)TAHQ_FORMAT_VERSION);
    }
    gcase *cs = calloc(cases->count + 1, sizeof *cs);
    if (!cs) {
        json_free(&doc);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    size_t nc = 0;
    for (const json_node *c = cases->child; c; c = c->next, ++nc) {
        if (parse_case(c, &cs[nc], err, sizeof err)) {
            free(cs);
            json_free(&doc);
            return cli_fail(EXIT_RUNTIME, "%s: %s", p, err);
        }
        for (size_t j = 0; j < nc; ++j)
            if (strcmp(cs[j].id, cs[nc].id) == 0) {
                /* report before freeing: the id lives in cs and doc */
                rc = cli_fail(EXIT_RUNTIME, "%s: duplicate case id %s", p, cs[nc].id);
                free(cs);
                json_free(&doc);
                return rc;
            }
        int bad = verify_file(&o, &cs[nc], &cs[nc].input, err, sizeof err);
        if (!bad && (strcmp(cs[nc].kind, "encode") == 0 || cs[nc].pv1))
            bad = verify_file(&o, &cs[nc], &cs[nc].message, err, sizeof err) ||
                  verify_file(&o, &cs[nc], &cs[nc].decoded, err, sizeof err);
        if (bad) {
            free(cs);
            json_free(&doc);
            return cli_fail(EXIT_RUNTIME, "%s", err);
        }
    }
    if (o.check_only) {
        if (o.json)
            printf("{\"vectors\": \"%s\", \"set\": \"%s\", \"cases\": %zu, \"valid\": true}\n",
                   o.vectors, set, nc);
        else
            printf("conform: %s (set %s): %zu cases, manifest valid, every file matches its "
                   "sha256\n",
                   o.vectors, set, nc);
        free(cs);
        json_free(&doc);
        return 0;
    }

    char wdbuf[4096];
    const char *cdir = o.candidate;
    int own_wd = 0;
    if (o.run) {
        if (o.workdir) {
            snprintf(wdbuf, sizeof wdbuf, "%s", o.workdir);
            if (mkdir(wdbuf, 0755) != 0 && errno != EEXIST) {
                free(cs);
                json_free(&doc);
                return cli_fail(EXIT_RUNTIME, "%s: cannot create", wdbuf);
            }
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(wdbuf, sizeof wdbuf, "%s/tahq-conform-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (!mkdtemp(wdbuf)) {
                free(cs);
                json_free(&doc);
                return cli_fail(EXIT_RUNTIME, "cannot create a work directory");
            }
            own_wd = 1;
        }
        cdir = wdbuf;
    }

    size_t n_sel = 0, n_pass = 0, n_tol_pass = 0;
    size_t by_task[3][2] = {{0, 0}, {0, 0}, {0, 0}}; /* encode, decode, error: pass, total */
    if (o.json)
        printf("{\"vectors\": \"%s\", \"set\": \"%s\", \"mode\": \"%s\", \"cases\": [", o.vectors,
               set, o.run ? "run" : "candidate");
    for (size_t i = 0; i < nc; ++i) {
        const gcase *g = &cs[i];
        if (o.only && !strstr(g->id, o.only))
            continue;
        if (o.run)
            run_case(&o, g, cdir);
        check ks[2];
        int nk = eval_case(&o, g, cdir, ks);
        int pass = 1, tpass = 1;
        for (int j = 0; j < nk; ++j) {
            pass &= ks[j].pass;
            tpass &= ks[j].tol_done && ks[j].tol_pass;
            int t = strcmp(ks[j].task, "encode") == 0 ? 0 : strcmp(ks[j].task, "decode") == 0 ? 1 : 2;
            by_task[t][1]++;
            by_task[t][0] += ks[j].pass != 0;
        }
        n_sel++;
        n_pass += pass;
        n_tol_pass += tpass;
        if (o.json) {
            printf("%s\n  {\"id\": \"%s\", \"kind\": \"%s\", \"pass\": %s", n_sel > 1 ? "," : "",
                   g->id, g->kind, pass ? "true" : "false");
            if (o.tolerance)
                printf(", \"tolerant_pass\": %s", tpass ? "true" : "false");
            printf(", \"checks\": [");
            for (int j = 0; j < nk; ++j) {
                printf("%s{\"task\": \"%s\", \"pass\": %s, \"field\": ", j ? ", " : "",
                       ks[j].task, ks[j].pass ? "true" : "false");
                if (ks[j].field && !ks[j].pass)
                    json_str(stdout, ks[j].field);
                else
                    fputs("null", stdout);
                printf(", \"tile\": ");
                if (ks[j].tile >= 0 && !ks[j].pass)
                    printf("%" PRId64, ks[j].tile);
                else
                    fputs("null", stdout);
                printf(", \"detail\": ");
                json_str(stdout, ks[j].detail);
                if (o.tolerance) {
                    printf(", \"tolerant_pass\": %s, \"tolerant_detail\": ",
                           ks[j].tol_done && ks[j].tol_pass ? "true" : "false");
                    json_str(stdout, ks[j].tol_detail);
                }
                printf("}");
            }
            printf("]}");
        } else if (!pass || o.verbose || (o.tolerance && !tpass)) {
            printf("%s %s (%s)\n", pass ? "PASS" : "FAIL", g->id, g->kind);
            for (int j = 0; j < nk; ++j) {
                if (!ks[j].pass || o.verbose)
                    printf("  %s: %s: %s\n", ks[j].task, ks[j].pass ? "pass" : "FAIL",
                           ks[j].detail);
                if (o.tolerance && !ks[j].pass)
                    printf("  %s (tolerant): %s: %s\n", ks[j].task,
                           ks[j].tol_done && ks[j].tol_pass ? "pass" : "FAIL", ks[j].tol_detail);
            }
        }
    }
    size_t n_fail = n_sel - n_pass, n_tol_fail = n_sel - n_tol_pass;
    if (o.json) {
        printf("\n], \"summary\": {\"cases\": %zu, \"passed\": %zu, \"failed\": %zu, "
               "\"encode\": [%zu, %zu], \"decode\": [%zu, %zu], \"errors\": [%zu, %zu]",
               n_sel, n_pass, n_fail, by_task[0][0], by_task[0][1], by_task[1][0], by_task[1][1],
               by_task[2][0], by_task[2][1]);
        if (o.tolerance)
            printf(", \"tolerant_passed\": %zu, \"tolerant_failed\": %zu", n_tol_pass, n_tol_fail);
        printf("}}\n");
    } else {
        printf("conform: %zu cases: exact %zu passed, %zu failed (encode %zu/%zu, decode "
               "%zu/%zu, error codes %zu/%zu)\n",
               n_sel, n_pass, n_fail, by_task[0][0], by_task[0][1], by_task[1][0], by_task[1][1],
               by_task[2][0], by_task[2][1]);
        if (o.tolerance)
            printf("conform: tolerant (SPEC 6 bound, integer fields exact): %zu passed, %zu "
                   "failed\n",
                   n_tol_pass, n_tol_fail);
    }
    if (own_wd)
        rm_workdir(cdir, cs, nc);
    free(cs);
    json_free(&doc);
    if (n_sel == 0)
        return cli_fail(EXIT_RUNTIME, "no case selected");
    return (o.tolerance ? n_tol_fail : n_fail) ? EXIT_RUNTIME : 0;
}
