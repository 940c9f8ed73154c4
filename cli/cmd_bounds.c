/* SPDX-License-Identifier: MIT */
/* cmd_bounds.c - tahq bounds: error per bit budget over a sweep of
 * configurations and input distributions, against the SPEC §6 bound.
 *
 * For every (distribution, configuration) point the tensor is encoded and
 * decoded with libtahq, the per-element bound comes from tahq_error_bound,
 * and the statistics (relative MSE, SQNR, max |error|, max |error|/bound,
 * summaries of the bound, stochastic-rounding bias and variance) are
 * computed here in double. Bits per element count the whole message
 * (header, map, flags, zero-points, scales, codes, pivots) and are checked
 * against the SPEC §8.2 size formula recomputed from the parsed header.
 * Any element above its bound is a failure: a "BOUND VIOLATION" line on
 * stderr and exit status 1. The points run on a pool of threads; results
 * are stored by point index, so every output file is the same for any
 * number of threads. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec_ops.h"
#include "commands.h"
#include "dist_gen.h"
#include "npy.h"
#include "tahq_datadir.h"
#include "tahq_jobs.h"
#include "util.h"

#define SR_SEED UINT64_C(0x5eed)
#define SR_Z_LIMIT 6.0 /* stochastic-rounding statistics: failure beyond 6 sigma */
#define MAX_DISTS (DIST_COUNT + 1)

/* ------------------------------------------------------------------ */
/* Configurations                                                      */
/* ------------------------------------------------------------------ */

typedef struct bconf {
    const char *set; /* which part of the sweep added it */
    tahq_config cfg;
    size_t first; /* index of the first identical configuration */
} bconf;

typedef struct conf_list {
    bconf *v;
    size_t n, cap;
} conf_list;

static int same_cfg(const tahq_config *a, const tahq_config *b)
{
    uint32_t ta, tb;
    memcpy(&ta, &a->tau, 4);
    memcpy(&tb, &b->tau, 4);
    return a->tile == b->tile && a->hi_bits == b->hi_bits && a->lo_bits == b->lo_bits &&
           a->hi_permille == b->hi_permille && a->alloc == b->alloc && ta == tb &&
           a->rounding == b->rounding && a->seed == b->seed && a->meta == b->meta;
}

static int add_conf(conf_list *l, const char *set, uint32_t G, uint32_t hi, uint32_t lo, uint32_t r,
                    tahq_alloc alloc, float tau, tahq_rounding rnd, tahq_meta meta)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 256;
        bconf *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = nc;
    }
    bconf *b = &l->v[l->n];
    b->set = set;
    tahq_config_default(&b->cfg);
    b->cfg.tile = G;
    b->cfg.hi_bits = hi;
    b->cfg.lo_bits = lo;
    b->cfg.hi_permille = r;
    b->cfg.alloc = alloc;
    b->cfg.tau = tau;
    b->cfg.rounding = rnd;
    b->cfg.seed = rnd == TAHQ_ROUND_STOCHASTIC ? SR_SEED : 0;
    b->cfg.meta = meta;
    b->first = l->n;
    for (size_t i = 0; i < l->n; ++i)
        if (same_cfg(&l->v[i].cfg, &b->cfg)) {
            b->first = i;
            break;
        }
    l->n++;
    return 0;
}

static const uint32_t tiles[] = {16, 32, 64, 128, 256};
#define N_TILES (sizeof tiles / sizeof tiles[0])

/* The bit-pair grid: G x (hi, lo) with 2 <= hi <= 8, 1 <= lo <= hi;
 * r in {500, 800} when lo < hi, r = 1000 when lo = hi (r is moot there). */
static int add_grid(conf_list *l, const char *set, tahq_alloc alloc, float tau, tahq_rounding rnd,
                    tahq_meta meta)
{
    static const uint32_t ratios[] = {500, 800};
    for (size_t g = 0; g < N_TILES; ++g)
        for (uint32_t hi = 2; hi <= 8; ++hi)
            for (uint32_t lo = 1; lo <= hi; ++lo) {
                if (lo == hi) {
                    if (add_conf(l, set, tiles[g], hi, lo, 1000, alloc, tau, rnd, meta))
                        return -1;
                    continue;
                }
                for (size_t k = 0; k < 2; ++k)
                    if (add_conf(l, set, tiles[g], hi, lo, ratios[k], alloc, tau, rnd, meta))
                        return -1;
            }
    return 0;
}

static int build_configs(conf_list *l, int full)
{
    static const float taus[] = {2.0f, 0.0f, INFINITY};
    static const tahq_alloc allocs[] = {TAHQ_ALLOC_TOKEN, TAHQ_ALLOC_TILE, TAHQ_ALLOC_NONE};
    static const tahq_meta metas[] = {TAHQ_META_FP16, TAHQ_META_BF16, TAHQ_META_FP32};
    /* 1. ablation at the paper operating point (G=64, 4/3, r=800) */
    for (int t = 0; t < 3; ++t)
        for (int a = 0; a < 3; ++a)
            for (int rnd = 0; rnd < 2; ++rnd)
                for (int m = 0; m < 3; ++m)
                    if (add_conf(l, "ablation", 64, 4, 3, 800, allocs[a], taus[t],
                                 (tahq_rounding)rnd, metas[m]))
                        return -1;
    /* 2. high-precision share: token vs tile allocation on one budget axis */
    uint32_t step = full ? 25u : 50u;
    for (int a = 0; a < 2; ++a)
        for (uint32_t r = 0; r <= 1000; r += step)
            if (add_conf(l, "ratio", 64, 4, 3, r, allocs[a], 2.0f, TAHQ_ROUND_NEAREST_EVEN,
                         TAHQ_META_FP16))
                return -1;
    /* 3. the bit-pair grid (the Pareto curves) */
    if (add_grid(l, "grid", TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16))
        return -1;
    if (!full)
        return 0;
    /* 4. --full: the grid again under each other gate, allocation, rounding, meta */
    if (add_grid(l, "grid-tile", TAHQ_ALLOC_TILE, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16) ||
        add_grid(l, "grid-none", TAHQ_ALLOC_NONE, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16) ||
        add_grid(l, "grid-tau0", TAHQ_ALLOC_TOKEN, 0.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16) ||
        add_grid(l, "grid-tauinf", TAHQ_ALLOC_TOKEN, INFINITY, TAHQ_ROUND_NEAREST_EVEN,
                 TAHQ_META_FP16) ||
        add_grid(l, "grid-sr", TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_ROUND_STOCHASTIC, TAHQ_META_FP16) ||
        add_grid(l, "grid-bf16", TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_BF16) ||
        add_grid(l, "grid-fp32", TAHQ_ALLOC_TOKEN, 2.0f, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP32))
        return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* One point                                                           */
/* ------------------------------------------------------------------ */

typedef struct result {
    int done;
    int skipped; /* shape does not fit the configuration */
    int status;  /* library status (TAHQ_OK if none) */
    const char *stage;
    size_t bytes;
    uint64_t payload_hdr, payload_formula, n_low_formula;
    int size_ok;
    double bpe;
    uint64_t n_low, n_flagged, n_tiles;
    rt_stats s;
    double bound_mean, bound_max, rel_mse_bound, ratio_mean;
    /* stochastic rounding, unflagged tiles, error in units of the scale */
    uint64_t sr_n;
    double sr_mean, sr_var, sr_pred_var, sr_bias_z, sr_var_z;
    int sr_ok;
    int on_front;
    int ok;
} result;

static uint64_t ceil8(uint64_t bits)
{
    return (bits + 7u) / 8u;
}

static uint64_t low_units(uint64_t n, uint32_t r)
{
    return n * (1000u - r) / 1000u;
}

/* SPEC §8.2 payload size from the parsed header (independent of the library). */
static void size_formula(const tahq_header *h, uint64_t *payload, uint64_t *n_low)
{
    const tahq_config *c = &h->config;
    uint64_t rows = (uint64_t)h->shape.batch * h->shape.seq_len;
    uint64_t T = h->shape.channels / c->tile;
    uint64_t N = rows * T, map_bits = 0, n_lo_tiles = 0, k = 0;
    for (uint32_t g = c->tile; g > 1u; g >>= 1)
        k++;
    uint64_t mb = c->meta == TAHQ_META_FP32 ? 4u : 2u;
    switch (c->alloc) {
    case TAHQ_ALLOC_NONE:
        *n_low = 0;
        break;
    case TAHQ_ALLOC_TOKEN:
    case TAHQ_ALLOC_GAIN:
        *n_low = (uint64_t)h->shape.batch * low_units(h->shape.seq_len, c->hi_permille);
        map_bits = rows;
        n_lo_tiles = h->n_low * T;
        break;
    case TAHQ_ALLOC_TILE:
        *n_low = rows * low_units(T, c->hi_permille);
        map_bits = N;
        n_lo_tiles = h->n_low;
        break;
    }
    uint64_t n_hi_tiles = N - n_lo_tiles;
    *payload = ceil8(map_bits) + ceil8(N) + 2u * N * mb +
               (n_hi_tiles * c->tile * c->hi_bits + n_lo_tiles * c->tile * c->lo_bits) / 8u +
               ceil8(h->n_flagged * k);
}

static void run_point(const tahq_config *cfg, const tahq_shape *shape, const float *x, uint64_t n,
                      int input_mode, result *r)
{
    memset(r, 0, sizeof *r);
    r->done = 1;
    r->stage = "";
    r->sr_ok = 1;
    if (tahq_check_shape(cfg, shape) != TAHQ_OK) {
        r->skipped = 1;
        r->ok = 1;
        return;
    }
    uint8_t *msg = NULL;
    size_t len = 0;
    float *y = NULL;
    double *bound = NULL;
    tahq_tile_info *info = NULL;
    uint64_t cnt = 0;
    tahq_header h;
    int st;
    if ((st = run_encode(cfg, shape, x, &msg, &len)) != TAHQ_OK) {
        r->stage = "encode";
        goto done;
    }
    if ((st = tahq_parse_header(msg, len, &h)) != TAHQ_OK) {
        r->stage = "parse_header";
        goto done;
    }
    r->bytes = len;
    r->bpe = (double)len * 8.0 / (double)n;
    r->n_low = h.n_low;
    r->n_flagged = h.n_flagged;
    r->n_tiles = n / cfg->tile;
    r->payload_hdr = h.payload_bytes;
    size_formula(&h, &r->payload_formula, &r->n_low_formula);
    r->size_ok = TAHQ_HEADER_BYTES + r->payload_formula == len &&
                 h.payload_bytes == r->payload_formula && h.n_low == r->n_low_formula;
    if ((st = run_decode(msg, len, &y, &cnt)) != TAHQ_OK) {
        r->stage = "decode";
        goto done;
    }
    if (cnt != n) {
        st = TAHQ_ERR_SHAPE;
        r->stage = "decode (count)";
        goto done;
    }
    if ((st = run_tile_bound(msg, len, n / cfg->tile, &bound)) != TAHQ_OK) {
        r->stage = "error_bound";
        goto done;
    }
    compute_stats(x, y, bound, cfg->tile, n, &r->s);
    if ((st = check_flagged_tiles_l2(msg, len, x, y, bound, n, &r->s)) != TAHQ_OK) {
        r->stage = "tile L2 check";
        goto done;
    }
    double sb = 0.0, sb2 = 0.0, sratio = 0.0;
    for (uint64_t i = 0; i < n; ++i) {
        double b = bound[i / cfg->tile];
        sb += b;
        sb2 += b * b;
        if (b > r->bound_max)
            r->bound_max = b;
        if (b > 0.0)
            sratio += fabs((double)x[i] - (double)y[i]) / b;
    }
    r->bound_mean = sb / (double)n;
    r->ratio_mean = sratio / (double)n;
    r->rel_mse_bound = r->s.sum_sq_x > 0.0 ? sb2 / r->s.sum_sq_x : (sb2 > 0.0 ? INFINITY : 0.0);

    if (cfg->rounding == TAHQ_ROUND_STOCHASTIC) {
        /* u = (x^ - x) / s on unflagged tiles with s > 0; theory (SPEC §5.4):
         * E[u] = beta in [0, 2^-24), Var[u] = phi (1 - phi) <= 1/4 with phi the
         * fraction of t = (x - z) / s. */
        uint64_t nt = r->n_tiles;
        info = malloc((size_t)nt * sizeof *info);
        if (!info) {
            st = CLI_ERR_NOMEM;
            r->stage = "tile_infos";
            goto done;
        }
        if ((st = tahq_tile_infos(msg, len, info, (size_t)nt)) != TAHQ_OK) {
            r->stage = "tile_infos";
            goto done;
        }
        double su = 0.0, su2 = 0.0, sp = 0.0, sv4 = 0.0;
        uint64_t m = 0;
        for (uint64_t t = 0; t < nt; ++t) {
            if (info[t].flagged || !(info[t].scale > 0.0f))
                continue;
            double z = info[t].zero, s = info[t].scale;
            for (uint64_t i = t * cfg->tile; i < (t + 1u) * cfg->tile; ++i) {
                double tt = ((double)x[i] - z) / s;
                double phi = tt - floor(tt);
                double u = ((double)y[i] - (double)x[i]) / s;
                double pv = phi * (1.0 - phi);
                su += u;
                su2 += u * u;
                sp += pv;
                sv4 += pv * (1.0 - 2.0 * phi) * (1.0 - 2.0 * phi);
                m++;
            }
        }
        r->sr_n = m;
        if (m) {
            r->sr_mean = su / (double)m;
            r->sr_var = su2 / (double)m - r->sr_mean * r->sr_mean;
            r->sr_pred_var = sp / (double)m;
            r->sr_bias_z = sp > 0.0 ? su / sqrt(sp) : 0.0;
            r->sr_var_z = sv4 > 0.0 ? (su2 - sp) / sqrt(sv4) : 0.0;
            r->sr_ok = fabs(r->sr_bias_z) <= SR_Z_LIMIT && fabs(r->sr_var_z) <= SR_Z_LIMIT &&
                       r->sr_pred_var <= 0.25;
        }
    }
done:
    r->status = st;
    if (input_mode && st == TAHQ_ERR_RANGE && strcmp(r->stage, "encode") == 0) {
        /* the user tensor does not fit the metadata type: not a codec failure */
        r->ok = 1;
    } else {
        r->ok = st == TAHQ_OK && r->size_ok && r->s.n_over_bound == 0 &&
                r->s.n_tiles_over_l2 == 0 && r->sr_ok;
    }
    free(msg);
    free(y);
    free(bound);
    free(info);
}

/* ------------------------------------------------------------------ */
/* The sweep: the job pool over the points                            */
/* ------------------------------------------------------------------ */

typedef struct dist_data {
    const char *name, *descr;
    float *x;
    tahq_shape shape;
    uint64_t n;
    double max_abs, rms;
} dist_data;

typedef struct sweep {
    const conf_list *cl;
    const dist_data *dd;
    size_t nd;
    int input_mode;
    result *res;      /* nd * cl->n */
    size_t *todo_idx; /* the points run: the first of each equal configuration */
    size_t total, todo, last_tenth;
    double t0, last_print;
    int progress; /* 0 none, 1 terminal, 2 lines */
} sweep;

static void run_task(void *arg, size_t task)
{
    sweep *sw = arg;
    const size_t j = sw->todo_idx[task];
    size_t d = j / sw->cl->n, c = j % sw->cl->n;
    const dist_data *dd = &sw->dd[d];
    run_point(&sw->cl->v[c].cfg, &dd->shape, dd->x, dd->n, sw->input_mode, &sw->res[j]);
}

/* Under the pool's lock after each point: a terminal gets one line rewritten
 * twice a second, a file or pipe a line per tenth of the points. */
static void task_done(void *arg, size_t finished, size_t todo)
{
    sweep *sw = arg;
    double now = cli_now();
    size_t tenth = finished * 10u / todo;
    if (sw->progress == 1 && (now - sw->last_print >= 0.5 || finished == todo)) {
        sw->last_print = now;
        fprintf(stderr, "\rtahq bounds: %zu/%zu points (%3.0f%%), %.1f s", finished, todo,
                100.0 * (double)finished / (double)todo, now - sw->t0);
        if (finished == todo)
            fputc('\n', stderr);
        fflush(stderr);
    } else if (sw->progress == 2 && tenth != sw->last_tenth) {
        sw->last_tenth = tenth;
        fprintf(stderr, "tahq bounds: %zu/%zu points (%3.0f%%), %.1f s\n", finished, todo,
                100.0 * (double)finished / (double)todo, now - sw->t0);
    }
}

/* ------------------------------------------------------------------ */
/* Analysis                                                            */
/* ------------------------------------------------------------------ */

static int usable(const result *r)
{
    return r->done && !r->skipped && r->status == TAHQ_OK;
}

static void mark_front(const conf_list *cl, result *res)
{
    for (size_t p = 0; p < cl->n; ++p) {
        result *a = &res[p];
        if (!usable(a) || cl->v[p].first != p)
            continue;
        int dominated = 0;
        for (size_t q = 0; q < cl->n && !dominated; ++q) {
            const result *b = &res[q];
            if (q == p || !usable(b) || cl->v[q].first != q)
                continue;
            if ((b->bpe <= a->bpe && b->s.rel_mse < a->s.rel_mse) ||
                (b->bpe < a->bpe && b->s.rel_mse <= a->s.rel_mse))
                dominated = 1;
        }
        a->on_front = !dominated;
    }
    for (size_t p = 0; p < cl->n; ++p)
        if (cl->v[p].first != p)
            res[p].on_front = res[cl->v[p].first].on_front;
}

static long find_conf(const conf_list *cl, uint32_t G, uint32_t hi, uint32_t lo, uint32_t r,
                      tahq_alloc alloc, float tau, tahq_rounding rnd, tahq_meta meta)
{
    tahq_config want;
    tahq_config_default(&want);
    want.tile = G;
    want.hi_bits = hi;
    want.lo_bits = lo;
    want.hi_permille = r;
    want.alloc = alloc;
    want.tau = tau;
    want.rounding = rnd;
    want.seed = rnd == TAHQ_ROUND_STOCHASTIC ? SR_SEED : 0;
    want.meta = meta;
    for (size_t i = 0; i < cl->n; ++i)
        if (same_cfg(&cl->v[i].cfg, &want))
            return (long)i;
    return -1;
}

static long paper_index(const conf_list *cl, float tau, tahq_alloc alloc, tahq_rounding rnd,
                        tahq_meta meta)
{
    return find_conf(cl, 64, 4, 3, 800, alloc, tau, rnd, meta);
}

/* log-linear interpolation of rel_mse at bits b on the curve of the "ratio"
 * set with allocation a (G=64, 4/3, r = 0..1000); NAN outside its range. */
static double interp_curve(const conf_list *cl, const result *res, tahq_alloc a, double b)
{
    double best_lo_b = -INFINITY, best_lo_m = NAN, best_hi_b = INFINITY, best_hi_m = NAN;
    for (size_t i = 0; i < cl->n; ++i) {
        const tahq_config *c = &cl->v[i].cfg;
        if (strcmp(cl->v[i].set, "ratio") != 0 || c->alloc != a || !usable(&res[i]))
            continue;
        double x = res[i].bpe, m = res[i].s.rel_mse;
        if (x <= b && x > best_lo_b) {
            best_lo_b = x;
            best_lo_m = m;
        }
        if (x >= b && x < best_hi_b) {
            best_hi_b = x;
            best_hi_m = m;
        }
    }
    if (!isfinite(best_lo_b) || !isfinite(best_hi_b))
        return NAN;
    if (best_hi_b == best_lo_b)
        return best_lo_m;
    if (!(best_lo_m > 0.0) || !(best_hi_m > 0.0))
        return NAN;
    double f = (b - best_lo_b) / (best_hi_b - best_lo_b);
    return exp(log(best_lo_m) + f * (log(best_hi_m) - log(best_lo_m)));
}

typedef struct dist_findings {
    long paper;    /* index of the paper point */
    long best;     /* lowest rel_mse at bits <= the paper's */
    long tau[3];   /* tau 0, 2, inf (token, nearest, fp16) */
    long alloc[3]; /* none, token, tile at r=800 */
    long sr, bf16, fp32;
    double tile_at_token_budget; /* tile curve rel_mse at the paper's bits */
    double token_at_tile_budget; /* token curve rel_mse at tile r=800 bits */
    int tile_better, budgets;    /* on the ratio axis: budgets where tile < token */
} dist_findings;

static void analyse(const conf_list *cl, const result *res, dist_findings *f)
{
    f->paper = paper_index(cl, 2.0f, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16);
    f->tau[0] = paper_index(cl, 0.0f, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16);
    f->tau[1] = f->paper;
    f->tau[2] =
        paper_index(cl, INFINITY, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16);
    f->alloc[0] = paper_index(cl, 2.0f, TAHQ_ALLOC_NONE, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16);
    f->alloc[1] = f->paper;
    f->alloc[2] = paper_index(cl, 2.0f, TAHQ_ALLOC_TILE, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP16);
    f->sr = paper_index(cl, 2.0f, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_STOCHASTIC, TAHQ_META_FP16);
    f->bf16 = paper_index(cl, 2.0f, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_BF16);
    f->fp32 = paper_index(cl, 2.0f, TAHQ_ALLOC_TOKEN, TAHQ_ROUND_NEAREST_EVEN, TAHQ_META_FP32);
    f->best = -1;
    f->tile_at_token_budget = f->token_at_tile_budget = NAN;
    f->tile_better = f->budgets = 0;
    if (f->paper < 0 || !usable(&res[f->paper]))
        return;
    const result *p = &res[f->paper];
    for (size_t i = 0; i < cl->n; ++i) {
        if (!usable(&res[i]) || res[i].bpe > p->bpe)
            continue;
        if (f->best < 0 || res[i].s.rel_mse < res[f->best].s.rel_mse)
            f->best = (long)i;
    }
    f->tile_at_token_budget = interp_curve(cl, res, TAHQ_ALLOC_TILE, p->bpe);
    if (f->alloc[2] >= 0 && usable(&res[f->alloc[2]]))
        f->token_at_tile_budget = interp_curve(cl, res, TAHQ_ALLOC_TOKEN, res[f->alloc[2]].bpe);
    for (size_t i = 0; i < cl->n; ++i) {
        const tahq_config *c = &cl->v[i].cfg;
        if (strcmp(cl->v[i].set, "ratio") != 0 || c->alloc != TAHQ_ALLOC_TOKEN || !usable(&res[i]))
            continue;
        double t = interp_curve(cl, res, TAHQ_ALLOC_TILE, res[i].bpe);
        if (isnan(t))
            continue;
        f->budgets++;
        if (t < res[i].s.rel_mse)
            f->tile_better++;
    }
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static void tau_str(float tau, char *buf, size_t n)
{
    if (isinf(tau))
        snprintf(buf, n, "inf");
    else
        snprintf(buf, n, "%.9g", (double)tau);
}

static const char *status_str(const result *r)
{
    if (r->skipped)
        return "skipped";
    if (r->status == CLI_ERR_NOMEM)
        return "out_of_memory";
    return tahq_status_name(r->status);
}

#define CSV_HEADER                                                                              \
    "index,set,dist,G,hi_bits,lo_bits,hi_permille,alloc,tau,rounding,meta,status,elements,"     \
    "batch,seq_len,channels,bytes,payload_bytes,bits_per_elem,bits_per_elem_formula,size_ok,n_" \
    "low,n_flagged,"                                                                            \
    "flagged_frac,rel_mse,sqnr_db,max_abs_err,max_err_over_bound,n_over_bound,bound_mean,"      \
    "bound_max,rel_mse_bound,mean_err_over_bound,on_front,sr_elems,sr_mean,sr_var,"             \
    "sr_pred_var,sr_bias_z,sr_var_z,ok\n"

static void csv_row(FILE *f, size_t idx, const bconf *b, const dist_data *dd, const result *r)
{
    const char *dist = dd->name;
    uint64_t n = dd->n;
    const tahq_config *c = &b->cfg;
    char tau[32];
    tau_str(c->tau, tau, sizeof tau);
    fprintf(f, "%zu,%s,%s,%u,%u,%u,%u,%s,%s,%s,%s,%s,%llu,%u,%u,%u,", idx, b->set, dist,
            (unsigned)c->tile, (unsigned)c->hi_bits, (unsigned)c->lo_bits, (unsigned)c->hi_permille,
            cli_alloc_name(c->alloc), tau, cli_rounding_name(c->rounding), cli_meta_name(c->meta),
            status_str(r), (unsigned long long)n, (unsigned)dd->shape.batch,
            (unsigned)dd->shape.seq_len, (unsigned)dd->shape.channels);
    if (!usable(r)) {
        fprintf(f, ",,,,,,,,,,,,,,,,,,,,,,,,%d\n", r->ok);
        return;
    }
    fprintf(f, "%zu,%llu,", r->bytes, (unsigned long long)r->payload_hdr);
    cli_csv_number(f, r->bpe);
    fputc(',', f);
    cli_csv_number(f, (double)(TAHQ_HEADER_BYTES + r->payload_formula) * 8.0 / (double)n);
    fprintf(f, ",%d,%llu,%llu,", r->size_ok, (unsigned long long)r->n_low,
            (unsigned long long)r->n_flagged);
    cli_csv_number(f, r->n_tiles ? (double)r->n_flagged / (double)r->n_tiles : 0.0);
    const double v[] = {r->s.rel_mse, r->s.sqnr_db, r->s.max_abs_err, r->s.max_err_over_bound};
    for (size_t i = 0; i < 4; ++i) {
        fputc(',', f);
        cli_csv_number(f, v[i]);
    }
    fprintf(f, ",%llu", (unsigned long long)r->s.n_over_bound);
    const double w[] = {r->bound_mean, r->bound_max, r->rel_mse_bound, r->ratio_mean};
    for (size_t i = 0; i < 4; ++i) {
        fputc(',', f);
        cli_csv_number(f, w[i]);
    }
    fprintf(f, ",%d,", r->on_front);
    if (c->rounding == TAHQ_ROUND_STOCHASTIC) {
        fprintf(f, "%llu", (unsigned long long)r->sr_n);
        const double s[] = {r->sr_mean, r->sr_var, r->sr_pred_var, r->sr_bias_z, r->sr_var_z};
        for (size_t i = 0; i < 5; ++i) {
            fputc(',', f);
            cli_csv_number(f, s[i]);
        }
    } else {
        fputs(",,,,,", f);
    }
    fprintf(f, ",%d\n", r->ok);
}

/* Add the members of more (released) to o: 0, or -1 (more NULL, no memory). */
static int json_merge(json_t *o, json_t *more)
{
    int r = more ? json_object_update(o, more) : -1;
    json_decref(more);
    return r;
}

static json_t *json_cfg_point(const conf_list *cl, const result *res, long i)
{
    if (i < 0 || !usable(&res[i]))
        return json_null();
    const result *r = &res[i];
    char txt[160];
    cli_config_text(&cl->v[i].cfg, txt, sizeof txt);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "config", cli_jstr(txt),
                     "bits_per_element", cli_jnum(r->bpe), "rel_mse", cli_jnum(r->s.rel_mse),
                     "sqnr_db", cli_jnum(r->s.sqnr_db), "max_err_over_bound",
                     cli_jnum(r->s.max_err_over_bound), "rel_mse_bound", cli_jnum(r->rel_mse_bound),
                     "flagged_fraction",
                     cli_jnum(r->n_tiles ? (double)r->n_flagged / (double)r->n_tiles : 0.0),
                     "on_pareto_front", r->on_front);
}

static double ratio_of(const result *res, long a, long b)
{
    if (a < 0 || b < 0 || !usable(&res[a]) || !usable(&res[b]) || !(res[b].s.rel_mse > 0.0))
        return NAN;
    return res[a].s.rel_mse / res[b].s.rel_mse;
}

static json_t *json_findings(const conf_list *cl, const result *res, const dist_findings *fd)
{
    double pr = fd->paper >= 0 && usable(&res[fd->paper]) ? res[fd->paper].s.rel_mse : NAN;
    json_t *o = json_pack(
        "{s:o, s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, s:{s:o, s:o, s:o}, "
        "s:{s:o, s:o, s:o, s:i, s:i, s:b}, s:o}",
        "paper_operating_point", json_cfg_point(cl, res, fd->paper), "best_at_or_below_paper_bits",
        json_cfg_point(cl, res, fd->best), "best_over_paper_rel_mse",
        cli_jnum(ratio_of(res, fd->best, fd->paper)), "tau_ablation", "0",
        json_cfg_point(cl, res, fd->tau[0]), "2", json_cfg_point(cl, res, fd->tau[1]), "inf",
        json_cfg_point(cl, res, fd->tau[2]), "tau_inf_over_tau2_rel_mse",
        cli_jnum(ratio_of(res, fd->tau[2], fd->tau[1])), "tau0_over_tau2_rel_mse",
        cli_jnum(ratio_of(res, fd->tau[0], fd->tau[1])), "alloc_same_ratio", "none",
        json_cfg_point(cl, res, fd->alloc[0]), "token", json_cfg_point(cl, res, fd->alloc[1]),
        "tile", json_cfg_point(cl, res, fd->alloc[2]), "alloc_equal_budget",
        "tile_rel_mse_at_paper_bits", cli_jnum(fd->tile_at_token_budget),
        "tile_over_token_at_paper_bits", cli_jnum(fd->tile_at_token_budget / pr),
        "token_rel_mse_at_tile_r800_bits", cli_jnum(fd->token_at_tile_budget), "budgets_compared",
        fd->budgets, "budgets_where_tile_is_better", fd->tile_better, "tile_reduces_error",
        fd->budgets && 2 * fd->tile_better > fd->budgets, "stochastic_rounding",
        json_cfg_point(cl, res, fd->sr));
    if (o && fd->sr >= 0 && usable(&res[fd->sr])) {
        const result *r = &res[fd->sr];
        if (json_object_set_new(
                o, "stochastic_error_in_scale_units",
                json_pack("{s:I, s:o, s:s, s:o, s:o, s:o, s:f, s:o}", "elements",
                          (json_int_t)r->sr_n, "mean", cli_jnum(r->sr_mean), "mean_theory",
                          "[0, 2^-24)", "bias_z", cli_jnum(r->sr_bias_z), "variance",
                          cli_jnum(r->sr_var), "variance_theory", cli_jnum(r->sr_pred_var),
                          "variance_bound", 0.25, "variance_z", cli_jnum(r->sr_var_z))))
            json_decref(o), o = NULL;
    }
    if (o &&
        json_object_set_new(o, "meta",
                            json_pack("{s:o, s:o, s:o}", "fp16", json_cfg_point(cl, res, fd->paper),
                                      "bf16", json_cfg_point(cl, res, fd->bf16), "fp32",
                                      json_cfg_point(cl, res, fd->fp32))))
        json_decref(o), o = NULL;
    return o;
}

static void print_findings(FILE *f, const char *dist, const conf_list *cl, const result *res,
                           const dist_findings *fd)
{
    fprintf(f, "[%s]\n", dist);
    if (fd->paper < 0 || !usable(&res[fd->paper])) {
        fprintf(f, "  paper operating point: not available for this shape\n");
        return;
    }
    const result *p = &res[fd->paper];
    fprintf(f,
            "  paper point G=64 4/3 r=800 token tau=2: %.4f bits/elem, relMSE %.4e "
            "(SQNR %.2f dB), max err/bound %.4f, %s the Pareto front\n",
            p->bpe, p->s.rel_mse, p->s.sqnr_db, p->s.max_err_over_bound,
            p->on_front ? "ON" : "NOT on");
    if (fd->best >= 0 && fd->best != fd->paper && res[fd->best].s.rel_mse < p->s.rel_mse) {
        char txt[160];
        cli_config_text(&cl->v[fd->best].cfg, txt, sizeof txt);
        fprintf(f, "    best at <= its bits: %s: %.4f bits/elem, relMSE %.4e (x%.3f)\n", txt,
                res[fd->best].bpe, res[fd->best].s.rel_mse, res[fd->best].s.rel_mse / p->s.rel_mse);
    }
    fprintf(f, "  gate ablation (relMSE, bits/elem, flagged tiles):");
    static const char *const tn[3] = {"0", "2", "inf"};
    for (int t = 0; t < 3; ++t) {
        long i = fd->tau[t];
        if (i >= 0 && usable(&res[i]))
            fprintf(f, "  tau=%s %.4e %.4f %.1f%%", tn[t], res[i].s.rel_mse, res[i].bpe,
                    100.0 * (double)res[i].n_flagged / (double)res[i].n_tiles);
    }
    fputc('\n', f);
    fprintf(f, "    tau=inf / tau=2: x%.3f;  tau=0 / tau=2: x%.3f\n",
            ratio_of(res, fd->tau[2], fd->tau[1]), ratio_of(res, fd->tau[0], fd->tau[1]));
    fprintf(f, "  allocation at r=800 (relMSE, bits/elem):");
    static const char *const an[3] = {"none", "token", "tile"};
    for (int a = 0; a < 3; ++a) {
        long i = fd->alloc[a];
        if (i >= 0 && usable(&res[i]))
            fprintf(f, "  %s %.4e %.4f", an[a], res[i].s.rel_mse, res[i].bpe);
    }
    fputc('\n', f);
    fprintf(f,
            "    equal budget %.4f bits/elem: tile %.4e vs token %.4e (tile/token x%.3f); "
            "tile better at %d of %d budgets -> tile-wise %s error\n",
            p->bpe, fd->tile_at_token_budget, p->s.rel_mse, fd->tile_at_token_budget / p->s.rel_mse,
            fd->tile_better, fd->budgets,
            fd->budgets && 2 * fd->tile_better > fd->budgets ? "REDUCES" : "does NOT reduce");
    if (fd->sr >= 0 && usable(&res[fd->sr])) {
        const result *r = &res[fd->sr];
        fprintf(f,
                "  stochastic rounding: relMSE %.4e (x%.3f of nearest); error/s mean %+.2e "
                "(z %+.2f, theory [0, 2^-24)), variance %.5f vs theory %.5f (z %+.2f, bound "
                "0.25)\n",
                r->s.rel_mse, r->s.rel_mse / p->s.rel_mse, r->sr_mean, r->sr_bias_z, r->sr_var,
                r->sr_pred_var, r->sr_var_z);
    }
    if (fd->bf16 >= 0 && fd->fp32 >= 0 && usable(&res[fd->bf16]) && usable(&res[fd->fp32]))
        fprintf(f, "  metadata: fp16 %.4f b/e %.4e; bf16 %.4f b/e %.4e; fp32 %.4f b/e %.4e\n",
                p->bpe, p->s.rel_mse, res[fd->bf16].bpe, res[fd->bf16].s.rel_mse, res[fd->fp32].bpe,
                res[fd->fp32].s.rel_mse);
}

/* Pareto fronts (one per distribution), sorted by bits/element. */
static int write_front(const char *path, const conf_list *cl, const result *res,
                       const dist_data *dd, size_t nd)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    fputs("dist,bits_per_elem,rel_mse,sqnr_db,config\n", o.f);
    size_t *idx = malloc(cl->n * sizeof *idx);
    if (!idx) {
        cli_out_abort(&o);
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    for (size_t d = 0; d < nd; ++d) {
        const result *r = res + d * cl->n;
        size_t m = 0;
        for (size_t i = 0; i < cl->n; ++i)
            if (usable(&r[i]) && r[i].on_front && cl->v[i].first == i)
                idx[m++] = i;
        /* insertion sort by (bits, index): m is small */
        for (size_t a = 1; a < m; ++a) {
            size_t v = idx[a], b = a;
            while (b > 0 && (r[idx[b - 1]].bpe > r[v].bpe ||
                             (r[idx[b - 1]].bpe == r[v].bpe && idx[b - 1] > v))) {
                idx[b] = idx[b - 1];
                b--;
            }
            idx[b] = v;
        }
        for (size_t a = 0; a < m; ++a) {
            char txt[160];
            cli_config_text(&cl->v[idx[a]].cfg, txt, sizeof txt);
            fprintf(o.f, "%s,", dd[d].name);
            cli_csv_number(o.f, r[idx[a]].bpe);
            fputc(',', o.f);
            cli_csv_number(o.f, r[idx[a]].s.rel_mse);
            fputc(',', o.f);
            cli_csv_number(o.f, r[idx[a]].s.sqnr_db);
            fprintf(o.f, ",%s\n", txt);
        }
    }
    free(idx);
    if (ferror(o.f))
        o.failed = 1;
    return cli_out_commit(&o);
}

static int safe_for_shell(const char *s)
{
    for (; *s; ++s)
        if (*s == '\'' || *s == '\n')
            return 0;
    return 1;
}

static void bounds_help(void)
{
    char plots_script[3 * 4096 + 16];
    const int plots_found =
        tahq_data_path("plots/bounds.sh", plots_script, sizeof plots_script) == 0;
    if (plots_found)
        *strrchr(plots_script, '/') = '\0'; /* the folder of bounds.sh */
    printf("usage: tahq bounds [--quick | --full] [--jobs N] [--dist LIST] [--input X.npy\n"
           "                   [--shape ROWSxC|BxSxC] [--batch B] [--seq S]] [--data-seed N]\n"
           "                   [--out-dir DIR] [--csv FILE] [--json [FILE]] [--plots]\n"
           "                   [--plots-dir DIR] [--no-progress]\n"
           "Error per bit budget. Encodes each input under a sweep of configurations and\n"
           "measures bits/element (the whole message: header, map, flags, zero-points,\n"
           "scales, codes, pivots; checked against the SPEC section 8.2 size formula),\n"
           "relative MSE, SQNR, max |error| and max |error|/bound (SPEC section 6 bound\n"
           "from tahq_error_bound), and summaries of the bound; for stochastic rounding\n"
           "the bias and variance of the error against SPEC section 5.4. Any element\n"
           "above its bound prints 'BOUND VIOLATION' on stderr and exits 1.\n"
           "Sweep: the paper point G=64 4/3 r=800 under tau {2,0,inf} x alloc {token,\n"
           "tile,none} x rounding x meta {fp16,bf16,fp32}; r = 0..1000 for token and tile\n"
           "allocation; G {16..256} x (hi,lo) from (2,1) to (8,8) x r {500,800} (r=1000\n"
           "when lo=hi). --full repeats the grid for tile/no allocation, tau 0/inf,\n"
           "stochastic rounding, bf16 and fp32 metadata, on larger tensors.\n"
           "  --quick          [2, 64, 1024] tensors (default)\n"
           "  --full           [4, 128, 1024] tensors and the larger sweep\n"
           "  --jobs N         worker threads (2)\n"
           "  --dist LIST      comma-separated subset of gauss,laplace,student-t,llm\n"
           "                   (all; none by default with --input)\n"
           "  --input X        also sweep the tensor in X (.npy, or raw float32 with --shape)\n"
           "  --data-seed N    seed of the synthetic tensors (1)\n"
           "  --out-dir DIR    output directory (build/bounds)\n"
           "  --csv FILE       CSV output, one row per point (DIR/bounds.csv)\n"
           "  --json [FILE]    JSON output with the findings (DIR/bounds.json); --json alone\n"
           "                   or --json - writes it to standard output and the summary to\n"
           "                   standard error\n"
           "  --plots          render the gnuplot scripts (plots/bounds.sh) into DIR; a\n"
           "                   plot that fails exits 1 and leaves no file\n"
           "  --plots-dir DIR  where the gnuplot scripts are (share/tahq/plots next to the\n"
           "                   program's bin/, or $TAHQ_DATA_DIR/plots; here: %s)\n"
           "Also writes DIR/bounds_front.csv (Pareto fronts, bits/element vs relMSE).\n",
           plots_found ? plots_script : "not found");
}

/* ------------------------------------------------------------------ */
/* the steps of the command                                           */
/* ------------------------------------------------------------------ */

/* use[d] for each distribution of --dist; without --dist every one, or none
 * with --input. 0 or the exit status after a message. */
static int choose_dists(const char *dist_list, int have_input, int use[DIST_COUNT])
{
    for (int d = 0; d < DIST_COUNT; ++d)
        use[d] = have_input ? 0 : 1;
    if (dist_list)
        return dist_parse_list(dist_list, use);
    return 0;
}

/* The tensors of the chosen distributions, then the one of --input, with
 * their max |x| and rms. 0 or the exit status after a message; dd[0..*ndp)
 * is the caller's to free either way. */
static int load_dists(const int use[DIST_COUNT], const char *input, enc_opts *o, int full,
                      uint64_t data_seed, dist_data *dd, size_t *ndp)
{
    size_t nd = 0;
    uint32_t B = full ? 4u : 2u, S = full ? 128u : 64u, C = 1024u;
    int rc = 0;
    for (int d = 0; d < DIST_COUNT; ++d) {
        if (!use[d])
            continue;
        dist_data *e = &dd[nd];
        memset(e, 0, sizeof *e);
        e->name = dist_name((dist_kind)d);
        e->descr = dist_description((dist_kind)d);
        e->shape.batch = B;
        e->shape.seq_len = S;
        e->shape.channels = C;
        e->n = shape_count(&e->shape);
        e->x = malloc((size_t)e->n * sizeof(float));
        nd++;
        if (!e->x || dist_fill((dist_kind)d, e->x, B, S, C, data_seed) != 0) {
            rc = cli_fail(EXIT_RUNTIME, "out of memory");
            goto done;
        }
    }
    if (input) {
        npy_tensor t;
        dist_data *e = &dd[nd];
        memset(e, 0, sizeof *e);
        if ((rc = load_input(input, o, &t, &e->shape)) != 0)
            goto done;
        e->name = "input";
        e->descr = input;
        e->x = t.data;
        e->n = t.count;
        nd++;
        for (uint64_t i = 0; i < e->n; ++i)
            if (!isfinite(e->x[i])) {
                rc = cli_fail(EXIT_RUNTIME, "%s: element %llu is not finite", input,
                              (unsigned long long)i);
                goto done;
            }
    }
    if (nd == 0) {
        rc = cli_fail(EXIT_USAGE, "no input: give --dist or --input");
        goto done;
    }
    for (size_t d = 0; d < nd; ++d) {
        double ss = 0.0;
        for (uint64_t i = 0; i < dd[d].n; ++i) {
            double v = fabs((double)dd[d].x[i]);
            ss += v * v;
            if (v > dd[d].max_abs)
                dd[d].max_abs = v;
        }
        dd[d].rms = dd[d].n ? sqrt(ss / (double)dd[d].n) : 0.0;
    }
done:
    *ndp = nd;
    return rc;
}

/* The counts of a sweep's points. */
typedef struct tally {
    size_t n_fail, n_points, n_skip, n_range;
    double worst_ratio; /* largest max |error|/bound */
} tally;

/* Count the points and report each failure on stderr, loudly, in point
 * order. */
static void report_failures(const sweep *sw, const conf_list *cl, const dist_data *dd, tally *t)
{
    memset(t, 0, sizeof *t);
    const result *res = sw->res;
    for (size_t j = 0; j < sw->total; ++j) {
        size_t d = j / cl->n, c = j % cl->n;
        const result *r = &res[j];
        if (c != cl->v[c].first)
            continue;
        if (r->skipped) {
            t->n_skip++;
            continue;
        }
        if (r->status == TAHQ_ERR_RANGE && r->ok) {
            t->n_range++;
            continue;
        }
        t->n_points++;
        if (usable(r) && r->s.max_err_over_bound > t->worst_ratio)
            t->worst_ratio = r->s.max_err_over_bound;
        if (r->ok)
            continue;
        t->n_fail++;
        char txt[160];
        cli_config_text(&cl->v[c].cfg, txt, sizeof txt);
        if (r->status != TAHQ_OK) {
            fprintf(stderr, "tahq bounds: FAIL: %s, %s: %s: %s\n", dd[d].name, txt, r->stage,
                    cli_status_text(r->status));
            continue;
        }
        if (r->s.n_over_bound)
            fprintf(stderr,
                    "BOUND VIOLATION: %s, %s: %llu elements exceed their SPEC section 6 bound "
                    "(first: element %llu, |error| %.17g > bound %.17g)\n",
                    dd[d].name, txt, (unsigned long long)r->s.n_over_bound,
                    (unsigned long long)r->s.first_over, r->s.first_over_err,
                    r->s.first_over_bound);
        if (r->s.n_tiles_over_l2)
            fprintf(stderr,
                    "BOUND VIOLATION: %s, %s: %llu flagged tiles exceed their SPEC section 6.3 "
                    "L2 bound (first: tile %llu)\n",
                    dd[d].name, txt, (unsigned long long)r->s.n_tiles_over_l2,
                    (unsigned long long)r->s.first_tile_over_l2);
        if (!r->sr_ok)
            fprintf(stderr,
                    "BOUND VIOLATION: %s, %s: stochastic rounding error/scale: mean %.6g "
                    "(z %.2f), variance %.6g vs theory %.6g (z %.2f), limit |z| <= %.0f and "
                    "variance theory <= 0.25\n",
                    dd[d].name, txt, r->sr_mean, r->sr_bias_z, r->sr_var, r->sr_pred_var,
                    r->sr_var_z, SR_Z_LIMIT);
        if (!r->size_ok)
            fprintf(stderr,
                    "tahq bounds: FAIL: SIZE MISMATCH: %s, %s: message %zu bytes, header "
                    "payload %llu, SPEC 8.2 formula 72 + %llu\n",
                    dd[d].name, txt, r->bytes, (unsigned long long)r->payload_hdr,
                    (unsigned long long)r->payload_formula);
    }
}

/* The JSON document of the sweep at json_path ("-": standard output). 0 or
 * the exit status after a message. */
static int write_json(const char *json_path, const char *csv_path, int full, uint64_t data_seed,
                      const dist_data *dd, size_t nd, const conf_list *cl, const sweep *sw,
                      const dist_findings *fnd, const tally *t, int ok)
{
    int rc;
    cli_out jo;
    /* "-": the JSON takes standard output, the summary below goes to
     * standard error (cli_out_open_text) */
    if ((rc = cli_out_open_text(&jo, json_path)) != 0)
        return rc;
    FILE *f = jo.f;
    /* one distribution, finding or point a line, as before: plots/bounds.sh
     * reads the input's name and shape from its line */
    int bad = cli_json_put(f, "",
                           json_pack("{s:s, s:s, s:o, s:o}", "command", "bounds", "mode",
                                     full ? "full" : "quick", "data_seed", cli_ju64(data_seed),
                                     "csv", cli_jstr(csv_path)),
                           0, 1);
    if (!bad)
        fputs(", \"distributions\": [", f);
    for (size_t d = 0; !bad && d < nd; ++d)
        bad = cli_json_put(
            f, d ? ",\n  " : "\n  ",
            json_pack("{s:o, s:o, s:[I, I, I], s:I, s:o, s:o}", "name", cli_jstr(dd[d].name),
                      "description", cli_jstr(dd[d].descr), "shape", (json_int_t)dd[d].shape.batch,
                      (json_int_t)dd[d].shape.seq_len, (json_int_t)dd[d].shape.channels, "elements",
                      (json_int_t)dd[d].n, "max_abs", cli_jnum(dd[d].max_abs), "rms",
                      cli_jnum(dd[d].rms)),
            0, 0);
    if (!bad)
        fputs("\n], \"findings\": {", f);
    for (size_t d = 0; !bad && d < nd; ++d) {
        json_t *one = json_object();
        if (one &&
            json_object_set_new(one, dd[d].name, json_findings(cl, sw->res + d * cl->n, &fnd[d])))
            json_decref(one), one = NULL;
        bad = cli_json_put(f, d ? ",\n  " : "\n  ", one, 1, 1);
    }
    if (!bad)
        fputs("\n}, \"points\": [", f);
    for (size_t j = 0; !bad && j < sw->total; ++j) {
        const result *r = &sw->res[j];
        const bconf *b = &cl->v[j % cl->n];
        json_t *pt = json_pack("{s:I, s:s, s:o, s:o, s:s}", "index", (json_int_t)j, "set", b->set,
                               "dist", cli_jstr(dd[j / cl->n].name), "config", cli_jconfig(&b->cfg),
                               "status", status_str(r));
        if (pt && usable(r) &&
            json_merge(
                pt,
                json_pack("{s:I, s:o, s:b, s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:o, s:o, "
                          "s:o, s:b}",
                          "bytes", (json_int_t)r->bytes, "bits_per_element", cli_jnum(r->bpe),
                          "size_ok", r->size_ok, "n_low", (json_int_t)r->n_low, "n_flagged",
                          (json_int_t)r->n_flagged, "rel_mse", cli_jnum(r->s.rel_mse), "sqnr_db",
                          cli_jnum(r->s.sqnr_db), "max_abs_err", cli_jnum(r->s.max_abs_err),
                          "max_err_over_bound", cli_jnum(r->s.max_err_over_bound), "n_over_bound",
                          (json_int_t)r->s.n_over_bound, "bound_mean", cli_jnum(r->bound_mean),
                          "bound_max", cli_jnum(r->bound_max), "rel_mse_bound",
                          cli_jnum(r->rel_mse_bound), "on_pareto_front", r->on_front)))
            json_decref(pt), pt = NULL;
        if (pt && usable(r) && b->cfg.rounding == TAHQ_ROUND_STOCHASTIC &&
            json_merge(pt,
                       json_pack("{s:o, s:o, s:o, s:o}", "sr_mean", cli_jnum(r->sr_mean), "sr_var",
                                 cli_jnum(r->sr_var), "sr_pred_var", cli_jnum(r->sr_pred_var),
                                 "sr_bias_z", cli_jnum(r->sr_bias_z))))
            json_decref(pt), pt = NULL;
        if (pt && json_object_set_new(pt, "ok", json_boolean(r->ok)))
            json_decref(pt), pt = NULL;
        bad = cli_json_put(f, j ? ",\n  " : "\n  ", pt, 0, 0);
    }
    if (!bad)
        bad = cli_json_put(f, "\n], ",
                           json_pack("{s:I, s:I, s:I, s:I, s:o, s:b}", "points_run",
                                     (json_int_t)t->n_points, "skipped", (json_int_t)t->n_skip,
                                     "unencodable", (json_int_t)t->n_range, "failed",
                                     (json_int_t)t->n_fail, "max_err_over_bound",
                                     cli_jnum(t->worst_ratio), "ok", ok),
                           1, 0);
    if (bad) {
        cli_out_abort(&jo);
        rc = cli_fail(EXIT_RUNTIME, "out of memory (JSON output)");
        return rc;
    }
    fputc('\n', f);
    if (ferror(f))
        jo.failed = 1;
    if ((rc = cli_out_commit(&jo)) != 0)
        return rc;
    return 0;
}

/* Run every configuration on every distribution on `jobs` threads (the
 * calling one and jobs - 1 started, common/tahq_jobs.h). 0 or the exit status after a message (then
 * cl->v is freed). */
static int run_sweep(sweep *sw, conf_list *cl, const dist_data *dd, size_t nd, int input_mode,
                     int full, int progress, uint32_t jobs, double t0)
{
    if (build_configs(cl, full) != 0) {
        free(cl->v);
        cl->v = NULL;
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    memset(sw, 0, sizeof *sw);
    sw->cl = cl;
    sw->dd = dd;
    sw->nd = nd;
    sw->input_mode = input_mode;
    sw->total = nd * cl->n;
    sw->res = calloc(sw->total, sizeof *sw->res);
    sw->progress = progress ? (isatty(fileno(stderr)) ? 1 : 2) : 0;
    sw->t0 = t0;
    sw->last_print = -1.0;
    sw->todo_idx = malloc(sw->total * sizeof *sw->todo_idx);
    if (!sw->res || !sw->todo_idx) {
        free(sw->res);
        free(sw->todo_idx);
        sw->res = NULL;
        sw->todo_idx = NULL;
        free(cl->v);
        cl->v = NULL;
        return cli_fail(EXIT_RUNTIME, "out of memory");
    }
    for (size_t j = 0; j < sw->total; ++j)
        if (cl->v[j % cl->n].first == j % cl->n)
            sw->todo_idx[sw->todo++] = j;
    tahq_jobs_run((int)jobs, sw->todo, run_task, sw->progress ? task_done : NULL, sw);
    free(sw->todo_idx);
    sw->todo_idx = NULL;
    return 0;
}

/* The summary on stdout. */
static void print_summary(int full, size_t nd, const dist_data *dd, const conf_list *cl,
                          const sweep *sw, const dist_findings *fnd, const tally *t, int ok,
                          unsigned jobs, double t_sweep, const char *csv_path,
                          const char *front_path, const char *json_path)
{
    printf("tahq bounds (%s): %zu distributions x %zu configurations, %zu points run "
           "(%zu skipped: C not a multiple of G, %zu unencodable), %u threads, %.1f s\n",
           full ? "full" : "quick", nd, cl->n, t->n_points, t->n_skip, t->n_range, jobs, t_sweep);
    for (size_t d = 0; d < nd; ++d)
        printf("  %-9s [%u, %u, %u] max|x| %.4g rms %.4g: %s\n", dd[d].name,
               (unsigned)dd[d].shape.batch, (unsigned)dd[d].shape.seq_len,
               (unsigned)dd[d].shape.channels, dd[d].max_abs, dd[d].rms, dd[d].descr);
    printf("\nfindings\n");
    for (size_t d = 0; d < nd; ++d)
        print_findings(stdout, dd[d].name, cl, sw->res + d * cl->n, &fnd[d]);
    printf("\nlargest max |error|/bound over all points: %.6f\n", t->worst_ratio);
    printf("wrote %s, %s, %s\n", csv_path, front_path, json_path);
    if (ok)
        printf("bounds: %zu points, every element within its SPEC bound, every message size "
               "equal to the SPEC 8.2 formula\n",
               t->n_points);
    else
        printf("bounds: FAIL: %zu of %zu points failed (see stderr)\n", t->n_fail, t->n_points);
}

/* Render the gnuplot scripts of plots_dir into out_dir. A plot that cannot
 * be made is an error (exit status 1): plots/bounds.sh writes each figure
 * only when gnuplot succeeded, and exits non-zero otherwise; without gnuplot
 * it says so and exits 0. */
static int run_plots(const char *plots_dir, const char *out_dir, const char *csv_path)
{
    char cmd[3 * 4096 + 128];
    if (!safe_for_shell(plots_dir) || !safe_for_shell(out_dir) || !safe_for_shell(csv_path)) {
        fprintf(stderr, "tahq bounds: a path holds a quote or a newline; cannot plot\n");
        return EXIT_RUNTIME;
    } else {
        fflush(stdout);
        int n =
            snprintf(cmd, sizeof cmd, "sh '%s/bounds.sh' '%s' '%s'", plots_dir, out_dir, csv_path);
        int prc = (n < 0 || (size_t)n >= sizeof cmd) ? -1 : system(cmd);
        if (prc != 0) {
            if (prc == -1)
                fprintf(stderr, "tahq bounds: plotting failed: cannot run plots/bounds.sh\n");
            else if (WIFEXITED(prc))
                fprintf(stderr, "tahq bounds: plotting failed (%s exited %d)\n", cmd,
                        WEXITSTATUS(prc));
            else
                fprintf(stderr, "tahq bounds: plotting failed (%s: status %d)\n", cmd, prc);
            return EXIT_RUNTIME;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The command                                                         */
/* ------------------------------------------------------------------ */

static int opt_jobs(const cli_option *opt, const char *v)
{
    uint32_t *jobs = opt->dst;
    if (cli_parse_u32(v, 256, jobs) != 0 || *jobs == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --jobs (need 1..256)", v), -1;
    return 0;
}

int cmd_bounds(int argc, char **argv)
{
    int full = 0, want_plots = 0, progress = 1, no_progress = 0;
    uint32_t jobs = 2;
    const char *input = NULL, *out_dir = "build/bounds", *csv_path = NULL, *json_path = NULL;
    const char *plots_dir = NULL, *dist_list = NULL;
    uint64_t data_seed = 1;
    enc_opts o;
    enc_opts_init(&o);
    int quick = 0, npos = 0;
    const cli_option own[] = {CLI_FLAG("--quick", &quick),
                              CLI_FLAG("--full", &full),
                              CLI_FLAG("--plots", &want_plots),
                              CLI_FLAG("--no-progress", &no_progress),
                              CLI_OPT("--jobs", opt_jobs, &jobs),
                              CLI_OPT("--data-seed", cli_opt_u64, &data_seed),
                              CLI_OPT("--input", cli_opt_nonempty, &input),
                              CLI_OPT("--out-dir", cli_opt_nonempty, &out_dir),
                              CLI_OPT("--csv", cli_opt_nonempty, &csv_path),
                              CLI_OPT_OR_STDOUT("--json", cli_opt_nonempty, &json_path),
                              CLI_OPT("--plots-dir", cli_opt_nonempty, &plots_dir),
                              CLI_OPT("--dist", cli_opt_nonempty, &dist_list),
                              CLI_END};
    cli_option shp[SHAPE_OPTIONS + 1];
    shape_options(&o, shp);
    const cli_option *const tables[] = {own, shp, NULL};
    int prc = cli_parse(argc, argv, tables, NULL, 0, &npos);
    if (prc == CLI_HELP)
        bounds_help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;
    if (quick && full)
        return cli_fail(EXIT_USAGE, "--quick and --full: give one");
    progress = !no_progress;
    if (!input && (o.shape_text || o.batch || o.seq))
        return cli_fail(EXIT_USAGE, "--shape, --batch and --seq need --input");
    /* the plot scripts are found before the sweep, so that a missing one
     * costs no time */
    char plots_buf[3 * 4096 + 16];
    if (want_plots && !plots_dir) {
        if (tahq_data_path("plots/bounds.sh", plots_buf, sizeof plots_buf) != 0)
            return cli_fail(EXIT_RUNTIME,
                            "--plots: plots/bounds.sh not found (tried %s); give "
                            "--plots-dir DIR or set TAHQ_DATA_DIR",
                            plots_buf);
        *strrchr(plots_buf, '/') = '\0'; /* the folder of bounds.sh */
        plots_dir = plots_buf;
    }

    int use[DIST_COUNT];
    int rc = choose_dists(dist_list, input != NULL, use);
    if (rc)
        return rc;

    char csv_buf[4096], json_buf[4096], front_buf[4096];
    if (!csv_path) {
        snprintf(csv_buf, sizeof csv_buf, "%s/bounds.csv", out_dir);
        csv_path = csv_buf;
    }
    if (!json_path) {
        snprintf(json_buf, sizeof json_buf, "%s/bounds.json", out_dir);
        json_path = json_buf;
    }
    snprintf(front_buf, sizeof front_buf, "%s/bounds_front.csv", out_dir);

    double t0 = cli_now();
    dist_data dd[MAX_DISTS];
    size_t nd = 0;
    if ((rc = load_dists(use, input, &o, full, data_seed, dd, &nd)) != 0)
        goto out;
    /* created only once the inputs are good: a failed command leaves nothing */
    if (cli_mkdir_p(out_dir) != 0) {
        rc = cli_fail(EXIT_RUNTIME, "%s: cannot create directory: %s", out_dir, strerror(errno));
        goto out;
    }

    conf_list cl = {0};
    sweep sw;
    if ((rc = run_sweep(&sw, &cl, dd, nd, input != NULL, full, progress, jobs, t0)) != 0)
        goto out;
    double t_sweep = cli_now() - t0;

    /* duplicates take the results of their first occurrence */
    for (size_t j = 0; j < sw.total; ++j) {
        size_t d = j / cl.n, c = j % cl.n;
        if (cl.v[c].first != c)
            sw.res[j] = sw.res[d * cl.n + cl.v[c].first];
    }
    dist_findings fnd[MAX_DISTS];
    for (size_t d = 0; d < nd; ++d) {
        mark_front(&cl, sw.res + d * cl.n);
        analyse(&cl, sw.res + d * cl.n, &fnd[d]);
    }

    tally t;
    report_failures(&sw, &cl, dd, &t);
    int ok = t.n_fail == 0 && t.n_points > 0;

    /* CSV */
    {
        cli_out co;
        if ((rc = cli_out_open(&co, csv_path)) != 0)
            goto free_sweep;
        fputs(CSV_HEADER, co.f);
        for (size_t j = 0; j < sw.total; ++j)
            csv_row(co.f, j, &cl.v[j % cl.n], &dd[j / cl.n], &sw.res[j]);
        if (ferror(co.f))
            co.failed = 1;
        if ((rc = cli_out_commit(&co)) != 0)
            goto free_sweep;
    }
    if ((rc = write_front(front_buf, &cl, sw.res, dd, nd)) != 0)
        goto free_sweep;
    if ((rc = write_json(json_path, csv_path, full, data_seed, dd, nd, &cl, &sw, fnd, &t, ok)) != 0)
        goto free_sweep;

    print_summary(full, nd, dd, &cl, &sw, fnd, &t, ok, (unsigned)jobs, t_sweep, csv_path, front_buf,
                  json_path);

    rc = ok ? 0 : EXIT_RUNTIME;
    if (want_plots && run_plots(plots_dir, out_dir, csv_path) != 0)
        rc = EXIT_RUNTIME;
free_sweep:
    free(sw.res);
    free(cl.v);
out:
    for (size_t d = 0; d < nd; ++d)
        free(dd[d].x);
    return rc;
}
