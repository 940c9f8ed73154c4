/* SPDX-License-Identifier: MIT */
/*
 * st_safetensors.h - a reader of the safetensors format: 8 bytes of header
 * length n (little-endian), n bytes of JSON header ({"name": {"dtype",
 * "shape", "data_offsets": [begin, end]}, optional "__metadata__"}), then
 * the data section, which the tensors must cover exactly, without gaps or
 * overlaps.
 *
 * st_open reads the whole file and checks all of that: a file that passes
 * has every tensor's bytes inside the file, its byte count equal to its
 * shape times its dtype's size. Any failure gives one line naming the file
 * and the first fault found, and nothing to free.
 */
#ifndef ST_SAFETENSORS_H
#define ST_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum { ST_MAX_DIMS = 8 };

typedef struct st_tensor {
    char *name;
    char dtype[8]; /* "F32", "F16", "I64", ... */
    int elem_size; /* bytes */
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    uint64_t begin, end; /* byte offsets within the data section */
} st_tensor;

typedef struct st_file {
    unsigned char *buf; /* the whole file */
    size_t size;
    size_t data_start; /* 8 + header length */
    st_tensor *tensors;
    int n_tensors;
} st_file;

int st_open(st_file *f, const char *path, char *err, size_t errlen);
void st_close(st_file *f);
/* NULL when absent */
const st_tensor *st_find(const st_file *f, const char *name);
/* the tensor's first byte (not necessarily aligned: read with memcpy) */
const unsigned char *st_data(const st_file *f, const st_tensor *t);

#endif
