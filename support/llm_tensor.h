/* SPDX-License-Identifier: MIT */
/* llm_tensor.h - the built-in synthetic LLM-like activation tensor.
 *
 * A deterministic [B, S, C] float32 tensor with the features that matter
 * for activation quantization in large language models:
 *   - a small Gaussian-like base (per-channel scale 0.5..1 times 0.5, a
 *     per-channel bias in [-0.25, 0.25], quiet tokens at 1/4 and loud
 *     tokens at 3/2 of the base scale, sparse tokens whose small values
 *     are zero) with rare 8x spikes (about 0.4% of the elements) that make
 *     isolated outlier tiles;
 *   - max(1, C/256) fixed outlier channels with a constant sign and a
 *     magnitude of 20..60 times the base standard deviation;
 *   - min(2, C) "massive activation" channels that hold values of
 *     +-1000..3000 on two tokens of every sequence: token 0 and one
 *     delimiter token (the other channels of those tokens are damped 8x).
 *
 * Every value is a function of (seed, position) only, computed with
 * Philox4x32-10 (tahq_philox4x32_10, SPEC §2.4), integer operations and
 * binary32 multiplications/additions of exactly representable operands, so
 * the tensor is bit-identical on every IEEE-754 platform. The Gaussian is an
 * Irwin-Hall sum of four 22-bit uniforms, centred and scaled to unit
 * variance (exactly representable before the last scaling).
 */
#ifndef TAHQ_SUPPORT_LLM_TENSOR_H
#define TAHQ_SUPPORT_LLM_TENSOR_H

#include <stdint.h>

#define LLM_DEFAULT_BATCH 1u
#define LLM_DEFAULT_SEQ 1024u
/* C = 1536 is a multiple of every tile size 8..256 (1536 = 2^9 * 3). */
#define LLM_DEFAULT_CHANNELS 1536u
#define LLM_DEFAULT_SEED UINT64_C(1)

/* Fill x[batch*seq*channels]. Returns 0, or -1 if memory for the channel
 * tables cannot be allocated. */
int llm_tensor_fill(float *x, uint32_t batch, uint32_t seq, uint32_t channels, uint64_t seed);

#endif
