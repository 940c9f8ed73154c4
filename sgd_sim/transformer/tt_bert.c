/* SPDX-License-Identifier: MIT */
/* tt_bert.c - the BERT encoder (tt_bert.h): both instantiations of
 * tt_bert.inc, config.json and the pretrained checkpoint. */
#include "tt_bert.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* tensor identities for the initialisation, apart from tt_model.c's */
#define TB_ID_WTE 11u
#define TB_ID_WPE 12u
#define TB_ID_WTT 13u
#define TB_ID_BLOCK(l) (UINT64_C(5000) + UINT64_C(16) * (uint64_t)(l))

const char *tb_config_check(const tb_config *cfg)
{
    if (cfg->V < 2 || cfg->V > 1000000)
        return "vocab_size must be in 2..1000000";
    if (cfg->C < 1 || cfg->C > 8192)
        return "hidden_size must be in 1..8192";
    if (cfg->NH < 1 || cfg->C % cfg->NH)
        return "num_attention_heads must divide hidden_size";
    if (cfg->F < 1 || cfg->F > 65536)
        return "intermediate_size must be in 1..65536";
    if (cfg->L < 1 || cfg->L > 256)
        return "num_hidden_layers must be in 1..256";
    if (cfg->P < 1 || cfg->P > 65536)
        return "max_position_embeddings must be in 1..65536";
    if (cfg->TV < 1 || cfg->TV > 16)
        return "type_vocab_size must be in 1..16";
    if (!(cfg->eps > 0 && cfg->eps < 1))
        return "layer_norm_eps must be in (0, 1)";
    return NULL;
}

size_t tb_model_params(const tb_config *cfg)
{
    const size_t C = (size_t)cfg->C, F = (size_t)cfg->F;
    const size_t block = 3 * C * C + 3 * C + C * C + C + 2 * C + C * F + F + F * C + C + 2 * C;
    return (size_t)cfg->V * C + (size_t)cfg->P * C + (size_t)cfg->TV * C + 2 * C +
           (size_t)cfg->L * block + C * C + 3 * C;
}

static int cfg_int(json_t *root, const char *key, int *out)
{
    json_t *v = json_object_get(root, key);
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        return 1;
    *out = (int)json_integer_value(v);
    return 0;
}

int tb_config_read(tb_config *cfg, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s: not readable JSON (line %d: %s)", path, je.line, je.text);
        return 1;
    }
    const char *why = NULL;
    const char *mt = json_string_value(json_object_get(root, "model_type"));
    const char *act = json_string_value(json_object_get(root, "hidden_act"));
    const char *pos = json_string_value(json_object_get(root, "position_embedding_type"));
    json_t *eps = json_object_get(root, "layer_norm_eps");
    tb_config c;
    if (!mt || strcmp(mt, "bert"))
        why = "model_type is not \"bert\"";
    else if (!act || strcmp(act, "gelu"))
        why = "hidden_act is not \"gelu\" (the erf GELU)";
    else if (pos && strcmp(pos, "absolute"))
        why = "position_embedding_type is not \"absolute\"";
    else if (cfg_int(root, "vocab_size", &c.V) || cfg_int(root, "hidden_size", &c.C) ||
             cfg_int(root, "num_attention_heads", &c.NH) ||
             cfg_int(root, "intermediate_size", &c.F) || cfg_int(root, "num_hidden_layers", &c.L) ||
             cfg_int(root, "max_position_embeddings", &c.P) ||
             cfg_int(root, "type_vocab_size", &c.TV) || !json_is_number(eps))
        why = "an architecture field (vocab_size, hidden_size, num_attention_heads, "
              "intermediate_size, num_hidden_layers, max_position_embeddings, type_vocab_size, "
              "layer_norm_eps) is missing or not a number";
    else {
        c.eps = json_number_value(eps);
        why = tb_config_check(&c);
    }
    json_decref(root);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        return 1;
    }
    *cfg = c;
    return 0;
}

#define REAL float
#define TB(name) tb_##name##_f
#define TT(name) tt_##name##_f
#define ERF erff
#define EXP expf
#include "tt_bert.inc"
#undef REAL
#undef TB
#undef TT
#undef ERF
#undef EXP
#undef TB_INV_SQRT2
#undef TB_INV_SQRT_2PI

#define REAL double
#define TB(name) tb_##name##_d
#define TT(name) tt_##name##_d
#define ERF erf
#define EXP exp
#include "tt_bert.inc"
#undef REAL
#undef TB
#undef TT
#undef ERF
#undef EXP

/* ------------------------------------------------------------------------ */
/* the pretrained checkpoint                                                */
/* ------------------------------------------------------------------------ */

/* The tensors of a BERT checkpoint for cfg, in a fixed order: name, shape
 * (rank 1 or 2). Index k of layer l is LAYER_FIRST + 16 l + k. */
enum { TB_N_EMB = 5, TB_N_LAYER = 16, TB_N_EXTRA = 3 };
static const char *const tb_emb_names[TB_N_EMB] = {
    "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
    "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
    "embeddings.LayerNorm.bias"};
static const char *const tb_layer_names[TB_N_LAYER] = {"attention.self.query.weight",
                                                       "attention.self.query.bias",
                                                       "attention.self.key.weight",
                                                       "attention.self.key.bias",
                                                       "attention.self.value.weight",
                                                       "attention.self.value.bias",
                                                       "attention.output.dense.weight",
                                                       "attention.output.dense.bias",
                                                       "attention.output.LayerNorm.weight",
                                                       "attention.output.LayerNorm.bias",
                                                       "intermediate.dense.weight",
                                                       "intermediate.dense.bias",
                                                       "output.dense.weight",
                                                       "output.dense.bias",
                                                       "output.LayerNorm.weight",
                                                       "output.LayerNorm.bias"};
/* tolerated, not used: the pooler and the position-id buffer */
static const char *const tb_extra_names[TB_N_EXTRA] = {"pooler.dense.weight", "pooler.dense.bias",
                                                       "embeddings.position_ids"};

static void tb_emb_shape(const tb_config *c, int k, int64_t sh[2], int *nd)
{
    const int64_t rows[3] = {c->V, c->P, c->TV};
    *nd = k < 3 ? 2 : 1;
    sh[0] = k < 3 ? rows[k] : c->C;
    sh[1] = c->C;
}

static void tb_layer_shape(const tb_config *c, int k, int64_t sh[2], int *nd)
{
    const int64_t C = c->C, F = c->F;
    /* weights [out, in] as PyTorch stores them */
    static const int is_weight[TB_N_LAYER] = {1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0};
    int64_t out = k == 10 || k == 11 ? F : C, in = k == 12 ? F : C;
    *nd = is_weight[k] ? 2 : 1;
    sh[0] = out;
    sh[1] = in;
}

static int tb_check_tensor(const tb_pretrained *m, const char *name, const char *dtype,
                           const int64_t *sh, int nd, char *err, size_t errlen)
{
    const st_tensor *t = st_find(&m->st, name);
    if (!t) {
        snprintf(err, errlen, "model.safetensors lacks %s", name);
        return 1;
    }
    int same = t->ndim == nd;
    for (int d = 0; same && d < nd; d++)
        same = t->shape[d] == sh[d];
    if (strcmp(t->dtype, dtype) || !same) {
        char want[64], got[64];
        int n = snprintf(want, sizeof want, "%s [", dtype);
        for (int d = 0; d < nd; d++)
            n += snprintf(want + n, sizeof want - (size_t)n, d ? ", %lld" : "%lld",
                          (long long)sh[d]);
        snprintf(want + n, sizeof want - (size_t)n, "]");
        n = snprintf(got, sizeof got, "%s [", t->dtype);
        for (int d = 0; d < t->ndim && n < 50; d++)
            n += snprintf(got + n, sizeof got - (size_t)n, d ? ", %lld" : "%lld",
                          (long long)t->shape[d]);
        snprintf(got + n, sizeof got - (size_t)n, "]");
        snprintf(err, errlen, "model.safetensors: %s is %s, config.json needs %s", name, got, want);
        return 1;
    }
    return 0;
}

void tb_pretrained_close(tb_pretrained *m)
{
    st_close(&m->st);
    memset(m, 0, sizeof *m);
}

int tb_pretrained_open(tb_pretrained *m, const char *dir, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    char path[4096], why[600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (tb_config_read(&m->cfg, path, err, errlen))
        return 1;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (st_open(&m->st, path, err, errlen))
        return 1;
    const tb_config *c = &m->cfg;
    int64_t sh[2];
    int nd, expected = TB_N_EMB + c->L * TB_N_LAYER;
    for (int k = 0; k < TB_N_EMB; k++) {
        tb_emb_shape(c, k, sh, &nd);
        if (tb_check_tensor(m, tb_emb_names[k], "F32", sh, nd, why, sizeof why))
            goto fail;
    }
    for (int l = 0; l < c->L; l++)
        for (int k = 0; k < TB_N_LAYER; k++) {
            char name[128];
            snprintf(name, sizeof name, "encoder.layer.%d.%s", l, tb_layer_names[k]);
            tb_layer_shape(c, k, sh, &nd);
            if (tb_check_tensor(m, name, "F32", sh, nd, why, sizeof why))
                goto fail;
        }
    /* the tolerated extras, when present, must have their shapes too */
    for (int k = 0; k < TB_N_EXTRA; k++) {
        if (!st_find(&m->st, tb_extra_names[k]))
            continue;
        expected++;
        int64_t esh[2] = {k == 2 ? 1 : c->C, k == 2 ? c->P : c->C};
        int end = k == 1 ? 1 : 2;
        if (tb_check_tensor(m, tb_extra_names[k], k == 2 ? "I64" : "F32", esh, end, why,
                            sizeof why))
            goto fail;
    }
    if (m->st.n_tensors != expected) {
        /* the first tensor that is none of the above, for the message */
        const char *extra = "?";
        for (int i = 0; i < m->st.n_tensors && extra[0] == '?'; i++) {
            const char *n = m->st.tensors[i].name;
            int known = 0;
            for (int k = 0; k < TB_N_EMB && !known; k++)
                known = !strcmp(n, tb_emb_names[k]);
            for (int k = 0; k < TB_N_EXTRA && !known; k++)
                known = !strcmp(n, tb_extra_names[k]);
            int l, pos = 0;
            if (!known && sscanf(n, "encoder.layer.%d.%n", &l, &pos) == 1 && pos && l >= 0 &&
                l < c->L)
                for (int k = 0; k < TB_N_LAYER && !known; k++)
                    known = !strcmp(n + pos, tb_layer_names[k]);
            if (!known)
                extra = n;
        }
        snprintf(why, sizeof why,
                 "model.safetensors holds %d tensors, the architecture of config.json %d "
                 "(unexpected: %s)",
                 m->st.n_tensors, expected, extra);
        goto fail;
    }
    return 0;
fail:
    snprintf(err, errlen, "%s: %s", dir, why);
    tb_pretrained_close(m);
    return 1;
}

/* rows x cols floats of a checked tensor, transposed when `transpose`
 * (PyTorch's [out, in] into [in, out]), into dst with row stride ld and
 * column offset col0 */
static void tb_copy(const tb_pretrained *m, const char *name, float *dst, int rows, int cols,
                    int transpose, int ld, int col0)
{
    const unsigned char *src = st_data(&m->st, st_find(&m->st, name));
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            float v;
            memcpy(&v, src + 4 * ((size_t)r * cols + c), 4); /* the data need not be aligned */
            if (transpose)
                dst[(size_t)c * ld + col0 + r] = v;
            else
                dst[(size_t)r * ld + col0 + c] = v;
        }
}

int tb_pretrained_load_stage(const tb_pretrained *m, tb_stage_f *s, char *err, size_t errlen)
{
    const tb_config *a = &m->cfg, *b = &s->cfg;
    if (a->V != b->V || a->C != b->C || a->NH != b->NH || a->F != b->F || a->L != b->L ||
        a->TV != b->TV || a->P != b->P || a->eps != b->eps) {
        snprintf(err, errlen, "the stage's architecture differs from the checkpoint's");
        return 1;
    }
    if (s->Tmax > a->P) {
        snprintf(err, errlen, "sequence length %d exceeds the %d positions", s->Tmax, a->P);
        return 1;
    }
    const int C = a->C, F = a->F;
    if (s->first) {
        tb_copy(m, tb_emb_names[0], s->wte, a->V, C, 0, C, 0);
        /* the first Tmax of the P positions */
        const unsigned char *src = st_data(&m->st, st_find(&m->st, tb_emb_names[1]));
        memcpy(s->wpe, src, sizeof(float) * (size_t)s->Tmax * C);
        tb_copy(m, tb_emb_names[2], s->wtt, a->TV, C, 0, C, 0);
        tb_copy(m, tb_emb_names[3], s->lnew, 1, C, 0, C, 0);
        tb_copy(m, tb_emb_names[4], s->lneb, 1, C, 0, C, 0);
    }
    for (int l = 0; l < s->nb; l++) {
        tb_block_f *w = &s->pb[l];
        char n[16][128];
        for (int k = 0; k < TB_N_LAYER; k++)
            snprintf(n[k], sizeof n[k], "encoder.layer.%d.%s", s->b0 + l, tb_layer_names[k]);
        for (int j = 0; j < 3; j++) { /* q, k, v side by side in [C, 3C] */
            tb_copy(m, n[2 * j], w->qkvw, C, C, 1, 3 * C, j * C);
            tb_copy(m, n[2 * j + 1], w->qkvb, 1, C, 0, 3 * C, j * C);
        }
        tb_copy(m, n[6], w->ow, C, C, 1, C, 0);
        tb_copy(m, n[7], w->ob, 1, C, 0, C, 0);
        tb_copy(m, n[8], w->ln1w, 1, C, 0, C, 0);
        tb_copy(m, n[9], w->ln1b, 1, C, 0, C, 0);
        tb_copy(m, n[10], w->f1w, F, C, 1, F, 0);
        tb_copy(m, n[11], w->f1b, 1, F, 0, F, 0);
        tb_copy(m, n[12], w->f2w, C, F, 1, C, 0);
        tb_copy(m, n[13], w->f2b, 1, C, 0, C, 0);
        tb_copy(m, n[14], w->ln2w, 1, C, 0, C, 0);
        tb_copy(m, n[15], w->ln2b, 1, C, 0, C, 0);
    }
    if (s->last && !s->first)
        tb_copy(m, tb_emb_names[0], s->wte_head, a->V, C, 0, C, 0);
    return 0;
}
