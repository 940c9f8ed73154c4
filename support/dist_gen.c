/* SPDX-License-Identifier: MIT */
#include "dist_gen.h"

#include <math.h>
#include <string.h>

#include "llm_tensor.h"
#include "tahq.h"
#include "tahq_spec.h"
#include "util.h"

#define DOMAIN_TAG 0x42444e31u /* "BDN1" */
#define STREAM_GAUSS 1u
#define STREAM_LAPLACE 2u

static const char *const names[DIST_COUNT] = {"gauss", "laplace", "student-t", "llm"};
static const char *const descr[DIST_COUNT] = {
    "standard normal, i.i.d.", "Laplace, unit variance, i.i.d.",
    "Student-t nu=3 (heavy tails), i.i.d.",
    "LLM-like: outlier channels, massive-activation tokens (llm_tensor.c)"};

const char *dist_name(dist_kind d)
{
    return (unsigned)d < DIST_COUNT ? names[d] : "?";
}
const char *dist_description(dist_kind d)
{
    return (unsigned)d < DIST_COUNT ? descr[d] : "?";
}

int dist_parse(const char *name)
{
    for (int i = 0; i < DIST_COUNT; ++i)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static void block(uint64_t seed, uint32_t stream, uint64_t idx, uint32_t w[4])
{
    const uint32_t ctr[4] = {(uint32_t)idx, (uint32_t)(idx >> 32), stream, DOMAIN_TAG};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    tahq_philox4x32_10(ctr, key, w);
}

/* Uniform on (-1, 1), never 0: an odd integer in (-2^24, 2^24) times 2^-24 (exact). */
static float usym(uint32_t w)
{
    int32_t odd = (int32_t)(2u * (w >> 8) + 1u) - 0x1000000;
    return (float)odd * 0x1p-24f;
}

/* Uniform on (0, 1): an odd integer below 2^24 times 2^-24 (exact). */
static float uopen(uint32_t w)
{
    return (float)(2u * (w >> 9) + 1u) * 0x1p-24f;
}

#define LN2F 0.693147182f

float dist_gauss(uint64_t seed, uint64_t idx, uint32_t k)
{
    uint32_t w[4];
    for (uint32_t attempt = 0;; ++attempt) {
        block(seed, STREAM_GAUSS | (k << 8) | ((attempt & 0xFFFFu) << 16), idx, w);
        for (int p = 0; p < 2; ++p) {
            float u = usym(w[2 * p]), v = usym(w[2 * p + 1]);
            float s = u * u + v * v;
            if (s >= 1.0f)
                continue;
            /* -2 ln(s) / s with ln(s) = log2(s) * ln 2 (s in (0, 1)) */
            float l = tahq_log2(s) * LN2F;
            float f = sqrtf((-2.0f * l) / s);
            return u * f;
        }
    }
}

static float laplace(uint64_t seed, uint64_t idx)
{
    uint32_t w[4];
    block(seed, STREAM_LAPLACE, idx, w);
    /* b = 1/sqrt(2) (unit variance); -b ln U = -log2(U) * (b ln 2) */
    float e = (0.0f - tahq_log2(uopen(w[0]))) * 0.490129071f;
    return (w[1] & 1u) ? -e : e;
}

static float student_t3(uint64_t seed, uint64_t idx)
{
    float z = dist_gauss(seed, idx, 0);
    float a = dist_gauss(seed, idx, 1), b = dist_gauss(seed, idx, 2), c = dist_gauss(seed, idx, 3);
    float chi = a * a + b * b + c * c;
    if (chi == 0.0f)
        chi = 0x1p-48f;
    return z / sqrtf(chi / 3.0f);
}

int dist_fill(dist_kind d, float *x, uint32_t batch, uint32_t seq, uint32_t channels, uint64_t seed)
{
    uint64_t n = (uint64_t)batch * seq * channels;
    switch (d) {
    case DIST_GAUSS:
        for (uint64_t i = 0; i < n; ++i)
            x[i] = dist_gauss(seed, i, 0);
        return 0;
    case DIST_LAPLACE:
        for (uint64_t i = 0; i < n; ++i)
            x[i] = laplace(seed, i);
        return 0;
    case DIST_STUDENT_T:
        for (uint64_t i = 0; i < n; ++i)
            x[i] = student_t3(seed, i);
        return 0;
    case DIST_LLM:
        return llm_tensor_fill(x, batch, seq, channels, seed);
    case DIST_COUNT:
        break;
    }
    return -1;
}

int dist_parse_list(const char *list, int use[DIST_COUNT])
{
    memset(use, 0, DIST_COUNT * sizeof *use);
    char buf[256];
    if (strlen(list) >= sizeof buf)
        return cli_fail(EXIT_USAGE, "--dist list too long");
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int d = dist_parse(tok);
        if (d < 0)
            return cli_fail(EXIT_USAGE,
                            "unknown distribution '%s' (gauss, laplace, student-t, llm)", tok);
        use[d] = 1;
    }
    return 0;
}
