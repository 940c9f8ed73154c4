/* SPDX-License-Identifier: MIT */
/* golden_gain.h - golden/v3 (`tahq golden-gen DIR --set v3`): the cases of
 * the gain allocation (ref/SPEC.md §4.3; alloc 3, header version 3), written
 * by golden_gain.c with the writer of case_writer.h. */
#ifndef TAHQ_GOLDEN_GAIN_H
#define TAHQ_GOLDEN_GAIN_H

#include <stddef.h>
#include <stdint.h>

#include "case_writer.h"
#include "tahq.h"

/* The header version of every message the encode cases of golden/v3 expect
 * (manifest member "header_version"; the set is of format 1). */
#define GOLDEN_V3_HEADER_VERSION TAHQ_GAIN_VERSION

/* golden_gain.c: every case of golden/v3. */
void golden_gain_cases(golden_writer *g);
/* golden_gain.c: the gain cases golden/v4 adds (table-driven, checked the
 * same way). */
void golden_gain_v4_cases(golden_writer *g);

#endif
