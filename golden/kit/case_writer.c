/* SPDX-License-Identifier: MIT */
/* case_writer.c - the writer of a golden set: every case's files and its
 * manifest entry (case_writer.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_writer.h"
#include "codec_ops.h"
#include "golden_common.h"
#include "golden_paper_v1.h"
#include "npy.h"
#include "sha256.h"
#include "tahq_spec.h"
#include "util.h"

/* The manifest field of a case added for mutation adequacy (golden/v2):
 * ,"kills": [...] (the mutants of golden/mutation/catalogue.txt that the case
 * tells apart from the reference); empty for every other case. */
static const char *kills_field(const golden_writer *g, char *buf, size_t n)
{
    buf[0] = 0;
    /* golden/v4: every case's list comes from its kill table (the case
     * being written is the last one begun) */
    const char *kills = g->kills_of ? g->kills_of(g->ids[g->n_cases - 1]) : g->kills;
    if (!kills || !*kills)
        return buf;
    size_t used = (size_t)snprintf(buf, n, ",\n      \"kills\": [");
    const char *p = kills;
    int first = 1;
    while (*p && used < n) {
        size_t len = strcspn(p, ",");
        used +=
            (size_t)snprintf(buf + used, n - used, "%s\"%.*s\"", first ? "" : ", ", (int)len, p);
        first = 0;
        p += len;
        if (*p == ',')
            p++;
    }
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

/* ---------------------------------------------------------------- files */

static int write_rel(golden_writer *g, const char *rel, const void *data, size_t n, char sha[65])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g->dir, rel);
    int rc = cli_write_file(path, data, n);
    if (rc)
        return rc;
    sha256_hex(data, n, sha);
    g->total_bytes += n;
    return 0;
}

static int write_npy_rel(golden_writer *g, const char *rel, const tahq_shape *s, const float *x,
                         char sha[65], size_t *bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g->dir, rel);
    uint64_t dims[3] = {s->batch, s->seq_len, s->channels};
    int rc = npy_write(path, 3, dims, x);
    if (rc)
        return rc;
    uint8_t *buf;
    size_t len;
    rc = cli_read_file(path, &buf, &len);
    if (rc)
        return rc;
    sha256_hex(buf, len, sha);
    free(buf);
    *bytes = len;
    g->total_bytes += len;
    return 0;
}

/* ---------------------------------------------------------------- manifest */

static int add_flag(char *list, size_t n, const char *f)
{
    /* list is ",a,b," style while building */
    char key[96];
    snprintf(key, sizeof key, ",%s,", f);
    if (strstr(list, key))
        return 0;
    size_t l = strlen(list);
    snprintf(list + l, n - l, "%s,", f);
    return 1;
}

static void write_flags(FILE *f, const char *list)
{
    fputs("[", f);
    int first = 1;
    const char *p = list;
    while (*p) {
        while (*p == ',')
            ++p;
        if (!*p)
            break;
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)n, p);
        first = 0;
        p += n;
    }
    fputs("]", f);
}

static int begin_case(golden_writer *g, const char *id, const char *kind, const char *flags,
                      const char *desc)
{
    for (int i = 0; i < g->n_cases; ++i)
        if (strcmp(g->ids[i], id) == 0) {
            fprintf(stderr, "tahq golden-gen: duplicate case id %s\n", id);
            g->failed = 1;
            return -1;
        }
    if (g->n_cases >= GOLDEN_MAX_CASES) {
        g->failed = 1;
        return -1;
    }
    g->ids[g->n_cases] = malloc(strlen(id) + 1);
    if (!g->ids[g->n_cases]) {
        g->failed = 1;
        return -1;
    }
    strcpy(g->ids[g->n_cases], id);
    fprintf(g->man, "%s    {\n      \"id\": \"%s\",\n      \"kind\": \"%s\",\n      \"flags\": ",
            g->n_cases ? ",\n" : "", id, kind);
    write_flags(g->man, flags);
    fputs(",\n      \"description\": ", g->man);
    json_t *d = cli_jstr(desc);
    if (!d || json_dumpf(d, g->man, JSON_ENCODE_ANY) != 0)
        g->failed = 1;
    json_decref(d);
    fputs(",\n", g->man);
    g->n_cases++;
    return 0;
}

static void config_flags(char *fl, size_t n, const tahq_config *c)
{
    char b[64];
    snprintf(b, sizeof b, "tile_%u", (unsigned)c->tile);
    add_flag(fl, n, b);
    snprintf(b, sizeof b, "alloc_%s", cli_alloc_name(c->alloc));
    add_flag(fl, n, b);
    snprintf(b, sizeof b, "meta_%s", cli_meta_name(c->meta));
    add_flag(fl, n, b);
    add_flag(fl, n, c->rounding == TAHQ_ROUND_STOCHASTIC ? "stochastic" : "nearest_even");
    if (c->tau == 0.0f && !signbit(c->tau)) /* -0 is not a valid tau (SPEC 3.3) */
        add_flag(fl, n, "gate_always");
    else if (isinf(c->tau))
        add_flag(fl, n, "gate_never");
}

static void shape_flags(char *fl, size_t n, const tahq_config *c, const tahq_shape *s)
{
    if (s->batch > 1)
        add_flag(fl, n, "multi_batch");
    if ((uint64_t)s->batch * s->seq_len * (s->channels / (c->tile ? c->tile : 1)) == 1)
        add_flag(fl, n, "single_tile");
}

/* The comma-separated flags a case family gives, after the derived ones. */
static void add_manual_flags(char *fl, size_t n, const char *flags)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", flags);
    for (char *p = strtok(tmp, ","); p; p = strtok(NULL, ","))
        add_flag(fl, n, p);
}

/* The three files of a valid case (input, expected message, decoded tensor):
 * their paths, sizes and SHA-256 digests for the manifest. */
typedef struct case_files {
    char rel_in[300], rel_bin[300], rel_dec[300], sh_in[65], sh_bin[65], sh_dec[65];
    size_t in_bytes, bin_bytes, dec_bytes;
} case_files;

/* Writes the three files of case `id`; nonzero on failure. */
static int write_case_files(golden_writer *g, const char *id, const tahq_shape *s, const float *x,
                            const uint8_t *msg, size_t len, const float *y, case_files *c)
{
    snprintf(c->rel_in, sizeof c->rel_in, "inputs/%s.npy", id);
    snprintf(c->rel_bin, sizeof c->rel_bin, "expected/%s.bin", id);
    snprintf(c->rel_dec, sizeof c->rel_dec, "expected/%s.npy", id);
    c->in_bytes = c->dec_bytes = 0;
    c->bin_bytes = len;
    return write_npy_rel(g, c->rel_in, s, x, c->sh_in, &c->in_bytes) ||
           write_rel(g, c->rel_bin, msg, len, c->sh_bin) ||
           write_npy_rel(g, c->rel_dec, s, y, c->sh_dec, &c->dec_bytes);
}

/* The manifest entries of those files, closing the case. */
static void manifest_case_files(golden_writer *g, const case_files *c, uint64_t n_low,
                                uint64_t n_flagged)
{
    char kf[4096];
    fprintf(g->man,
            "      \"input\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"},\n"
            "      \"expected_status\": \"ok\",\n"
            "      \"message\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\", "
            "\"n_low\": %" PRIu64 ", \"n_flagged\": %" PRIu64 "},\n"
            "      \"decoded\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"}%s\n    }",
            c->rel_in, c->in_bytes, c->sh_in, c->rel_bin, c->bin_bytes, c->sh_bin, n_low, n_flagged,
            c->rel_dec, c->dec_bytes, c->sh_dec, kills_field(g, kf, sizeof kf));
}

static void write_config_shape(golden_writer *g, const tahq_config *cfg, const tahq_shape *s)
{
    char cj[512];
    golden_config_json(cj, sizeof cj, cfg);
    fprintf(g->man, "      \"config\": %s,\n      \"shape\": [%u, %u, %u],\n", cj,
            (unsigned)s->batch, (unsigned)s->seq_len, (unsigned)s->channels);
}

/* A valid encode case: input, expected message and decoded tensor. */
void golden_emit_encode(golden_writer *g, const char *id, const char *flags, const char *desc,
                        const tahq_config *cfg, const tahq_shape *s, const float *x)
{
    if (g->failed)
        return;
    uint8_t *msg = NULL;
    size_t len = 0;
    int st = run_encode(cfg, s, x, &msg, &len);
    if (st != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: encode failed: %s\n", id, tahq_status_name(st));
        g->failed = 1;
        return;
    }
    float *y = NULL;
    uint64_t cnt = 0;
    st = run_decode(msg, len, &y, &cnt);
    tahq_header h;
    if (st != TAHQ_OK || tahq_parse_header(msg, len, &h) != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: decode of the own message failed: %s\n", id,
                tahq_status_name(st));
        free(msg);
        free(y);
        g->failed = 1;
        return;
    }
    char fl[1024] = ",";
    config_flags(fl, sizeof fl, cfg);
    shape_flags(fl, sizeof fl, cfg, s);
    char b[32];
    snprintf(b, sizeof b, "bits_%u", (unsigned)cfg->hi_bits);
    add_flag(fl, sizeof fl, b);
    if (h.n_low > 0) {
        snprintf(b, sizeof b, "bits_%u", (unsigned)cfg->lo_bits);
        add_flag(fl, sizeof fl, b);
    }
    if (h.n_flagged > 0)
        add_flag(fl, sizeof fl, "gate_flagged");
    add_manual_flags(fl, sizeof fl, flags);

    case_files c;
    if (write_case_files(g, id, s, x, msg, len, y, &c)) {
        g->failed = 1;
    } else if (begin_case(g, id, "encode", fl, desc) == 0) {
        write_config_shape(g, cfg, s);
        manifest_case_files(g, &c, h.n_low, h.n_flagged);
    }
    free(msg);
    free(y);
}

/* An input the encoder must reject with `expect`. */
void golden_emit_encode_error(golden_writer *g, const char *id, const char *flags, const char *desc,
                              const tahq_config *cfg, const tahq_shape *s, const float *x,
                              int expect)
{
    if (g->failed)
        return;
    char kf[4096];
    uint8_t *msg = NULL;
    size_t len = 0;
    int st = run_encode(cfg, s, x, &msg, &len);
    free(msg);
    if (st != expect) {
        fprintf(stderr, "tahq golden-gen: case %s: encode returned %s, the SPEC says %s\n", id,
                tahq_status_name(st), tahq_status_name(expect));
        g->failed = 1;
        return;
    }
    char fl[1024] = ",";
    config_flags(fl, sizeof fl, cfg);
    add_flag(fl, sizeof fl, "invalid_input");
    add_flag(fl, sizeof fl, tahq_status_name(expect));
    add_manual_flags(fl, sizeof fl, flags);
    char rel_in[300], sh_in[65];
    size_t in_bytes = 0;
    snprintf(rel_in, sizeof rel_in, "inputs/%s.npy", id);
    if (write_npy_rel(g, rel_in, s, x, sh_in, &in_bytes)) {
        g->failed = 1;
        return;
    }
    if (begin_case(g, id, "encode_error", fl, desc) == 0) {
        write_config_shape(g, cfg, s);
        fprintf(g->man,
                "      \"input\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"},\n"
                "      \"expected_status\": \"%s\"%s\n    }",
                rel_in, in_bytes, sh_in, tahq_status_name(expect), kills_field(g, kf, sizeof kf));
    }
}

/* A message the decoder must reject with `expect`. */
void golden_emit_decode_error(golden_writer *g, const char *id, const char *flags, const char *desc,
                              const uint8_t *msg, size_t len, int expect)
{
    if (g->failed)
        return;
    char kf[4096];
    float *y = NULL;
    uint64_t cnt = 0;
    int st = run_decode(msg, len, &y, &cnt);
    free(y);
    if (st != expect) {
        fprintf(stderr, "tahq golden-gen: case %s: decode returned %s, the SPEC says %s\n", id,
                tahq_status_name(st), tahq_status_name(expect));
        g->failed = 1;
        return;
    }
    char fl[1024] = ",";
    add_flag(fl, sizeof fl, "invalid_message");
    add_flag(fl, sizeof fl, tahq_status_name(expect));
    add_manual_flags(fl, sizeof fl, flags);
    char rel[300], sh[65];
    snprintf(rel, sizeof rel, "inputs/%s.bin", id);
    if (write_rel(g, rel, msg, len, sh)) {
        g->failed = 1;
        return;
    }
    if (begin_case(g, id, "decode_error", fl, desc) == 0)
        fprintf(g->man,
                "      \"input\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"},\n"
                "      \"expected_status\": \"%s\"%s\n    }",
                rel, len, sh, tahq_status_name(expect), kills_field(g, kf, sizeof kf));
}

/* A crafted valid message of format 1 (kind decode) or of the paper-v1
 * profile (kind paper_v1_decode, pcfg != NULL) that no encoder writes: the
 * candidate decodes inputs/ID.bin and must give expected/ID.npy bit for bit. */
void golden_emit_decode(golden_writer *g, const char *id, const char *flags, const char *desc,
                        const uint8_t *msg, size_t len, const tahq_paper_v1_config *pcfg,
                        const tahq_shape *pshape)
{
    if (g->failed)
        return;
    char kf[4096], fl[1024] = ",", cj[512], b[32];
    tahq_shape s;
    float *y = NULL;
    uint64_t cnt = 0;
    int st;
    if (pcfg) {
        s = *pshape;
        cnt = golden_count_of(&s);
        y = malloc((size_t)cnt * sizeof *y);
        st = y ? tahq_paper_v1_decode(msg, len, pcfg, &s, y, (size_t)cnt) : TAHQ_ERR_BUFFER;
        add_flag(fl, sizeof fl, "paper_v1");
        snprintf(b, sizeof b, "tile_%u", (unsigned)pcfg->tile);
        add_flag(fl, sizeof fl, b);
        golden_pv1_config_json(cj, sizeof cj, pcfg);
    } else {
        tahq_header h;
        st = run_decode(msg, len, &y, &cnt);
        if (st == TAHQ_OK)
            st = tahq_parse_header(msg, len, &h);
        if (st == TAHQ_OK) {
            s = h.shape;
            config_flags(fl, sizeof fl, &h.config);
            shape_flags(fl, sizeof fl, &h.config, &s);
            snprintf(b, sizeof b, "bits_%u", (unsigned)h.config.hi_bits);
            add_flag(fl, sizeof fl, b);
            if (h.n_flagged > 0)
                add_flag(fl, sizeof fl, "gate_flagged");
            golden_config_json(cj, sizeof cj, &h.config);
        }
    }
    if (st != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: decode failed: %s\n", id, tahq_status_name(st));
        free(y);
        g->failed = 1;
        return;
    }
    add_manual_flags(fl, sizeof fl, flags);
    char rel_in[300], rel_dec[300], sh_in[65], sh_dec[65];
    size_t dec_bytes = 0;
    snprintf(rel_in, sizeof rel_in, "inputs/%s.bin", id);
    snprintf(rel_dec, sizeof rel_dec, "expected/%s.npy", id);
    if (write_rel(g, rel_in, msg, len, sh_in) ||
        write_npy_rel(g, rel_dec, &s, y, sh_dec, &dec_bytes)) {
        g->failed = 1;
    } else if (begin_case(g, id, pcfg ? GOLDEN_KIND_PAPER_V1_DECODE : "decode", fl, desc) == 0) {
        fprintf(g->man, "      \"config\": %s,\n      \"shape\": [%u, %u, %u],\n", cj,
                (unsigned)s.batch, (unsigned)s.seq_len, (unsigned)s.channels);
        fprintf(
            g->man,
            "      \"input\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"},\n"
            "      \"expected_status\": \"ok\",\n"
            "      \"decoded\": {\"path\": \"%s\", \"bytes\": %zu, \"sha256\": \"%s\"}%s\n    }",
            rel_in, len, sh_in, rel_dec, dec_bytes, sh_dec, kills_field(g, kf, sizeof kf));
    }
    free(y);
}

/* The case writers for the families of other files (golden_gain.h). */
/* ---------------------------------------------------------------- paper-v1 */

/* A case of kind paper_v1: the authors' headerless format (ref/SPEC.md
 * Appendix A), judged by conform with the tolerance of golden/README.md. */
void golden_emit_paper_v1(golden_writer *g, const char *id, const char *flags, const char *desc,
                          const tahq_paper_v1_config *cfg, const tahq_shape *s, const float *x)
{
    if (g->failed)
        return;
    size_t cap = 0, wsz = 0, len = 0;
    uint64_t cnt = golden_count_of(s), nf = 0;
    if (tahq_paper_v1_encode_bound(cfg, s, &cap) != TAHQ_OK ||
        tahq_paper_v1_workspace_size(cfg, s, &wsz) != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: invalid paper-v1 config or shape\n", id);
        g->failed = 1;
        return;
    }
    uint8_t *msg = malloc(cap), *map = malloc((size_t)((uint64_t)s->batch * s->seq_len));
    void *ws = malloc(wsz);
    float *y = malloc((size_t)cnt * sizeof *y);
    tahq_status st = TAHQ_ERR_BUFFER;
    if (msg && ws && y && map) {
        st = tahq_paper_v1_encode(cfg, s, x, ws, wsz, msg, cap, &len);
        if (st == TAHQ_OK)
            st = tahq_paper_v1_decode(msg, len, cfg, s, y, (size_t)cnt);
        if (st == TAHQ_OK)
            st = tahq_paper_v1_unpack(msg, len, cfg, s, map, NULL, NULL, NULL, NULL, NULL, &nf);
    }
    free(ws);
    if (st != TAHQ_OK) {
        fprintf(stderr, "tahq golden-gen: case %s: paper-v1 failed: %s\n", id,
                tahq_status_name(st));
        g->failed = 1;
        free(msg);
        free(y);
        free(map);
        return;
    }
    uint64_t n_low = 0;
    for (uint64_t r = 0; r < (uint64_t)s->batch * s->seq_len; r++)
        n_low += map[r];
    free(map);
    char fl[1024] = ",";
    char b[32];
    add_flag(fl, sizeof fl, "paper_v1");
    snprintf(b, sizeof b, "tile_%u", (unsigned)cfg->tile);
    add_flag(fl, sizeof fl, b);
    tahq_config tc;
    tahq_config_default(&tc);
    tc.tile = cfg->tile;
    shape_flags(fl, sizeof fl, &tc, s);
    if (n_low < (uint64_t)s->batch * s->seq_len) {
        snprintf(b, sizeof b, "bits_%u", (unsigned)cfg->hi_bits);
        add_flag(fl, sizeof fl, b);
    }
    if (n_low > 0) {
        snprintf(b, sizeof b, "bits_%u", (unsigned)cfg->lo_bits);
        add_flag(fl, sizeof fl, b);
    }
    if (nf > 0)
        add_flag(fl, sizeof fl, "gate_flagged");
    add_manual_flags(fl, sizeof fl, flags);

    case_files c;
    char cj[256];
    if (write_case_files(g, id, s, x, msg, len, y, &c)) {
        g->failed = 1;
    } else if (begin_case(g, id, GOLDEN_KIND_PAPER_V1, fl, desc) == 0) {
        golden_pv1_config_json(cj, sizeof cj, cfg);
        fprintf(g->man, "      \"config\": %s,\n      \"shape\": [%u, %u, %u],\n", cj,
                (unsigned)s->batch, (unsigned)s->seq_len, (unsigned)s->channels);
        manifest_case_files(g, &c, n_low, nf);
    }
    free(msg);
    free(y);
}

void golden_writer_fail(golden_writer *g)
{
    g->failed = 1;
}

int golden_writer_failed(const golden_writer *g)
{
    return g->failed;
}

int golden_writer_begin(golden_writer *g, const char *dir, const char *set,
                        const char *(*kills_of)(const char *id))
{
    memset(g, 0, sizeof *g);
    g->dir = dir;
    g->set = set;
    g->kills_of = kills_of;
    g->man = open_memstream(&g->man_buf, &g->man_len);
    return g->man ? 0 : -1;
}

int golden_writer_finish(golden_writer *g, unsigned header_version)
{
    fclose(g->man);
    int rc = 0;
    if (g->failed) {
        rc = cli_fail(EXIT_RUNTIME, "generation failed (see above); manifest not written");
    } else {
        FILE *f = NULL;
        char *full = NULL;
        size_t full_len = 0;
        f = open_memstream(&full, &full_len);
        if (!f) {
            rc = cli_fail(EXIT_RUNTIME, "out of memory");
        } else {
            fprintf(f, "{\n  \"schema\": \"%s\",\n  \"set\": \"%s\",\n  \"format_version\": %u,\n",
                    GOLDEN_SCHEMA, g->set, (unsigned)TAHQ_FORMAT_VERSION);
            if (header_version)
                fprintf(f, "  \"header_version\": %u,\n", header_version);
            fprintf(f,
                    "  \"generator\": \"tahq golden-gen\",\n  \"n_cases\": %d,\n  \"cases\": [\n",
                    g->n_cases);
            fwrite(g->man_buf, 1, g->man_len, f);
            fputs("\n  ]\n}\n", f);
            fclose(f);
            char p[4096];
            snprintf(p, sizeof p, "%s/manifest.json", g->dir);
            rc = cli_write_file(p, full, full_len);
            g->total_bytes += full_len;
            free(full);
        }
        if (!rc)
            printf("golden-gen: %d cases, %" PRIu64 " bytes in %s\n", g->n_cases, g->total_bytes,
                   g->dir);
    }
    free(g->man_buf);
    for (int i = 0; i < g->n_cases; ++i)
        free(g->ids[i]);
    return rc;
}
