/* SPDX-License-Identifier: MIT */
/*
 * tahq_cuda.h - CUDA implementation of tahq format 1 (ref/SPEC.md).
 *
 * Produces the same message bytes as tahq_encode and the same decoded
 * binary32 values as tahq_decode, bit for bit, for every configuration the
 * SPEC allows. Mirrors the reference API (include/tahq.h) with these
 * differences:
 *
 *   - Every data pointer (x, out, msg, workspace, codes, steps) is a device
 *     pointer; config, shape and the length/size results live on the host.
 *   - The work is queued on `stream`. Each function returns after the
 *     stream has reached the end of its work (the status and the message
 *     length depend on the data), so results are ready when it returns.
 *   - The caller passes a device workspace of at least the queried size
 *     (any alignment). The decoder and the fixpoint functions need one too
 *     (the reference's do not).
 *   - A failing CUDA runtime call returns TAHQ_CUDA_ERR_RUNTIME (outside the
 *     format's codes 0..13); tahq_cuda_last_error() gives the cudaError_t.
 *   - tahq_cuda_encode checks config, shape and buffers up front exactly as
 *     tahq_encode does, and returns the same status for invalid input values
 *     (NaN/inf -> TAHQ_ERR_NONFINITE, |x| >= 2^64 -> TAHQ_ERR_RANGE, the
 *     first bad element in index order decides). It checks the values in the
 *     same pass that encodes them, so on any error after the up-front checks
 *     the payload area of `out` may have been written; its first 72 bytes
 *     (the header) are then zero, so no partial output can pass for a
 *     message. (The reference leaves `out` untouched on input errors.)
 *   - tahq_cuda_decode validates in the order of SPEC 8.4 and writes `out`
 *     only if the whole message is valid, like tahq_decode; a workspace that
 *     is NULL or too small is reported first (TAHQ_ERR_NULL / _BUFFER).
 *
 * Build: kernels/CMakeLists.txt (library tahq_cuda, sm_90 SASS + PTX).
 */
#ifndef TAHQ_CUDA_H
#define TAHQ_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "tahq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA runtime call failed (see tahq_cuda_last_error). Chosen as the
 * largest value a tahq_status can hold; not a format error code. */
#define TAHQ_CUDA_ERR_RUNTIME ((tahq_status)15)

/* The cudaError_t of the last failing runtime call made by this library
 * in the calling thread (cudaSuccess if none). */
cudaError_t tahq_cuda_last_error(void);

/* Largest message for cfg and shape (identical to tahq_encode_bound). */
tahq_status tahq_cuda_encode_bound(const tahq_config *cfg, const tahq_shape *shape, size_t *bytes);

/* Device workspace tahq_cuda_encode needs (never 0). */
tahq_status tahq_cuda_encode_workspace_size(const tahq_config *cfg, const tahq_shape *shape,
                                            size_t *bytes);

/* Encode d_x[B*S*C] into d_out (capacity >= tahq_cuda_encode_bound). On
 * success *out_len is the message length; on error *out_len = 0. */
tahq_status tahq_cuda_encode(const tahq_config *cfg, const tahq_shape *shape, const float *d_x,
                             void *d_workspace, size_t workspace_bytes, uint8_t *d_out,
                             size_t out_capacity, size_t *out_len, cudaStream_t stream);

/* Device workspace tahq_cuda_decode needs for a message of len bytes
 * decoded into count floats. */
tahq_status tahq_cuda_decode_workspace_size(size_t len, size_t count, size_t *bytes);

/* Decode the message d_msg[len] into d_out[count] (count must be B*S*C). */
tahq_status tahq_cuda_decode(const uint8_t *d_msg, size_t len, float *d_out, size_t count,
                             void *d_workspace, size_t workspace_bytes, cudaStream_t stream);

/* SPEC 7.2 per-channel symmetric fixpoint quantizer (tahq_fixpoint_*):
 * d_codes[rows*C] one byte per element (q + 2^(b-1)), d_steps[C]. */
tahq_status tahq_cuda_fixpoint_workspace_size(uint32_t channels, size_t *bytes);
tahq_status tahq_cuda_fixpoint_encode(const float *d_g, uint64_t rows, uint32_t channels,
                                      uint32_t bits, tahq_meta meta, uint8_t *d_codes,
                                      float *d_steps, void *d_workspace, size_t workspace_bytes,
                                      cudaStream_t stream);
tahq_status tahq_cuda_fixpoint_decode(const uint8_t *d_codes, const float *d_steps, uint64_t rows,
                                      uint32_t channels, uint32_t bits, float *d_out,
                                      void *d_workspace, size_t workspace_bytes,
                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_CUDA_H */
