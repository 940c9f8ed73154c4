/* SPDX-License-Identifier: MIT */
/* fuzz_npy.c - libFuzzer harness for the .npy reader of the CLI
 * (support/npy.c: npy_parse, and npy_parse_shape_text on the same bytes as a
 * NUL-terminated string). An accepted file must have 1..3 non-zero
 * dimensions, at most 2^40 elements, and exactly 4*count data bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "tahq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_tensor t;
    char err[256];
    err[0] = '\0';
    if (npy_parse(data, size, &t, err, sizeof err) == 0) {
        if (t.ndim < 1 || t.ndim > NPY_MAX_DIMS || !t.data)
            abort();
        uint64_t c = 1;
        for (uint32_t d = 0; d < t.ndim; d++) {
            if (t.dims[d] == 0)
                abort();
            c *= t.dims[d];
        }
        if (c != t.count || c > TAHQ_MAX_ELEMENTS || c * 4u > size)
            abort();
        /* touch every value (ASan checks the allocation size) */
        volatile float sink = 0.0f;
        for (uint64_t i = 0; i < t.count; i++)
            sink = t.data[i];
        (void)sink;
        npy_free(&t);
    } else {
        if (t.data || memchr(err, '\0', sizeof err) == NULL || err[0] == '\0')
            abort();
    }
    /* the --shape text parser */
    char text[64];
    size_t n = size < sizeof text - 1u ? size : sizeof text - 1u;
    memcpy(text, data, n);
    text[n] = '\0';
    npy_tensor s;
    if (npy_parse_shape_text(text, &s) == 0) {
        if (s.ndim < 1 || s.ndim > NPY_MAX_DIMS || s.count == 0 || s.count > TAHQ_MAX_ELEMENTS)
            abort();
    }
    return 0;
}
