/* SPDX-License-Identifier: MIT */
/* golden_gain.h - golden/v3 (`tahq golden-gen DIR --set v3`): the cases of
 * the gain allocation (ref/SPEC.md §4.3; alloc 3, header version 3), written
 * by golden_gain.c, and the parts of the generator (cmd_golden_gen.c) that
 * they are written with. */
#ifndef TAHQ_CLI_GOLDEN_GAIN_H
#define TAHQ_CLI_GOLDEN_GAIN_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"

/* The header version of every message the encode cases of golden/v3 expect
 * (manifest member "header_version"; the set is of format 1). */
#define GOLDEN_V3_HEADER_VERSION TAHQ_GAIN_VERSION

typedef struct gen gen; /* cmd_golden_gen.c */

/* cmd_golden_gen.c: one case each, checked while it is written (encode
 * status and the decode of the own message; the status the SPEC prescribes
 * for invalid inputs and messages). `flags` is "a,b" (added to the derived
 * ones), `desc` the manifest description. */
void golden_gen_encode(gen *g, const char *id, const char *flags, const char *desc,
                       const tahq_config *cfg, const tahq_shape *s, const float *x);
void golden_gen_encode_error(gen *g, const char *id, const char *flags, const char *desc,
                             const tahq_config *cfg, const tahq_shape *s, const float *x,
                             int expect);
void golden_gen_decode_error(gen *g, const char *id, const char *flags, const char *desc,
                             const uint8_t *msg, size_t len, int expect);
/* Mark the generation failed (the manifest is then not written). */
void golden_gen_fail(gen *g);
int golden_gen_failed(const gen *g);

/* golden_gain.c: every case of golden/v3. */
void golden_gain_cases(gen *g);
/* golden_gain.c: the gain cases golden/v4 adds (table-driven, checked the
 * same way). */
void golden_gain_v4_cases(gen *g);

#endif
