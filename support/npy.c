/* SPDX-License-Identifier: MIT */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tahq.h"
#include "util.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6u
#define NPY_MAX_HEADER (1u << 20) /* far above anything numpy writes */

void npy_free(npy_tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

static int host_is_little_endian(void)
{
    const uint32_t one = 1u;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1u;
}

/* Convert count little-endian float32 values in place to host order. */
static void le_to_host(float *v, uint64_t count)
{
    if (host_is_little_endian())
        return;
    uint8_t *p = (uint8_t *)v;
    for (uint64_t i = 0; i < count; ++i, p += 4) {
        uint8_t t0 = p[0], t1 = p[1];
        p[0] = p[3];
        p[1] = p[2];
        p[2] = t1;
        p[3] = t0;
    }
}

/* ----- header dictionary ----- */

typedef struct hparse {
    const char *p, *end;
    char *err;
    size_t errlen;
} hparse;

static int herr(hparse *h, const char *msg)
{
    snprintf(h->err, h->errlen, "%s", msg);
    return -1;
}

static void skip_ws(hparse *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

/* A Python string literal in ' or " quotes, without escapes. */
static int parse_pystr(hparse *h, char *out, size_t outlen)
{
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return herr(h, "header: expected a quoted string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || (unsigned char)*h->p < 0x20u)
            return herr(h, "header: unsupported character in string");
        if (n + 1u >= outlen)
            return herr(h, "header: string too long");
        out[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return herr(h, "header: unterminated string");
    h->p++;
    out[n] = '\0';
    return 0;
}

static int parse_word(hparse *h, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return 1;
    }
    return 0;
}

static int parse_shape_tuple(hparse *h, npy_tensor *t)
{
    if (h->p >= h->end || *h->p != '(')
        return herr(h, "header: 'shape' is not a tuple");
    h->p++;
    uint32_t nd = 0;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return herr(h, "header: 'shape' must hold non-negative integers");
        uint64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            unsigned d = (unsigned)(*h->p - '0');
            if (v > (UINT64_MAX - d) / 10u)
                return herr(h, "header: shape dimension too large");
            v = v * 10u + d;
            h->p++;
        }
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))
            h->p++;
        if (nd >= NPY_MAX_DIMS)
            return herr(h, "shape has more than 3 dimensions (need 1 to 3)");
        t->dims[nd++] = v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        return herr(h, "header: malformed 'shape' tuple");
    }
    t->ndim = nd;
    return 0;
}

static int check_dims(npy_tensor *t, char *err, size_t errlen)
{
    if (t->ndim == 0) {
        snprintf(err, errlen, "0-dimensional array not supported (need 1 to 3 dimensions)");
        return -1;
    }
    uint64_t count = 1;
    for (uint32_t d = 0; d < t->ndim; ++d) {
        if (t->dims[d] == 0) {
            snprintf(err, errlen, "empty array (dimension %u is 0)", (unsigned)d);
            return -1;
        }
        if (t->dims[d] > TAHQ_MAX_ELEMENTS || count > TAHQ_MAX_ELEMENTS / t->dims[d]) {
            snprintf(err, errlen, "too many elements (limit 2^40)");
            return -1;
        }
        count *= t->dims[d];
    }
    t->count = count;
    return 0;
}

static int parse_header_dict(const char *hdr, size_t hlen, npy_tensor *t, char *err, size_t errlen)
{
    hparse h = {hdr, hdr + hlen, err, errlen};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    char descr[64] = "";
    int fortran = 0;
    skip_ws(&h);
    if (h.p >= h.end || *h.p != '{')
        return herr(&h, "header: not a dictionary");
    h.p++;
    for (;;) {
        skip_ws(&h);
        if (h.p < h.end && *h.p == '}') {
            h.p++;
            break;
        }
        char key[32];
        if (parse_pystr(&h, key, sizeof key) != 0)
            return -1;
        skip_ws(&h);
        if (h.p >= h.end || *h.p != ':')
            return herr(&h, "header: expected ':'");
        h.p++;
        skip_ws(&h);
        if (strcmp(key, "descr") == 0) {
            if (have_descr)
                return herr(&h, "header: duplicate key 'descr'");
            have_descr = 1;
            if (h.p < h.end && *h.p == '[')
                return herr(&h, "structured dtype not supported (need float32 '<f4')");
            if (parse_pystr(&h, descr, sizeof descr) != 0)
                return -1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran)
                return herr(&h, "header: duplicate key 'fortran_order'");
            have_fortran = 1;
            if (parse_word(&h, "False"))
                fortran = 0;
            else if (parse_word(&h, "True"))
                fortran = 1;
            else
                return herr(&h, "header: 'fortran_order' is not True or False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape)
                return herr(&h, "header: duplicate key 'shape'");
            have_shape = 1;
            if (parse_shape_tuple(&h, t) != 0)
                return -1;
        } else {
            char msg[96];
            snprintf(msg, sizeof msg, "header: unexpected key '%s'", key);
            return herr(&h, msg);
        }
        skip_ws(&h);
        if (h.p < h.end && *h.p == ',') {
            h.p++;
            continue;
        }
        if (h.p < h.end && *h.p == '}') {
            h.p++;
            break;
        }
        return herr(&h, "header: expected ',' or '}'");
    }
    skip_ws(&h);
    while (h.p < h.end && *h.p == '\0') /* tolerate NUL padding */
        h.p++;
    if (h.p != h.end)
        return herr(&h, "header: trailing characters after the dictionary");
    if (!have_descr || !have_fortran || !have_shape)
        return herr(&h, "header: missing 'descr', 'fortran_order' or 'shape'");
    if (strcmp(descr, "<f4") != 0) {
        snprintf(err, errlen, "dtype '%s' not supported (need float32 '<f4')", descr);
        return -1;
    }
    if (fortran) {
        snprintf(err, errlen, "Fortran-order arrays not supported (need C order)");
        return -1;
    }
    return check_dims(t, err, errlen);
}

/* Preamble: magic, version, header length. On success *hlen_field_bytes is
 * the size of the length field and *hlen the header length. */
static int parse_preamble(const uint8_t *b, size_t avail, uint32_t *hlen, size_t *pre_bytes,
                          char *err, size_t errlen)
{
    size_t m = avail < NPY_MAGIC_LEN ? avail : NPY_MAGIC_LEN;
    if (memcmp(b, NPY_MAGIC, m) != 0) {
        snprintf(err, errlen, "not a .npy file (bad magic)");
        return -1;
    }
    if (avail < NPY_MAGIC_LEN + 2u) {
        snprintf(err, errlen, "truncated .npy file (%zu bytes)", avail);
        return -1;
    }
    uint8_t major = b[6], minor = b[7];
    if (minor != 0 || (major != 1 && major != 2 && major != 3)) {
        snprintf(err, errlen, "unsupported .npy version %u.%u (need 1.0, 2.0 or 3.0)",
                 (unsigned)major, (unsigned)minor);
        return -1;
    }
    size_t lf = major == 1 ? 2u : 4u;
    if (avail < 8u + lf) {
        snprintf(err, errlen, "truncated .npy file (%zu bytes)", avail);
        return -1;
    }
    uint32_t n = (uint32_t)b[8] | ((uint32_t)b[9] << 8);
    if (lf == 4u)
        n |= ((uint32_t)b[10] << 16) | ((uint32_t)b[11] << 24);
    if (n > NPY_MAX_HEADER) {
        snprintf(err, errlen, "header too long (%u bytes)", (unsigned)n);
        return -1;
    }
    *hlen = n;
    *pre_bytes = 8u + lf;
    return 0;
}

int npy_parse(const uint8_t *buf, size_t len, npy_tensor *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    uint32_t hlen;
    size_t pre;
    if (parse_preamble(buf, len, &hlen, &pre, err, errlen) != 0)
        return -1;
    if (len - pre < hlen) {
        snprintf(err, errlen, "truncated .npy file: header needs %zu bytes, file has %zu",
                 pre + hlen, len);
        return -1;
    }
    if (parse_header_dict((const char *)buf + pre, hlen, t, err, errlen) != 0)
        return -1;
    size_t off = pre + hlen;
    uint64_t need = t->count * 4u;
    if ((uint64_t)(len - off) != need) {
        snprintf(err, errlen, "data size mismatch: shape needs %llu bytes of data, file has %llu",
                 (unsigned long long)need, (unsigned long long)(len - off));
        t->count = 0;
        return -1;
    }
    if (need > (uint64_t)SIZE_MAX) {
        snprintf(err, errlen, "array too large for this machine");
        return -1;
    }
    t->data = malloc(need ? (size_t)need : 1u);
    if (!t->data) {
        snprintf(err, errlen, "out of memory (%llu bytes)", (unsigned long long)need);
        return -1;
    }
    memcpy(t->data, buf + off, (size_t)need);
    le_to_host(t->data, t->count);
    return 0;
}

/* Tensors are read from regular files only: their size is checked against
 * the shape before any data is read. */
static int refuse_stdin_tensor(void)
{
    return cli_fail(EXIT_USAGE, "-: a tensor is read from a regular file, not from standard input");
}

/* Opens a tensor file for reading: a regular file (its size is known before
 * any data is read), noted as an input so that no output may overwrite it.
 * 0 with *f open and *st filled, else the exit status (message printed). */
static int open_tensor_file(const char *path, FILE **f, struct stat *st)
{
    if (strcmp(path, "-") == 0)
        return refuse_stdin_tensor();
    *f = fopen(path, "rb");
    if (!*f)
        return cli_fail(EXIT_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(*f), st) != 0 || !S_ISREG(st->st_mode)) {
        fclose(*f);
        return cli_fail(EXIT_RUNTIME, "%s: not a regular file", path);
    }
    if (cli_note_input(fileno(*f), path) != 0) {
        fclose(*f);
        return EXIT_RUNTIME;
    }
    return 0;
}

int npy_read(const char *path, npy_tensor *t)
{
    char err[256];
    memset(t, 0, sizeof *t);
    FILE *f = NULL;
    struct stat st;
    int open_rc = open_tensor_file(path, &f, &st);
    if (open_rc != 0)
        return open_rc;
    uint64_t fsize = (uint64_t)st.st_size;
    uint8_t pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    uint32_t hlen;
    size_t prelen;
    if (parse_preamble(pre, got, &hlen, &prelen, err, sizeof err) != 0) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: %s", path, err);
    }
    if (fsize < prelen + hlen) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME,
                        "%s: truncated .npy file: header needs %llu bytes, file has %llu", path,
                        (unsigned long long)(prelen + hlen), (unsigned long long)fsize);
    }
    char *hdr = malloc(hlen + 1u);
    if (!hdr) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: out of memory", path);
    }
    /* the 12-byte preamble buffer may already hold header bytes */
    size_t have = got - prelen;
    if (have > hlen)
        have = hlen;
    memcpy(hdr, pre + prelen, have);
    if (fread(hdr + have, 1, hlen - have, f) != hlen - have) {
        free(hdr);
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: truncated .npy header", path);
    }
    hdr[hlen] = '\0';
    int rc = parse_header_dict(hdr, hlen, t, err, sizeof err);
    free(hdr);
    if (rc != 0) {
        fclose(f);
        t->count = 0;
        return cli_fail(EXIT_RUNTIME, "%s: %s", path, err);
    }
    uint64_t off = prelen + hlen;
    uint64_t need = t->count * 4u;
    if (fsize - off != need) {
        fclose(f);
        uint64_t count = t->count;
        memset(t, 0, sizeof *t);
        return cli_fail(EXIT_RUNTIME,
                        "%s: data size mismatch: shape needs %llu bytes of data (%llu float32), "
                        "file has %llu%s",
                        path, (unsigned long long)need, (unsigned long long)count,
                        (unsigned long long)(fsize - off),
                        fsize - off < need ? " (truncated file)" : "");
    }
    if (need > (uint64_t)SIZE_MAX) {
        fclose(f);
        memset(t, 0, sizeof *t);
        return cli_fail(EXIT_RUNTIME, "%s: array too large for this machine", path);
    }
    if (fseek(f, (long)off, SEEK_SET) != 0) {
        fclose(f);
        memset(t, 0, sizeof *t);
        return cli_fail(EXIT_RUNTIME, "%s: seek error", path);
    }
    t->data = malloc((size_t)need);
    if (!t->data) {
        fclose(f);
        memset(t, 0, sizeof *t);
        return cli_fail(EXIT_RUNTIME, "%s: out of memory (%llu bytes)", path,
                        (unsigned long long)need);
    }
    if (fread(t->data, 1, (size_t)need, f) != (size_t)need || fgetc(f) != EOF) {
        fclose(f);
        npy_free(t);
        return cli_fail(EXIT_RUNTIME, "%s: file changed while reading or read error", path);
    }
    fclose(f);
    le_to_host(t->data, t->count);
    return 0;
}

int npy_parse_shape_text(const char *text, npy_tensor *t)
{
    memset(t, 0, sizeof *t);
    const char *p = text;
    uint32_t nd = 0;
    for (;;) {
        if (nd >= NPY_MAX_DIMS)
            return -1;
        char buf[32];
        size_t n = 0;
        while (*p >= '0' && *p <= '9') {
            if (n + 1u >= sizeof buf)
                return -1;
            buf[n++] = *p++;
        }
        buf[n] = '\0';
        uint64_t v;
        if (n == 0 || cli_parse_u64(buf, &v) != 0)
            return -1;
        t->dims[nd++] = v;
        if (*p == '\0')
            break;
        if (*p != 'x' && *p != 'X')
            return -1;
        p++;
    }
    t->ndim = nd;
    char err[128];
    return check_dims(t, err, sizeof err);
}

int raw_f32_read(const char *path, const char *shape_text, npy_tensor *t)
{
    if (npy_parse_shape_text(shape_text, t) != 0)
        return cli_fail(EXIT_USAGE,
                        "--shape '%s' is not N, ROWSxC or BxSxC (each >= 1, at most 2^40 "
                        "elements)",
                        shape_text);
    npy_tensor shape = *t;
    memset(t, 0, sizeof *t);
    FILE *f = NULL;
    struct stat st;
    int open_rc = open_tensor_file(path, &f, &st);
    if (open_rc != 0)
        return open_rc;
    uint64_t need = shape.count * 4u;
    if ((uint64_t)st.st_size != need) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME,
                        "%s: size mismatch: --shape %s needs %llu bytes, file has %llu", path,
                        shape_text, (unsigned long long)need, (unsigned long long)st.st_size);
    }
    if (need > (uint64_t)SIZE_MAX) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: array too large for this machine", path);
    }
    float *data = malloc((size_t)need);
    if (!data) {
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: out of memory", path);
    }
    if (fread(data, 1, (size_t)need, f) != (size_t)need || fgetc(f) != EOF) {
        free(data);
        fclose(f);
        return cli_fail(EXIT_RUNTIME, "%s: file changed while reading or read error", path);
    }
    fclose(f);
    le_to_host(data, shape.count);
    *t = shape;
    t->data = data;
    return 0;
}

/* Write count floats little-endian through the atomic writer. */
static void write_le_floats(cli_out *o, const float *data, uint64_t count)
{
    if (host_is_little_endian()) {
        const uint8_t *p = (const uint8_t *)data;
        uint64_t left = count * 4u;
        while (left) {
            size_t n = left > (1u << 26) ? (size_t)(1u << 26) : (size_t)left;
            cli_out_write(o, p, n);
            p += n;
            left -= n;
        }
        return;
    }
    uint8_t buf[4096];
    size_t n = 0;
    for (uint64_t i = 0; i < count; ++i) {
        uint32_t u;
        memcpy(&u, &data[i], 4);
        buf[n++] = (uint8_t)u;
        buf[n++] = (uint8_t)(u >> 8);
        buf[n++] = (uint8_t)(u >> 16);
        buf[n++] = (uint8_t)(u >> 24);
        if (n == sizeof buf) {
            cli_out_write(o, buf, n);
            n = 0;
        }
    }
    cli_out_write(o, buf, n);
}

int npy_write(const char *path, uint32_t ndim, const uint64_t *dims, const float *data)
{
    if (ndim < 1 || ndim > NPY_MAX_DIMS)
        return cli_fail(EXIT_RUNTIME, "%s: cannot write a %u-dimensional array", path,
                        (unsigned)ndim);
    char shape[96];
    size_t sl = 0;
    uint64_t count = 1;
    shape[sl++] = '(';
    for (uint32_t d = 0; d < ndim; ++d) {
        int w = snprintf(shape + sl, sizeof shape - sl, d ? ", %llu" : "%llu",
                         (unsigned long long)dims[d]);
        sl += (size_t)w;
        count *= dims[d];
    }
    snprintf(shape + sl, sizeof shape - sl, ndim == 1 ? ",)" : ")");

    char hdr[256];
    int hl =
        snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
    size_t total = 10u + (size_t)hl + 1u; /* +1 for the final newline */
    size_t padded = (total + 63u) / 64u * 64u;
    size_t hlen = padded - 10u;
    memset(hdr + hl, ' ', hlen - (size_t)hl);
    hdr[hlen - 1u] = '\n';

    uint8_t pre[10];
    memcpy(pre, NPY_MAGIC, 6);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (uint8_t)(hlen & 0xffu);
    pre[9] = (uint8_t)(hlen >> 8);

    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    cli_out_write(&o, pre, sizeof pre);
    cli_out_write(&o, hdr, hlen);
    write_le_floats(&o, data, count);
    return cli_out_commit(&o);
}

int raw_f32_write(const char *path, uint64_t count, const float *data)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    write_le_floats(&o, data, count);
    return cli_out_commit(&o);
}
