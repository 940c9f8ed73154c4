/* SPDX-License-Identifier: MIT */
/* case_writer.h - the one writer of a golden set (golden/README.md): each
 * case's files (inputs/, expected/) and its manifest entry, checked while
 * they are written (encode status and the decode of the own message; the
 * status the SPEC prescribes for invalid inputs and messages). The case
 * families of golden_gen.c and golden_gain.c call it; it calls neither. */
#ifndef TAHQ_GOLDEN_CASE_WRITER_H
#define TAHQ_GOLDEN_CASE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tahq.h"
#include "tahq_paper_v1.h"

#define GOLDEN_MAX_CASES 2000

typedef struct golden_writer {
    const char *dir;
    FILE *man; /* the manifest's case entries, joined by golden_writer_finish */
    char *man_buf;
    size_t man_len;
    int n_cases;
    uint64_t total_bytes;
    int failed;
    char *ids[GOLDEN_MAX_CASES];
    const char *set;   /* "v1", "v2", "v3" or "v4" */
    const char *kills; /* v2: the mutants the next case kills, "a,b" (NULL: none) */
    /* v4: every case's kill list comes from its table (NULL: use kills) */
    const char *(*kills_of)(const char *id);
} golden_writer;

/* Start a set in dir (which holds inputs/ and expected/). 0 or -1. */
int golden_writer_begin(golden_writer *g, const char *dir, const char *set,
                        const char *(*kills_of)(const char *id));
/* Write dir/manifest.json (when no case failed) and free the writer.
 * header_version > 0 adds the set-wide "header_version" member. Returns the
 * exit status (0, or EXIT_RUNTIME after a message). */
int golden_writer_finish(golden_writer *g, unsigned header_version);

/* Mark the generation failed (the manifest is then not written). */
void golden_writer_fail(golden_writer *g);
int golden_writer_failed(const golden_writer *g);

/* The cases. `flags` is "a,b" (added to the flags derived from the case),
 * `desc` the manifest description. */
/* A valid encode case: input, expected message and decoded tensor. */
void golden_emit_encode(golden_writer *g, const char *id, const char *flags, const char *desc,
                        const tahq_config *cfg, const tahq_shape *s, const float *x);
/* An input the encoder must reject with `expect`. */
void golden_emit_encode_error(golden_writer *g, const char *id, const char *flags, const char *desc,
                              const tahq_config *cfg, const tahq_shape *s, const float *x,
                              int expect);
/* A message the decoder must reject with `expect`. */
void golden_emit_decode_error(golden_writer *g, const char *id, const char *flags, const char *desc,
                              const uint8_t *msg, size_t len, int expect);
/* A crafted valid message of format 1 (pcfg NULL) or of the paper-v1
 * profile that no encoder writes, decoded only. */
void golden_emit_decode(golden_writer *g, const char *id, const char *flags, const char *desc,
                        const uint8_t *msg, size_t len, const tahq_paper_v1_config *pcfg,
                        const tahq_shape *pshape);
/* A case of kind paper_v1 (ref/SPEC.md Appendix A). */
void golden_emit_paper_v1(golden_writer *g, const char *id, const char *flags, const char *desc,
                          const tahq_paper_v1_config *cfg, const tahq_shape *s, const float *x);

/* Elements of a shape. */
static inline uint64_t golden_count_of(const tahq_shape *s)
{
    return (uint64_t)s->batch * s->seq_len * s->channels;
}

#endif
