/* SPDX-License-Identifier: MIT */
/* fuzz_diff_pv1.c - libFuzzer harness, differential: the paper-v1 profile
 * of cpu/paper_v1_fast.c (tahq_paper_v1_decode_parallel and
 * tahq_paper_v1_encode_parallel, what the CLI runs) against the reference
 * (ref/paper_v1.c) at 1 .. TAHQ_JOBS_MAX jobs.
 *
 * Input layout: byte 0 jobs, byte 1 runner (fuzz_diff.h), byte 2 mode
 * (bit 0: encode first; bit 1: hi_permille raw instead of mod 1001), then
 * the configuration and shape the decoder is given (a paper-v1 stream has
 * no header):
 *   0 tile log2 (mod 6 + 3)  1 hi_bits (1 + mod 8)  2 lo_bits (1 + mod 8)
 *   3..4 hi_permille  5 batch (1..2)  6 seq (1..8)  7 tiles per row (1..4)
 * then, with bit 0 clear, the stream itself; with bit 0 set, 3 bytes of
 * mutation (position of the changed byte, 2 bytes; its XOR mask, 0: none)
 * and the float bits of the input, encoded by both encoders and the
 * (changed) stream decoded by both decoders.
 * Same status from both for every stream; for a valid one the same floats
 * bit for bit, and nothing written otherwise; the encoders give the same
 * status and bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_parallel.h"
#include "fuzz_diff.h"

#define FILL 0x5Au

static void decode_both(const uint8_t *msg, size_t len, const tahq_paper_v1_config *cfg,
                        const tahq_shape *shape, const tahq_parallel *par)
{
    const size_t count = (size_t)shape->batch * shape->seq_len * shape->channels;
    float *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
    if (!a || !b)
        abort();
    memset(a, FILL, count * sizeof *a);
    memset(b, FILL, count * sizeof *b);
    tahq_status sr = tahq_paper_v1_decode(msg, len, cfg, shape, a, count);
    tahq_status sp = tahq_paper_v1_decode_parallel(msg, len, cfg, shape, b, count, par);
    if (sr != sp)
        abort();
    diff_same_floats(a, b, count, sr, FILL);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 11)
        return 0;
    tahq_parallel par;
    diff_order order;
    diff_parallel(&par, &order, data[0], data[1]);
    const uint8_t mode = data[2], *d = data + 3;
    tahq_paper_v1_config cfg;
    cfg.tile = 1u << (d[0] % 6u + 3u);
    cfg.hi_bits = 1u + d[1] % 8u;
    cfg.lo_bits = 1u + d[2] % 8u;
    cfg.hi_permille = tahq_get_u16(d + 3);
    if (!(mode & 2u))
        cfg.hi_permille %= 1001u;
    tahq_shape shape = {d[5] % 2u + 1u, d[6] % 8u + 1u, (d[7] % 4u + 1u) * cfg.tile};
    const uint8_t *rest = d + 8;
    size_t nrest = size - 11;
    if (!(mode & 1u)) {
        decode_both(rest, nrest, &cfg, &shape, &par);
        return 0;
    }
    if (nrest < 3)
        return 0;
    const size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;
    size_t cap = 0, ws_ref = 0, ws_par = 0;
    if (tahq_paper_v1_encode_bound(&cfg, &shape, &cap) != TAHQ_OK ||
        tahq_paper_v1_workspace_size(&cfg, &shape, &ws_ref) != TAHQ_OK ||
        tahq_paper_v1_encode_parallel_workspace_size(&cfg, &shape, &ws_par) != TAHQ_OK) {
        decode_both(rest, nrest, &cfg, &shape, &par); /* an invalid configuration */
        return 0;
    }
    float *x = diff_floats(rest + 3, nrest - 3, count);
    uint8_t *mr = malloc(cap), *mp = malloc(cap);
    void *wr = malloc(ws_ref ? ws_ref : 1), *wp = malloc(ws_par ? ws_par : 1);
    if (!mr || !mp || !wr || !wp)
        abort();
    size_t lr = 0, lp = 0;
    tahq_status sr = tahq_paper_v1_encode(&cfg, &shape, x, wr, ws_ref, mr, cap, &lr);
    tahq_status sp = tahq_paper_v1_encode_parallel(&cfg, &shape, x, wp, ws_par, mp, cap, &lp, &par);
    if (sr != sp || lr != lp || (sr == TAHQ_OK && memcmp(mr, mp, lr) != 0))
        abort();
    if (sr == TAHQ_OK) {
        uint32_t pos = tahq_get_u16(rest) % (uint32_t)lr;
        mr[pos] ^= rest[2];
        decode_both(mr, lr, &cfg, &shape, &par);
    }
    free(x);
    free(mr);
    free(mp);
    free(wr);
    free(wp);
    return 0;
}
