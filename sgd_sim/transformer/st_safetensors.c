/* SPDX-License-Identifier: MIT */
/* st_safetensors.c - the safetensors reader (st_safetensors.h). */
#include "st_safetensors.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int size;
} st_dtypes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
                 {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1},
                 {"U16", 2}, {"U32", 4}, {"U64", 8}};

void st_close(st_file *f)
{
    if (f->tensors)
        for (int i = 0; i < f->n_tensors; i++)
            free(f->tensors[i].name);
    free(f->tensors);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

static int st_fail(st_file *f, json_t *root, char *err, size_t errlen, const char *path,
                   const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", path, why);
    json_decref(root);
    st_close(f);
    return 1;
}

static int cmp_begin(const void *a, const void *b)
{
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->begin < y->begin   ? -1
           : x->begin > y->begin ? 1
                                 : (x->end > y->end) - (x->end < y->end);
}

int st_open(st_file *f, const char *path, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return st_fail(f, NULL, err, errlen, path, "cannot open");
    if (fseek(fp, 0, SEEK_END) || (long)(f->size = (size_t)ftell(fp)) < 0 ||
        fseek(fp, 0, SEEK_SET)) {
        fclose(fp);
        return st_fail(f, NULL, err, errlen, path, "cannot determine the size");
    }
    f->buf = malloc(f->size ? f->size : 1);
    if (!f->buf) {
        fclose(fp);
        return st_fail(f, NULL, err, errlen, path, "out of memory (%zu bytes)", f->size);
    }
    size_t got = fread(f->buf, 1, f->size, fp);
    fclose(fp);
    if (got != f->size)
        return st_fail(f, NULL, err, errlen, path, "read %zu of %zu bytes", got, f->size);
    if (f->size < 8)
        return st_fail(f, NULL, err, errlen, path,
                       "%zu bytes: shorter than the 8-byte header length", f->size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | f->buf[i];
    if (hlen > f->size - 8)
        return st_fail(f, NULL, err, errlen, path,
                       "header length %llu exceeds the %zu bytes after it (truncated or not "
                       "safetensors)",
                       (unsigned long long)hlen, f->size - 8);
    f->data_start = 8 + (size_t)hlen;
    const uint64_t data_size = f->size - f->data_start;
    json_error_t je;
    json_t *root = json_loadb((const char *)f->buf + 8, (size_t)hlen, 0, &je);
    if (!root)
        return st_fail(f, NULL, err, errlen, path, "header is not JSON (column %d: %s)", je.column,
                       je.text);
    if (!json_is_object(root))
        return st_fail(f, root, err, errlen, path, "header is not a JSON object");
    size_t n = json_object_size(root);
    f->tensors = calloc(n ? n : 1, sizeof(st_tensor));
    if (!f->tensors)
        return st_fail(f, root, err, errlen, path, "out of memory");
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (!strcmp(key, "__metadata__"))
            continue;
        st_tensor *t = &f->tensors[f->n_tensors];
        if (!(t->name = strdup(key)))
            return st_fail(f, root, err, errlen, path, "out of memory");
        f->n_tensors++;
        if (!json_is_object(val))
            return st_fail(f, root, err, errlen, path, "tensor %s: entry is not an object", key);
        const char *dt = json_string_value(json_object_get(val, "dtype"));
        if (!dt)
            return st_fail(f, root, err, errlen, path, "tensor %s: no dtype", key);
        for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
            if (!strcmp(dt, st_dtypes[k].name)) {
                strcpy(t->dtype, st_dtypes[k].name);
                t->elem_size = st_dtypes[k].size;
            }
        if (!t->elem_size)
            return st_fail(f, root, err, errlen, path, "tensor %s: unknown dtype \"%s\"", key, dt);
        json_t *shape = json_object_get(val, "shape");
        if (!json_is_array(shape) || json_array_size(shape) > ST_MAX_DIMS)
            return st_fail(f, root, err, errlen, path,
                           "tensor %s: shape is not an array of at most %d sizes", key,
                           ST_MAX_DIMS);
        t->ndim = (int)json_array_size(shape);
        /* element count, refusing overflow: every size below 2^40 and the
         * product below 2^62 bytes */
        uint64_t count = 1;
        for (int d = 0; d < t->ndim; d++) {
            json_t *s = json_array_get(shape, (size_t)d);
            json_int_t v = json_is_integer(s) ? json_integer_value(s) : -1;
            if (v < 0 || v >= ((json_int_t)1 << 40))
                return st_fail(f, root, err, errlen, path,
                               "tensor %s: shape[%d] is not a size in 0 .. 2^40", key, d);
            t->shape[d] = v;
            if (v && count > (UINT64_C(1) << 62) / (uint64_t)v)
                return st_fail(f, root, err, errlen, path, "tensor %s: shape too large", key);
            count *= (uint64_t)v;
        }
        json_t *off = json_object_get(val, "data_offsets");
        json_t *b = json_array_get(off, 0), *e = json_array_get(off, 1);
        if (!json_is_array(off) || json_array_size(off) != 2 || !json_is_integer(b) ||
            !json_is_integer(e) || json_integer_value(b) < 0 ||
            json_integer_value(e) < json_integer_value(b))
            return st_fail(f, root, err, errlen, path,
                           "tensor %s: data_offsets is not [begin, end] with 0 <= begin <= end",
                           key);
        t->begin = (uint64_t)json_integer_value(b);
        t->end = (uint64_t)json_integer_value(e);
        if (t->end - t->begin != count * (uint64_t)t->elem_size)
            return st_fail(f, root, err, errlen, path,
                           "tensor %s: data_offsets span %llu bytes, dtype %s and its shape need "
                           "%llu",
                           key, (unsigned long long)(t->end - t->begin), t->dtype,
                           (unsigned long long)(count * (uint64_t)t->elem_size));
        if (t->end > data_size)
            return st_fail(f, root, err, errlen, path,
                           "tensor %s ends at byte %llu of a %llu-byte data section (file "
                           "truncated?)",
                           key, (unsigned long long)t->end, (unsigned long long)data_size);
    }
    json_decref(root);
    root = NULL;
    /* the tensors, in data order, must tile the data section exactly */
    const st_tensor **order =
        malloc(sizeof(st_tensor *) * (f->n_tensors ? (size_t)f->n_tensors : 1));
    if (!order)
        return st_fail(f, NULL, err, errlen, path, "out of memory");
    for (int i = 0; i < f->n_tensors; i++)
        order[i] = &f->tensors[i];
    qsort(order, (size_t)f->n_tensors, sizeof *order, cmp_begin);
    uint64_t at = 0;
    for (int i = 0; i < f->n_tensors; i++) {
        if (order[i]->begin != at) {
            char msg[300];
            snprintf(msg, sizeof msg, "tensor %s begins at byte %llu of the data section, %s %llu",
                     order[i]->name, (unsigned long long)order[i]->begin,
                     order[i]->begin < at ? "overlapping the previous tensor, which ends at"
                                          : "leaving a gap after byte",
                     (unsigned long long)at);
            free(order);
            return st_fail(f, NULL, err, errlen, path, "%s", msg);
        }
        at = order[i]->end;
    }
    free(order);
    if (at != data_size)
        return st_fail(f, NULL, err, errlen, path,
                       "the tensors cover %llu bytes of a %llu-byte data section (trailing bytes)",
                       (unsigned long long)at, (unsigned long long)data_size);
    return 0;
}

const st_tensor *st_find(const st_file *f, const char *name)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const unsigned char *st_data(const st_file *f, const st_tensor *t)
{
    return f->buf + f->data_start + t->begin;
}
