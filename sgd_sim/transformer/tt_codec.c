/* SPDX-License-Identifier: MIT */
/* tt_codec.c - boundary messages (see tt_codec.h); all numerics are libtahq's. */
#include "tt_codec.h"

#include <stdlib.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"
#include "../../ref/tahq_core.h"

const char *tt_method_parse(const char *name, sim_method *m)
{
    if (sim_method_parse(name, m))
        return "unknown method (fp32, fp16, tah, tah-tile, tah-gain, tah-sr, tahH/L, plainB, "
               "aqsgd, with optional "
               "+bwd-none, +bwd-fixB, +bwd-tah)";
    if (m->fwd != SIM_FWD_NONE && m->fwd != SIM_FWD_FP16 && m->fwd != SIM_FWD_TAH &&
        m->fwd != SIM_FWD_PLAIN && m->fwd != SIM_FWD_AQSGD)
        return "this forward codec is not supported by tahq-train";
    if (m->bwd != SIM_BWD_NONE && m->bwd != SIM_BWD_FIXPOINT && m->bwd != SIM_BWD_TAH)
        return "this backward codec is not supported by tahq-train";
    return NULL;
}

static size_t bound_for(const tahq_config *cfg, uint32_t B, uint32_t T, uint32_t C,
                        uint32_t threads, size_t *ws)
{
    tahq_shape sh = {B, T, C};
    size_t b = 0, w = 0;
    if (tahq_encode_bound(cfg, &sh, &b) != TAHQ_OK)
        return 0;
    if ((threads > 1 ? tahq_encode_parallel_workspace_size(cfg, &sh, threads, &w)
                     : tahq_encode_workspace_size(cfg, &sh, &w)) != TAHQ_OK)
        return 0;
    if (w > *ws)
        *ws = w;
    return b;
}

uint64_t tt_low_units(const sim_method *m, uint32_t T, uint32_t C, uint64_t *group)
{
    *group = 0;
    if (m->fwd != SIM_FWD_TAH || m->fwd_cfg.alloc == TAHQ_ALLOC_NONE || C % m->fwd_cfg.tile)
        return 0;
    *group = m->fwd_cfg.alloc == TAHQ_ALLOC_TILE ? C / m->fwd_cfg.tile : T;
    return tahq_low_count(*group, m->fwd_cfg.hi_permille);
}

int tt_codec_init(tt_codec *c, const sim_method *m, uint32_t B, uint32_t T, uint32_t C,
                  uint32_t threads)
{
    memset(c, 0, sizeof *c);
    c->m = *m;
    if (threads < 1)
        threads = 1;
    tahq_parallel_threads(&c->par, threads);
    c->B = B, c->T = T, c->C = C, c->rows = B * T;
    size_t n = (size_t)c->rows * C, cap = n * 4, ws = 0;
    if (m->fwd == SIM_FWD_TAH || m->fwd == SIM_FWD_PLAIN) {
        size_t b = bound_for(&m->fwd_cfg, B, T, C, threads, &ws);
        if (!b)
            return 1;
        if (b > cap)
            cap = b;
    }
    if (m->bwd == SIM_BWD_TAH) {
        size_t b = bound_for(&m->bwd_cfg, B, T, C, threads, &ws);
        if (!b)
            return 1;
        if (b > cap)
            cap = b;
    }
    c->msg_cap = cap + 64;
    c->ws_cap = ws;
    c->msg = malloc(c->msg_cap);
    c->ws = ws ? malloc(ws) : NULL;
    c->codes = malloc(n);
    c->steps = malloc(sizeof(float) * C);
    if (m->fwd == SIM_FWD_AQSGD)
        c->tmp = malloc(sizeof(float) * n);
    return c->msg && (!ws || c->ws) && c->codes && c->steps && (m->fwd != SIM_FWD_AQSGD || c->tmp)
               ? 0
               : 1;
}

void tt_codec_free(tt_codec *c)
{
    free(c->msg);
    free(c->ws);
    free(c->codes);
    free(c->steps);
    free(c->tmp);
    memset(c, 0, sizeof *c);
}

/* This wire's fields are little-endian, as the SPEC's: the scalar core's
 * field access, a float as its bits. */
static void put32(uint8_t *p, float f)
{
    tahq_put_u32(p, tahq_bits_of(f));
}
static float get32(const uint8_t *p)
{
    return tahq_float_of(tahq_get_u32(p));
}

/* kinds of message */
enum { K_F32, K_F16, K_TAH, K_FIX };

static int kind_of(const tt_codec *c, int dir, const tahq_config **cfg)
{
    const sim_method *m = &c->m;
    if (dir == 0) {
        *cfg = &m->fwd_cfg;
        return m->fwd == SIM_FWD_NONE ? K_F32 : m->fwd == SIM_FWD_FP16 ? K_F16 : K_TAH;
    }
    *cfg = &m->bwd_cfg;
    return m->bwd == SIM_BWD_NONE ? K_F32 : m->bwd == SIM_BWD_FIXPOINT ? K_FIX : K_TAH;
}

size_t tt_encode(tt_codec *c, int dir, uint32_t b, const float *x, uint64_t key, const char **err)
{
    const tahq_config *cfg0;
    const uint64_t rows = (uint64_t)b * c->T, n = rows * c->C;
    *err = NULL;
    if (dir == 0 && c->m.fwd == SIM_FWD_AQSGD) {
        *err = "aqsgd messages need the sample cache (tt_aq_encode)";
        return 0;
    }
    switch (kind_of(c, dir, &cfg0)) {
    case K_F32:
        for (uint64_t i = 0; i < n; i++)
            put32(c->msg + 4 * i, x[i]);
        return (size_t)n * 4;
    case K_F16:
        for (uint64_t i = 0; i < n; i++)
            tahq_put_u16(c->msg + 2 * i, tahq_f32_to_f16(x[i]));
        return (size_t)n * 2;
    case K_FIX: {
        const uint32_t bits = c->m.bwd_bits;
        tahq_status st =
            tahq_fixpoint_encode(x, rows, c->C, bits, TAHQ_META_FP16, c->codes, c->steps);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 0;
        }
        size_t head = (size_t)c->C * 2, body = (size_t)((n * bits + 7) / 8);
        for (uint32_t j = 0; j < c->C; j++)
            tahq_put_u16(c->msg + 2 * j,
                         tahq_f32_to_f16(c->steps[j])); /* exact: steps are binary16 values */
        memset(c->msg + head, 0, body);
        tahq_pack_bits(c->msg + head, 0, c->codes, n, bits);
        return head + body;
    }
    default: {
        tahq_config cfg = *cfg0;
        if (cfg.rounding == TAHQ_ROUND_STOCHASTIC)
            cfg.seed = key;
        tahq_shape sh = {b, c->T, c->C};
        size_t len = 0;
        tahq_status st =
            c->par.jobs > 1 ? tahq_encode_parallel(&cfg, &sh, x, c->ws, c->ws_cap, c->msg,
                                                   c->msg_cap, &len, &c->par)
                            : tahq_encode(&cfg, &sh, x, c->ws, c->ws_cap, c->msg, c->msg_cap, &len);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 0;
        }
        return len;
    }
    }
}

int tt_decode(tt_codec *c, int dir, uint32_t b, const uint8_t *msg, size_t len, float *y,
              const char **err)
{
    const tahq_config *cfg0;
    const uint64_t rows = (uint64_t)b * c->T, n = rows * c->C;
    *err = "message length does not match the tensor";
    if (dir == 0 && c->m.fwd == SIM_FWD_AQSGD) {
        *err = "aqsgd messages need the sample cache (tt_aq_decode)";
        return 1;
    }
    switch (kind_of(c, dir, &cfg0)) {
    case K_F32:
        if (len != n * 4)
            return 1;
        for (uint64_t i = 0; i < n; i++)
            y[i] = get32(msg + 4 * i);
        break;
    case K_F16:
        if (len != n * 2)
            return 1;
        for (uint64_t i = 0; i < n; i++)
            y[i] = tahq_f16_to_f32(tahq_get_u16(msg + 2 * i));
        break;
    case K_FIX: {
        const uint32_t bits = c->m.bwd_bits;
        size_t head = (size_t)c->C * 2;
        if (len != head + (size_t)((n * bits + 7) / 8))
            return 1;
        for (uint32_t j = 0; j < c->C; j++)
            c->steps[j] = tahq_f16_to_f32(tahq_get_u16(msg + 2 * j));
        tahq_unpack_bits(msg + head, 0, c->codes, n, bits);
        tahq_status st = tahq_fixpoint_decode(c->codes, c->steps, rows, c->C, bits, y);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 1;
        }
        break;
    }
    default: {
        tahq_status st = c->par.jobs > 1 ? tahq_decode_parallel(msg, len, y, (size_t)n, &c->par)
                                         : tahq_decode(msg, len, y, (size_t)n);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 1;
        }
    }
    }
    *err = NULL;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* AQ-SGD                                                                   */
/* ------------------------------------------------------------------------ */
int tt_aq_init(tt_aq_cache *a, uint32_t n, uint32_t T, uint32_t C)
{
    memset(a, 0, sizeof *a);
    a->n = n, a->per = (size_t)T * C;
    a->val = malloc(sizeof(uint16_t) * a->per * n);
    a->seen = calloc(n ? n : 1, 1);
    return a->val && a->seen ? 0 : 1;
}

void tt_aq_free(tt_aq_cache *a)
{
    free(a->val);
    free(a->seen);
    memset(a, 0, sizeof *a);
}

static float f16_round(float v)
{
    return tahq_f16_to_f32(tahq_f32_to_f16(v));
}

/* the delta part's length for n_seen samples */
static size_t aq_delta_len(const tt_codec *c, uint32_t n_seen)
{
    if (!n_seen)
        return 0;
    uint64_t n = (uint64_t)n_seen * c->T * c->C;
    return (size_t)c->C * 2 + (size_t)((n * c->m.aq_bits + 7) / 8);
}

/* c->tmp holds the decoded deltas of the seen samples (packed in micro-batch
 * order): turn them into the new cached values, f16(cache + delta), then
 * write the cache (and y when given). Two passes, so that a sample present
 * twice in one micro-batch reads the old cache both times. */
static void aq_apply(tt_codec *c, tt_aq_cache *a, const uint32_t *ids, uint32_t b, float *y)
{
    const size_t per = a->per;
    uint32_t j = 0;
    for (uint32_t s = 0; s < b; s++) {
        if (!a->seen[ids[s]])
            continue;
        const uint16_t *cs = a->val + (size_t)ids[s] * per;
        float *d = c->tmp + (size_t)j++ * per;
        for (size_t i = 0; i < per; i++)
            d[i] = f16_round(tahq_f16_to_f32(cs[i]) + d[i]);
    }
    j = 0;
    for (uint32_t s = 0; s < b; s++) {
        if (!a->seen[ids[s]])
            continue;
        uint16_t *cs = a->val + (size_t)ids[s] * per;
        const float *d = c->tmp + (size_t)j++ * per;
        for (size_t i = 0; i < per; i++)
            cs[i] = tahq_f32_to_f16(d[i]); /* exact: d is a binary16 value */
        if (y)
            memcpy(y + (size_t)s * per, d, sizeof(float) * per);
    }
}

size_t tt_aq_encode(tt_codec *c, tt_aq_cache *a, const uint32_t *ids, uint32_t b, const float *x,
                    uint32_t *n_new, const char **err)
{
    const size_t per = a->per;
    const uint32_t bits = c->m.aq_bits;
    uint32_t n_seen = 0;
    *err = NULL;
    for (uint32_t s = 0; s < b; s++) {
        if (!a->seen[ids[s]])
            continue;
        const uint16_t *cs = a->val + (size_t)ids[s] * per;
        float *d = c->tmp + (size_t)n_seen++ * per;
        for (size_t i = 0; i < per; i++)
            d[i] = x[(size_t)s * per + i] - tahq_f16_to_f32(cs[i]);
    }
    size_t len = aq_delta_len(c, n_seen);
    if (n_seen) {
        const uint64_t rows = (uint64_t)n_seen * c->T, n = rows * c->C;
        tahq_status st =
            tahq_fixpoint_encode(c->tmp, rows, c->C, bits, TAHQ_META_FP16, c->codes, c->steps);
        if (st ==
            TAHQ_OK) /* the sender decodes its own message: its cache follows the receiver's */
            st = tahq_fixpoint_decode(c->codes, c->steps, rows, c->C, bits, c->tmp);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 0;
        }
        size_t head = (size_t)c->C * 2;
        for (uint32_t j = 0; j < c->C; j++)
            tahq_put_u16(c->msg + 2 * j, tahq_f32_to_f16(c->steps[j])); /* exact: binary16 steps */
        memset(c->msg + head, 0, len - head);
        tahq_pack_bits(c->msg + head, 0, c->codes, n, bits);
        aq_apply(c, a, ids, b, NULL);
    }
    uint32_t nn = 0;
    for (uint32_t s = 0; s < b; s++) {
        if (a->seen[ids[s]] == 1)
            continue;
        /* first visit (seen still 0, or 2: marked by a copy earlier in this micro-batch) */
        const float *xs = x + (size_t)s * per;
        uint16_t *cs = a->val + (size_t)ids[s] * per;
        for (size_t i = 0; i < per; i++) {
            put32(c->msg + len + 4 * i, xs[i]);
            cs[i] = tahq_f32_to_f16(xs[i]);
        }
        a->seen[ids[s]] = 2;
        len += per * 4;
        nn++;
    }
    for (uint32_t s = 0; s < b; s++)
        a->seen[ids[s]] = 1;
    *n_new = nn;
    return len;
}

int tt_aq_decode(tt_codec *c, tt_aq_cache *a, const uint32_t *ids, uint32_t b, const uint8_t *msg,
                 size_t len, float *y, const char **err)
{
    const size_t per = a->per;
    const uint32_t bits = c->m.aq_bits;
    uint32_t n_seen = 0;
    for (uint32_t s = 0; s < b; s++)
        n_seen += a->seen[ids[s]] == 1;
    size_t dl = aq_delta_len(c, n_seen);
    if (len != dl + (size_t)(b - n_seen) * per * 4) {
        *err = "aqsgd message length does not match the receiver's cache";
        return 1;
    }
    if (n_seen) {
        const uint64_t rows = (uint64_t)n_seen * c->T, n = rows * c->C;
        for (uint32_t j = 0; j < c->C; j++)
            c->steps[j] = tahq_f16_to_f32(tahq_get_u16(msg + 2 * j));
        tahq_unpack_bits(msg + (size_t)c->C * 2, 0, c->codes, n, bits);
        tahq_status st = tahq_fixpoint_decode(c->codes, c->steps, rows, c->C, bits, c->tmp);
        if (st != TAHQ_OK) {
            *err = tahq_strerror(st);
            return 1;
        }
        aq_apply(c, a, ids, b, y);
    }
    size_t off = dl;
    for (uint32_t s = 0; s < b; s++) {
        if (a->seen[ids[s]] == 1)
            continue;
        float *ys = y + (size_t)s * per;
        uint16_t *cs = a->val + (size_t)ids[s] * per;
        for (size_t i = 0; i < per; i++) {
            ys[i] = get32(msg + off + 4 * i);
            cs[i] = tahq_f32_to_f16(ys[i]);
        }
        a->seen[ids[s]] = 2;
        off += per * 4;
    }
    for (uint32_t s = 0; s < b; s++)
        a->seen[ids[s]] = 1;
    *err = NULL;
    return 0;
}
