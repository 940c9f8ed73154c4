/* SPDX-License-Identifier: MIT */
/* tt_stats.h - statistics and .npy dumps of tahq-train's boundary
 * activations (sgd_sim/README.md, section tahq-train).
 *
 * For one forward activation y [B, T, C] (one micro-batch at one boundary):
 * the RMS of every channel over the B*T tokens (min, median, max), the
 * largest |value|, the excess kurtosis of all B*T*C values (m4 / m2^2 - 3,
 * central moments, in binary64), the five channels of largest RMS with
 * their RMS over the median, and what the codec's outlier gate and bit
 * allocation do with the tensor under a configuration: the message of
 * tahq_encode read back with tahq_tile_infos, the share of tiles flagged
 * (pivot swap + Hadamard) and of tiles at the low bit width. */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <stdint.h>

#include "tahq.h"

#define TT_STATS_TOP 5

typedef struct tt_act_stats {
    double rms_min, rms_median, rms_max, absmax, kurtosis;
    double top_ch[TT_STATS_TOP], top_ratio[TT_STATS_TOP]; /* channel index, RMS / median RMS */
    double tiles, flagged_share, low_share;               /* tiles = 0: the gate was not run */
} tt_act_stats;

/* binary64 values in a tt_act_stats (for sending it as an array) */
#define TT_STATS_NVAL ((int)(sizeof(tt_act_stats) / sizeof(double)))

/* The statistics of y [B*T, C]; the gate under cfg when cfg is not NULL and
 * C is a multiple of its tile. 0 on success, else 1 (*err). */
int tt_act_stats_compute(const float *y, int B, int T, int C, const tahq_config *cfg,
                         tt_act_stats *s, const char **err);
/* The CSV header line (no newline) and one row for (step, boundary). */
const char *tt_act_stats_header(void);
void tt_act_stats_row(char *out, size_t n, int step, int boundary, const char *gate,
                      const tt_act_stats *s);
/* y as a float32 .npy file (format 1.0, little-endian '<f4', C order) of
 * shape (B, T, C). 0 on success, else errno's value. */
int tt_npy_write(const char *path, int B, int T, int C, const float *y);

#endif
