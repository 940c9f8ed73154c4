/* SPDX-License-Identifier: MIT */
/* fuzz_diff_decode.c - libFuzzer harness, differential: the parallel codec
 * of cpu/ (tahq_decode_parallel, tahq_encode_parallel: the code the CLI
 * runs, with its AVX2/BMI2/F16C fast paths where the CPU has them) against
 * the reference of ref/, format 1, at 1 .. TAHQ_JOBS_MAX jobs.
 *
 * Input layout: byte 0 jobs, byte 1 runner (fuzz_diff.h), byte 2 mode:
 *   bit 0 = 0: the rest is a message, decoded as given and with a valid
 *              CRC (fuzz_reseal.h);
 *   bit 0 = 1: the rest is 28 bytes of configuration and mutation, then
 *              the float bits of an input, which is encoded by both
 *              encoders (every alloc mode: none, token, tile, gain), then
 *              one byte of the message is changed (or none) and the result
 *              decoded by both decoders:
 *     0 tile log2 (mod 6 + 3)  1 hi_bits (1 + mod 8)  2 lo_bits (1 + mod hi)
 *     3 alloc (mod 4)  4 rounding (mod 2)  5 meta (mod 2)
 *     6..7 hi_permille (mod 1001)  8..11 tau bits (byte 23 bit 0: one of a
 *     few common values instead)  12..19 seed  20 batch (1..2)  21 seq (1..8)
 *     22 tiles per row (1..4)  23 bit 1: CRC made valid after the change
 *     24..25 position of the changed byte  26 its XOR mask (0: no change)
 *     27 bit 0: decode with one element too many (a buffer error)
 * Both decoders must return the same status for every message and, for a
 * valid one, the same floats bit for bit, and write nothing otherwise; both
 * encoders the same status and, on success, the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_parallel.h"
#include "fuzz_diff.h"
#include "fuzz_reseal.h"

/* A header that claims more elements than this cannot be complete within
 * the fuzzer's input size (the payload holds >= 1 bit per element). */
#define FUZZ_MAX_COUNT (UINT64_C(1) << 22)
#define FILL 0xA5u

static void decode_both(const uint8_t *msg, size_t len, const tahq_parallel *par, int one_more)
{
    tahq_header h;
    size_t count = 8;
    if (tahq_parse_header(msg, len, &h) == TAHQ_OK) {
        uint64_t c = (uint64_t)h.shape.batch * h.shape.seq_len * h.shape.channels;
        if (c > FUZZ_MAX_COUNT)
            abort();
        count = (size_t)c + (one_more ? 1u : 0u);
    }
    float *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
    if (!a || !b)
        abort();
    memset(a, FILL, count * sizeof *a);
    memset(b, FILL, count * sizeof *b);
    tahq_status sr = tahq_decode(msg, len, a, count);
    tahq_status sp = tahq_decode_parallel(msg, len, b, count, par);
    if (sr != sp)
        abort();
    diff_same_floats(a, b, count, sr, FILL);
    free(a);
    free(b);
}

static void raw_message(const uint8_t *msg, size_t len, const tahq_parallel *par)
{
    decode_both(msg, len, par, 0);
    if (len >= TAHQ_HEADER_BYTES) {
        uint8_t *m = copy_with_valid_crc(msg, len);
        decode_both(m, len, par, 0);
        free(m);
    }
}

static void encoded_message(const uint8_t *d, size_t size, const tahq_parallel *par)
{
    if (size < 28)
        return;
    tahq_config cfg;
    cfg.tile = 1u << (d[0] % 6u + 3u);
    cfg.hi_bits = 1u + d[1] % 8u;
    cfg.lo_bits = 1u + d[2] % cfg.hi_bits;
    cfg.alloc = (tahq_alloc)(d[3] % 4u);
    cfg.rounding = (tahq_rounding)(d[4] % 2u);
    cfg.meta = (tahq_meta)(d[5] % 2u);
    cfg.hi_permille = tahq_get_u16(d + 6) % 1001u;
    uint32_t tau_bits = tahq_get_u32(d + 8);
    if (d[23] & 1u) {
        static const uint32_t common[4] = {0x00000000u, 0x40000000u, 0x7F800000u, 0x3F800000u};
        tau_bits = common[tau_bits & 3u];
    }
    memcpy(&cfg.tau, &tau_bits, 4);
    cfg.seed = (uint64_t)tahq_get_u32(d + 12) | (uint64_t)tahq_get_u32(d + 16) << 32;
    tahq_shape shape = {d[20] % 2u + 1u, d[21] % 8u + 1u, (d[22] % 4u + 1u) * cfg.tile};
    const size_t count = (size_t)shape.batch * shape.seq_len * shape.channels;
    size_t cap = 0, ws_ref = 0, ws_par = 0;
    if (tahq_encode_bound(&cfg, &shape, &cap) != TAHQ_OK ||
        tahq_encode_workspace_size(&cfg, &shape, &ws_ref) != TAHQ_OK ||
        tahq_encode_parallel_workspace_size(&cfg, &shape, par->jobs, &ws_par) != TAHQ_OK)
        return; /* a configuration both refuse (tau not finite, ...) */
    float *x = diff_floats(d + 28, size - 28, count);
    uint8_t *mr = malloc(cap), *mp = malloc(cap);
    void *wr = malloc(ws_ref ? ws_ref : 1), *wp = malloc(ws_par ? ws_par : 1);
    if (!mr || !mp || !wr || !wp)
        abort();
    size_t lr = 0, lp = 0;
    tahq_status sr = tahq_encode(&cfg, &shape, x, wr, ws_ref, mr, cap, &lr);
    tahq_status sp = tahq_encode_parallel(&cfg, &shape, x, wp, ws_par, mp, cap, &lp, par);
    if (sr != sp || lr != lp)
        abort();
    if (sr == TAHQ_OK) {
        if (memcmp(mr, mp, lr) != 0)
            abort();
        uint32_t pos = tahq_get_u16(d + 24) % (uint32_t)lr;
        mr[pos] ^= d[26];
        if (d[26] && (d[23] & 2u)) {
            uint8_t *m = copy_with_valid_crc(mr, lr);
            memcpy(mr, m, lr);
            free(m);
        }
        decode_both(mr, lr, par, d[27] & 1u);
    }
    free(x);
    free(mr);
    free(mp);
    free(wr);
    free(wp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    tahq_parallel par;
    diff_order order;
    diff_parallel(&par, &order, data[0], data[1]);
    if (data[2] & 1u)
        encoded_message(data + 3, size - 3, &par);
    else
        raw_message(data + 3, size - 3, &par);
    return 0;
}
