/* SPDX-License-Identifier: MIT */
/* log2_coeff.h - SPEC §2.3's Horner coefficients c0 .. c8 of
 * log2(1+f)/f on [sqrt(1/2)-1, sqrt(2)-1], for the 8-lane log2 of the
 * fast paths (fast_encode.c, paper_v1_fast.c). The same values as
 * ref/entropy.c log2_coeff, which is static to the proved reference; the
 * fast_encode_log2 test compares the fast log2 with tahq_log2 on every
 * non-negative float, paper_v1_parallel the paper-v1 entropies. Not public. */
#ifndef TAHQ_CPU_LOG2_COEFF_H
#define TAHQ_CPU_LOG2_COEFF_H

static const float tahq_log2_coeff[9] = {
    0x1.715476p+0f, -0x1.71547p-1f, 0x1.ec73d4p-2f, -0x1.715c9cp-2f, 0x1.26d41p-2f,
    -0x1.e94f12p-3f, 0x1.b9b11ep-3f, -0x1.a8cc5cp-3f, 0x1.025a2p-3f,
};

#endif
