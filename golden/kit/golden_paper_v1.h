/* SPDX-License-Identifier: MIT */
/* golden_paper_v1.h - golden cases of kind "paper_v1" (golden/README.md):
 * the configuration line and the tolerant comparison `tahq conform` applies
 * to them (ref/SPEC.md Appendix A.5). */
#ifndef TAHQ_GOLDEN_GOLDEN_PAPER_V1_H
#define TAHQ_GOLDEN_GOLDEN_PAPER_V1_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

#define GOLDEN_KIND_PAPER_V1 "paper_v1"
/* A crafted valid paper-v1 message, decoded only (golden/README.md). */
#define GOLDEN_KIND_PAPER_V1_DECODE "paper_v1_decode"
/* Largest share of codes that may differ (each by 1) from the expected ones. */
#define GOLDEN_PV1_CODE_RATE 1e-3
/* Decoded values: |got - expected| <= 2^-14 * max |expected| of the tile. */
#define GOLDEN_PV1_VALUE_REL 0x1p-14

/* {"profile":"paper-v1","tile":64,"hi_bits":4,"lo_bits":3,"hi_permille":800} */
void golden_pv1_config_json(char *buf, size_t n, const tahq_paper_v1_config *cfg);
int golden_pv1_config_parse(const json_t *o, tahq_paper_v1_config *cfg, char *err, size_t errlen);

/* Compare a candidate's message with the expected one. Returns 1 if within
 * the tolerance; *exact = 1 if byte-identical; detail gets a summary with
 * the mismatch counts and rates; *field the first failing field or NULL. */
int golden_pv1_compare_message(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                               const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen,
                               int *exact, char *detail, size_t n, const char **field);
/* Compare decoded tensors (count values). Same conventions. */
int golden_pv1_compare_decoded(const tahq_paper_v1_config *cfg, const float *exp, const float *got,
                               uint64_t count, int *exact, char *detail, size_t n);

#endif
