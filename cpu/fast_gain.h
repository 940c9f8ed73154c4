/* SPDX-License-Identifier: MIT */
/* fast_gain.h - the gain key of a token (SPEC §4.3, ref/gain.c
 * tahq_token_gain_key) on the encoder's fast path (cpu/fast_gain.c). Not
 * public. */
#ifndef TAHQ_CPU_FAST_GAIN_H
#define TAHQ_CPU_FAST_GAIN_H

#include <stdint.h>

#include "tahq.h"
#include "fast_encode.h"

/* tahq_token_gain_key(cfg, row, tiles, elem0, key): the same status and, on
 * TAHQ_OK, the same key bits, for every row that passes the input check of
 * SPEC §3.2 and every configuration, nearest and stochastic rounding. The
 * input check is part of the pass: the gate's magnitudes of each tile (a
 * batch of 16 tiles on the avx512 path) are checked before its metadata;
 * TAHQ_ERR_NONFINITE says that the row fails the check (which element, and
 * whether non-finite or too large: tahq_cpu_first_bad). A row that fails it
 * after a tile that overflows returns TAHQ_ERR_RANGE first, so on any
 * status but TAHQ_OK the caller checks the row itself. Each
 * tile is loaded into AVX2 registers once; its range, gate and transform are
 * those of tahq_fast_encode_run; both widths are quantized from the
 * registers (stochastic codes with the tile phase's rounding) and their
 * errors summed in binary64 in the SPEC's trees. On TAHQ_OK, known[t]
 * holds tile t's gate, pivot and metadata at both widths, for
 * tahq_fast_encode_run_known (the message then computes them once), and,
 * with hi_codes (else NULL), the tiles' packed codes at hi_bits one after
 * the other (tile / 8 * hi_bits bytes each; the bytes of the message's
 * codes section, SPEC §8.3), for tahq_fast_encode_run_coded. Only when
 * tahq_fast_encode_active() (else TAHQ_ERR_CONFIG, key unwritten). */
tahq_status tahq_fast_gain_key(const tahq_config *cfg, const float *row, uint32_t tiles,
                               uint64_t elem0, uint32_t *key, tahq_tile_meta *known,
                               uint8_t *hi_codes);

#endif
