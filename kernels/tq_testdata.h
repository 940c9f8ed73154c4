/* SPDX-License-Identifier: MIT */
/*
 * tq_testdata.h - deterministic test tensors and configurations shared by
 * the CPU-side emulation test and the GPU cross-checks: random data of
 * several scales, ties, zeros, constant tiles, single spikes, denormals,
 * signed zeros, near-overflow ranges and LLM-like outlier channels.
 */
#ifndef TQ_TESTDATA_H
#define TQ_TESTDATA_H

#include <stdint.h>
#include <string.h>

#include "tahq.h"
#include "tahq_spec.h"

struct TqRng {
    uint64_t s;
    explicit TqRng(uint64_t seed) : s(seed) {}
    uint64_t next()
    {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint32_t u32()
    {
        return (uint32_t)(next() >> 32);
    }
    uint32_t below(uint32_t n)
    {
        return (uint32_t)(((next() >> 32) * (uint64_t)n) >> 32);
    }
    /* uniform in [-1, 1) with 24 random bits */
    float unit()
    {
        return (float)((int32_t)(u32() >> 8) - (1 << 23)) * 0x1p-23f;
    }
    /* roughly Gaussian (Irwin-Hall of 4) */
    float gauss()
    {
        return (unit() + unit() + unit() + unit()) * 0.8660254f;
    }
};

static inline float tq_f_of(uint32_t w)
{
    float f;
    memcpy(&f, &w, 4);
    return f;
}

/* Kinds of test tensor. */
enum {
    TQ_DATA_GAUSS = 0, /* N(0, s) with a per-call scale */
    TQ_DATA_LLM,       /* outlier channels and massive tokens */
    TQ_DATA_TIES,      /* values from a tiny set: ties everywhere */
    TQ_DATA_SPARSE,    /* mostly zeros (+0 and -0), single spikes */
    TQ_DATA_CONST,     /* constant tiles, some on the metadata grid */
    TQ_DATA_DENORM,    /* subnormals and tiny normals */
    TQ_DATA_WIDE,      /* magnitudes from 2^-140 to 2^63 */
    TQ_DATA_HALFWAY,   /* values placed on code midpoints (rounding ties) */
    TQ_DATA_KINDS
};

static inline const char *tq_data_name(int kind)
{
    static const char *n[] = {"gauss", "llm",    "ties", "sparse",
                              "const", "denorm", "wide", "halfway"};
    return kind >= 0 && kind < TQ_DATA_KINDS ? n[kind] : "?";
}

/* Fill x[rows * C] (tile G for the tile-structured kinds). */
static inline void tq_fill(float *x, uint64_t rows, uint32_t C, uint32_t G, int kind, uint64_t seed)
{
    TqRng r(seed * 0x100000001B3ull + (uint64_t)kind);
    const uint64_t n = rows * C;
    switch (kind) {
    case TQ_DATA_GAUSS: {
        float sc = tq_f_of((uint32_t)(127 - 10 + (int)r.below(20)) << 23);
        for (uint64_t i = 0; i < n; i++)
            x[i] = r.gauss() * sc;
        break;
    }
    case TQ_DATA_LLM: {
        for (uint64_t row = 0; row < rows; row++) {
            float tok = (r.below(64) == 0) ? 200.0f + 50.0f * r.unit() : 1.0f;
            for (uint32_t c = 0; c < C; c++) {
                float v = r.gauss() * 0.4f;
                if (c % 97u == 13u || c % 251u == 7u)
                    v = v * 0.1f + 30.0f + 10.0f * r.unit(); /* outlier channels */
                if (tok != 1.0f && c % 61u == 3u)
                    v = tok * (r.u32() & 1u ? 1.0f : -1.0f); /* massive activations */
                x[row * C + c] = v;
            }
        }
        break;
    }
    case TQ_DATA_TIES: {
        const float set[8] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -2.0f, 0.25f};
        for (uint64_t i = 0; i < n; i++)
            x[i] = set[r.below(8)];
        break;
    }
    case TQ_DATA_SPARSE: {
        for (uint64_t i = 0; i < n; i++) {
            uint32_t c = r.below(16);
            x[i] = c == 0 ? r.gauss() * 50.0f : (c & 1u ? -0.0f : 0.0f);
        }
        break;
    }
    case TQ_DATA_CONST: {
        for (uint64_t t = 0; t < n / G; t++) {
            uint32_t c = r.below(5);
            float v = c == 0   ? 0.0f
                      : c == 1 ? 1.5f
                      : c == 2 ? -3.0f
                      : c == 3 ? r.unit() * 7.0f
                               : -0.0f;
            for (uint32_t i = 0; i < G; i++)
                x[t * G + i] = v;
            if (r.below(4) == 0) /* one spike in a constant tile */
                x[t * G + r.below(G)] = v + 100.0f;
        }
        break;
    }
    case TQ_DATA_DENORM: {
        /* per row: all tiny subnormals (below 2^-139, so that unit sums stay
         * below 2^-128 and 1/sum overflows: SPEC 4.1's division path), tiles
         * of tiny or mixed values, or mixed values */
        for (uint64_t row = 0; row < rows; row++) {
            uint32_t mode = r.below(3);
            for (uint32_t c0 = 0; c0 < C; c0 += G) {
                uint32_t tmode = mode == 1 ? r.below(2) * 2u : mode;
                for (uint32_t i = c0; i < c0 + G && i < C; i++) {
                    uint32_t w = r.u32();
                    uint32_t c = r.below(4);
                    uint32_t bits = tmode == 0 ? (w & 0x3FFu)
                                    : c == 0   ? (w & 0x007FFFFFu)
                                    : c == 1   ? ((w & 0x00FFFFFFu) + 0x00800000u)
                                    : c == 2   ? (w & 0x0000FFFFu)
                                               : ((w & 0x03FFFFFFu));
                    x[row * C + i] = tq_f_of(bits | (w & 0x80000000u));
                }
            }
        }
        break;
    }
    case TQ_DATA_WIDE: {
        for (uint64_t i = 0; i < n; i++) {
            uint32_t e = 1u + r.below(189); /* exponent field 1..189: 2^-126 .. 2^62 */
            uint32_t w = r.u32();
            x[i] = tq_f_of((w & 0x80000000u) | (e << 23) | (w & 0x7FFFFFu));
        }
        break;
    }
    default: { /* halfway: integers and half-integers on a coarse grid */
        for (uint64_t t = 0; t < n / G; t++) {
            float sc = (float)(1u + r.below(4));
            for (uint32_t i = 0; i < G; i++)
                x[t * G + i] = ((float)r.below(31) * 0.5f) * sc;
        }
        break;
    }
    }
}

/* A configuration from an index: cycles through every field's values. */
static inline tahq_config tq_config_of(uint64_t i, uint32_t G)
{
    tahq_config c;
    tahq_config_default(&c);
    TqRng r(i * 7919u + G);
    c.tile = G;
    c.hi_bits = 1u + r.below(8);
    c.lo_bits = 1u + r.below(c.hi_bits);
    static const uint32_t permille[] = {0, 1, 500, 800, 999, 1000, 333, 875};
    c.hi_permille = permille[r.below(8)];
    c.alloc = (tahq_alloc)(i % 3u);
    static const uint32_t taus[] = {0x40000000u /*2*/,   0x7F800000u /*inf*/, 0x00000000u /*0*/,
                                    0x3FC00000u /*1.5*/, 0x3F800000u /*1*/,   0x41200000u /*10*/};
    c.tau = tq_f_of(taus[(i / 3u) % 6u]);
    c.rounding = (tahq_rounding)((i / 18u) % 2u);
    c.meta = (tahq_meta)((i / 36u) % 3u);
    c.seed = r.next();
    return c;
}

#endif
