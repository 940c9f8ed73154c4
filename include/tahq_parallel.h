/* SPDX-License-Identifier: MIT */ /*
 * tahq_parallel.h - multi-threaded encode and decode of tahq format 1.
 *
 * tahq_encode_parallel writes the same message bytes as tahq_encode, and
 * tahq_decode_parallel the same floats as tahq_decode, for every number of
 * jobs: every value is computed by the same SPEC operations in the same
 * order; only the assignment of rows, groups and tiles to jobs changes.
 * The work is split into `jobs` parts: rows for the input check and the
 * ranks (entropies, or gain keys in gain allocation), allocation groups
 * (sequences or tokens) for the ranking, tiles for the codes. Each part writes its own region of the message, whose
 * position the precision map fixes (SPEC §8.2: pivots come last); the pivots
 * are compacted after the parts finish and the CRC is joined from per-part
 * CRCs (common/tahq_crc_gf2.h).
 *
 * The library allocates nothing: the caller passes the workspace (size from
 * tahq_encode_parallel_workspace_size), and either a job runner of its own
 * (a thread pool) or none, in which case each call starts jobs - 1 POSIX
 * threads and runs job 0 itself (a thread that cannot be started has its
 * job run by the calling thread, so the call never fails for that reason).
 *
 * Conventions as tahq.h: a tahq_status per function, inputs and outputs do
 * not alias, errors leave the output as tahq_encode / tahq_decode do (see
 * below for the one difference).
 */
#ifndef TAHQ_PARALLEL_H
#define TAHQ_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "tahq.h"
#include "tahq_paper_v1.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most jobs one call may split into. */
#define TAHQ_JOBS_MAX 256u

/* One job: fn(arg, j) for j in 0 .. n_jobs - 1. */
typedef void (*tahq_job_fn)(void *arg, uint32_t job);
/* A job runner runs fn(arg, j) exactly once for every j in 0 .. n_jobs - 1,
 * in any order, on any threads, and returns when all have returned. */
typedef void (*tahq_runner_fn)(void *ctx, tahq_job_fn fn, void *arg, uint32_t n_jobs);

typedef struct tahq_parallel {
    uint32_t jobs;      /* 1 .. TAHQ_JOBS_MAX parts */
    tahq_runner_fn run; /* NULL: the built-in runner (POSIX threads, one per job) */
    void *ctx;          /* passed to run */
} tahq_parallel;

/* jobs parts on the built-in runner. */
void tahq_parallel_threads(tahq_parallel *par, uint32_t jobs);

/* Workspace tahq_encode_parallel needs for this many jobs (jobs = 0 counts
 * as 1): the rank of every unit (4 bytes per token in token and gain mode:
 * its entropy or gain key; per tile in tile mode; nothing for alloc none)
 * and one group's sort keys per job; in gain mode also 20 bytes per tile
 * (5 / tile of the input's bytes: each tile's gate and metadata at both
 * widths) and tile / 8 * hi_bits bytes per tile (hi_bits / 32 of the
 * input's bytes: its codes at hi_bits), computed once for the gain key and
 * the message. TAHQ_ERR_CONFIG for jobs > TAHQ_JOBS_MAX. */
tahq_status tahq_encode_parallel_workspace_size(const tahq_config *cfg, const tahq_shape *shape,
                                                uint32_t jobs, size_t *bytes);

/* tahq_encode with the work split into par->jobs parts (par NULL: one).
 * Output capacity from tahq_encode_bound. Same checks in the same order and
 * the same results as tahq_encode, with one difference on a metadata
 * overflow (TAHQ_ERR_RANGE found tile by tile, or in gain allocation while
 * the gain keys are computed): the first TAHQ_HEADER_BYTES are zeroed as
 * there, but the rest of out may differ from what tahq_encode leaves (tiles
 * after the failing one may have been written; a failing gain key leaves
 * the payload unwritten). */
tahq_status tahq_encode_parallel(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                                 void *workspace, size_t workspace_bytes, uint8_t *out,
                                 size_t out_capacity, size_t *out_len, const tahq_parallel *par);

/* tahq_decode with the payload checks and the tiles split into par->jobs
 * parts (par NULL: one). out is written only if the whole message is valid;
 * the same status as tahq_decode for every message. */
tahq_status tahq_decode_parallel(const uint8_t *msg, size_t len, float *out, size_t count,
                                 const tahq_parallel *par);

/* CRC-32C of A || B from the CRC-32C of A, of B and the length of B. */
uint32_t tahq_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* ---- paper-v1 (ref/SPEC.md Appendix A; cpu/paper_v1_fast.c) ------------
 * The same bytes as tahq_paper_v1_encode and the same floats as
 * tahq_paper_v1_decode, with the same statuses, for every input, message
 * and number of jobs: the same binary32 operations in the same order, split
 * by tokens, with 8-lane forms where the reference's operations are
 * independent per element. par NULL: one job; par->jobs 0 or above
 * TAHQ_JOBS_MAX: TAHQ_ERR_CONFIG (encode: after the first NULL checks;
 * decode: after the configuration and shape check). */

/* Workspace of tahq_paper_v1_encode_parallel (any number of jobs): 24 bytes
 * per token and 2 per tile, plus alignment slack. */
tahq_status tahq_paper_v1_encode_parallel_workspace_size(const tahq_paper_v1_config *cfg,
                                                         const tahq_shape *shape, size_t *bytes);
/* As tahq_paper_v1_encode (same checks in the same order; the workspace
 * from tahq_paper_v1_encode_parallel_workspace_size). */
tahq_status tahq_paper_v1_encode_parallel(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                          const float *x, void *workspace, size_t workspace_bytes,
                                          uint8_t *out, size_t out_capacity, size_t *out_len,
                                          const tahq_parallel *par);
/* As tahq_paper_v1_decode (out written only for a valid message). */
tahq_status tahq_paper_v1_decode_parallel(const uint8_t *msg, size_t len,
                                          const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                                          float *out, size_t count, const tahq_parallel *par);

#ifdef __cplusplus
}
#endif
#endif /* TAHQ_PARALLEL_H */
