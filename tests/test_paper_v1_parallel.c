/* SPDX-License-Identifier: MIT */
/*
 * test_paper_v1_parallel.c - the paper-v1 fast codec (cpu/paper_v1_fast.c:
 * tahq_paper_v1_encode_parallel / tahq_paper_v1_decode_parallel) against
 * the reference (ref/paper_v1.c) byte for byte: random configurations
 * (every tile size, bits 1..8, r with its edges 0 and 1000, B = 1, S = 1,
 * several sequences), data with outliers, ties of the largest magnitude,
 * signed zeros, constant tiles, subnormals and values near 2^64; 1, 2, 3, 7
 * jobs on the built-in runner and on a caller's runner; input errors at
 * different positions; damaged and truncated messages; the argument
 * errors; and controls that show the comparison sees a difference.
 * Also built against the scalar library (scalar_paper_v1_parallel).
 */
#include "tahq_paper_v1.h"
#include "tahq_parallel.h"
#include "tutil.h"

#define FILL 0xA5

static const uint32_t job_counts[] = {1, 2, 3, 7};

static void reverse_runner(void *ctx, tahq_job_fn fn, void *arg, uint32_t n)
{
    uint32_t *calls = ctx;
    (*calls)++;
    for (uint32_t j = n; j-- > 0;)
        fn(arg, j);
}

/* Activation-like data with the cases the codec's numerics distinguish. */
static void gen_data(trng *r, float *x, uint64_t n, uint32_t tile, int kind)
{
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)trng_gauss(r);
    for (uint64_t t = 0; t + tile <= n; t += tile) {
        switch ((kind + trng_below(r, 9)) % 9) {
        case 0: /* one outlier: flagged */
            x[t + trng_below(r, tile)] *= 40.0f;
            break;
        case 1: /* the largest magnitude twice (ties for the pivot, m2 = m1) */
            x[t + 1] = 9.0f;
            x[t + tile - 1] = -9.0f;
            break;
        case 2: /* zeros of both signs, the minimum a zero */
            for (uint32_t i = 0; i < tile; i++)
                x[t + i] = (i % 3 == 0) ? (trng_below(r, 2) ? -0.0f : 0.0f) : fabsf(x[t + i]);
            break;
        case 3: /* a constant tile (all-zero: flagged, scale at the epsilon) */
            for (uint32_t i = 0; i < tile; i++)
                x[t + i] = trng_below(r, 2) ? 0.0f : 1.5f;
            break;
        case 4: /* subnormals and tiny values */
            for (uint32_t i = 0; i < tile; i++)
                x[t + i] *= 0x1p-140f;
            break;
        case 5: /* large, below 2^64 */
            for (uint32_t i = 0; i < tile; i++)
                x[t + i] = (float)(trng_unit(r) * 0x1p63) * (trng_below(r, 2) ? 1.0f : -1.0f);
            break;
        case 6: /* -0 first, then +0 and positives (lo keeps the first zero) */
            x[t] = -0.0f;
            for (uint32_t i = 1; i < tile; i++)
                x[t + i] = (i == 1) ? 0.0f : fabsf(x[t + i]);
            break;
        case 7: /* +0 first, then -0 */
            x[t] = 0.0f;
            for (uint32_t i = 1; i < tile; i++)
                x[t + i] = (i == 2) ? -0.0f : fabsf(x[t + i]) + 1.0f;
            break;
        default:
            break;
        }
    }
}

typedef struct bufs {
    uint8_t *ref, *fast;
    float *yref, *yfast;
    void *wsr, *wsf;
    size_t cap, wsr_n, wsf_n;
    uint64_t n;
} bufs;

static int bufs_make(bufs *b, const tahq_paper_v1_config *cfg, const tahq_shape *shape)
{
    memset(b, 0, sizeof *b);
    if (tahq_paper_v1_encode_bound(cfg, shape, &b->cap) != TAHQ_OK ||
        tahq_paper_v1_workspace_size(cfg, shape, &b->wsr_n) != TAHQ_OK ||
        tahq_paper_v1_encode_parallel_workspace_size(cfg, shape, &b->wsf_n) != TAHQ_OK)
        return 0;
    b->n = (uint64_t)shape->batch * shape->seq_len * shape->channels;
    b->ref = malloc(b->cap + 16);
    b->fast = malloc(b->cap + 16);
    b->yref = malloc(b->n * sizeof(float) + 16);
    b->yfast = malloc(b->n * sizeof(float) + 16);
    b->wsr = malloc(b->wsr_n);
    b->wsf = malloc(b->wsf_n);
    return b->ref && b->fast && b->yref && b->yfast && b->wsr && b->wsf;
}

static void bufs_free(bufs *b)
{
    free(b->ref), free(b->fast), free(b->yref), free(b->yfast), free(b->wsr), free(b->wsf);
}

/* Buffers for cfg and shape, and data of the given kind (NULL on failure). */
static float *case_setup(bufs *b, const tahq_paper_v1_config *cfg, const tahq_shape *shape, trng *r,
                         int kind)
{
    if (!CHECK(bufs_make(b, cfg, shape)))
        return NULL;
    float *x = malloc(b->n * sizeof(float));
    if (x)
        gen_data(r, x, b->n, cfg->tile, kind);
    return x;
}

/* Decode msg[0 .. len) with the reference and with every job count and
 * runner; same status and same output bytes (prefilled). */
static void compare_decode(const char *what, const tahq_paper_v1_config *cfg,
                           const tahq_shape *shape, const uint8_t *msg, size_t len, bufs *b)
{
    memset(b->yref, FILL, b->n * sizeof(float));
    tahq_status sr = tahq_paper_v1_decode(msg, len, cfg, shape, b->yref, (size_t)b->n);
    for (size_t ji = 0; ji < sizeof job_counts / sizeof job_counts[0]; ji++)
        for (int custom = 0; custom < 2; custom++) {
            uint32_t calls = 0;
            tahq_parallel par;
            tahq_parallel_threads(&par, job_counts[ji]);
            if (custom) {
                par.run = reverse_runner;
                par.ctx = &calls;
            }
            memset(b->yfast, FILL, b->n * sizeof(float));
            tahq_status sf =
                tahq_paper_v1_decode_parallel(msg, len, cfg, shape, b->yfast, (size_t)b->n, &par);
            CHECKF(sf == sr, "%s: decode status %d, reference %d (jobs %u%s)", what, sf, sr,
                   job_counts[ji], custom ? " runner" : "");
            CHECKF(memcmp(b->yref, b->yfast, b->n * sizeof(float)) == 0,
                   "%s: decoded floats differ (jobs %u%s)", what, job_counts[ji],
                   custom ? " runner" : "");
        }
}

/* Encode with the reference and the fast codec (every job count and runner),
 * compare status, length and all cap bytes; then decode the message. Returns
 * the reference's status; b->ref holds its message, *len its length. */
static tahq_status compare_encode(const char *what, const tahq_paper_v1_config *cfg,
                                  const tahq_shape *shape, const float *x, bufs *b, size_t *len)
{
    size_t lr = 777;
    memset(b->ref, FILL, b->cap);
    tahq_status sr = tahq_paper_v1_encode(cfg, shape, x, b->wsr, b->wsr_n, b->ref, b->cap, &lr);
    for (size_t ji = 0; ji < sizeof job_counts / sizeof job_counts[0]; ji++)
        for (int custom = 0; custom < 2; custom++) {
            uint32_t calls = 0;
            tahq_parallel par;
            tahq_parallel_threads(&par, job_counts[ji]);
            if (custom) {
                par.run = reverse_runner;
                par.ctx = &calls;
            }
            size_t lf = 999;
            memset(b->fast, FILL, b->cap);
            tahq_status sf = tahq_paper_v1_encode_parallel(cfg, shape, x, b->wsf, b->wsf_n, b->fast,
                                                           b->cap, &lf, &par);
            CHECKF(sf == sr, "%s: encode status %d, reference %d (jobs %u%s)", what, sf, sr,
                   job_counts[ji], custom ? " runner" : "");
            CHECKF(lf == lr, "%s: length %zu, reference %zu (jobs %u%s)", what, lf, lr,
                   job_counts[ji], custom ? " runner" : "");
            CHECKF(memcmp(b->ref, b->fast, b->cap) == 0, "%s: message bytes differ (jobs %u%s)",
                   what, job_counts[ji], custom ? " runner" : "");
        }
    *len = lr;
    if (sr == TAHQ_OK)
        compare_decode(what, cfg, shape, b->ref, lr, b);
    return sr;
}

static void random_config(trng *r, tahq_paper_v1_config *cfg, tahq_shape *shape, int i)
{
    static const uint32_t edges[] = {0, 1, 2, 499, 500, 501, 800, 998, 999, 1000};
    cfg->tile = 8u << (i % 6);
    cfg->hi_bits = 1 + (uint32_t)trng_below(r, 8);
    cfg->lo_bits = 1 + (uint32_t)trng_below(r, 8);
    cfg->hi_permille = trng_below(r, 2) ? edges[trng_below(r, 10)] : (uint32_t)trng_below(r, 1001);
    shape->batch = 1 + (uint32_t)trng_below(r, i % 4 == 0 ? 1 : 3);
    shape->seq_len = 1 + (uint32_t)trng_below(r, i % 5 == 0 ? 1 : 37);
    shape->channels = cfg->tile * (1 + (uint32_t)trng_below(r, cfg->tile >= 128 ? 3 : 6));
}

static void test_random(void)
{
    trng r = {0x5EED0001};
    char what[128];
    for (int i = 0; i < 120; i++) {
        tahq_paper_v1_config cfg;
        tahq_shape shape;
        random_config(&r, &cfg, &shape, i);
        bufs b;
        float *x = case_setup(&b, &cfg, &shape, &r, i);
        if (!x)
            return;
        snprintf(what, sizeof what, "random %d: G=%u %u/%u r=%u %ux%ux%u", i, cfg.tile, cfg.hi_bits,
                 cfg.lo_bits, cfg.hi_permille, shape.batch, shape.seq_len, shape.channels);
        size_t len;
        CHECKF(compare_encode(what, &cfg, &shape, x, &b, &len) == TAHQ_OK, "%s: encode failed",
               what);
        /* damaged messages: random payload bits, one at a time */
        uint8_t *m = malloc(len + 2);
        for (int k = 0; k < 6 && len > 0; k++) {
            memcpy(m, b.ref, len);
            const uint64_t bit = trng_below(&r, 8u * len);
            m[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
            compare_decode(what, &cfg, &shape, m, len, &b);
        }
        /* truncated and extended */
        compare_decode(what, &cfg, &shape, b.ref, len - 1, &b);
        compare_decode(what, &cfg, &shape, b.ref, len / 2, &b);
        memcpy(m, b.ref, len);
        m[len] = 0;
        compare_decode(what, &cfg, &shape, m, len + 1, &b);
        free(m);
        free(x);
        bufs_free(&b);
    }
}

/* Every bit of a small message flipped, and every truncation. */
static void test_every_bit(void)
{
    const tahq_paper_v1_config cfgs[] = {
        {8, 4, 3, 800}, {16, 2, 5, 500}, {8, 1, 8, 0}, {8, 3, 3, 1000}};
    const tahq_shape shapes[] = {{2, 5, 16}, {1, 7, 32}, {3, 3, 8}, {1, 1, 8}};
    trng r = {0x5EED0002};
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        bufs b;
        float *x = case_setup(&b, &cfgs[c], &shapes[c], &r, (int)c);
        if (!x)
            return;
        x[3] = 50.0f; /* a flagged tile */
        size_t len;
        CHECK(compare_encode("every bit", &cfgs[c], &shapes[c], x, &b, &len) == TAHQ_OK);
        uint8_t *m = malloc(len + 1);
        for (uint64_t bit = 0; bit < 8u * len; bit++) {
            memcpy(m, b.ref, len);
            m[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
            compare_decode("bit flip", &cfgs[c], &shapes[c], m, len, &b);
        }
        for (size_t n = 0; n < len; n++)
            compare_decode("truncated", &cfgs[c], &shapes[c], b.ref, n, &b);
        free(m);
        free(x);
        bufs_free(&b);
    }
}

/* NaN, inf and |x| >= 2^64 at different positions (first, last, the start
 * of a part, two of them in different parts). */
static void test_input_errors(void)
{
    const tahq_paper_v1_config cfg = {16, 4, 3, 800};
    const tahq_shape shape = {2, 11, 48};
    trng r = {0x5EED0003};
    bufs b;
    float *x = case_setup(&b, &cfg, &shape, &r, 0);
    if (!x)
        return;
    const float bad[] = {NAN, -NAN, INFINITY, -INFINITY, 0x1p64f, -0x1p64f, 0x1p100f};
    const uint64_t n = b.n;
    const uint64_t pos[] = {0, 1, 47, 48, n / 2, n / 3, n - 1, 11 * 48, 7 * 48 + 5};
    for (size_t p = 0; p < sizeof pos / sizeof pos[0]; p++)
        for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
            gen_data(&r, x, n, cfg.tile, (int)p);
            x[pos[p]] = bad[v];
            size_t len;
            tahq_status st = compare_encode("bad input", &cfg, &shape, x, &b, &len);
            CHECK(st == (v < 4 ? TAHQ_ERR_NONFINITE : TAHQ_ERR_RANGE));
            /* a second bad element of the other kind later, in another part */
            x[n - 1 - pos[p] % 7] = (v < 4) ? 0x1p70f : NAN;
            if (n - 1 - pos[p] % 7 > pos[p])
                compare_encode("two bad", &cfg, &shape, x, &b, &len);
        }
    free(x);
    bufs_free(&b);
}

static void test_arguments(void)
{
    const tahq_paper_v1_config cfg = {32, 4, 3, 800};
    tahq_paper_v1_config bad_cfg = cfg;
    bad_cfg.tile = 24;
    const tahq_shape shape = {1, 9, 64};
    trng r = {0x5EED0004};
    bufs b;
    float *x = case_setup(&b, &cfg, &shape, &r, 0);
    if (!x)
        return;
    size_t len, l2;
    tahq_parallel par;
    tahq_parallel_threads(&par, 2);
    CHECK(compare_encode("arguments", &cfg, &shape, x, &b, &len) == TAHQ_OK);
    CHECK(
        tahq_paper_v1_encode_parallel(NULL, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2, &par) ==
        tahq_paper_v1_encode(NULL, &shape, x, b.wsr, b.wsr_n, b.ref, b.cap, &l2));
    CHECK(tahq_paper_v1_encode_parallel(&bad_cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &par) == TAHQ_ERR_CONFIG);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, NULL, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &par) == TAHQ_ERR_NULL);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap - 1, &l2,
                                        &par) == TAHQ_ERR_BUFFER);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n - 1, b.fast, b.cap, &l2,
                                        &par) == TAHQ_ERR_BUFFER);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, NULL,
                                        &par) == TAHQ_ERR_NULL);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        NULL) == TAHQ_OK &&
          l2 == len);
    tahq_parallel zero = par, many = par;
    zero.jobs = 0;
    many.jobs = TAHQ_JOBS_MAX + 1;
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &zero) == TAHQ_ERR_CONFIG);
    CHECK(tahq_paper_v1_decode_parallel(b.ref, len, &cfg, &shape, b.yfast, (size_t)b.n, &many) ==
          TAHQ_ERR_CONFIG);
    /* 256 jobs for 9 tokens */
    tahq_parallel lots;
    tahq_parallel_threads(&lots, TAHQ_JOBS_MAX);
    memset(b.fast, FILL, b.cap);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &lots) == TAHQ_OK &&
          l2 == len && memcmp(b.fast, b.ref, len) == 0);
    CHECK(tahq_paper_v1_decode_parallel(b.ref, len, &cfg, &shape, b.yfast, (size_t)b.n, &lots) ==
          TAHQ_OK);
    /* decode argument errors: same statuses as the reference */
    memset(b.yref, FILL, b.n * sizeof(float));
    memset(b.yfast, FILL, b.n * sizeof(float));
    CHECK(tahq_paper_v1_decode_parallel(NULL, len, &cfg, &shape, b.yfast, (size_t)b.n, &par) ==
          tahq_paper_v1_decode(NULL, len, &cfg, &shape, b.yref, (size_t)b.n));
    CHECK(tahq_paper_v1_decode_parallel(b.ref, len, &cfg, &shape, NULL, (size_t)b.n, &par) ==
          tahq_paper_v1_decode(b.ref, len, &cfg, &shape, NULL, (size_t)b.n));
    CHECK(tahq_paper_v1_decode_parallel(b.ref, len, &cfg, &shape, b.yfast, (size_t)b.n - 1, &par) ==
          tahq_paper_v1_decode(b.ref, len, &cfg, &shape, b.yref, (size_t)b.n - 1));
    CHECK(tahq_paper_v1_decode_parallel(b.ref, len, &bad_cfg, &shape, b.yfast, (size_t)b.n, &par) ==
          tahq_paper_v1_decode(b.ref, len, &bad_cfg, &shape, b.yref, (size_t)b.n));
    CHECK(memcmp(b.yref, b.yfast, b.n * sizeof(float)) == 0);

    /* controls: the comparisons see a difference */
    memset(b.fast, FILL, b.cap);
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &par) == TAHQ_OK);
    b.fast[len / 2] ^= 0x10;
    CHECK(memcmp(b.fast, b.ref, b.cap) != 0); /* one flipped byte is seen */
    b.fast[len / 2] ^= 0x10;
    x[5] = x[5] * 3.0f + 7.0f; /* a changed input changes the message */
    CHECK(tahq_paper_v1_encode_parallel(&cfg, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &l2,
                                        &par) == TAHQ_OK);
    CHECK(memcmp(b.fast, b.ref, b.cap) != 0);
    /* a different r decodes to different floats */
    tahq_paper_v1_config other = cfg;
    other.hi_permille = 0;
    size_t lo_len = 0;
    CHECK(tahq_paper_v1_encode_parallel(&other, &shape, x, b.wsf, b.wsf_n, b.fast, b.cap, &lo_len,
                                        &par) == TAHQ_OK);
    CHECK(lo_len != len);
    free(x);
    bufs_free(&b);
}

/* A larger tensor with several sequences (parts that cut sequences). */
static void test_larger(void)
{
    const tahq_paper_v1_config cfg = {64, 4, 3, 800};
    const tahq_shape shape = {3, 103, 320};
    trng r = {0x5EED0005};
    bufs b;
    float *x = case_setup(&b, &cfg, &shape, &r, 3);
    if (!x)
        return;
    size_t len;
    CHECK(compare_encode("larger", &cfg, &shape, x, &b, &len) == TAHQ_OK);
    free(x);
    bufs_free(&b);
}

int main(void)
{
    double t0 = t_now();
    test_arguments();
    test_input_errors();
    test_every_bit();
    test_random();
    test_larger();
    printf("paper-v1 parallel: %.1f s\n", t_now() - t0);
    return t_finish("test_paper_v1_parallel", "paper-v1 fast codec == reference");
}
