/* SPDX-License-Identifier: MIT */
/* codec_ops.h - pieces shared by the commands: encode options, loading an
 * input tensor with its [B, S, C] shape, running the library's encode and
 * decode into freshly allocated buffers, and round-trip statistics. */
#ifndef TAHQ_SUPPORT_CODEC_OPS_H
#define TAHQ_SUPPORT_CODEC_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npy.h"
#include "tahq.h"
#include "tahq_parallel.h"

#include "util.h"

typedef struct enc_opts {
    tahq_config cfg;
    uint32_t batch, seq;     /* 0 = not given */
    const char *shape_text;  /* --shape for raw .f32 input, NULL if not given */
    const char *first_given; /* the first of these options given, or NULL */
} enc_opts;

/* Defaults: tahq_config_default. */
void enc_opts_init(enc_opts *o);
/* The option tables (cli_parse) of the encoder configuration (--tile,
 * --bits, --ratio, --alloc, --tau, --rounding, --seed, --meta) and of the
 * input's shape (--batch, --seq, --shape), bound to o: the one definition
 * of these options for every command that takes them. */
#define ENC_CONFIG_OPTIONS 8
#define SHAPE_OPTIONS 3
void enc_config_options(enc_opts *o, cli_option t[ENC_CONFIG_OPTIONS + 1]);
void shape_options(enc_opts *o, cli_option t[SHAPE_OPTIONS + 1]);
/* Check the configuration: 0, or EXIT_USAGE after one line naming the
 * refused field, its range and the option that sets it (tahq_config_explain). */
int enc_opts_check(const enc_opts *o);
/* Help text of the encode options. */
void enc_opts_help(FILE *f);

/* A tensor output's type from its name: 0 for .npy (and "-", standard
 * output, and an existing device or FIFO, written as .npy), 1 for raw little-endian float32 (.f32), -1 for
 * any other name, refused with one line (printed): decode and gen-llm
 * write no other type, and .npy bytes under another extension would
 * mislead whoever opens the file. */
int tensor_out_raw(const char *path);

/* Load IN: .npy, or raw float32 when --shape is given or IN ends in .f32.
 * Then derive [B, S, C]: C is the last dimension; 3-D input gives B and S,
 * 2-D gives B=1, S=rows, 1-D gives B=S=1; --batch / --seq override B and S
 * (their product must equal the number of rows). 0 or an exit code. */
int load_input(const char *path, const enc_opts *o, npy_tensor *t, tahq_shape *shape);

/* Encode into a malloc'd message (size from tahq_encode_bound, workspace
 * from tahq_encode_workspace_size). Returns a tahq_status or CLI_ERR_NOMEM. */
int run_encode(const tahq_config *cfg, const tahq_shape *shape, const float *x, uint8_t **msg,
               size_t *len);
/* The same with the work split into `threads` parts on as many threads
 * (tahq_encode_parallel; the same message bytes); threads <= 1: tahq_encode. */
int run_encode_threads(const tahq_config *cfg, const tahq_shape *shape, const float *x,
                       uint32_t threads, uint8_t **msg, size_t *len);
/* Decode into a malloc'd float array of count values (B*S*C of the header). */
int run_decode(const uint8_t *msg, size_t len, float **out, uint64_t *count);
/* The same on `threads` threads (tahq_decode_parallel; the same values). */
int run_decode_threads(const uint8_t *msg, size_t len, uint32_t threads, float **out,
                       uint64_t *count);
/* --threads N (1..TAHQ_JOBS_MAX) into the uint32_t at opt->dst. */
int opt_threads(const cli_option *opt, const char *v);
/* The SPEC §6 error bound of each tile (tahq_tile_error_bound) into a
 * malloc'd array of n_tiles doubles: element i's bound is bound[i / tile].
 * One double per tile, not per element: 1/tile of the memory. */
int run_tile_bound(const uint8_t *msg, size_t len, uint64_t n_tiles, double **bound);

typedef struct rt_stats {
    uint64_t count;
    double sum_sq_x, sum_sq_err;
    double rel_mse; /* sum (x - y)^2 / sum x^2 */
    double sqnr_db; /* -10 log10(rel_mse); +inf if rel_mse == 0 */
    double max_abs_err;
    double max_err_over_bound; /* max |x - y| / bound (0/0 counts as 0) */
    uint64_t n_over_bound;     /* elements with |x - y| > bound */
    uint64_t first_over;       /* index of the first such element */
    double first_over_err, first_over_bound;
    /* flagged tiles, checked in L2 by check_flagged_tiles_l2 */
    uint64_t n_flagged_checked;
    uint64_t n_tiles_over_l2;    /* flagged tiles with ||x - y||_2 > E */
    double max_l2_over_bound;    /* max ||x - y||_2 / E over flagged tiles */
    uint64_t first_tile_over_l2; /* index of the first such tile */
} rt_stats;

/* Statistics in double; bound holds one value per tile of `tile` elements
 * (run_tile_bound) and may be NULL (then the bound fields are 0). */
void compute_stats(const float *x, const float *y, const double *bound, uint32_t tile, uint64_t n,
                   rt_stats *s);
/* The SPEC §6.3 bound of a flagged tile is on the tile's Euclidean error,
 * ||x - x̂||_2 <= E; the per-element check |x_i - x̂_i| <= E of
 * compute_stats is weaker (an error
 * several times too large can pass it). This checks the L2 form on every
 * flagged tile of msg (x, y, the per-tile bound as given to compute_stats) and fills
 * the L2 fields of s. Returns TAHQ_OK or a status (tahq_tile_infos's, or
 * CLI_ERR_NOMEM). */
int check_flagged_tiles_l2(const uint8_t *msg, size_t len, const float *x, const float *y,
                           const double *bound, uint64_t n, rt_stats *s);

uint64_t shape_count(const tahq_shape *s);

#endif
