/* SPDX-License-Identifier: MIT */
/* links_model.c - the event model of a GPipe step (links_model.h), its
 * calibration against measured runs and the projection to the paper's
 * setting (`tahq-sim throughput --calibrate FILE`). */
#include "links_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

/* Open MPI 4.1's TCP transport: btl_tcp_eager_limit 65536 bytes including
 * the ob1 match header (14 bytes) and the TCP BTL's (16 bytes); rounded
 * down to leave room for both */
#define LK_EAGER (65536.0 - 64.0)

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

double lk_step(const lk_params *p, int mode)
{
    const int blk_f = mode == LK_BLOCKING || (mode == LK_PROTOCOL && p->bf > p->eager);
    const int blk_b = mode == LK_BLOCKING || (mode == LK_PROTOCOL && p->bb > p->eager);
    const int K = p->K, M = p->M;
    double free_[LK_MAXK] = {0}, link_f[LK_MAXK] = {0}, link_b[LK_MAXK] = {0};
    double ready[LK_MAXK] = {0}; /* when stage k's message of the current micro-batch is encoded */
    const double xf = p->wire * p->bf * 8.0 / p->bw, xb = p->wire * p->bb * 8.0 / p->bw;
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) {
            double t = free_[k];
            if (k > 0) {
                double arr;
                if (blk_f) {
                    /* the receiver asks at t; the sender waits until arrival */
                    arr = dmax(ready[k - 1], t) + p->lat + xf;
                    free_[k - 1] = arr;
                } else {
                    double st = dmax(ready[k - 1], link_f[k - 1]);
                    link_f[k - 1] = st + xf;
                    arr = link_f[k - 1] + p->lat;
                }
                t = dmax(t, arr) + p->df[k];
            }
            t += p->cf[k];
            if (k < K - 1) {
                t += p->ef[k];
                ready[k] = t;
            }
            free_[k] = t;
        }
    for (int m = 0; m < M; m++)
        for (int k = K - 1; k >= 0; k--) {
            double t = free_[k];
            if (k < K - 1) {
                double arr;
                if (blk_b) {
                    arr = dmax(ready[k + 1], t) + p->lat + xb;
                    free_[k + 1] = arr;
                } else {
                    double st = dmax(ready[k + 1], link_b[k + 1]);
                    link_b[k + 1] = st + xb;
                    arr = link_b[k + 1] + p->lat;
                }
                t = dmax(t, arr) + p->db[k];
            }
            t += p->cb[k];
            if (k > 0) {
                t += p->eb[k];
                ready[k] = t;
            }
            free_[k] = t;
        }
    double end = 0, upd = 0;
    for (int k = 0; k < K; k++) {
        end = dmax(end, free_[k]);
        upd = dmax(upd, p->upd[k]);
    }
    if (p->tail_bytes > 0 && K > 1)
        end += p->lat + p->wire * p->tail_bytes * 8.0 / p->bw;
    return end + upd + (K > 1 ? p->lat : 0);
}

/* ---------------------------------------------------------------- input */

enum {
    C_LINK,
    C_METHOD,
    C_PHASE,
    C_N,
    C_STEP,
    C_STEPMIN,
    C_STEPMAX,
    C_M,
    C_TOK,
    C_LAT,
    C_WIRE,
    C_BF,
    C_BB,
    C_TAIL,
    C_CF0,
    C_CF1,
    C_CB0,
    C_CB1,
    C_EF0,
    C_DB0,
    C_DF1,
    C_EB1,
    C_UPD0,
    C_UPD1,
    C_NCOL
};
static const char *const col_names[C_NCOL] = {"link_mbps",  "method",     "phase",
                                              "n",          "step_s",     "step_s_min",
                                              "step_s_max", "M",          "tokens_per_step",
                                              "lat_s",      "wire",       "bf",
                                              "bb",         "tail_bytes", "cf0",
                                              "cf1",        "cb0",        "cb1",
                                              "ef0",        "db0",        "df1",
                                              "eb1",        "upd0",       "upd1"};

/* optional columns (K > 2): the stage count and the further stages' times,
 * named as the K = 2 ones (cfK: stage K's forward compute per micro-batch,
 * efK: its forward encode, dfK: its forward decode, ...); absent: K = 2 */
#define X_MAXK 4
enum { X_CF, X_CB, X_EF, X_DF, X_EB, X_DB, X_UPD, X_N };
static const char *const x_prefix[X_N] = {"cf", "cb", "ef", "df", "eb", "db", "upd"};

typedef struct mrow {
    char method[32], phase[16];
    double v[C_NCOL];
    int K;
    double x[X_N][X_MAXK]; /* every stage's times (K = 2: copied from v) */
} mrow;

/* split a CSV line (no quoting) in place; returns the field count */
static int split_csv(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < max)
            f[n] = p;
        n++;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    char *e = f[n <= max ? n - 1 : max - 1];
    e[strcspn(e, "\r\n")] = '\0';
    return n;
}

static int read_measured(const char *path, mrow **out, int *nrow)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tahq-sim: cannot read %s\n", path);
        return 1;
    }
    char line[8192];
    char *fld[128];
    int idx[C_NCOL];
    if (!fgets(line, sizeof line, f)) {
        fprintf(stderr, "tahq-sim: %s is empty\n", path);
        fclose(f);
        return 2;
    }
    int nf = split_csv(line, fld, 128);
    for (int c = 0; c < C_NCOL; c++) {
        idx[c] = -1;
        for (int j = 0; j < nf && j < 128; j++)
            if (!strcmp(fld[j], col_names[c]))
                idx[c] = j;
        if (idx[c] < 0) {
            fprintf(stderr, "tahq-sim: %s has no column %s (plots/links.py calib writes it)\n",
                    path, col_names[c]);
            fclose(f);
            return 2;
        }
    }
    int kidx = -1, xidx[X_N][X_MAXK];
    for (int j = 0; j < nf && j < 128; j++)
        if (!strcmp(fld[j], "K"))
            kidx = j;
    for (int a = 0; a < X_N; a++)
        for (int k = 0; k < X_MAXK; k++) {
            char nm[16];
            snprintf(nm, sizeof nm, "%s%d", x_prefix[a], k);
            xidx[a][k] = -1;
            for (int j = 0; j < nf && j < 128; j++)
                if (!strcmp(fld[j], nm))
                    xidx[a][k] = j;
        }
    int cap = 64, n = 0;
    mrow *rows = malloc(sizeof *rows * (size_t)cap);
    int lineno = 1;
    while (rows && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        int k = split_csv(line, fld, 128);
        if (k != nf) {
            fprintf(stderr, "tahq-sim: %s line %d: %d fields, the header has %d\n", path, lineno, k,
                    nf);
            free(rows);
            fclose(f);
            return 2;
        }
        if (n == cap) {
            mrow *nr = realloc(rows, sizeof *rows * (size_t)(cap *= 2));
            if (!nr)
                break;
            rows = nr;
        }
        mrow *r = &rows[n];
        snprintf(r->method, sizeof r->method, "%s", fld[idx[C_METHOD]]);
        snprintf(r->phase, sizeof r->phase, "%s", fld[idx[C_PHASE]]);
        for (int c = 0; c < C_NCOL; c++) {
            if (c == C_METHOD || c == C_PHASE)
                continue;
            char *end;
            r->v[c] = strtod(fld[idx[c]], &end);
            if (end == fld[idx[c]] || *end || !isfinite(r->v[c]) || r->v[c] < 0) {
                fprintf(stderr, "tahq-sim: %s line %d: bad %s '%s'\n", path, lineno, col_names[c],
                        fld[idx[c]]);
                free(rows);
                fclose(f);
                return 2;
            }
        }
        r->K = 2;
        if (kidx >= 0) {
            char *end;
            long K = strtol(fld[kidx], &end, 10);
            if (end == fld[kidx] || *end || K < 2 || K > X_MAXK) {
                fprintf(stderr, "tahq-sim: %s line %d: K must be 2..%d, not '%s'\n", path, lineno,
                        X_MAXK, fld[kidx]);
                free(rows);
                fclose(f);
                return 2;
            }
            r->K = (int)K;
        }
        memset(r->x, 0, sizeof r->x);
        for (int a = 0; a < X_N; a++)
            for (int k = 0; k < r->K; k++) {
                if (xidx[a][k] < 0)
                    continue;
                char *end;
                double x = strtod(fld[xidx[a][k]], &end);
                if (end == fld[xidx[a][k]] || *end || !isfinite(x) || x < 0) {
                    fprintf(stderr, "tahq-sim: %s line %d: bad %s%d '%s'\n", path, lineno,
                            x_prefix[a], k, fld[xidx[a][k]]);
                    free(rows);
                    fclose(f);
                    return 2;
                }
                r->x[a][k] = x;
            }
        if (r->K > 2)
            for (int a = 0; a < X_N; a++)
                for (int k = 0; k < r->K; k++)
                    if (xidx[a][k] < 0 && !((a == X_EF || a == X_DB) && k == r->K - 1) &&
                        !((a == X_DF || a == X_EB) && k == 0)) {
                        fprintf(stderr, "tahq-sim: %s: K = %d needs column %s%d\n", path, r->K,
                                x_prefix[a], k);
                        free(rows);
                        fclose(f);
                        return 2;
                    }
        if (r->v[C_LINK] <= 0 || r->v[C_STEP] <= 0 || r->v[C_M] < 1 || r->v[C_M] > 4096) {
            fprintf(stderr, "tahq-sim: %s line %d: link, step_s and M must be positive\n", path,
                    lineno);
            free(rows);
            fclose(f);
            return 2;
        }
        n++;
    }
    fclose(f);
    if (!rows)
        return 1;
    if (n == 0) {
        fprintf(stderr, "tahq-sim: %s has no rows\n", path);
        free(rows);
        return 2;
    }
    *out = rows, *nrow = n;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* a group's parameters: the medians over its links of every time and size */
static void group_params(const mrow *rows, int n, const char *method, const char *phase,
                         lk_params *p)
{
    double v[C_NCOL][64], xv[X_N][X_MAXK][64];
    int k = 0, K = 2;
    for (int i = 0; i < n && k < 64; i++)
        if (!strcmp(rows[i].method, method) && !strcmp(rows[i].phase, phase)) {
            for (int c = 0; c < C_NCOL; c++)
                v[c][k] = rows[i].v[c];
            for (int a = 0; a < X_N; a++)
                for (int j = 0; j < X_MAXK; j++)
                    xv[a][j][k] = rows[i].x[a][j];
            K = rows[i].K;
            k++;
        }
    memset(p, 0, sizeof *p);
    double med[C_NCOL];
    for (int c = 0; c < C_NCOL; c++)
        med[c] = k ? median_of(v[c], k) : 0;
    p->K = K, p->M = (int)med[C_M];
    if (K == 2) {
        p->cf[0] = med[C_CF0], p->cf[1] = med[C_CF1];
        p->cb[0] = med[C_CB0], p->cb[1] = med[C_CB1];
        p->ef[0] = med[C_EF0], p->df[1] = med[C_DF1];
        p->eb[1] = med[C_EB1], p->db[0] = med[C_DB0];
        p->upd[0] = med[C_UPD0], p->upd[1] = med[C_UPD1];
    } else {
        double *dst[X_N] = {p->cf, p->cb, p->ef, p->df, p->eb, p->db, p->upd};
        for (int a = 0; a < X_N; a++)
            for (int j = 0; j < K; j++)
                dst[a][j] = k ? median_of(xv[a][j], k) : 0;
    }
    p->bf = med[C_BF], p->bb = med[C_BB], p->tail_bytes = med[C_TAIL];
    p->lat = med[C_LAT], p->wire = med[C_WIRE] > 0 ? med[C_WIRE] : 1;
    p->eager = LK_EAGER;
}

static FILE *out_file(const char *dir, const char *name)
{
    char path[4096];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tahq-sim: cannot write %s\n", path);
    return f;
}

/* ---------------------------------------------------------------- projection */

/* The paper's setting, every number stated (ASSUMED where nothing here
 * measured it). */
#define GPT_K 8
#define GPT_M 32
#define GPT_LAYERS 48
#define GPT_PARAMS 1.5e9
#define GPT_FLOPS 40e12            /* ASSUMED sustained GPU rate, FLOP/s */
#define GPT_CODEC 0.25e-3          /* ASSUMED GPU time of one encode or one decode, s */
#define GPT_CACHE_BW 25e9          /* ASSUMED host<->GPU bandwidth of AQ-SGD's cache, bytes/s */
#define GPT_WIRE (1514.0 / 1448.0) /* Ethernet MTU 1500: 66 header bytes per 1448 payload */

static void gpt_params(lk_params *p, unsigned S, double bf, double bb, int codec_f, int codec_b,
                       double cache_bytes, double codec, double lat)
{
    memset(p, 0, sizeof *p);
    p->K = GPT_K, p->M = GPT_M;
    /* 2 N tokens FLOP forward, twice that backward, N/K parameters per stage */
    const double fwd = 2.0 * GPT_PARAMS / GPT_K * S / GPT_FLOPS;
    for (int k = 0; k < GPT_K; k++) {
        p->cf[k] = fwd, p->cb[k] = 2 * fwd;
        const double ch = cache_bytes / GPT_CACHE_BW;
        if (k < GPT_K - 1)
            p->ef[k] = (codec_f ? codec : 0) + ch;
        if (k > 0)
            p->df[k] = (codec_f ? codec : 0) + ch;
        if (k > 0)
            p->eb[k] = codec_b ? codec : 0;
        if (k < GPT_K - 1)
            p->db[k] = codec_b ? codec : 0;
    }
    p->bf = bf, p->bb = bb, p->lat = lat, p->wire = GPT_WIRE;
}

static int find_method(int nm, const char *const *names, const char *m)
{
    for (int i = 0; i < nm; i++)
        if (!strcmp(names[i], m))
            return i;
    return -1;
}

/* The message sizes that `throughput` measured (GPT2-XL shape [1, S, C]),
 * per method. */
typedef struct gpt_sizes {
    int nm;
    const char *const *names;
    const double *fb, *bb; /* forward and backward bytes of a micro-batch */
    unsigned S, C;
} gpt_sizes;

static double gpt_step(const gpt_sizes *g, const char *m, int first, double bw, double lat,
                       double codec, int mode)
{
    const unsigned S = g->S, C = g->C;
    int i = find_method(g->nm, g->names, m), i32 = find_method(g->nm, g->names, "fp32");
    lk_params p;
    const int aq = !strcmp(m, "aqsgd"), is32 = !strcmp(m, "fp32");
    /* AQ-SGD's cache: per micro-batch and side of a boundary, the sample's
     * binary16 entry is read and written (steady) or written (first visit) */
    double cache = aq ? (first ? 1.0 : 2.0) * S * C * 2.0 : 0;
    double f = aq && first ? g->fb[i32] : g->fb[i];
    gpt_params(&p, S, f, g->bb[i], !is32 && !(aq && first), !is32, cache, codec, lat);
    p.bw = bw;
    return lk_step(&p, mode);
}

/* The link rates (Mbit/s) of the AQ-SGD over TAH comparisons. */
static const double ebw[] = {1000, 500, 100};

/* The measured rows grouped by (method, phase) in first-seen order, and
 * the model's parameters of each group. */
typedef struct calib_groups {
    char gm[32][32], gp[32][16];
    int ng;
    lk_params gpar[32];
} calib_groups;

static void calib_group(const mrow *rows, int n, calib_groups *cg)
{
    cg->ng = 0;
    for (int i = 0; i < n; i++) {
        int g = 0;
        while (g < cg->ng &&
               (strcmp(cg->gm[g], rows[i].method) || strcmp(cg->gp[g], rows[i].phase)))
            g++;
        if (g == cg->ng && cg->ng < 32) {
            snprintf(cg->gm[cg->ng], sizeof cg->gm[cg->ng], "%s", rows[i].method);
            snprintf(cg->gp[cg->ng], sizeof cg->gp[cg->ng], "%s", rows[i].phase);
            cg->ng++;
        }
    }
    for (int g = 0; g < cg->ng; g++)
        group_params(rows, n, cg->gm[g], cg->gp[g], &cg->gpar[g]);
}

/* The group of (method, phase), or -1. */
static int calib_group_of(const calib_groups *cg, const char *method, const char *phase)
{
    for (int g = 0; g < cg->ng; g++)
        if (!strcmp(cg->gm[g], method) && !strcmp(cg->gp[g], phase))
            return g;
    return -1;
}

/* 1. model vs measurement at every measured point (links_model_points.csv
 * and stdout); returns the kind of send that fits best (LK_OVERLAP,
 * LK_BLOCKING, LK_PROTOCOL), or -1 when the file cannot be written. */
static int calib_points(const char *measured, const char *outdir, const mrow *rows, int n,
                        const calib_groups *cg)
{
    FILE *fp = out_file(outdir, "links_model_points.csv");
    if (!fp)
        return -1;
    fprintf(fp, "link_mbps,method,phase,n,measured_s,measured_min_s,measured_max_s,model_overlap_s,"
                "model_blocking_s,model_protocol_s,resid_overlap,resid_blocking,resid_protocol\n");
    double ss[3] = {0, 0, 0}, mx[3] = {0, 0, 0};
    double absr[3][256];
    int nr = 0;
    printf("calibration: %s, %d points; per (method, phase) the medians over the links of the "
           "measured\n"
           "compute, codec and update times and message bytes; the link rate from the row\n",
           measured, n);
    printf("%7s %-9s %-6s %10s %10s %10s %10s %8s %8s %8s\n", "Mbit/s", "method", "phase",
           "measured", "overlap", "blocking", "protocol", "r_ovl", "r_blk", "r_prot");
    for (int i = 0; i < n; i++) {
        lk_params p = cg->gpar[calib_group_of(cg, rows[i].method, rows[i].phase)];
        p.bw = rows[i].v[C_LINK] * 1e6;
        double mo = lk_step(&p, 0), mb = lk_step(&p, 1), mp = lk_step(&p, 2),
               me = rows[i].v[C_STEP];
        double r0 = mo / me - 1, r1 = mb / me - 1, r2 = mp / me - 1;
        fprintf(fp, "%.0f,%s,%s,%.0f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f\n",
                rows[i].v[C_LINK], rows[i].method, rows[i].phase, rows[i].v[C_N], me,
                rows[i].v[C_STEPMIN], rows[i].v[C_STEPMAX], mo, mb, mp, r0, r1, r2);
        printf("%7.0f %-9s %-6s %10.4f %10.4f %10.4f %10.4f %+7.1f%% %+7.1f%% %+7.1f%%\n",
               rows[i].v[C_LINK], rows[i].method, rows[i].phase, me, mo, mb, mp, 100 * r0, 100 * r1,
               100 * r2);
        double r[3] = {r0, r1, r2};
        for (int j = 0; j < 3; j++) {
            ss[j] += r[j] * r[j];
            mx[j] = fmax(mx[j], fabs(r[j]));
            if (nr < 256)
                absr[j][nr] = fabs(r[j]);
        }
        if (nr < 256)
            nr++;
    }
    fclose(fp);
    const char *mode_name[3] = {"overlap", "blocking", "protocol (blocking above the eager limit)"};
    double rms[3];
    for (int j = 0; j < 3; j++) {
        rms[j] = sqrt(ss[j] / n);
        printf("residuals (model/measured - 1), %s sends: RMS %.1f%%, median |r| %.1f%%, max |r| "
               "%.1f%%\n",
               mode_name[j], 100 * rms[j], 100 * median_of(absr[j], nr), 100 * mx[j]);
    }
    const int best = rms[1] < rms[0] ? (rms[2] < rms[1] ? 2 : 1) : (rms[2] < rms[0] ? 2 : 0);
    printf("the better fit: %s sends (used for the curves below)\n", mode_name[best]);
    return best;
}

/* 2. model curves over bandwidth, this machine's parameters
 * (links_model_curve.csv) */
static void calib_curves(const char *outdir, const mrow *rows, int n, const calib_groups *cg,
                         int best)
{
    FILE *fc = out_file(outdir, "links_model_curve.csv");
    const int g32 = calib_group_of(cg, "fp32", "steady");
    if (fc) {
        fprintf(
            fc,
            "bw_mbps,method,phase,model_overlap_s,model_blocking_s,model_protocol_s,tokens_per_s,"
            "speedup_vs_fp32\n");
        for (int b = 0; b <= 86; b++) {
            double mbps = pow(10.0, b / 20.0); /* 1 Mbit/s .. 20 Gbit/s */
            double base = 0;
            if (g32 >= 0) {
                lk_params p = cg->gpar[g32];
                p.bw = mbps * 1e6;
                base = lk_step(&p, best);
            }
            for (int g = 0; g < cg->ng; g++) {
                lk_params p = cg->gpar[g];
                p.bw = mbps * 1e6;
                double so = lk_step(&p, 0), sb = lk_step(&p, 1), sp = lk_step(&p, 2);
                double s = best == 0 ? so : best == 1 ? sb : sp;
                double tok = 0;
                for (int i = 0; i < n; i++)
                    if (!strcmp(rows[i].method, cg->gm[g]))
                        tok = rows[i].v[C_TOK];
                fprintf(fc, "%.3f,%s,%s,%.6f,%.6f,%.6f,%.2f,%.4f\n", mbps, cg->gm[g], cg->gp[g], so,
                        sb, sp, tok / s, base > 0 ? base / s : NAN);
            }
        }
        fclose(fc);
    }
}

/* 3. AQ-SGD over TAH vs epochs: this machine (model, calibrated) and the
 * paper's setting (projection), at 1 Gbit/s, 500 and 100 Mbit/s
 * (links_epochs.csv) */
static void calib_epochs(const char *outdir, const calib_groups *cg, const gpt_sizes *g, int best)
{
    FILE *fe = out_file(outdir, "links_epochs.csv");
    const int ga = calib_group_of(cg, "aqsgd", "steady"),
              gaf = calib_group_of(cg, "aqsgd", "first"), gt = calib_group_of(cg, "tah", "steady");
    if (fe) {
        fprintf(fe, "setting,bw_mbps,epochs,aqsgd_over_tah\n");
        for (int b = 0; b < 3; b++)
            for (int E = 1; E <= 30; E++) {
                if (ga >= 0 && gaf >= 0 && gt >= 0) {
                    lk_params pa = cg->gpar[ga], pf = cg->gpar[gaf], pt = cg->gpar[gt];
                    pa.bw = pf.bw = pt.bw = ebw[b] * 1e6;
                    double r = (lk_step(&pf, best) + (E - 1) * lk_step(&pa, best)) /
                               (E * lk_step(&pt, best));
                    fprintf(fe, "machine,%.0f,%d,%.4f\n", ebw[b], E, r);
                }
                double t = gpt_step(g, "tah", 0, ebw[b] * 1e6, 1e-3, GPT_CODEC, 0);
                double a = gpt_step(g, "aqsgd", 0, ebw[b] * 1e6, 1e-3, GPT_CODEC, 0);
                double af = gpt_step(g, "aqsgd", 1, ebw[b] * 1e6, 1e-3, GPT_CODEC, 0);
                fprintf(fe, "gpt2xl,%.0f,%d,%.4f\n", ebw[b], E, (af + (E - 1) * a) / (E * t));
            }
        fclose(fe);
    }
}

/* 3b. the paper's setting with either kind of send, latency 1 ms and the
 * assumed codec time, over 1 Mbit/s .. 100 Gbit/s: the curves the
 * measured speed-ups are set against once their link rates are mapped
 * to the paper's (plots/links.py netbound; links_projection_modes.csv) */
static void projection_modes(const char *outdir, const gpt_sizes *g)
{
    FILE *fpb = out_file(outdir, "links_projection_modes.csv");
    if (fpb) {
        static const char *const pmm[] = {"fp32", "fp16", "aqsgd", "tah", "tah-tile", "plain4"};
        fprintf(fpb, "send,bw_mbps,method,phase,step_s,speedup_vs_fp32\n");
        for (int mode = 0; mode <= 1; mode++)
            for (int b = 0; b <= 100; b++) {
                double mbps = pow(10.0, b / 20.0), bw = mbps * 1e6;
                double s32 = gpt_step(g, "fp32", 0, bw, 1e-3, GPT_CODEC, mode);
                for (int i = 0; i < 6; i++) {
                    if (find_method(g->nm, g->names, pmm[i]) < 0)
                        continue;
                    for (int first = 0; first <= !strcmp(pmm[i], "aqsgd"); first++) {
                        double st = gpt_step(g, pmm[i], first, bw, 1e-3, GPT_CODEC, mode);
                        fprintf(fpb, "%s,%.3f,%s,%s,%.6f,%.4f\n", mode ? "blocking" : "overlap",
                                mbps, pmm[i], first ? "first" : "steady", st, s32 / st);
                    }
                }
            }
        fclose(fpb);
    }
}

/* The projection's assumptions, on each of outs[] that is open. */
static void projection_assumptions(FILE *const outs[2], const gpt_sizes *g)
{
    const unsigned S = g->S, C = g->C;
    const double fwd_ms = 1e3 * 2.0 * GPT_PARAMS / GPT_K * S / GPT_FLOPS;
    for (int o = 0; o < 2; o++) {
        FILE *f = outs[o];
        if (!f)
            continue;
        fprintf(f,
                "\nprojection to the paper's setting (the event model, overlapped sends):\n"
                "  GPT2-XL shape: %.1fB parameters, %d layers, C=%u; K=%d stages, M=%d "
                "micro-batches of\n"
                "  [1, %u, %u] per step (GPipe)\n"
                "  compute per stage and micro-batch: forward %.1f ms, backward %.1f ms "
                "(2*N*tokens FLOP\n"
                "  forward, twice that backward, N/K parameters per stage, at %.0f TFLOP/s "
                "sustained: ASSUMED)\n"
                "  codec: %.2f ms per encode and per decode on the GPU (ASSUMED: no GPU run of "
                "kernels/ exists\n"
                "  yet; the sensitivity rows use 0 and 1 ms); fp32 has none\n"
                "  message bytes: measured here by `throughput` on LLM-like [1, %u, %u] values "
                "(fwd per method,\n"
                "  bwd fixpoint 6-bit for the compressed methods, fp32 for fp32)\n"
                "  AQ-SGD: first epoch sends fp32 forward; its cache (binary16, %.2f MB per sample "
                "and side of a\n"
                "  boundary) lives in host memory: %.2f ms per micro-batch and side to read and "
                "write it at\n"
                "  %.0f GB/s (ASSUMED host<->GPU rate), %.2f ms to write it in the first epoch\n"
                "  link: one full-duplex link per boundary, Ethernet MTU 1500 (x%.4f wire bytes), "
                "latency\n"
                "  per message as listed; no tied-embedding exchange and no optimizer time (as the "
                "closed-form\n"
                "  model)\n",
                GPT_PARAMS / 1e9, GPT_LAYERS, C, GPT_K, GPT_M, S, C, fwd_ms, 2 * fwd_ms,
                GPT_FLOPS / 1e12, 1e3 * GPT_CODEC, S, C, 2.0 * S * C / 1e6,
                1e3 * 2.0 * S * C * 2 / GPT_CACHE_BW, GPT_CACHE_BW / 1e9,
                1e3 * 2.0 * S * C / GPT_CACHE_BW, GPT_WIRE);
    }
}

static const double lats[] = {0.1e-3, 1e-3, 10e-3}, codecs[] = {0, GPT_CODEC, 1e-3};

/* links_projection.csv: every method's step over 10 Mbit/s .. 10 Gbit/s,
 * per latency and codec time */
static void projection_csv(FILE *fj, const gpt_sizes *g, const char *const pm[6])
{
    const unsigned S = g->S;
    fprintf(fj, "lat_ms,codec_ms,bw_mbps,method,phase,step_s,tokens_per_s,speedup_vs_fp32\n");
    for (int li = 0; li < 3; li++)
        for (int ci = 0; ci < 3; ci++)
            for (int b = 0; b <= 90; b++) {
                double mbps = 10.0 * pow(1000.0, b / 90.0), bw = mbps * 1e6;
                double s32 = gpt_step(g, "fp32", 0, bw, lats[li], codecs[ci], 0);
                for (int i = 0; i < 6; i++)
                    for (int first = 0; first <= !strcmp(pm[i], "aqsgd"); first++) {
                        double st = gpt_step(g, pm[i], first, bw, lats[li], codecs[ci], 0);
                        fprintf(fj, "%.1f,%.2f,%.3f,%s,%s,%.6f,%.1f,%.4f\n", 1e3 * lats[li],
                                1e3 * codecs[ci], mbps, pm[i], first ? "first" : "steady", st,
                                (double)GPT_M * S / st, s32 / st);
                    }
            }
}

/* TAH over fp32 in the paper's setting, on each of outs[] that is open */
static void projection_tah(FILE *const outs[2], const gpt_sizes *g)
{
    static const double atbw[] = {10e9, 1e9, 500e6, 100e6};
    /* TAH over fp32: its largest value, where it is at least 4.3 (a fine
     * grid, 1 Mbit/s .. 100 Gbit/s), and at three link rates */
    for (int o = 0; o < 2; o++)
        if (outs[o])
            fprintf(
                outs[o],
                "\nTAH over fp32 (steady state):\n%7s %8s | %6s %9s | %-26s | %7s %7s %7s %7s\n",
                "lat ms", "codec ms", "max", "at Mbit/s", ">= 4.3x at link rates", "10 Gb/s",
                "1 Gb/s", "500 Mb/s", "100 Mb/s");
    for (int li = 0; li < 3; li++)
        for (int ci = 0; ci < 3; ci++) {
            double best_s = 0, best_bw = 0, lo = -1, hi = -1;
            for (int b = 0; b <= 500; b++) {
                double mbps = pow(10.0, 5.0 * b / 500.0),
                       bw = mbps * 1e6; /* 1 Mbit/s .. 100 Gbit/s */
                double sp = gpt_step(g, "fp32", 0, bw, lats[li], codecs[ci], 0) /
                            gpt_step(g, "tah", 0, bw, lats[li], codecs[ci], 0);
                if (sp > best_s)
                    best_s = sp, best_bw = mbps;
                if (sp >= 4.3) {
                    hi = hi < 0 || mbps > hi ? mbps : hi;
                    lo = lo < 0 || mbps < lo ? mbps : lo;
                }
            }
            char cond[64];
            if (lo < 0)
                snprintf(cond, sizeof cond, "never");
            else if (lo <= 1.0)
                snprintf(cond, sizeof cond, "<= %.0f Mbit/s", hi);
            else
                snprintf(cond, sizeof cond, "%.0f..%.0f Mbit/s", lo, hi);
            double at[4];
            for (int b = 0; b < 4; b++)
                at[b] = gpt_step(g, "fp32", 0, atbw[b], lats[li], codecs[ci], 0) /
                        gpt_step(g, "tah", 0, atbw[b], lats[li], codecs[ci], 0);
            for (int o = 0; o < 2; o++)
                if (outs[o])
                    fprintf(outs[o],
                            "%7.1f %8.2f | %5.2fx %9.0f | %-26s | %6.2fx %6.2fx %7.2fx %7.2fx\n",
                            1e3 * lats[li], 1e3 * codecs[ci], best_s, best_bw, cond, at[0], at[1],
                            at[2], at[3]);
        }
    double at[4];
    for (int b = 0; b < 4; b++)
        at[b] = gpt_step(g, "fp32", 0, atbw[b], 1e-3, GPT_CODEC, 1) /
                gpt_step(g, "tah", 0, atbw[b], 1e-3, GPT_CODEC, 1);
    for (int o = 0; o < 2; o++)
        if (outs[o])
            fprintf(outs[o],
                    "with blocking (rendezvous) sends instead, lat 1 ms, codec %.2f ms: "
                    "%.2fx, %.2fx, %.2fx, %.2fx at 10 Gb/s, 1 Gb/s, 500 Mb/s, 100 Mb/s\n",
                    1e3 * GPT_CODEC, at[0], at[1], at[2], at[3]);
}

/* AQ-SGD over TAH in the paper's setting, on each of outs[] that is open */
static void projection_aqsgd(FILE *const outs[2], const gpt_sizes *g)
{
    /* AQ-SGD over TAH: AQ-SGD's mean step over E epochs, the first at full
     * precision, over TAH's step; E* where it falls to 1.33 */
    for (int o = 0; o < 2; o++)
        if (outs[o])
            fprintf(outs[o],
                    "\nAQ-SGD (mean over E epochs, the first in fp32) over TAH:\n%7s %8s %9s | %6s "
                    "%6s %6s %6s "
                    "%6s %6s | %s\n",
                    "lat ms", "codec ms", "Mbit/s", "E=1", "E=2", "E=5", "E=10", "E=20", "E=inf",
                    "1.33x at E");
    for (int li = 0; li < 3; li++)
        for (int ci = 0; ci < 3; ci++)
            for (int b = 0; b < 3; b++) {
                double bw = ebw[b] * 1e6;
                double t = gpt_step(g, "tah", 0, bw, lats[li], codecs[ci], 0);
                double a = gpt_step(g, "aqsgd", 0, bw, lats[li], codecs[ci], 0);
                double af = gpt_step(g, "aqsgd", 1, bw, lats[li], codecs[ci], 0);
                /* (af + (E-1) a) / (E t) = 1.33  <=>  E = (af - a) / (1.33 t - a) */
                double es = 1.33 * t > a ? (af - a) / (1.33 * t - a) : INFINITY;
                static const int Es[] = {1, 2, 5, 10, 20};
                for (int o = 0; o < 2; o++) {
                    if (!outs[o])
                        continue;
                    fprintf(outs[o], "%7.1f %8.2f %9.0f |", 1e3 * lats[li], 1e3 * codecs[ci],
                            ebw[b]);
                    for (int e = 0; e < 5; e++)
                        fprintf(outs[o], " %6.2f", (af + (Es[e] - 1) * a) / (Es[e] * t));
                    fprintf(outs[o], " %6.2f | %.1f\n", a / t, es);
                }
            }
}

int lk_calibrate(const char *measured, const char *outdir, int nm, const char *const *names,
                 const double *fb, const double *bb, unsigned S, unsigned C)
{
    mrow *rows = NULL;
    int n = 0;
    int rc = read_measured(measured, &rows, &n);
    if (rc)
        return rc;
    calib_groups cg;
    calib_group(rows, n, &cg);
    const int best = calib_points(measured, outdir, rows, n, &cg);
    if (best < 0) {
        free(rows);
        return 1;
    }
    const gpt_sizes g = {nm, names, fb, bb, S, C};
    calib_curves(outdir, rows, n, &cg, best);
    calib_epochs(outdir, &cg, &g, best);
    projection_modes(outdir, &g);

    /* 4. the projection to the paper's setting */
    FILE *fj = out_file(outdir, "links_projection.csv");
    FILE *ft = out_file(outdir, "links_projection.txt");
    static const char *const pm[] = {"fp32", "fp16", "aqsgd", "tah", "tah-tile", "plain4"};
    for (int i = 0; i < 6; i++)
        if (find_method(nm, names, pm[i]) < 0) {
            fprintf(stderr, "tahq-sim: the projection needs method %s's message sizes\n", pm[i]);
            free(rows);
            if (fj)
                fclose(fj);
            if (ft)
                fclose(ft);
            return 1;
        }
    FILE *const outs[2] = {stdout, ft};
    projection_assumptions(outs, &g);
    if (fj)
        projection_csv(fj, &g, pm);
    projection_tah(outs, &g);
    projection_aqsgd(outs, &g);
    if (fj)
        fclose(fj);
    if (ft)
        fclose(ft);
    free(rows);
    return 0;
}
