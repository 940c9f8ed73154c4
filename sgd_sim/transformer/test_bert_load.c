/* SPDX-License-Identifier: MIT */
/* test_bert_load.c - the safetensors reader and the checkpoint checks
 * (CTest bert_load).
 *
 *   test_bert_load WORK_DIR [MODEL_DIR]
 *
 * Part 1, always: small safetensors files written here, one valid and one
 * per fault of the format (short file, header length past the end, header
 * not JSON / not an object, unknown dtype, bad shape, offsets that do not
 * match the shape, a tensor past the end, a gap, an overlap, trailing
 * bytes); each must be refused with its own reason and nothing left to free.
 * Part 2, with the model: copies of MODEL_DIR with one fault each (truncated,
 * a header byte broken, a weight's shape transposed in the header, config.json
 * with another width, depth or FFN size, config.json missing); each refused
 * with its reason, nothing left open; the real folder loads, and a stage of
 * another architecture is refused without a byte of it changed. Part 2 is
 * SKIPPED (exit 77) without the model, after part 1 passed.
 */
#include "tt_bert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures = 0;

static int write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    int ok = fwrite(a, 1, na, f) == na && (!nb || fwrite(b, 1, nb, f) == nb);
    return fclose(f) || !ok;
}

/* a safetensors file: 8-byte length, header, data of `ndata` bytes */
static void make_st(const char *path, const char *header, size_t ndata)
{
    size_t hl = strlen(header);
    unsigned char *buf = calloc(1, 8 + hl + ndata + 1);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, header, hl);
    if (write_file(path, buf, 8 + hl + ndata, NULL, 0))
        printf("FAIL cannot write %s\n", path), failures++;
    free(buf);
}

static void expect_st(const char *work, const char *name, const char *header, size_t ndata,
                      const char *reason)
{
    char path[1024], err[1024];
    snprintf(path, sizeof path, "%s/%s.safetensors", work, name);
    make_st(path, header, ndata);
    st_file f;
    int rc = st_open(&f, path, err, sizeof err);
    if (!reason) {
        if (rc) {
            printf("FAIL %s refused: %s\n", name, err);
            failures++;
        } else {
            printf("  accepted %-12s %d tensors\n", name, f.n_tensors);
            st_close(&f);
        }
    } else if (!rc) {
        printf("FAIL %s accepted\n", name);
        st_close(&f);
        failures++;
    } else if (!strstr(err, reason)) {
        printf("FAIL %s: \"%s\" does not say \"%s\"\n", name, err, reason);
        failures++;
    } else {
        printf("  refused  %-12s %s\n", name, strstr(err, ": ") + 2);
        if (f.buf || f.tensors) {
            printf("FAIL %s: state left after the error\n", name);
            failures++;
        }
    }
    remove(path);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n ? *n : 1);
    if (b && fread(b, 1, *n, f) != *n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* replace the first `from` in buf[0..n) by `to` (same length) */
static int patch(unsigned char *buf, size_t n, const char *from, const char *to)
{
    size_t k = strlen(from);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(buf + i, from, k)) {
            memcpy(buf + i, to, k);
            return 0;
        }
    return 1;
}

static void expect_model(const char *dir, const char *what, const char *reason)
{
    char err[1024];
    tb_pretrained m;
    if (!tb_pretrained_open(&m, dir, err, sizeof err)) {
        printf("FAIL %s: accepted\n", what);
        tb_pretrained_close(&m);
        failures++;
    } else if (!strstr(err, reason)) {
        printf("FAIL %s: \"%s\" does not say \"%s\"\n", what, err, reason);
        failures++;
    } else {
        const char *e = strrchr(err, '/');
        printf("  refused  %-28s ...%s\n", what, e ? e : err);
        if (m.st.buf || m.st.tensors) {
            printf("FAIL %s: state left after the error\n", what);
            failures++;
        }
    }
}

/* The reader on small safetensors files written to W, one fault each. */
static void check_small_files(const char *W)
{
    printf("safetensors files (small, written here):\n");
    const char *a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}";
    const char *b = "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[24,40]}";
    char h[512];
    snprintf(h, sizeof h, "{\"__metadata__\":{\"format\":\"pt\"},%s,%s}", a, b);
    expect_st(W, "valid", h, 40, NULL);
    {
        char path[1024], err[1024];
        snprintf(path, sizeof path, "%s/short.safetensors", W);
        write_file(path, "\x05\0\0", 3, NULL, 0);
        st_file f;
        if (!st_open(&f, path, err, sizeof err) || !strstr(err, "shorter than the 8-byte")) {
            printf("FAIL short file: %s\n", err);
            failures++;
        } else {
            printf("  refused  %-12s %s\n", "short", strstr(err, ": ") + 2);
        }
        remove(path);
    }
    expect_st(W, "truncated", h, 39, "tensor b ends at byte 40 of a 39-byte data section");
    expect_st(W, "trailing", h, 41, "trailing bytes");
    expect_st(W, "notjson", "{\"a\":{\"dtype\":", 0, "header is not JSON");
    expect_st(W, "notobject", "[1,2]", 0, "header is not a JSON object");
    snprintf(h, sizeof h, "{\"a\":{\"dtype\":\"F31\",\"shape\":[2,3],\"data_offsets\":[0,24]}}");
    expect_st(W, "dtype", h, 24, "unknown dtype \"F31\"");
    snprintf(h, sizeof h, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,-3],\"data_offsets\":[0,24]}}");
    expect_st(W, "shape", h, 24, "shape[1] is not a size");
    snprintf(h, sizeof h, "{\"a\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,24]}}");
    expect_st(W, "span", h, 24, "data_offsets span 24 bytes, dtype F16 and its shape need 12");
    snprintf(h, sizeof h, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[24,0]}}");
    expect_st(W, "offsets", h, 24, "data_offsets is not [begin, end]");
    snprintf(h, sizeof h, "{%s,\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[28,44]}}",
             a);
    expect_st(W, "gap", h, 44, "tensor b begins at byte 28 of the data section, leaving a gap");
    snprintf(h, sizeof h, "{%s,\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[20,36]}}",
             a);
    expect_st(W, "overlap", h, 36, "overlapping the previous tensor");
    {
        /* header length field past the end of the file */
        char path[1024], err[1024];
        unsigned char buf[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
        snprintf(path, sizeof path, "%s/hlen.safetensors", W);
        write_file(path, buf, 10, NULL, 0);
        st_file f;
        if (!st_open(&f, path, err, sizeof err) || !strstr(err, "exceeds the 2 bytes after it")) {
            printf("FAIL header length: %s\n", err);
            failures++;
        } else {
            printf("  refused  %-12s %s\n", "hlen", strstr(err, ": ") + 2);
        }
        remove(path);
    }
}

/* A stage of another architecture is refused and left untouched. 0, or 1
 * when out of memory. */
static int check_other_stage(const tb_pretrained *m)
{
    char err[1024];
    /* a stage of another architecture is refused and left untouched */
    tb_config other = m->cfg;
    other.F = 64;
    tb_stage_f s;
    if (tb_stage_init_f(&s, &other, 8, 0, 1, 1, 1, 1, 1, 1)) {
        printf("FAIL out of memory\n");
        return 1;
    }
    tb_stage_init_params_f(&s, 3);
    float *before = malloc(sizeof(float) * s.n_params);
    memcpy(before, s.params, sizeof(float) * s.n_params);
    if (!tb_pretrained_load_stage(m, &s, err, sizeof err)) {
        printf("FAIL a stage of another architecture was loaded\n");
        failures++;
    } else if (memcmp(before, s.params, sizeof(float) * s.n_params)) {
        printf("FAIL the refused stage was changed\n");
        failures++;
    } else {
        printf("  refused  %-28s %s (stage unchanged)\n", "stage with F = 64", err);
    }
    free(before);
    tb_stage_free_f(&s);
    return 0;
}

/* Copies of the checkpoint (st, cfg: its two files) in W/model_copy, one
 * fault each, and the repaired copy as the control. */
static void check_faulty_copies(const char *W, unsigned char *st, size_t nst,
                                const unsigned char *cfg, size_t ncfg)
{
    char err[1024];
    tb_pretrained m;
    printf("copies of the checkpoint with one fault each:\n");
    char dir[1024], sp[1200], cp[1200];
    snprintf(dir, sizeof dir, "%s/model_copy", W);
    mkdir(dir, 0755);
    snprintf(sp, sizeof sp, "%s/model.safetensors", dir);
    snprintf(cp, sizeof cp, "%s/config.json", dir);
    /* truncated */
    write_file(cp, cfg, ncfg, NULL, 0);
    write_file(sp, st, nst - 1000, NULL, 0);
    expect_model(dir, "truncated by 1000 bytes", "file truncated");
    /* a broken header byte: the opening brace */
    st[8] = '[';
    write_file(sp, st, nst, NULL, 0);
    expect_model(dir, "header byte broken", "header is not JSON");
    st[8] = '{';
    /* a weight's shape transposed in the header: the same byte count */
    size_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = (hl << 8) | st[i];
    unsigned char *hdr_end = st + 8 + (hl < nst - 8 ? hl : nst - 8);
    if (patch(st, (size_t)(hdr_end - st), "\"shape\":[1536,384]", "\"shape\":[384,1536]")) {
        printf("FAIL the header has no [1536,384] shape to transpose\n");
        failures++;
    } else {
        write_file(sp, st, nst, NULL, 0);
        expect_model(dir, "FFN weight transposed",
                     "is F32 [384, 1536], config.json needs F32 [1536, 384]");
        patch(st, (size_t)(hdr_end - st), "\"shape\":[384,1536]", "\"shape\":[1536,384]");
    }
    write_file(sp, st, nst, NULL, 0);
    /* config.json of another architecture (same file length: digits swapped) */
    struct {
        const char *from, *to, *what, *reason;
    } cfgs[] = {
        {"\"hidden_size\": 384", "\"hidden_size\": 768", "config hidden_size 768",
         "word_embeddings.weight is F32 [30522, 384], config.json needs F32 [30522, 768]"},
        {"\"num_hidden_layers\": 6", "\"num_hidden_layers\": 7", "config 7 layers",
         "lacks encoder.layer.6."},
        {"\"num_hidden_layers\": 6", "\"num_hidden_layers\": 5", "config 5 layers",
         "unexpected: encoder.layer.5."},
        {"\"intermediate_size\": 1536", "\"intermediate_size\": 1024", "config FFN 1024",
         "config.json needs F32 [1024, 384]"},
        {"\"hidden_act\": \"gelu\"", "\"hidden_act\": \"relu\"", "config hidden_act relu",
         "hidden_act is not \"gelu\""},
        {"\"num_attention_heads\": 12", "\"num_attention_heads\": 15", "config 15 heads",
         "must divide hidden_size"},
    };
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        unsigned char *c2 = malloc(ncfg);
        memcpy(c2, cfg, ncfg);
        if (patch(c2, ncfg, cfgs[k].from, cfgs[k].to)) {
            printf("FAIL config.json has no %s\n", cfgs[k].from);
            failures++;
        } else {
            write_file(cp, c2, ncfg, NULL, 0);
            expect_model(dir, cfgs[k].what, cfgs[k].reason);
        }
        free(c2);
    }
    remove(cp);
    expect_model(dir, "config.json missing", "config.json: not readable JSON");
    /* control: the copy itself, repaired, loads */
    write_file(cp, cfg, ncfg, NULL, 0);
    if (tb_pretrained_open(&m, dir, err, sizeof err)) {
        printf("FAIL control: the repaired copy is refused: %s\n", err);
        failures++;
    } else {
        printf("  control: the repaired copy loads\n");
        tb_pretrained_close(&m);
    }
    remove(sp);
    remove(cp);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_bert_load WORK_DIR [MODEL_DIR]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *W = argv[1];
    mkdir(W, 0755);
    check_small_files(W);
    if (failures) {
        printf("bert load: %d FAILED\n", failures);
        return 1;
    }
    if (argc < 3) {
        printf("SKIPPED the checkpoint part: no model folder given (scripts/fetch_model.sh)\n");
        return 77;
    }
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/model.safetensors", argv[2]);
    size_t nst = 0, ncfg = 0;
    unsigned char *st = read_all(path, &nst);
    snprintf(path, sizeof path, "%s/config.json", argv[2]);
    unsigned char *cfg = read_all(path, &ncfg);
    if (!st || !cfg) {
        free(st);
        free(cfg);
        printf("SKIPPED the checkpoint part: %s lacks model.safetensors or config.json "
               "(scripts/fetch_model.sh)\n",
               argv[2]);
        return 77;
    }
    tb_pretrained m;
    if (tb_pretrained_open(&m, argv[2], err, sizeof err)) {
        printf("FAIL the real checkpoint: %s\n", err);
        return 1;
    }
    printf("checkpoint: %d tensors, %zu bytes, loads\n", m.st.n_tensors, nst);
    if (check_other_stage(&m))
        return 1;
    tb_pretrained_close(&m);

    check_faulty_copies(W, st, nst, cfg, ncfg);
    free(st);
    free(cfg);
    if (failures) {
        printf("bert load: %d FAILED\n", failures);
        return 1;
    }
    printf("bert load: all passed\n");
    return 0;
}
