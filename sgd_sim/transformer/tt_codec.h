/* SPDX-License-Identifier: MIT */
/* tt_codec.h - stage-boundary messages of tahq-train.
 *
 * A method is libtahq_sim's (sim_method_parse: fp32, fp16, tah, tah-tile,
 * tah-gain, tah-sr, tahH/L, plainB, each with +bwd-none / +bwd-fixB / +bwd-tah). Every
 * boundary tensor [B*T, C] is encoded into a byte message, and the receiver
 * decodes that message; the bytes are what an MPI run sends:
 *   fp32        the binary32 values, little-endian
 *   fp16        tahq_f32_to_f16 of each value, little-endian
 *   tah, plainB tahq_encode's message (ref/SPEC.md, format 1)
 *   fixpoint    C binary16 steps, then the b-bit codes of tahq_fixpoint_encode
 *               packed with tahq_pack_bits: ceil(B*T*C*b/8) + 2C bytes, the
 *               count tahq-sim reports
 *   aqsgd       AQ-SGD (Wang et al. 2022), tahq-sim's numerics: each side of
 *               a boundary holds a binary16 cache per training sample
 *               (tt_aq_cache). The samples seen before (in the order of the
 *               micro-batch) send delta = x - cache: C binary16 steps, then
 *               the aq_bits codes of tahq_fixpoint_encode of all their rows
 *               packed with tahq_pack_bits; then every sample seen for the
 *               first time sends its binary32 values. Both sides update the
 *               cache with the decoded value, cache = f16(cache + delta'),
 *               and the receiver computes with it; a first visit gives the
 *               receiver x itself and cache = f16(x). Length:
 *               [2C + ceil(n_seen*T*C*aq_bits/8)] + n_new*T*C*4 bytes.
 */
#ifndef TT_CODEC_H
#define TT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "tahq_parallel.h"

typedef struct tt_codec {
    sim_method m;
    uint32_t rows, C; /* tensor shape: rows = B*T tokens (B sequences of T) */
    uint32_t B, T;
    uint8_t *msg; /* message buffer, msg_cap bytes */
    size_t msg_cap;
    void *ws; /* tahq_encode (threads > 1: tahq_encode_parallel) workspace */
    size_t ws_cap;
    tahq_parallel par; /* threads > 1: tahq_encode_parallel / tahq_decode_parallel,
                             the same bytes as the one-thread reference codec */
    uint8_t *codes;    /* fixpoint codes [rows*C] */
    float *steps;      /* fixpoint steps [C] */
    float *tmp;        /* AQ-SGD deltas [rows*C] */
} tt_codec;

/* One side's AQ-SGD cache of one boundary: n samples of T*C binary16 values
 * and a seen flag each. The sender's and the receiver's stay equal. */
typedef struct tt_aq_cache {
    uint32_t n;
    size_t per;    /* T*C */
    uint16_t *val; /* [n*per] */
    uint8_t *seen; /* [n] */
} tt_aq_cache;

/* Parse a method name and check it is supported; NULL or a one-line reason. */
const char *tt_method_parse(const char *name, sim_method *m);
/* Low-precision units per allocation group of the forward codec (group:
 * the T tokens of a sequence, or the C/G tiles of a token; *group = 0 when
 * the codec has no allocation): tahq_low_count(group, r). */
uint64_t tt_low_units(const sim_method *m, uint32_t T, uint32_t C, uint64_t *group);
/* Buffers for tensors of B sequences of T tokens of C channels; the tahq
 * messages are encoded and decoded on `threads` threads (1: tahq_encode /
 * tahq_decode; more: the parallel codec of tahq_parallel.h, same bytes).
 * 0 on success. */
int tt_codec_init(tt_codec *c, const sim_method *m, uint32_t B, uint32_t T, uint32_t C,
                  uint32_t threads);
void tt_codec_free(tt_codec *c);
/* Encode x (dir 0: forward activation, 1: backward gradient) for b sequences
 * (b <= B) into c->msg; key seeds stochastic rounding. Returns the message
 * length, 0 on error (message in *err). */
size_t tt_encode(tt_codec *c, int dir, uint32_t b, const float *x, uint64_t key, const char **err);
/* Decode a message of the same direction and b into y. 0 on success. */
int tt_decode(tt_codec *c, int dir, uint32_t b, const uint8_t *msg, size_t len, float *y,
              const char **err);

/* AQ-SGD cache for n samples of T*C values. 0 on success. */
int tt_aq_init(tt_aq_cache *a, uint32_t n, uint32_t T, uint32_t C);
void tt_aq_free(tt_aq_cache *a);
/* Encode the forward activation x of the b samples ids[0..b) against the
 * sender's cache a (updated) into c->msg. Returns the length, 0 on error;
 * *n_new gets the number of first visits. */
size_t tt_aq_encode(tt_codec *c, tt_aq_cache *a, const uint32_t *ids, uint32_t b, const float *x,
                    uint32_t *n_new, const char **err);
/* Decode such a message with the receiver's cache a (updated) into y. 0 on success. */
int tt_aq_decode(tt_codec *c, tt_aq_cache *a, const uint32_t *ids, uint32_t b, const uint8_t *msg,
                 size_t len, float *y, const char **err);

#endif
