/* SPDX-License-Identifier: MIT */
/* test_bert_forward.c - the pretrained MiniLM encoder's forward pass (CTest
 * bert_forward, with bert_numpy_check.py).
 *
 *   test_bert_forward MODEL_DIR [OUT]
 *
 * Known property: the mean-pooled (over the real tokens, [CLS] and [SEP]
 * included), L2-normalised final hidden states of
 *   s1 "A man is eating food."  and  s2 "A man is eating a piece of bread."
 * have cosine similarity 0.755 (sentence-transformers' published example,
 * and an independent numpy forward pass over the same weights,
 * bert_numpy_check.py). Tolerance: the reference has three decimals, so the
 * true value lies within 0.0005 of it; the float32 forward differs from the
 * binary64 numpy one by far less (measured ~1e-7 on the cosine, checked by
 * the numpy script to 1e-5), so |cos - 0.755| <= 0.0005 + 1e-5.
 *
 * The three sentences run as one padded batch (padding mask exercised);
 * each must agree with the same sentence run alone (max |difference| of the
 * pooled embedding <= 1e-5: only the summation order of the matrix
 * products differs). Controls that must fail the property: the padding
 * mask dropped (the shorter sentences attend to [PAD] rows) and a randomly
 * initialised model of the same shape.
 *
 * OUT (for the numpy check): per sentence one line "ids: ..." and one line
 * "emb: ..." (384 values), then "cos: ...". Exit 77 without the model.
 */
#include "tt_bert.h"
#include "wordpiece.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { NS = 3, TMAX = 32 };
static const char *sentences[NS] = {"A man is eating food.", "A man is eating a piece of bread.",
                                    "The girl is carrying a baby."};

/* pooled, normalised embeddings of the NS sentences in one batch (pad
 * mask on or off), or of sentence `only` alone when only >= 0 */
static void embed(tb_stage_f *s, int ids[NS][TMAX], const int *len, int T, int masked, int only,
                  double emb[NS][1024])
{
    int tok[NS * TMAX], typ[NS * TMAX], klen[NS];
    int B = only >= 0 ? 1 : NS, Tb = only >= 0 ? len[only] : T;
    for (int b = 0; b < B; b++) {
        int src = only >= 0 ? only : b;
        klen[b] = masked ? len[src] : Tb;
        for (int t = 0; t < Tb; t++) {
            tok[b * Tb + t] = t < len[src] ? ids[src][t] : 0; /* [PAD] */
            typ[b * Tb + t] = 0;
        }
    }
    const float *y;
    tb_stage_forward_f(s, 0, B, Tb, klen, tok, typ, NULL, 0, NULL, NULL, &y);
    const int C = s->cfg.C;
    for (int b = 0; b < B; b++) {
        int dst = only >= 0 ? only : b, src = dst;
        double norm = 0;
        for (int c = 0; c < C; c++) {
            double m = 0;
            for (int t = 0; t < len[src]; t++)
                m += y[((size_t)b * Tb + t) * C + c];
            emb[dst][c] = m / len[src];
            norm += emb[dst][c] * emb[dst][c];
        }
        for (int c = 0; c < C; c++)
            emb[dst][c] /= sqrt(norm);
    }
}

static double cosine(const double *a, const double *b, int C)
{
    double s = 0;
    for (int c = 0; c < C; c++)
        s += a[c] * b[c]; /* both of unit norm */
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_bert_forward MODEL_DIR [OUT]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    sim_blas_init();
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/model.safetensors", argv[1]);
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        printf("SKIPPED: %s missing (scripts/fetch_model.sh)\n", path);
        return 77;
    }
    fclose(probe);
    tb_pretrained m;
    wp_tokenizer tk;
    snprintf(path, sizeof path, "%s/tokenizer.json", argv[1]);
    if (tb_pretrained_open(&m, argv[1], err, sizeof err) || wp_load(&tk, path, err, sizeof err)) {
        printf("FAIL %s\n", err);
        return 1;
    }
    const tb_config *cfg = &m.cfg;
    printf("config: V %d C %d heads %d F %d L %d P %d types %d eps %g; %zu parameters\n", cfg->V,
           cfg->C, cfg->NH, cfg->F, cfg->L, cfg->P, cfg->TV, cfg->eps, tb_model_params(cfg));
    int ids[NS][TMAX], len[NS], T = 0;
    for (int i = 0; i < NS; i++) {
        int n = wp_encode(&tk, sentences[i], strlen(sentences[i]), ids[i] + 1, TMAX - 2);
        if (n < 0 || n > TMAX - 2) {
            printf("FAIL tokenizing \"%s\"\n", sentences[i]);
            return 1;
        }
        ids[i][0] = tk.cls;
        ids[i][n + 1] = tk.sep;
        len[i] = n + 2;
        if (len[i] > T)
            T = len[i];
    }
    tb_stage_f s;
    if (tb_stage_init_f(&s, cfg, T, 0, cfg->L, 1, 1, NS, 1, 1)) {
        printf("FAIL out of memory\n");
        return 1;
    }
    tb_stage_init_params_f(&s, 1);
    if (tb_pretrained_load_stage(&m, &s, err, sizeof err)) {
        printf("FAIL %s\n", err);
        return 1;
    }
    static double emb[NS][1024], alone[NS][1024], nomask[NS][1024], rnd[NS][1024];
    const int C = cfg->C;
    embed(&s, ids, len, T, 1, -1, emb);
    for (int i = 0; i < NS; i++)
        embed(&s, ids, len, T, 1, i, alone);
    embed(&s, ids, len, T, 0, -1, nomask);
    double c12 = cosine(emb[0], emb[1], C), c13 = cosine(emb[0], emb[2], C);
    double tol = 0.0005 + 1e-5;
    int failures = 0;
    printf("cos(s1, s2) = %.6f (expected 0.755 +- %.5f); cos(s1, s3) = %.6f\n", c12, tol, c13);
    if (!(fabs(c12 - 0.755) <= tol)) {
        printf("FAIL cosine %.6f is not 0.755\n", c12);
        failures++;
    }
    double worst = 0;
    for (int i = 0; i < NS; i++)
        for (int c = 0; c < C; c++)
            worst = fmax(worst, fabs(emb[i][c] - alone[i][c]));
    printf("padded batch vs each sentence alone: max |difference| %.3g (tolerance 1e-5)\n", worst);
    if (!(worst <= 1e-5)) {
        printf("FAIL padding changes the embeddings\n");
        failures++;
    }
    double cn = cosine(nomask[0], nomask[1], C), dn = 0;
    for (int c = 0; c < C; c++)
        dn = fmax(dn, fabs(nomask[0][c] - emb[0][c]));
    printf("control, padding mask dropped: cos %.6f, s1's embedding moves by up to %.3g\n", cn, dn);
    if (!(dn > 1e-3)) {
        printf("FAIL control: dropping the padding mask changed nothing\n");
        failures++;
    }
    tb_stage_init_params_f(&s, 7); /* random initialisation */
    embed(&s, ids, len, T, 1, -1, rnd);
    double cr = cosine(rnd[0], rnd[1], C);
    printf("control, random initialisation: cos %.6f\n", cr);
    if (!(fabs(cr - 0.755) > tol)) {
        printf("FAIL control: a random model also gives 0.755\n");
        failures++;
    }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (!f) {
            printf("FAIL cannot write %s\n", argv[2]);
            return 1;
        }
        for (int i = 0; i < NS; i++) {
            fprintf(f, "ids:");
            for (int t = 0; t < len[i]; t++)
                fprintf(f, " %d", ids[i][t]);
            fprintf(f, "\nemb:");
            for (int c = 0; c < C; c++)
                fprintf(f, " %.9g", emb[i][c]);
            fprintf(f, "\n");
        }
        fprintf(f, "cos: %.9f\n", c12);
        fclose(f);
    }
    tb_stage_free_f(&s);
    tb_pretrained_close(&m);
    wp_free(&tk);
    if (failures) {
        printf("bert forward: %d FAILED\n", failures);
        return 1;
    }
    printf("bert forward: all passed\n");
    return 0;
}
