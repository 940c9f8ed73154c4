/* SPDX-License-Identifier: MIT */
/* test_wordpiece.c - the WordPiece tokenizer (wordpiece.c) against token ids
 * from an independent implementation (CTest bert_wordpiece).
 *
 *   test_wordpiece TESTDATA_DIR [MODEL_DIR]
 *
 * Part 1, always: tokenizer.json files that must be refused, each with its
 * own reason (written here, small).
 * Part 2, with MODEL_DIR/tokenizer.json: every line of
 * TESTDATA_DIR/wordpiece_sentences.txt encoded with [CLS] ... [SEP] must give
 * exactly the ids of the same line of wordpiece_expected.txt, which the
 * Hugging Face `tokenizers` package (version on its first line) produced
 * (gen_wordpiece_expected.py). Control: each line against the next line's
 * ids must differ. Without the model, part 2 is SKIPPED (exit 77) after part
 * 1 passed.
 */
#include "wordpiece.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

static void refused(const char *tmpdir, const char *name, const char *json, const char *reason)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s.%ld.json", tmpdir, name, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("FAIL cannot write %s\n", path);
        failures++;
        return;
    }
    fputs(json, f);
    fclose(f);
    wp_tokenizer tk;
    if (!wp_load(&tk, path, err, sizeof err)) {
        printf("FAIL %s: accepted\n", name);
        wp_free(&tk);
        failures++;
    } else if (!strstr(err, reason)) {
        printf("FAIL %s: error \"%s\" does not say \"%s\"\n", name, err, reason);
        failures++;
    } else {
        printf("  refused %-14s %s\n", name, err);
    }
    if (tk.tokens || tk.table) {
        printf("FAIL %s: state left behind after the error\n", name);
        failures++;
    }
    remove(path);
}

#define NORM "\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":true},"
#define VOCAB5 "\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,\"[SEP]\":3,\"[MASK]\":4"

static int read_lines(const char *path, char ***lines)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int n = 0, cap = 0;
    char *buf = NULL;
    size_t bcap = 0;
    ssize_t len;
    *lines = NULL;
    while ((len = getline(&buf, &bcap, f)) >= 0) {
        if (len && buf[len - 1] == '\n')
            buf[--len] = 0;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            *lines = realloc(*lines, sizeof(char *) * (size_t)cap);
        }
        (*lines)[n++] = strdup(buf);
    }
    free(buf);
    fclose(f);
    return n;
}

/* ids of one line of the expected file; returns the count */
static int parse_ids(const char *s, int *ids, int max)
{
    int n = 0;
    char *end;
    for (;;) {
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        if (n < max)
            ids[n] = (int)v;
        n++;
        s = end;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_wordpiece TESTDATA_DIR [MODEL_DIR]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    printf("tokenizer.json files that must be refused:\n");
    refused(tmp, "wp_notjson", "{\"model\": ", "not readable JSON");
    refused(tmp, "wp_bpe", "{" NORM "\"model\":{\"type\":\"BPE\",\"vocab\":{" VOCAB5 "}}}",
            "model.type is not \"WordPiece\"");
    refused(tmp, "wp_cased",
            "{\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":false},"
            "\"model\":{\"type\":\"WordPiece\",\"vocab\":{" VOCAB5 "}}}",
            "only uncased BERT");
    refused(tmp, "wp_novocab", "{" NORM "\"model\":{\"type\":\"WordPiece\"}}",
            "model.vocab is not a non-empty object");
    refused(tmp, "wp_dupid",
            "{" NORM "\"model\":{\"type\":\"WordPiece\",\"vocab\":{" VOCAB5 ",\"a\":4}}}",
            "each once");
    refused(tmp, "wp_gap",
            "{" NORM "\"model\":{\"type\":\"WordPiece\",\"vocab\":{" VOCAB5 ",\"a\":9}}}",
            "each once");
    refused(tmp, "wp_nomask",
            "{" NORM "\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,"
            "\"[CLS]\":2,\"[SEP]\":3,\"a\":4}}}",
            "lacks [MASK]");
    refused(tmp, "wp_prefix",
            "{" NORM "\"model\":{\"type\":\"WordPiece\",\"continuing_subword_prefix\":\"@@\","
            "\"vocab\":{" VOCAB5 "}}}",
            "continuing_subword_prefix");
    if (failures) {
        printf("wordpiece: %d FAILED\n", failures);
        return 1;
    }
    if (argc < 3) {
        printf("SKIPPED the comparison: no model folder given (scripts/fetch_model.sh)\n");
        return 77;
    }
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/tokenizer.json", argv[2]);
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        printf("SKIPPED the comparison: %s missing (scripts/fetch_model.sh)\n", path);
        return 77;
    }
    fclose(probe);
    wp_tokenizer tk;
    if (wp_load(&tk, path, err, sizeof err)) {
        printf("FAIL %s\n", err);
        return 1;
    }
    printf("vocabulary %d pieces; [PAD] %d [UNK] %d [CLS] %d [SEP] %d [MASK] %d\n", tk.n_vocab,
           tk.pad, tk.unk, tk.cls, tk.sep, tk.mask);
    char **sent, **exp;
    snprintf(path, sizeof path, "%s/wordpiece_sentences.txt", argv[1]);
    int ns = read_lines(path, &sent);
    snprintf(path, sizeof path, "%s/wordpiece_expected.txt", argv[1]);
    int ne = read_lines(path, &exp);
    if (ns < 1 || ne != ns + 1 || exp[0][0] != '#') {
        printf("FAIL test data: %d sentences, %d expected lines (one more, a '#' header, wanted)\n",
               ns, ne);
        return 1;
    }
    printf("expected ids: %s\n", exp[0] + 2);
    enum { MAXID = 512 };
    static int got[MAXID], want[MAXID], next[MAXID];
    int tokens = 0, unk = 0, controls_ok = 0;
    for (int i = 0; i < ns; i++) {
        int n = wp_encode(&tk, sent[i], strlen(sent[i]), got + 1, MAXID - 2);
        if (n < 0 || n > MAXID - 2) {
            printf("FAIL line %d: encode returned %d\n", i + 1, n);
            failures++;
            continue;
        }
        got[0] = tk.cls;
        got[n + 1] = tk.sep;
        n += 2;
        int m = parse_ids(exp[i + 1], want, MAXID);
        int same = n == m;
        for (int k = 0; same && k < n; k++)
            same = got[k] == want[k];
        if (!same) {
            printf("FAIL line %d \"%s\":\n  got ", i + 1, sent[i]);
            for (int k = 0; k < n; k++)
                printf(" %d", got[k]);
            printf("\n  want %s\n", exp[i + 1]);
            failures++;
        }
        tokens += n;
        for (int k = 0; k < n; k++)
            unk += got[k] == tk.unk;
        /* control: the next sentence's ids (cyclically) must not match */
        int mn = parse_ids(exp[(i + 1) % ns + 1], next, MAXID);
        int alike = mn == n;
        for (int k = 0; alike && k < n; k++)
            alike = next[k] == got[k];
        controls_ok += !alike;
    }
    printf(
        "%d sentences, %d tokens (%d [UNK]): %s; controls (next line's ids) differing: %d of %d\n",
        ns, tokens, unk, failures ? "MISMATCH" : "all ids equal", controls_ok, ns);
    if (controls_ok != ns) {
        printf("FAIL a control matched: the comparison cannot tell sentences apart\n");
        failures++;
    }
    for (int i = 0; i < ns; i++)
        free(sent[i]);
    for (int i = 0; i < ne; i++)
        free(exp[i]);
    free(sent);
    free(exp);
    wp_free(&tk);
    if (failures) {
        printf("wordpiece: %d FAILED\n", failures);
        return 1;
    }
    printf("wordpiece: all passed\n");
    return 0;
}
