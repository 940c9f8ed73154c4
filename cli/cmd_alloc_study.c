/* SPDX-License-Identifier: MIT */
/* cmd_alloc_study.c - tahq alloc-study: which tiles should get the low bit
 * width? Precision-allocation policies compared at equal message size
 * against the exact optimum.
 *
 * Why two encodes suffice. A tile's outlier gate, pivot, zero-point and
 * scale depend only on the tile's own values and its bit width (SPEC §5),
 * never on the widths of other tiles, and its codes are written from those
 * alone (stochastic rounding is keyed by the element index, §2.4). So the
 * decoded values of a tile under any allocation equal its decoded values in
 * the uniform encode at the width it was given. The study encodes each input
 * twice with libtahq, all tiles at hi_bits and all at lo_bits (alloc none),
 * keeps per tile the squared error, max |error|/bound (tahq_error_bound) and
 * the bound's energy, and scores any allocation from those. The claim is
 * checked on every input, every run: real encodes with --alloc tile,
 * --alloc token and --alloc gain must give the same precision map
 * (tahq_tile_infos), the same decoded tensor bit for bit, the same message
 * length and the same relative MSE as the study's reconstruction of those
 * three policies: entropy/tile/token, entropy/token/sequence and
 * gain/token/sequence ("CONTROL FAIL" and exit 1 otherwise). The inverse
 * selection (highest entropy, or largest gain, gets lo_bits) is compared
 * against the same real encode as a negative control: it must differ.
 *
 * The gain control compares two computations of a token's gain: the study's
 * sum over its tiles of e_lo - e_hi, from the decoded tensors, and SPEC
 * §4.3's key, from the transformed-domain errors in binary32, summed in
 * binary64 and cut to its top 32 bits. They can order two tokens
 * differently only when their gains agree to about 2^-20 relative (equal
 * keys: the SPEC ranks by index) or differ by less than the rounding of the
 * inverse transform of flagged tiles; a gain control failure on such a
 * near-tie would not be a codec error (none occurred on the study's inputs,
 * nor at tau 0, G 8..128, 2/1 to 8/4 bits, bf16, stochastic rounding).
 *
 * Equal bits. The reference budget is the message size of SPEC token
 * allocation at the share r (one map bit per row). A policy that chooses
 * tiles pays one map bit per tile instead; each policy gets the fewest low
 * units that bring its whole message (header, map, flags, zero-points,
 * scales, codes, pivots: SPEC §8.2; the pivots do not depend on the
 * allocation) to at most the budget. Those L units are spread over the
 * scope's groups as evenly as integers allow (the first L mod groups get
 * one more).
 *
 * The oracle. Given the count, the error is the all-high error plus the sum
 * of the gains e_lo - e_hi of the low units, so taking the units with the
 * smallest gains (over the whole tensor) is optimal for that count, and a
 * larger count only helps through units whose gain is negative: the oracle
 * of a granularity takes max(L, #negative gains) units. The oracle is the
 * better of the tile and token granularities; every policy is at one of
 * them, so none can beat it ("ORACLE BEATEN" and exit 1 otherwise). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec_ops.h"
#include "commands.h"
#include "dist_gen.h"
#include "npy.h"
#include "tahq_spec.h"
#include "util.h"

#define MAX_INPUTS 64
#define MAX_RATIOS 64
#define RANDOM_SEED UINT64_C(0xa110c)

/* ------------------------------------------------------------------ */
/* Policies                                                            */
/* ------------------------------------------------------------------ */

enum { P_ENTROPY, P_INV_ENTROPY, P_RANGE, P_BOUND, P_GAIN, P_RANDOM, P_COUNT };
/* the negative control of the gain control only (not a policy of the study) */
enum { P_INV_GAIN = P_COUNT + 1 };
static const char *const pol_names[P_COUNT] = {"entropy", "inv-entropy", "range",
                                               "bound",   "gain",        "random"};
static const char *const pol_descr[P_COUNT] = {
    "SPEC direction: lowest SPEC 4.1 entropy gets lo_bits",
    "highest entropy gets lo_bits",
    "smallest max - min of the raw values gets lo_bits",
    "smallest increase of the SPEC 6 bound energy (sum of bound^2,\n"
    "               lo minus hi) gets lo_bits",
    "smallest exact error increase e_lo - e_hi (from the two encodes)\n"
    "               gets lo_bits",
    "uniformly random units get lo_bits (Philox, fixed seed)"};

enum { U_TILE, U_TOKEN, U_COUNT };
static const char *const unit_names[U_COUNT] = {"tile", "token"};
enum { S_TOKEN, S_SEQ, S_MB, S_COUNT };
static const char *const scope_names[S_COUNT] = {"token", "sequence", "micro-batch"};

/* ------------------------------------------------------------------ */
/* One input: the two uniform encodes reduced to per-tile numbers      */
/* ------------------------------------------------------------------ */

typedef struct input {
    char name[512];
    const char *descr;
    tahq_shape shape;
    float *x;
    uint64_t n, rows, T, N; /* elements, tokens, tiles per token, tiles */
    /* per tile, [0] = hi_bits, [1] = lo_bits */
    double *e[2];   /* sum of squared errors */
    double *rb[2];  /* max |error| / bound */
    double *b2[2];  /* sum of bound^2 */
    float *y[2];    /* decoded tensors */
    size_t len[2];  /* message lengths */
    float *ent;     /* SPEC 4.1 entropy of each tile */
    double *range;  /* max - min of each tile */
    float *tok_ent; /* entropy of each token */
    double *tok_range;
    double *xx_tok; /* sum x^2 of each token */
    double xx;      /* sum x^2 */
    uint64_t n_flagged, gate_mismatch;
} input;

static void input_free(input *in)
{
    free(in->x);
    for (int w = 0; w < 2; ++w) {
        free(in->e[w]);
        free(in->rb[w]);
        free(in->b2[w]);
        free(in->y[w]);
    }
    free(in->ent);
    free(in->range);
    free(in->tok_ent);
    free(in->tok_range);
    free(in->xx_tok);
    memset(in, 0, sizeof *in);
}

/* Encode x uniformly at width bits; fill the per-tile arrays of slot w. */
static int uniform_encode(input *in, const tahq_config *base, uint32_t bits, int w,
                          tahq_tile_info *info)
{
    tahq_config c = *base;
    c.alloc = TAHQ_ALLOC_NONE;
    c.hi_bits = bits;
    c.lo_bits = bits;
    c.hi_permille = 1000;
    uint8_t *msg = NULL;
    size_t len = 0;
    double *bound = NULL;
    uint64_t cnt = 0;
    const char *stage = "encode";
    int st = run_encode(&c, &in->shape, in->x, &msg, &len);
    if (st == TAHQ_OK) {
        stage = "decode";
        st = run_decode(msg, len, &in->y[w], &cnt);
    }
    if (st == TAHQ_OK) {
        stage = "error bound";
        st = run_tile_bound(msg, len, in->N, &bound);
    }
    if (st == TAHQ_OK) {
        stage = "tile infos";
        st = tahq_tile_infos(msg, len, info, (size_t)in->N);
    }
    free(msg);
    if (st != TAHQ_OK) {
        free(bound);
        return cli_fail(EXIT_RUNTIME, "%s: %u-bit uniform %s: %s", in->name, (unsigned)bits, stage,
                        cli_status_text(st));
    }
    in->len[w] = len;
    const uint32_t G = base->tile;
    for (uint64_t t = 0; t < in->N; ++t) {
        double se = 0.0, mr = 0.0, sb = 0.0;
        for (uint64_t i = t * G; i < (t + 1) * G; ++i) {
            double d = (double)in->x[i] - (double)in->y[w][i];
            double a = fabs(d), b = bound[t];
            se += d * d;
            sb += b * b;
            double r = b > 0.0 ? a / b : (a > 0.0 ? INFINITY : 0.0);
            if (r > mr)
                mr = r;
        }
        in->e[w][t] = se;
        in->rb[w][t] = mr;
        in->b2[w][t] = sb;
    }
    free(bound);
    return 0;
}

/* The checks that need no encode: shape and values. */
static int input_check(const input *in, const tahq_config *cfg)
{
    if (tahq_check_shape(cfg, &in->shape) != TAHQ_OK)
        return cli_fail(EXIT_USAGE,
                        "%s: shape [%u, %u, %u] does not fit tile G = %u (C must be a "
                        "multiple of G)",
                        in->name, (unsigned)in->shape.batch, (unsigned)in->shape.seq_len,
                        (unsigned)in->shape.channels, (unsigned)cfg->tile);
    for (uint64_t i = 0; i < in->n; ++i)
        if (!isfinite(in->x[i]))
            return cli_fail(EXIT_RUNTIME, "%s: element %llu is not finite", in->name,
                            (unsigned long long)i);
    return 0;
}

static int input_prepare(input *in, const tahq_config *cfg)
{
    const uint32_t G = cfg->tile;
    in->rows = (uint64_t)in->shape.batch * in->shape.seq_len;
    in->T = in->shape.channels / G;
    in->N = in->rows * in->T;
    size_t N = (size_t)in->N, R = (size_t)in->rows;
    tahq_tile_info *info[2] = {malloc(N * sizeof(tahq_tile_info)),
                               malloc(N * sizeof(tahq_tile_info))};
    int bad = !info[0] || !info[1];
    for (int w = 0; w < 2 && !bad; ++w) {
        bad |= !(in->e[w] = malloc(N * sizeof(double)));
        bad |= !(in->rb[w] = malloc(N * sizeof(double)));
        bad |= !(in->b2[w] = malloc(N * sizeof(double)));
    }
    if (!bad) {
        bad |= !(in->ent = malloc(N * sizeof(float)));
        bad |= !(in->range = malloc(N * sizeof(double)));
        bad |= !(in->tok_ent = malloc(R * sizeof(float)));
        bad |= !(in->tok_range = malloc(R * sizeof(double)));
        bad |= !(in->xx_tok = malloc(R * sizeof(double)));
    }
    if (bad) {
        free(info[0]);
        free(info[1]);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    int rc = uniform_encode(in, cfg, cfg->hi_bits, 0, info[0]);
    if (!rc)
        rc = uniform_encode(in, cfg, cfg->lo_bits, 1, info[1]);
    if (!rc) {
        /* the gate is width-independent (part of the exactness claim) */
        in->n_flagged = in->gate_mismatch = 0;
        for (size_t t = 0; t < N; ++t) {
            in->n_flagged += info[0][t].flagged;
            if (info[0][t].flagged != info[1][t].flagged ||
                (info[0][t].flagged && info[0][t].pivot != info[1][t].pivot))
                in->gate_mismatch++;
        }
    }
    free(info[0]);
    free(info[1]);
    if (rc)
        return rc;
    const uint64_t C = in->shape.channels;
    in->xx = 0.0;
    for (uint64_t r = 0; r < in->rows; ++r) {
        const float *row = in->x + r * C;
        double ss = 0.0, lo = INFINITY, hi = -INFINITY;
        for (uint64_t i = 0; i < C; ++i) {
            double v = row[i];
            ss += v * v;
            if (v < lo)
                lo = v;
            if (v > hi)
                hi = v;
        }
        in->xx_tok[r] = ss;
        in->xx += ss;
        in->tok_range[r] = hi - lo;
        in->tok_ent[r] = tahq_entropy(row, (uint32_t)in->T, G);
        for (uint64_t j = 0; j < in->T; ++j) {
            const float *tp = row + j * G;
            double tl = INFINITY, th = -INFINITY;
            for (uint32_t i = 0; i < G; ++i) {
                if (tp[i] < tl)
                    tl = tp[i];
                if (tp[i] > th)
                    th = tp[i];
            }
            in->range[r * in->T + j] = th - tl;
            in->ent[r * in->T + j] = tahq_entropy(tp, 1, G);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Selections                                                          */
/* ------------------------------------------------------------------ */

typedef struct key {
    double s;
    uint64_t i;
} key;

static int key_cmp(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->s < y->s)
        return -1;
    if (x->s > y->s)
        return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static double unit_score(const input *in, int pol, int unit, uint64_t u)
{
    uint64_t per = unit == U_TILE ? 1 : in->T, t0 = u * per;
    double s = 0.0;
    switch (pol) {
    case P_ENTROPY:
        return unit == U_TILE ? in->ent[u] : in->tok_ent[u];
    case P_INV_ENTROPY:
        return -(double)(unit == U_TILE ? in->ent[u] : in->tok_ent[u]);
    case P_RANGE:
        return unit == U_TILE ? in->range[u] : in->tok_range[u];
    case P_BOUND:
        for (uint64_t t = t0; t < t0 + per; ++t)
            s += in->b2[1][t] - in->b2[0][t];
        return s;
    case P_GAIN:
    case P_INV_GAIN:
        for (uint64_t t = t0; t < t0 + per; ++t)
            s += in->e[1][t] - in->e[0][t];
        return pol == P_GAIN ? s : -s;
    default:
        return (double)tahq_random_word(RANDOM_SEED, u);
    }
}

static uint64_t n_units(const input *in, int unit)
{
    return unit == U_TILE ? in->N : in->rows;
}

/* units per group of a scope; 0 if the combination does not exist */
static uint64_t group_size(const input *in, int unit, int scope)
{
    switch (scope) {
    case S_TOKEN:
        return unit == U_TILE ? in->T : 0;
    case S_SEQ:
        return (uint64_t)in->shape.seq_len * (unit == U_TILE ? in->T : 1);
    default:
        return n_units(in, unit);
    }
}

/* Mark the low tiles (low[t] = 1) of policy pol at (unit, scope). Count per
 * group: spec_r >= 0: SPEC 4.2's low(n) = floor(n (1000 - r) / 1000) per
 * group; otherwise L units in all, spread evenly (the first L mod groups get
 * one more). Ties: lower index first. Returns the number of low units. */
static uint64_t select_low(const input *in, int pol, int unit, int scope, int spec_r, uint64_t L,
                           uint8_t *low, key *keys)
{
    uint64_t nu = n_units(in, unit), gs = group_size(in, unit, scope), ng = nu / gs;
    uint64_t per = unit == U_TILE ? 1 : in->T, total = 0;
    memset(low, 0, (size_t)in->N);
    for (uint64_t g = 0; g < ng; ++g) {
        uint64_t k =
            spec_r >= 0 ? tahq_low_count(gs, (uint32_t)spec_r) : L / ng + (g < L % ng ? 1u : 0u);
        if (k == 0)
            continue;
        for (uint64_t j = 0; j < gs; ++j) {
            keys[j].i = g * gs + j;
            keys[j].s = unit_score(in, pol, unit, g * gs + j);
        }
        qsort(keys, (size_t)gs, sizeof *keys, key_cmp);
        for (uint64_t j = 0; j < k; ++j)
            memset(low + keys[j].i * per, 1, (size_t)per);
        total += k;
    }
    return total;
}

typedef struct metrics {
    uint64_t low_units, low_tiles, bytes;
    double bpe, rel_mse, tok_mean, tok_max, max_ratio;
} metrics;

static void evaluate(const input *in, const uint8_t *low, metrics *m)
{
    double se = 0.0, tsum = 0.0, tmax = 0.0, mr = 0.0;
    uint64_t lt = 0, nt = 0;
    for (uint64_t r = 0; r < in->rows; ++r) {
        double ts = 0.0;
        for (uint64_t j = 0; j < in->T; ++j) {
            uint64_t t = r * in->T + j;
            int w = low[t] ? 1 : 0;
            lt += (uint64_t)w;
            ts += in->e[w][t];
            if (in->rb[w][t] > mr)
                mr = in->rb[w][t];
        }
        se += ts;
        if (in->xx_tok[r] > 0.0) {
            double v = ts / in->xx_tok[r];
            tsum += v;
            nt++;
            if (v > tmax)
                tmax = v;
        }
    }
    m->low_tiles = lt;
    m->rel_mse = in->xx > 0.0 ? se / in->xx : 0.0;
    m->tok_mean = nt ? tsum / (double)nt : 0.0;
    m->tok_max = tmax;
    m->max_ratio = mr;
}

static uint64_t ceil8(uint64_t b)
{
    return (b + 7u) / 8u;
}

/* Message bytes with a map of map_bits and lt low tiles: the all-high
 * message (no map) plus the map, less G (hi - lo) / 8 bytes per low tile
 * (SPEC 8.2; G (hi - lo) is a multiple of 8 since G >= 8). */
static uint64_t msg_bytes(const input *in, const tahq_config *c, uint64_t map_bits, uint64_t lt)
{
    return (uint64_t)in->len[0] + ceil8(map_bits) -
           lt * ((uint64_t)c->tile * (c->hi_bits - c->lo_bits) / 8u);
}

static uint64_t map_bits_of(const input *in, int unit)
{
    return unit == U_TILE ? in->N : in->rows;
}

/* Fewest low units of a granularity that fit the budget; UINT64_MAX if
 * even all units low do not. */
static uint64_t units_for_budget(const input *in, const tahq_config *c, int unit, uint64_t budget)
{
    uint64_t per = unit == U_TILE ? 1 : in->T;
    uint64_t step = per * ((uint64_t)c->tile * (c->hi_bits - c->lo_bits) / 8u);
    uint64_t full = msg_bytes(in, c, map_bits_of(in, unit), 0);
    if (full <= budget)
        return 0;
    uint64_t L = (full - budget + step - 1u) / step;
    return L > n_units(in, unit) ? UINT64_MAX : L;
}

/* ------------------------------------------------------------------ */
/* The exactness control                                               */
/* ------------------------------------------------------------------ */

typedef struct control {
    const char *alloc;
    uint64_t map_differs, elems_differ, neg_map_differs;
    uint64_t study_bytes, real_bytes;
    double study_rel_mse, real_rel_mse;
    int ok;
} control;

/* The allocations of the control, in the order of alloc_control.csv. */
static const tahq_alloc control_allocs[] = {TAHQ_ALLOC_TILE, TAHQ_ALLOC_TOKEN, TAHQ_ALLOC_GAIN};
#define N_CONTROLS (sizeof control_allocs / sizeof control_allocs[0])

/* Real encode with alloc a at r; compare with the study's reconstruction of
 * the SPEC policy (and of the inverse policy, the negative control): tile =
 * entropy/tile/token, token = entropy/token/sequence, gain =
 * gain/token/sequence. */
static int run_control(const input *in, const tahq_config *base, tahq_alloc a, uint8_t *low,
                       key *keys, control *ct)
{
    memset(ct, 0, sizeof *ct);
    ct->alloc = a == TAHQ_ALLOC_TILE ? "tile" : a == TAHQ_ALLOC_GAIN ? "gain" : "token";
    int unit = a == TAHQ_ALLOC_TILE ? U_TILE : U_TOKEN;
    int scope = a == TAHQ_ALLOC_TILE ? S_TOKEN : S_SEQ;
    int pol = a == TAHQ_ALLOC_GAIN ? P_GAIN : P_ENTROPY;
    int inv = a == TAHQ_ALLOC_GAIN ? P_INV_GAIN : P_INV_ENTROPY;
    tahq_config c = *base;
    c.alloc = a;
    uint8_t *msg = NULL;
    size_t len = 0;
    float *y = NULL;
    uint64_t cnt = 0;
    tahq_tile_info *info = malloc((size_t)in->N * sizeof *info);
    uint8_t *neg = malloc((size_t)in->N);
    if (!info || !neg) {
        free(info);
        free(neg);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    const char *stage = "encode";
    int st = run_encode(&c, &in->shape, in->x, &msg, &len);
    if (st == TAHQ_OK) {
        stage = "decode";
        st = run_decode(msg, len, &y, &cnt);
    }
    if (st == TAHQ_OK) {
        stage = "tile infos";
        st = tahq_tile_infos(msg, len, info, (size_t)in->N);
    }
    free(msg);
    if (st != TAHQ_OK) {
        free(info);
        free(neg);
        free(y);
        return cli_fail(EXIT_RUNTIME, "%s: --alloc %s encode (%s): %s", in->name, ct->alloc, stage,
                        cli_status_text(st));
    }
    select_low(in, inv, unit, scope, (int)base->hi_permille, 0, neg, keys);
    uint64_t nl = select_low(in, pol, unit, scope, (int)base->hi_permille, 0, low, keys);
    const uint32_t G = base->tile;
    for (uint64_t t = 0; t < in->N; ++t) {
        int real_low = info[t].bits == base->lo_bits && base->lo_bits != base->hi_bits;
        ct->map_differs += (uint64_t)(real_low != low[t]);
        ct->neg_map_differs += (uint64_t)(real_low != neg[t]);
        const float *ys = in->y[low[t] ? 1 : 0] + t * G, *yr = y + t * G;
        if (memcmp(ys, yr, G * sizeof(float)) != 0)
            for (uint32_t i = 0; i < G; ++i)
                ct->elems_differ += (uint64_t)(memcmp(&ys[i], &yr[i], sizeof(float)) != 0);
    }
    metrics m;
    evaluate(in, low, &m);
    ct->study_rel_mse = m.rel_mse;
    ct->study_bytes = msg_bytes(in, base, map_bits_of(in, unit), nl * (unit == U_TILE ? 1 : in->T));
    ct->real_bytes = len;
    /* the real relative MSE, summed in the same order (tiles within tokens) */
    double se = 0.0;
    for (uint64_t r = 0; r < in->rows; ++r) {
        double ts = 0.0;
        for (uint64_t j = 0; j < in->T; ++j) {
            uint64_t t = r * in->T + j;
            double s = 0.0;
            for (uint64_t i = t * G; i < (t + 1) * G; ++i) {
                double d = (double)in->x[i] - (double)y[i];
                s += d * d;
            }
            ts += s;
        }
        se += ts;
    }
    ct->real_rel_mse = in->xx > 0.0 ? se / in->xx : 0.0;
    ct->ok = ct->map_differs == 0 && ct->elems_differ == 0 && ct->study_bytes == ct->real_bytes &&
             ct->study_rel_mse == ct->real_rel_mse && in->gate_mismatch == 0;
    free(info);
    free(neg);
    free(y);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

#define CSV_HEADER                                                                          \
    "input,batch,seq_len,channels,G,hi_bits,lo_bits,tau,meta,budget_r,budget_bytes,policy," \
    "label,unit,scope,low_units,low_tiles,low_tile_frac,bytes,bits_per_elem,rel_mse,"       \
    "tok_rel_mse_mean,tok_rel_mse_max,max_err_over_bound,gap_to_oracle\n"

static const char *row_label(int pol, int unit, int scope)
{
    if (pol == P_ENTROPY && unit == U_TILE && scope == S_TOKEN)
        return "spec-tile";
    if (pol == P_ENTROPY && unit == U_TOKEN && scope == S_SEQ)
        return "spec-token";
    return "";
}

typedef struct row {
    int pol, unit, scope; /* pol == P_COUNT: the oracle */
    int reachable;
    metrics m;
} row;

static void csv_rows(FILE *f, const input *in, const tahq_config *c, uint32_t r, uint64_t budget,
                     const row *rows, size_t nrows, double oracle)
{
    char tau[32];
    if (isinf(c->tau))
        snprintf(tau, sizeof tau, "inf");
    else
        snprintf(tau, sizeof tau, "%.9g", (double)c->tau);
    for (size_t k = 0; k < nrows; ++k) {
        const row *w = &rows[k];
        fprintf(f, "%s,%u,%u,%u,%u,%u,%u,%s,%s,%u,%llu,%s,%s,%s,%s,", in->name,
                (unsigned)in->shape.batch, (unsigned)in->shape.seq_len,
                (unsigned)in->shape.channels, (unsigned)c->tile, (unsigned)c->hi_bits,
                (unsigned)c->lo_bits, tau, cli_meta_name(c->meta), (unsigned)r,
                (unsigned long long)budget, w->pol == P_COUNT ? "oracle" : pol_names[w->pol],
                w->pol == P_COUNT ? "oracle" : row_label(w->pol, w->unit, w->scope),
                unit_names[w->unit], w->pol == P_COUNT ? "micro-batch" : scope_names[w->scope]);
        if (!w->reachable) {
            fputs(",,,,,,,,,\n", f);
            continue;
        }
        fprintf(f, "%llu,%llu,", (unsigned long long)w->m.low_units,
                (unsigned long long)w->m.low_tiles);
        cli_csv_number(f, (double)w->m.low_tiles / (double)in->N);
        fprintf(f, ",%llu,", (unsigned long long)w->m.bytes);
        const double v[] = {w->m.bpe,       w->m.rel_mse,
                            w->m.tok_mean,  w->m.tok_max,
                            w->m.max_ratio, oracle > 0.0 ? w->m.rel_mse / oracle - 1.0 : 0.0};
        for (size_t i = 0; i < 6; ++i) {
            if (i)
                fputc(',', f);
            cli_csv_number(f, v[i]);
        }
        fputc('\n', f);
    }
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

typedef struct inputs_opt {
    const char *path[MAX_INPUTS];
    int n;
} inputs_opt;

static int opt_input(const cli_option *opt, const char *v)
{
    inputs_opt *io = opt->dst;
    if (!*v)
        return cli_fail(EXIT_USAGE, "--input needs a file name"), -1;
    if (strpbrk(v, ",\"\n\r"))
        return cli_fail(EXIT_USAGE,
                        "--input %s: a comma, quote or newline in the path would "
                        "break the CSV; rename or link the file",
                        v),
               -1;
    if (io->n == MAX_INPUTS)
        return cli_fail(EXIT_USAGE, "more than %d --input files", MAX_INPUTS), -1;
    io->path[io->n++] = v;
    return 0;
}

typedef struct ratios_opt {
    uint32_t v[MAX_RATIOS];
    int n;
} ratios_opt;

static int opt_ratios(const cli_option *opt, const char *v)
{
    ratios_opt *ro = opt->dst;
    char buf[512];
    if (strlen(v) >= sizeof buf || !*v)
        return cli_fail(EXIT_USAGE, "invalid --ratios '%s' (comma list of permille 0..1000)", v),
               -1;
    strcpy(buf, v);
    ro->n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t r;
        if (cli_parse_u32(tok, 1000u, &r) != 0)
            return cli_fail(EXIT_USAGE, "invalid --ratios value '%s' (permille 0..1000)", tok), -1;
        if (ro->n == MAX_RATIOS)
            return cli_fail(EXIT_USAGE, "more than %d --ratios values", MAX_RATIOS), -1;
        ro->v[ro->n++] = r;
    }
    return 0;
}

static int opt_synth_shape(const cli_option *opt, const char *v)
{
    tahq_shape *s = opt->dst;
    unsigned b, q, c;
    char tail;
    if (sscanf(v, "%ux%ux%u%c", &b, &q, &c, &tail) != 3 || !b || !q || !c ||
        (uint64_t)b * q * c > (UINT64_C(1) << 32))
        return cli_fail(EXIT_USAGE, "invalid --synth-shape '%s' (BxSxC, at most 2^32 elements)", v),
               -1;
    s->batch = b;
    s->seq_len = q;
    s->channels = c;
    return 0;
}

static void study_help(void)
{
    printf("usage: tahq alloc-study [--dist LIST] [--synth-shape BxSxC] [--data-seed N]\n"
           "                        [--input X.npy]... [--batch B] [--seq S]\n"
           "                        [--tile G] [--bits HI/LO] [--ratio R] [--ratios LIST]\n"
           "                        [--tau T] [--meta M] [--out-dir DIR] [--csv FILE]\n"
           "Which tiles should get the low bit width? Compares precision-allocation\n"
           "policies at equal message size (every byte counted: header, precision map,\n"
           "flags, zero-points, scales, codes, pivots) against the exact optimum.\n"
           "Each input is encoded twice with libtahq (all tiles at HI bits, all at LO);\n"
           "since a tile's gate, zero-point and scale do not depend on other tiles'\n"
           "widths, any allocation's error follows exactly from those two encodes.\n"
           "Control, on every input: real --alloc tile, --alloc token and --alloc gain\n"
           "encodes at --ratio must match the study's reconstruction of entropy/tile/token,\n"
           "entropy/token/sequence and gain/token/sequence (precision map, decoded\n"
           "values bit for bit, message length, relative MSE), and the inverse\n"
           "selections (highest entropy, largest gain) must not; otherwise\n"
           "'CONTROL FAIL' and exit 1.\n"
           "Policies (lower score -> LO bits; ties: lower index first):\n");
    for (int p = 0; p < P_COUNT; ++p)
        printf("  %-12s %s\n", pol_names[p], pol_descr[p]);
    printf("  oracle       the exact optimum at the budget: the smallest gains over the\n"
           "               whole tensor, best of tile and token granularity\n"
           "Each policy ranks tiles (one map bit per tile) within a token, a sequence or\n"
           "the micro-batch, or tokens (one map bit per row) within a sequence or the\n"
           "micro-batch. spec-tile = entropy/tile/token (SPEC alloc tile), spec-token =\n"
           "entropy/token/sequence (SPEC alloc token); gain/token/sequence is SPEC alloc\n"
           "gain (the control checks it; not labelled). Budget at share R: the size of the\n"
           "SPEC token message; each policy gets the fewest low units that fit it,\n"
           "spread evenly over the scope's groups. Metrics: relative MSE, mean and max\n"
           "per-token relative MSE, max |error|/bound (SPEC 6), gap to the oracle. Any\n"
           "policy below the oracle prints 'ORACLE BEATEN', any error above its bound\n"
           "'BOUND VIOLATION'; both exit 1.\n"
           "  --dist LIST       synthetic inputs, comma list of gauss,laplace,student-t,llm\n"
           "                    (all four unless --input is given)\n"
           "  --synth-shape S   their shape BxSxC (2x64x1024)\n"
           "  --data-seed N     their seed (1)\n"
           "  --input X         a float32 .npy tensor [B, S, C] (repeatable, up to %d);\n"
           "                    --batch/--seq regroup its rows\n"
           "  --tile G          tile size (64)       --bits HI/LO   widths (4/3)\n"
           "  --ratio R         high share of the main budget and of the control (800)\n"
           "  --ratios LIST     the budgets, permille (0,100,...,1000 and R)\n"
           "  --tau T, --meta M gate threshold (2) and metadata type (fp16)\n"
           "  --rounding M, --seed N  nearest (default) or stochastic rounding, its key\n"
           "  --shape ROWSxC|BxSxC  the shape of a raw float32 (.f32) --input\n"
           "  --out-dir DIR     output directory (build/alloc_study)\n"
           "  --csv FILE        one row per input, budget, policy, unit and scope\n"
           "                    (DIR/alloc_study.csv); DIR/alloc_control.csv has the controls\n"
           "  --json            the summary as one JSON object on standard output (every\n"
           "                    policy at the --ratio budget, per input) in place of the text\n"
           "Exit status: 0 ok, 1 a failed check or runtime error, 2 usage error.\n",
           MAX_INPUTS);
}

/* ------------------------------------------------------------------ */
/* The command                                                         */
/* ------------------------------------------------------------------ */

/* One input at every budget: rows to the CSV, checks counted. */
static int study_input(FILE *csv, const input *in, const tahq_config *cfg, const ratios_opt *ro,
                       uint64_t *n_beaten, uint64_t *n_over, row *best_at_main)
{
    key *keys = malloc((size_t)in->N * sizeof *keys);
    uint8_t *low = malloc((size_t)in->N);
    if (!keys || !low) {
        free(keys);
        free(low);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    for (int k = 0; k < ro->n; ++k) {
        uint32_t r = ro->v[k];
        uint64_t budget =
            msg_bytes(in, cfg, in->rows,
                      (uint64_t)in->shape.batch * tahq_low_count(in->shape.seq_len, r) * in->T);
        row rows[P_COUNT * 5 + 1];
        size_t nr = 0;
        uint64_t L[U_COUNT];
        for (int u = 0; u < U_COUNT; ++u)
            L[u] = units_for_budget(in, cfg, u, budget);
        for (int p = 0; p < P_COUNT; ++p)
            for (int u = 0; u < U_COUNT; ++u)
                for (int s = 0; s < S_COUNT; ++s) {
                    if (group_size(in, u, s) == 0)
                        continue;
                    row *w = &rows[nr++];
                    memset(w, 0, sizeof *w);
                    w->pol = p;
                    w->unit = u;
                    w->scope = s;
                    w->reachable = L[u] != UINT64_MAX;
                    if (!w->reachable)
                        continue;
                    uint64_t nl = select_low(in, p, u, s, -1, L[u], low, keys);
                    evaluate(in, low, &w->m);
                    w->m.low_units = nl;
                }
        /* the oracle: per granularity, the max(L, #negative gains) smallest gains */
        row *o = &rows[nr++];
        memset(o, 0, sizeof *o);
        o->pol = P_COUNT;
        for (int u = 0; u < U_COUNT; ++u) {
            if (L[u] == UINT64_MAX)
                continue;
            uint64_t nneg = 0, nu = n_units(in, u);
            for (uint64_t j = 0; j < nu; ++j)
                nneg += (uint64_t)(unit_score(in, P_GAIN, u, j) < 0.0);
            uint64_t cnt = nneg > L[u] ? nneg : L[u];
            metrics m;
            uint64_t nl = select_low(in, P_GAIN, u, S_MB, -1, cnt, low, keys);
            evaluate(in, low, &m);
            m.low_units = nl;
            m.bytes = msg_bytes(in, cfg, map_bits_of(in, u), m.low_tiles);
            if (!o->reachable || m.rel_mse < o->m.rel_mse) {
                o->m = m;
                o->unit = u;
                o->reachable = 1;
            }
        }
        for (size_t j = 0; j < nr; ++j) {
            row *w = &rows[j];
            if (!w->reachable)
                continue;
            if (w->pol != P_COUNT)
                w->m.bytes = msg_bytes(in, cfg, map_bits_of(in, w->unit), w->m.low_tiles);
            w->m.bpe = (double)w->m.bytes * 8.0 / (double)in->n;
            if (w->m.bytes > budget) {
                /* cannot happen by construction (units_for_budget); a failure if it does */
                (*n_beaten)++;
                fprintf(stderr,
                        "tahq alloc-study: FAIL: %s, r=%u: %s/%s/%s takes %llu bytes, "
                        "over the budget %llu\n",
                        in->name, (unsigned)r, w->pol == P_COUNT ? "oracle" : pol_names[w->pol],
                        unit_names[w->unit], scope_names[w->scope], (unsigned long long)w->m.bytes,
                        (unsigned long long)budget);
            }
            if (w->m.max_ratio > 1.0) {
                (*n_over)++;
                fprintf(stderr, "BOUND VIOLATION: %s, r=%u, %s/%s/%s: max |error|/bound %.17g\n",
                        in->name, (unsigned)r, w->pol == P_COUNT ? "oracle" : pol_names[w->pol],
                        unit_names[w->unit], scope_names[w->scope], w->m.max_ratio);
            }
        }
        double orc = o->reachable ? o->m.rel_mse : NAN;
        /* Tolerance of the oracle check. Every total is sum_t e[w_t][t] over
         * the N tiles in one order (evaluate), with the same per-tile values
         * e; a recursive sum of N non-negative doubles is within (N-1) u of
         * the exact sum (u = 2^-53), so two totals whose exact values are
         * ordered a <= b compare as computed a > b only if
         * a - b <= 2 (N-1) u max(a, b); the division by the same xx keeps
         * the order. Beaten means below the oracle by more than that. */
        double tol = 2.0 * (double)in->N * 0x1p-53;
        for (size_t j = 0; j + 1 < nr && o->reachable; ++j) {
            const row *w = &rows[j];
            if (!w->reachable || !(w->m.rel_mse < orc * (1.0 - tol)))
                continue;
            (*n_beaten)++;
            fprintf(stderr,
                    "ORACLE BEATEN: %s, r=%u: %s/%s/%s relMSE %.17g < oracle %.17g at %llu <= "
                    "%llu bytes\n",
                    in->name, (unsigned)r, pol_names[w->pol], unit_names[w->unit],
                    scope_names[w->scope], w->m.rel_mse, orc, (unsigned long long)w->m.bytes,
                    (unsigned long long)budget);
        }
        csv_rows(csv, in, cfg, r, budget, rows, nr, orc);
        if (r == cfg->hi_permille && best_at_main)
            memcpy(best_at_main, rows, nr * sizeof *rows);
    }
    free(keys);
    free(low);
    return 0;
}

#define N_ROWS (P_COUNT * 5 + 1)

static void print_summary(const input *in, const row *rows)
{
    double orc = rows[N_ROWS - 1].m.rel_mse;
    const row *st = NULL, *sk = NULL;
    for (int j = 0; j < N_ROWS - 1; ++j) {
        if (rows[j].pol == P_ENTROPY && rows[j].unit == U_TILE && rows[j].scope == S_TOKEN)
            st = &rows[j];
        if (rows[j].pol == P_ENTROPY && rows[j].unit == U_TOKEN && rows[j].scope == S_SEQ)
            sk = &rows[j];
    }
    printf("  %s [%u, %u, %u], %.2f%% tiles flagged: oracle relMSE %.4e (%s granularity)\n",
           in->name, (unsigned)in->shape.batch, (unsigned)in->shape.seq_len,
           (unsigned)in->shape.channels, 100.0 * (double)in->n_flagged / (double)in->N, orc,
           unit_names[rows[N_ROWS - 1].unit]);
    if (!st || !sk || !st->reachable || !sk->reachable)
        return;
    printf("    SPEC tile %.4e (+%.1f%%), SPEC token %.4e (+%.1f%%)\n", st->m.rel_mse,
           100.0 * (st->m.rel_mse / orc - 1.0), sk->m.rel_mse, 100.0 * (sk->m.rel_mse / orc - 1.0));
    const row *best = NULL;
    for (int j = 0; j < N_ROWS - 1; ++j)
        if (rows[j].reachable && rows[j].pol != P_GAIN &&
            (!best || rows[j].m.rel_mse < best->m.rel_mse))
            best = &rows[j];
    if (best)
        printf("    best non-gain policy: %s/%s/%s %.4e (+%.1f%%), %s both SPEC policies\n",
               pol_names[best->pol], unit_names[best->unit], scope_names[best->scope],
               best->m.rel_mse, 100.0 * (best->m.rel_mse / orc - 1.0),
               best->m.rel_mse < st->m.rel_mse && best->m.rel_mse < sk->m.rel_mse
                   ? "beats"
                   : "does not beat");
}

/* --json: the summary as one JSON object (every policy at the main budget,
 * per input), in place of the text. */
static json_t *summary_json(const input *ins, int ni, row (*rows)[N_ROWS], const tahq_config *cfg,
                            int n_budgets, uint64_t n_ctl_fail, uint64_t n_beaten, uint64_t n_over,
                            const char *csv_path, const char *ctl_path)
{
    json_t *jins = json_array();
    for (int k = 0; k < ni && jins; ++k) {
        const input *in = &ins[k];
        const double orc = rows[k][N_ROWS - 1].m.rel_mse;
        json_t *jrows = json_array();
        for (int j = 0; j < N_ROWS && jrows; ++j) {
            const row *w = &rows[k][j];
            const int oracle = w->pol == P_COUNT;
            json_array_append_new(
                jrows,
                json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "policy",
                          oracle ? "oracle" : pol_names[w->pol], "label",
                          oracle ? "oracle" : row_label(w->pol, w->unit, w->scope), "unit",
                          unit_names[w->unit], "scope",
                          oracle ? "micro-batch" : scope_names[w->scope], "reachable", w->reachable,
                          "bytes", cli_ju64(w->m.bytes), "bits_per_element", cli_jnum(w->m.bpe),
                          "rel_mse", cli_jnum(w->m.rel_mse), "gap_to_oracle",
                          cli_jnum(w->m.rel_mse / orc - 1.0), "token_rel_mse_mean",
                          cli_jnum(w->m.tok_mean), "token_rel_mse_max", cli_jnum(w->m.tok_max),
                          "max_error_over_bound", cli_jnum(w->m.max_ratio)));
        }
        json_array_append_new(jins, json_pack("{s:s, s:o, s:o, s:o}", "name", in->name, "shape",
                                              cli_jshape(&in->shape), "flagged_share",
                                              cli_jnum((double)in->n_flagged / (double)in->N),
                                              "at_main_budget", jrows));
    }
    return json_pack("{s:s, s:o, s:i, s:b, s:b, s:b, s:o, s:o, s:o, s:b}", "command", "alloc-study",
                     "config", cli_jconfig(cfg), "budgets", n_budgets, "control_exact",
                     n_ctl_fail == 0, "oracle_never_beaten", n_beaten == 0, "within_bound",
                     n_over == 0, "inputs", jins, "csv", cli_jstr(csv_path), "control_csv",
                     cli_jstr(ctl_path), "ok", !n_ctl_fail && !n_beaten && !n_over);
}

/* The tensors of the chosen distributions (of shape synth) and of every
 * --input, each checked: every input is loaded before anything is written.
 * 0 or the exit status after a message; ins[0..*nip) is the caller's to
 * free either way. */
static int load_inputs(input *ins, int *nip, const int use[DIST_COUNT], const inputs_opt *io,
                       enc_opts *o, tahq_shape synth, uint64_t data_seed)
{
    int ni = 0, rc = 0;
    for (int d = 0; d < DIST_COUNT && !rc; ++d) {
        if (!use[d])
            continue;
        input *in = &ins[ni++];
        memset(in, 0, sizeof *in);
        snprintf(in->name, sizeof in->name, "%s", dist_name((dist_kind)d));
        in->descr = dist_description((dist_kind)d);
        in->shape = synth;
        in->n = shape_count(&synth);
        in->x = malloc((size_t)in->n * sizeof(float));
        if (!in->x || dist_fill((dist_kind)d, in->x, synth.batch, synth.seq_len, synth.channels,
                                data_seed) != 0)
            rc = cli_fail(EXIT_RUNTIME, "out of memory");
    }
    for (int k = 0; k < io->n && !rc; ++k) {
        input *in = &ins[ni++];
        memset(in, 0, sizeof *in);
        npy_tensor t;
        if ((rc = load_input(io->path[k], o, &t, &in->shape)) != 0)
            break;
        snprintf(in->name, sizeof in->name, "%s", io->path[k]);
        in->descr = io->path[k];
        in->x = t.data;
        in->n = t.count;
    }
    for (int k = 0; k < ni && !rc; ++k)
        rc = input_check(&ins[k], &o->cfg);
    if (!rc && ni == 0)
        rc = cli_fail(EXIT_USAGE, "no input: give --dist or --input");
    *nip = ni;
    return rc;
}

/* The exact controls (real --alloc tile/token/gain encodes against the
 * study's reconstruction, and the inverse ranking that must differ) of
 * every input, one CSV line each at ctl_path; *n_ctl_fail counts the
 * failures, each reported on stderr. 0 or the exit status after a message. */
static int write_controls(const char *ctl_path, input *ins, int ni, const tahq_config *cfg,
                          uint64_t *n_ctl_fail)
{
    int rc;
    cli_out co;
    if ((rc = cli_out_open(&co, ctl_path)) != 0)
        return rc;
    fputs("input,batch,seq_len,channels,alloc,r,study_bytes,real_bytes,map_tiles_differ,decoded_"
          "elems_differ,"
          "gate_mismatch,study_rel_mse,real_rel_mse,inverse_map_tiles_differ,ok\n",
          co.f);
    for (int k = 0; k < ni; ++k) {
        input *in = &ins[k];
        key *kk = malloc((size_t)in->N * sizeof *kk);
        uint8_t *low = malloc((size_t)in->N);
        if (!kk || !low) {
            free(kk);
            free(low);
            cli_out_abort(&co);
            rc = cli_fail(EXIT_RUNTIME, "out of memory");
            return rc;
        }
        for (size_t a = 0; a < N_CONTROLS; ++a) {
            control ct;
            rc = run_control(in, cfg, control_allocs[a], low, kk, &ct);
            if (rc)
                break;
            /* the negative control must see a difference, unless the two
             * directions coincide: no low unit, or every unit low, per group */
            uint64_t gsz = control_allocs[a] == TAHQ_ALLOC_TILE ? in->T : in->shape.seq_len;
            uint64_t kl = tahq_low_count(gsz, cfg->hi_permille);
            int neg_ok = ct.neg_map_differs > 0 || kl == 0 || kl == gsz;
            fprintf(co.f, "%s,%u,%u,%u,%s,%u,%llu,%llu,%llu,%llu,%llu,%.17g,%.17g,%llu,%d\n",
                    in->name, (unsigned)in->shape.batch, (unsigned)in->shape.seq_len,
                    (unsigned)in->shape.channels, ct.alloc, (unsigned)cfg->hi_permille,
                    (unsigned long long)ct.study_bytes, (unsigned long long)ct.real_bytes,
                    (unsigned long long)ct.map_differs, (unsigned long long)ct.elems_differ,
                    (unsigned long long)in->gate_mismatch, ct.study_rel_mse, ct.real_rel_mse,
                    (unsigned long long)ct.neg_map_differs, ct.ok && neg_ok);
            if (!ct.ok || !neg_ok) {
                (*n_ctl_fail)++;
                fprintf(stderr,
                        "CONTROL FAIL: %s, --alloc %s r=%u: %llu map tiles and %llu decoded "
                        "elements differ, gate mismatch %llu, bytes %llu vs %llu, relMSE "
                        "%.17g vs %.17g, inverse differs in %llu tiles\n",
                        in->name, ct.alloc, (unsigned)cfg->hi_permille,
                        (unsigned long long)ct.map_differs, (unsigned long long)ct.elems_differ,
                        (unsigned long long)in->gate_mismatch, (unsigned long long)ct.study_bytes,
                        (unsigned long long)ct.real_bytes, ct.study_rel_mse, ct.real_rel_mse,
                        (unsigned long long)ct.neg_map_differs);
            }
        }
        free(kk);
        free(low);
        if (rc) {
            cli_out_abort(&co);
            return rc;
        }
    }
    if (ferror(co.f))
        co.failed = 1;
    if ((rc = cli_out_commit(&co)) != 0)
        return rc;
    return 0;
}

int cmd_alloc_study(int argc, char **argv)
{
    const char *dist_list = NULL, *out_dir = "build/alloc_study", *csv_path = NULL;
    inputs_opt io = {{0}, 0};
    ratios_opt ro = {{0}, 0};
    tahq_shape synth = {2, 64, 1024};
    uint64_t data_seed = 1;
    enc_opts o;
    enc_opts_init(&o);
    int npos = 0, json = 0;
    cli_option own[] = {CLI_OPT("--dist", cli_opt_nonempty, &dist_list),
                        CLI_OPT("--synth-shape", opt_synth_shape, &synth),
                        CLI_OPT("--data-seed", cli_opt_u64, &data_seed),
                        CLI_OPT_REPEAT("--input", opt_input, &io),
                        CLI_OPT("--ratios", opt_ratios, &ro),
                        CLI_OPT("--out-dir", cli_opt_nonempty, &out_dir),
                        CLI_OPT("--csv", cli_opt_nonempty, &csv_path),
                        CLI_FLAG("--json", &json),
                        CLI_END};
    cli_option enc[ENC_CONFIG_OPTIONS + 1];
    enc_config_options(&o, enc);
    cli_option shp[SHAPE_OPTIONS + 1];
    shape_options(&o, shp);
    const cli_option *const tables[] = {own, enc, shp, NULL};
    int prc = cli_parse(argc, argv, tables, NULL, 0, &npos);
    if (prc == CLI_HELP) {
        study_help();
        return 0;
    }
    if (prc)
        return prc;
    /* the allocation is what is studied; the rounding must be nearest-even
     * for the exact control to mean what it says (stochastic rounding is
     * independent of other tiles too, but the study does not vary it) */
    if (o.cfg.alloc != TAHQ_ALLOC_TOKEN)
        return cli_fail(EXIT_USAGE, "--alloc: the study compares allocations itself; leave it out");
    if (o.cfg.lo_bits >= o.cfg.hi_bits)
        return cli_fail(EXIT_USAGE, "--bits %u/%u: the study needs LO < HI",
                        (unsigned)o.cfg.hi_bits, (unsigned)o.cfg.lo_bits);
    int rc = enc_opts_check(&o);
    if (rc)
        return rc;
    if (io.n == 0 && (o.shape_text || o.batch || o.seq))
        return cli_fail(EXIT_USAGE, "--shape, --batch and --seq need --input");
    if (ro.n == 0)
        for (uint32_t r = 0; r <= 1000; r += 100)
            ro.v[ro.n++] = r;
    int have_main = 0;
    for (int k = 0; k < ro.n; ++k)
        have_main |= ro.v[k] == o.cfg.hi_permille;
    if (!have_main) {
        if (ro.n == MAX_RATIOS)
            return cli_fail(EXIT_USAGE, "--ratios: no room for --ratio %u",
                            (unsigned)o.cfg.hi_permille);
        ro.v[ro.n++] = o.cfg.hi_permille;
    }
    int use[DIST_COUNT];
    for (int d = 0; d < DIST_COUNT; ++d)
        use[d] = io.n ? 0 : 1;
    if (dist_list && (rc = dist_parse_list(dist_list, use)) != 0)
        return rc;
    if (synth.channels % o.cfg.tile != 0 && (dist_list || !io.n))
        return cli_fail(EXIT_USAGE, "--synth-shape: C = %u is not a multiple of --tile %u",
                        (unsigned)synth.channels, (unsigned)o.cfg.tile);

    char csv_buf[4096], ctl_buf[4096];
    if (!csv_path) {
        snprintf(csv_buf, sizeof csv_buf, "%s/alloc_study.csv", out_dir);
        csv_path = csv_buf;
    }
    snprintf(ctl_buf, sizeof ctl_buf, "%s/alloc_control.csv", out_dir);

    /* load every input first: a bad one fails before anything is written */
    static input ins[MAX_INPUTS + DIST_COUNT];
    int ni = 0;
    rc = load_inputs(ins, &ni, use, &io, &o, synth, data_seed);
    double t0 = cli_now();
    for (int k = 0; k < ni && !rc; ++k) {
        fprintf(stderr, "tahq alloc-study: encoding %s (%d/%d), %.1f s\n", ins[k].name, k + 1, ni,
                cli_now() - t0);
        rc = input_prepare(&ins[k], &o.cfg);
    }
    if (rc)
        goto out;
    if (cli_mkdir_p(out_dir) != 0) {
        rc = cli_fail(EXIT_RUNTIME, "%s: cannot create directory: %s", out_dir, strerror(errno));
        goto out;
    }

    /* the controls */
    uint64_t n_ctl_fail = 0;
    if ((rc = write_controls(ctl_buf, ins, ni, &o.cfg, &n_ctl_fail)) != 0)
        goto out;

    /* the study */
    uint64_t n_beaten = 0, n_over = 0;
    static row main_rows[MAX_INPUTS + DIST_COUNT][N_ROWS];
    {
        cli_out co;
        if ((rc = cli_out_open(&co, csv_path)) != 0)
            goto out;
        fputs(CSV_HEADER, co.f);
        for (int k = 0; k < ni && !rc; ++k)
            rc = study_input(co.f, &ins[k], &o.cfg, &ro, &n_beaten, &n_over, main_rows[k]);
        if (rc) {
            cli_out_abort(&co);
            goto out;
        }
        if (ferror(co.f))
            co.failed = 1;
        if ((rc = cli_out_commit(&co)) != 0)
            goto out;
    }

    rc = (n_ctl_fail || n_beaten || n_over) ? EXIT_RUNTIME : 0;
    if (json) {
        int jrc = cli_json_print(stdout, summary_json(ins, ni, main_rows, &o.cfg, ro.n, n_ctl_fail,
                                                      n_beaten, n_over, csv_path, ctl_buf));
        rc = rc ? rc : jrc;
        goto out;
    }
    char txt[160];
    cli_config_text(&o.cfg, txt, sizeof txt);
    printf("tahq alloc-study: %d inputs x %d budgets, %s, %.1f s\n", ni, ro.n, txt, cli_now() - t0);
    printf("control (real --alloc tile/token/gain encodes at r=%u vs the study's reconstruction): "
           "%s\n",
           (unsigned)o.cfg.hi_permille,
           n_ctl_fail ? "FAIL" : "exact on every input (same map, decoded bits, bytes, relMSE)");
    printf("at the r=%u budget (relMSE; gap to the oracle):\n", (unsigned)o.cfg.hi_permille);
    for (int k = 0; k < ni; ++k)
        print_summary(&ins[k], main_rows[k]);
    printf("oracle never beaten: %s; every error within its SPEC 6 bound: %s\n",
           n_beaten ? "NO" : "yes", n_over ? "NO" : "yes");
    printf("wrote %s, %s\n", csv_path, ctl_buf);
out:
    for (int k = 0; k < ni; ++k)
        input_free(&ins[k]);
    return rc;
}
