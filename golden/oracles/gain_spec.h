/* SPDX-License-Identifier: MIT */
/* gain_spec.h - an independent transcription of the gain allocation of
 * ref/SPEC.md §4.2/§4.3 (golden/oracles/README.md): the tile errors at both
 * widths, the binary64 sums in the orders of §2.5, the x2 of flagged tiles
 * when log2 G is odd, the key and the per-sequence ranking, written from the
 * SPEC on the §5 primitives of tahq_spec.h only (gate, transform,
 * quantization), with a switch for each port mistake. golden/kit/
 * golden_gain.c checks libtahq's precision map against it while golden/v3
 * and v4 are written, and names each case after the mistakes it tells
 * apart. It includes include/ only: never ref/, cpu/ or common/. */
#ifndef TAHQ_ORACLES_GAIN_SPEC_H
#define TAHQ_ORACLES_GAIN_SPEC_H

#include <stdint.h>

#include "tahq.h"

/* The mistakes (GV_SPEC: none, the SPEC itself). */
enum {
    GV_SPEC,         /* SPEC §4.3 */
    GV_ENTROPY,      /* alloc token's entropy ranking (§4.2) */
    GV_F32,          /* squares, e_b, g and sigma in binary32 */
    GV_SEQ_TILE,     /* e_b summed left to right */
    GV_ADJ_TILE,     /* e_b by an adjacent-pair tree (v[2j] + v[2j+1]) */
    GV_SEQ_PSUM,     /* sigma summed left to right over the tiles */
    GV_NO_X2,        /* no x2 for flagged tiles (log2 G odd) */
    GV_X2_ANY_K,     /* x2 for flagged tiles whatever the parity of log2 G */
    GV_X2_UNFLAGGED, /* x2 for every tile when log2 G is odd */
    GV_KEY_PLAIN,    /* key = the plain high word of sigma's bits */
    GV_KEY_SIGNFLIP, /* key = high word of (bits xor 2^63), also for sigma < 0 */
    GV_KEY_F32,      /* key from the binary32 value of sigma */
    GV_KEY_FULL64,   /* the whole 64-bit ordered word, not its high half */
    GV_KEY_SHIFT31,  /* o >> 31 (one bit more than the SPEC's key) */
    GV_KEY_SHIFT33,  /* o >> 33 (one bit less) */
    GV_KEY_LOWWORD,  /* the low 32 bits of o */
    GV_TIE_HIGH,     /* equal keys: the higher row first */
    GV_RAW_TILE,     /* flagged tiles quantized untransformed */
    GV_DECODED,      /* error after the inverse transform, against x (no x2) */
    GV_NEAREST,      /* nearest-even codes in the ranking of a stochastic message */
    GV_ROW_INDEX,    /* stochastic codes keyed by the index within the row */
    GV_SEED_ZERO,    /* stochastic codes of seed 0, not the message's seed */
    GV_BATCH,        /* one ranking over the whole batch (B * low(S) tokens) */
    GV_META_FP16,    /* the ranking's metadata fp16, bf16 or fp32 whatever */
    GV_META_BF16,    /*   the message's meta */
    GV_META_FP32,
    GV_RANGE_IGNORED, /* a token whose tile overflows the metadata ranked last */
    GV_ALWAYS_RANK,   /* keys computed when low(S) = 0 */
    GV_N
};
#define GV_END (-1)

/* What each mistake is, and the pitfall flag of the cases that catch it. */
typedef struct gain_spec_mistake {
    const char *what, *flag;
} gain_spec_mistake;
extern const gain_spec_mistake gain_spec_mistakes[GV_N];

/* sigma of one token: row[T*G], its first element's global index elem0,
 * under mistake v. TAHQ_OK, or the status of a tile that cannot be
 * quantized. */
int gain_spec_token_sigma(const tahq_config *c, const float *row, uint32_t T, uint64_t elem0, int v,
                          double *sigma);
/* §4.3 step 4: the 64-bit word that orders as sigma. */
uint64_t gain_spec_order_word(double sigma);
/* The ranking key of sigma under mistake v (the SPEC: the high word of the
 * order word). */
uint64_t gain_spec_key(double sigma, int v);
/* The precision map (low[r] = 1: row r gets lo_bits) of alloc gain under
 * mistake v. TAHQ_OK or the status of the ranking. */
int gain_spec_map(const tahq_config *c, const tahq_shape *s, const float *x, int v, uint8_t *low);

#endif
