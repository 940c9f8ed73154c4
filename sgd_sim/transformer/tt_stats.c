/* SPDX-License-Identifier: MIT */
/* tt_stats.c - boundary activation statistics and .npy dumps (tt_stats.h). */
#include "tt_stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the gate and the allocation under cfg, from the message itself */
static int gate(const float *y, int B, int T, int C, const tahq_config *cfg, tt_act_stats *s,
                const char **err)
{
    tahq_shape sh = {(uint32_t)B, (uint32_t)T, (uint32_t)C};
    size_t cap = 0, wcap = 0, len = 0;
    const size_t n_tiles = (size_t)B * T * (C / cfg->tile);
    tahq_status st = tahq_encode_bound(cfg, &sh, &cap);
    if (st == TAHQ_OK)
        st = tahq_encode_workspace_size(cfg, &sh, &wcap);
    if (st != TAHQ_OK) {
        *err = tahq_strerror(st);
        return 1;
    }
    uint8_t *msg = malloc(cap);
    void *ws = malloc(wcap ? wcap : 1);
    tahq_tile_info *info = malloc(sizeof *info * n_tiles);
    if (!msg || !ws || !info) {
        free(msg);
        free(ws);
        free(info);
        *err = "out of memory";
        return 1;
    }
    st = tahq_encode(cfg, &sh, y, ws, wcap, msg, cap, &len);
    if (st == TAHQ_OK)
        st = tahq_tile_infos(msg, len, info, n_tiles);
    if (st == TAHQ_OK) {
        size_t fl = 0, lo = 0;
        for (size_t i = 0; i < n_tiles; i++) {
            fl += info[i].flagged != 0;
            lo += cfg->lo_bits < cfg->hi_bits && info[i].bits == cfg->lo_bits;
        }
        s->tiles = (double)n_tiles;
        s->flagged_share = (double)fl / (double)n_tiles;
        s->low_share = (double)lo / (double)n_tiles;
    } else {
        *err = tahq_strerror(st);
    }
    free(msg);
    free(ws);
    free(info);
    return st != TAHQ_OK;
}

int tt_act_stats_compute(const float *y, int B, int T, int C, const tahq_config *cfg,
                         tt_act_stats *s, const char **err)
{
    memset(s, 0, sizeof *s);
    *err = NULL;
    const size_t rows = (size_t)B * T, n = rows * (size_t)C;
    double *ss = calloc((size_t)C, sizeof(double)), *rms = malloc(sizeof(double) * (size_t)C);
    if (!ss || !rms) {
        free(ss);
        free(rms);
        *err = "out of memory";
        return 1;
    }
    double sum = 0, amax = 0;
    for (size_t i = 0; i < rows; i++)
        for (int c = 0; c < C; c++) {
            double v = y[i * (size_t)C + (size_t)c];
            ss[c] += v * v;
            sum += v;
            if (fabs(v) > amax)
                amax = fabs(v);
        }
    const double mu = sum / (double)n;
    double m2 = 0, m4 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)y[i] - mu, d2 = d * d;
        m2 += d2;
        m4 += d2 * d2;
    }
    m2 /= (double)n, m4 /= (double)n;
    s->kurtosis = m2 > 0 ? m4 / (m2 * m2) - 3.0 : 0.0;
    s->absmax = amax;
    for (int c = 0; c < C; c++)
        rms[c] = ss[c] = sqrt(ss[c] / (double)rows);
    qsort(rms, (size_t)C, sizeof(double), cmp_double);
    s->rms_min = rms[0];
    s->rms_max = rms[C - 1];
    s->rms_median = C % 2 ? rms[C / 2] : 0.5 * (rms[C / 2 - 1] + rms[C / 2]);
    /* the largest RMS first; ties: the lower channel index */
    for (int k = 0; k < TT_STATS_TOP; k++) {
        int best = -1;
        for (int c = 0; c < C; c++)
            if (ss[c] >= 0 && (best < 0 || ss[c] > ss[best]))
                best = c;
        if (best < 0) {
            s->top_ch[k] = -1;
            continue;
        }
        s->top_ch[k] = best;
        s->top_ratio[k] = s->rms_median > 0 ? ss[best] / s->rms_median : 0.0;
        ss[best] = -1;
    }
    free(ss);
    free(rms);
    if (cfg && cfg->tile && C % (int)cfg->tile == 0)
        return gate(y, B, T, C, cfg, s, err);
    return 0;
}

const char *tt_act_stats_header(void)
{
    return "step,boundary,rms_min,rms_median,rms_max,absmax,excess_kurtosis,"
           "top1_ch,top1_ratio,top2_ch,top2_ratio,top3_ch,top3_ratio,top4_ch,top4_ratio,"
           "top5_ch,top5_ratio,gate,tiles,flagged_share,low_share";
}

void tt_act_stats_row(char *out, size_t n, int step, int boundary, const char *gate_name,
                      const tt_act_stats *s)
{
    size_t l = (size_t)snprintf(out, n, "%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g", step, boundary,
                                s->rms_min, s->rms_median, s->rms_max, s->absmax, s->kurtosis);
    for (int k = 0; k < TT_STATS_TOP && l < n; k++)
        l += (size_t)snprintf(out + l, n - l, ",%d,%.4f", (int)s->top_ch[k], s->top_ratio[k]);
    if (l >= n)
        return;
    if (s->tiles > 0)
        snprintf(out + l, n - l, ",%s,%.0f,%.6f,%.6f", gate_name, s->tiles, s->flagged_share,
                 s->low_share);
    else
        snprintf(out + l, n - l, ",,,,");
}

int tt_npy_write(const char *path, int B, int T, int C, const float *y)
{
    /* magic, version 1.0, header length (little-endian uint16), then the
     * header dict padded with spaces and a newline to a multiple of 64 */
    char dict[128];
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", B, T, C);
    size_t total = (10u + (size_t)dl + 1u + 63u) / 64u * 64u, hlen = total - 10u;
    unsigned char head[192];
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (unsigned char)(hlen & 0xFF);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)dl);
    memset(head + 10 + dl, ' ', hlen - (size_t)dl - 1);
    head[total - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f)
        return errno ? errno : EIO;
    int bad = fwrite(head, 1, total, f) != total;
    const size_t n = (size_t)B * T * C;
    unsigned char buf[4096];
    for (size_t i = 0; i < n && !bad;) {
        size_t k = 0;
        for (; k < sizeof buf / 4 && i < n; k++, i++) {
            uint32_t v;
            memcpy(&v, &y[i], 4);
            for (int b = 0; b < 4; b++)
                buf[4 * k + b] = (unsigned char)(v >> (8 * b));
        }
        bad = fwrite(buf, 4, k, f) != k;
    }
    if (fclose(f) || bad)
        return errno ? errno : EIO;
    return 0;
}
