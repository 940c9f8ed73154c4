/* tt_codec.h - stage-boundary messages of tahq-train.
 *
 * A method is libtahq_sim's (sim_method_parse: fp32, fp16, tah, tah-tile,
 * tah-sr, tahH/L, plainB, each with +bwd-none / +bwd-fixB / +bwd-tah). Every
 * boundary tensor [B*T, C] is encoded into a byte message, and the receiver
 * decodes that message; the bytes are what an MPI run sends:
 *   fp32        the binary32 values, little-endian
 *   fp16        tahq_f32_to_f16 of each value, little-endian
 *   tah, plainB tahq_encode's message (ref/SPEC.md, format 1)
 *   fixpoint    C binary16 steps, then the b-bit codes of tahq_fixpoint_encode
 *               packed with tahq_pack_bits: ceil(B*T*C*b/8) + 2C bytes, the
 *               count tahq-sim reports
 * AQ-SGD (a per-sample cache) is not supported here.
 */
#ifndef TT_CODEC_H
#define TT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

typedef struct tt_codec {
    sim_method m;
    uint32_t rows, C;     /* tensor shape: rows = B*T tokens (B sequences of T) */
    uint32_t B, T;
    uint8_t *msg;         /* message buffer, msg_cap bytes */
    size_t msg_cap;
    void *ws;             /* tahq_encode workspace */
    size_t ws_cap;
    uint8_t *codes;       /* fixpoint codes [rows*C] */
    float *steps;         /* fixpoint steps [C] */
} tt_codec;

/* Parse a method name and check it is supported; NULL or a one-line reason. */
const char *tt_method_parse(const char *name, sim_method *m);
/* Low-precision units per allocation group of the forward codec (group:
 * the T tokens of a sequence, or the C/G tiles of a token; *group = 0 when
 * the codec has no allocation): tahq_low_count(group, r). */
uint64_t tt_low_units(const sim_method *m, uint32_t T, uint32_t C, uint64_t *group);
/* Buffers for tensors of B sequences of T tokens of C channels. 0 on success. */
int tt_codec_init(tt_codec *c, const sim_method *m, uint32_t B, uint32_t T, uint32_t C);
void tt_codec_free(tt_codec *c);
/* Encode x (dir 0: forward activation, 1: backward gradient) for b sequences
 * (b <= B) into c->msg; key seeds stochastic rounding. Returns the message
 * length, 0 on error (message in *err). */
size_t tt_encode(tt_codec *c, int dir, uint32_t b, const float *x, uint64_t key, const char **err);
/* Decode a message of the same direction and b into y. 0 on success. */
int tt_decode(tt_codec *c, int dir, uint32_t b, const uint8_t *msg, size_t len, float *y,
              const char **err);

#endif
