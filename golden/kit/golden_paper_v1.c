/* SPDX-License-Identifier: MIT */
/* golden_paper_v1.c - configuration line and tolerant comparison of the
 * paper_v1 golden cases (golden/README.md, ref/SPEC.md Appendix A.5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"
#include "golden_paper_v1.h"

void golden_pv1_config_json(char *buf, size_t n, const tahq_paper_v1_config *cfg)
{
    snprintf(buf, n,
             "{\"profile\":\"paper-v1\",\"tile\":%u,\"hi_bits\":%u,\"lo_bits\":%u,"
             "\"hi_permille\":%u}",
             (unsigned)cfg->tile, (unsigned)cfg->hi_bits, (unsigned)cfg->lo_bits,
             (unsigned)cfg->hi_permille);
}

int golden_pv1_config_parse(const json_t *o, tahq_paper_v1_config *cfg, char *err, size_t errlen)
{
    uint64_t tile, hi, lo, r;
    const char *profile;
    if (!json_is_object(o) || golden_json_str(o, "profile", &profile) ||
        golden_json_u64(o, "tile", &tile) || golden_json_u64(o, "hi_bits", &hi) ||
        golden_json_u64(o, "lo_bits", &lo) || golden_json_u64(o, "hi_permille", &r)) {
        snprintf(err, errlen, "paper-v1 config: a field is missing or of the wrong type");
        return -1;
    }
    if (strcmp(profile, "paper-v1") != 0 || tile > UINT32_MAX || hi > UINT32_MAX ||
        lo > UINT32_MAX || r > UINT32_MAX) {
        snprintf(err, errlen, "paper-v1 config: profile or a number out of range");
        return -1;
    }
    cfg->tile = (uint32_t)tile;
    cfg->hi_bits = (uint32_t)hi;
    cfg->lo_bits = (uint32_t)lo;
    cfg->hi_permille = (uint32_t)r;
    return 0;
}

typedef struct pv1_fields {
    uint8_t *map, *flags, *codes;
    uint16_t *piv, *zero, *scale;
} pv1_fields;

static void fields_free(pv1_fields *f)
{
    free(f->map);
    free(f->flags);
    free(f->codes);
    free(f->piv);
    free(f->zero);
    free(f->scale);
}

static tahq_status unpack(const tahq_paper_v1_config *cfg, const tahq_shape *s, const uint8_t *m,
                          size_t len, pv1_fields *f)
{
    uint64_t rows = (uint64_t)s->batch * s->seq_len, n = rows * s->channels;
    uint64_t N = n / cfg->tile;
    memset(f, 0, sizeof *f);
    f->map = malloc(rows);
    f->flags = malloc(N);
    f->codes = malloc(n);
    f->piv = malloc(N * 2);
    f->zero = malloc(N * 2);
    f->scale = malloc(N * 2);
    if (!f->map || !f->flags || !f->codes || !f->piv || !f->zero || !f->scale)
        return TAHQ_ERR_BUFFER;
    return tahq_paper_v1_unpack(m, len, cfg, s, f->map, f->flags, f->piv, f->zero, f->scale,
                                f->codes, NULL);
}

/* fp16 patterns as integers ordered like their values */
static int32_t f16_order(uint16_t h)
{
    return (h & 0x8000u) ? -(int32_t)(h & 0x7FFFu) : (int32_t)h;
}

int golden_pv1_compare_message(const tahq_paper_v1_config *cfg, const tahq_shape *shape,
                               const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen,
                               int *exact, char *detail, size_t n, const char **field)
{
    *exact = elen == glen && memcmp(exp, got, elen) == 0;
    *field = NULL;
    if (*exact) {
        snprintf(detail, n, "bit-exact");
        return 1;
    }
    pv1_fields e, g;
    tahq_status se = unpack(cfg, shape, exp, elen, &e);
    tahq_status sg = se == TAHQ_OK ? unpack(cfg, shape, got, glen, &g) : TAHQ_OK;
    if (se != TAHQ_OK || sg != TAHQ_OK) {
        snprintf(detail, n, "%s message does not decode: %s",
                 se != TAHQ_OK ? "expected" : "candidate", tahq_status_name(se ? se : sg));
        *field = "message";
        fields_free(&e);
        if (se == TAHQ_OK)
            fields_free(&g);
        return 0;
    }
    uint64_t rows = (uint64_t)shape->batch * shape->seq_len, cnt = rows * shape->channels;
    uint64_t N = cnt / cfg->tile;
    uint64_t d_map = 0, d_flag = 0, d_piv = 0, d_code = 0, d_code_big = 0, d_zero = 0, d_scale = 0,
             d_meta_big = 0;
    for (uint64_t r = 0; r < rows; r++)
        d_map += e.map[r] != g.map[r];
    for (uint64_t t = 0; t < N; t++) {
        d_flag += e.flags[t] != g.flags[t];
        d_piv += e.flags[t] && g.flags[t] && e.piv[t] != g.piv[t];
        int32_t dz = f16_order(e.zero[t]) - f16_order(g.zero[t]);
        int32_t ds = f16_order(e.scale[t]) - f16_order(g.scale[t]);
        d_zero += dz != 0;
        d_scale += ds != 0;
        d_meta_big += (dz > 1 || dz < -1) + (ds > 1 || ds < -1);
    }
    for (uint64_t i = 0; i < cnt; i++) {
        int d = (int)e.codes[i] - (int)g.codes[i];
        d_code += d != 0;
        d_code_big += d > 1 || d < -1;
    }
    double rate = (double)d_code / (double)cnt;
    int ok = d_map == 0 && d_flag == 0 && d_piv == 0 && d_code_big == 0 &&
             rate <= GOLDEN_PV1_CODE_RATE && d_meta_big == 0;
    if (d_map)
        *field = "token_bitmap";
    else if (d_flag)
        *field = "tile_flags";
    else if (d_piv)
        *field = "pivots";
    else if (d_code_big || rate > GOLDEN_PV1_CODE_RATE)
        *field = "codes";
    else if (d_meta_big)
        *field = "zero_points/scales";
    snprintf(detail, n,
             "%s: bitmap %llu, flags %llu, pivots %llu differ; codes %llu of %llu differ "
             "(rate %.3g, %llu by more than 1); zero points %llu, scales %llu differ "
             "(%llu by more than 1 fp16 ulp)",
             ok ? "within tolerance" : "outside tolerance", (unsigned long long)d_map,
             (unsigned long long)d_flag, (unsigned long long)d_piv, (unsigned long long)d_code,
             (unsigned long long)cnt, rate, (unsigned long long)d_code_big,
             (unsigned long long)d_zero, (unsigned long long)d_scale,
             (unsigned long long)d_meta_big);
    fields_free(&e);
    fields_free(&g);
    return ok;
}

int golden_pv1_compare_decoded(const tahq_paper_v1_config *cfg, const float *exp, const float *got,
                               uint64_t count, int *exact, char *detail, size_t n)
{
    uint64_t G = cfg->tile, diff = 0, bad = 0, first_bad = 0;
    double worst = 0.0;
    for (uint64_t t = 0; t * G < count; t++) {
        double m = 0.0;
        for (uint64_t i = 0; i < G; i++) {
            double a = fabs((double)exp[t * G + i]);
            if (isfinite(a) && a > m)
                m = a;
        }
        double tol = GOLDEN_PV1_VALUE_REL * m;
        for (uint64_t i = 0; i < G; i++) {
            float a = exp[t * G + i], b = got[t * G + i];
            if (memcmp(&a, &b, sizeof a) == 0)
                continue;
            diff++;
            double d = fabs((double)a - (double)b);
            if (!(d <= tol) && !(isnan(a) && isnan(b))) {
                if (bad++ == 0)
                    first_bad = t * G + i;
            }
            if (m > 0.0 && d / m > worst)
                worst = d / m;
        }
    }
    *exact = diff == 0;
    if (diff == 0)
        snprintf(detail, n, "bit-exact");
    else if (bad == 0)
        snprintf(detail, n,
                 "within tolerance: %llu of %llu values differ (rate %.3g), largest "
                 "|difference| / tile max %.3g <= 2^-14",
                 (unsigned long long)diff, (unsigned long long)count, (double)diff / (double)count,
                 worst);
    else
        snprintf(detail, n,
                 "outside tolerance: %llu of %llu values beyond 2^-14 of their tile's max "
                 "(first at element %llu: expected %.9g, got %.9g); %llu differ in all",
                 (unsigned long long)bad, (unsigned long long)count, (unsigned long long)first_bad,
                 (double)exp[first_bad], (double)got[first_bad], (unsigned long long)diff);
    return bad == 0;
}
