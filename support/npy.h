/* SPDX-License-Identifier: MIT */
/* npy.h - reading and writing float32 tensors as NumPy .npy files
 * (format versions 1.0, 2.0, 3.0; dtype '<f4', C order, 1 to 3 dimensions)
 * and as raw little-endian float32 (.f32) files. */
#ifndef TAHQ_SUPPORT_NPY_H
#define TAHQ_SUPPORT_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 3

typedef struct npy_tensor {
    uint32_t ndim;               /* 1..3 */
    uint64_t dims[NPY_MAX_DIMS]; /* each >= 1 */
    uint64_t count;              /* product of dims, <= TAHQ_MAX_ELEMENTS */
    float *data;                 /* malloc'd, count values */
} npy_tensor;

void npy_free(npy_tensor *t);

/* Parse an in-memory .npy file. On error returns -1 and writes a message
 * (without the file name) to err. data is copied out of buf. */
int npy_parse(const uint8_t *buf, size_t len, npy_tensor *t, char *err, size_t errlen);

/* Read a .npy file. Returns 0 or an exit code (error printed, naming the file). */
int npy_read(const char *path, npy_tensor *t);

/* Read a raw little-endian float32 file whose shape is given as text
 * "N", "ROWSxC" or "BxSxC". Returns 0 or an exit code (error printed). */
int raw_f32_read(const char *path, const char *shape_text, npy_tensor *t);
/* Parse "N", "AxB" or "AxBxC" into dims (each >= 1; product <= 2^40). */
int npy_parse_shape_text(const char *text, npy_tensor *t);

/* Write a .npy (version 1.0, header padded to a multiple of 64 bytes) or a
 * raw .f32 file, atomically. Returns 0 or an exit code (error printed). */
int npy_write(const char *path, uint32_t ndim, const uint64_t *dims, const float *data);
int raw_f32_write(const char *path, uint64_t count, const float *data);

#endif
