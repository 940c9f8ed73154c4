/* SPDX-License-Identifier: MIT */
/* log2_coeff.h - SPEC §2.3's Horner coefficients c0 .. c8 as an array, for
 * the log2 of the fast paths (fast_encode.c, paper_v1_fast.c). The values
 * are the scalar core's (ref/tahq_core.h TAHQ_LOG2_COEFFS); the
 * fast_encode_log2 test compares the fast log2 with tahq_log2 on every
 * non-negative float, paper_v1_parallel the paper-v1 entropies. Not public. */
#ifndef TAHQ_CPU_LOG2_COEFF_H
#define TAHQ_CPU_LOG2_COEFF_H

#include "tahq_core.h"

static const float tahq_log2_coeff[9] = {TAHQ_LOG2_COEFFS};

#endif
