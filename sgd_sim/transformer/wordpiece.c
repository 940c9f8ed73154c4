/* SPDX-License-Identifier: MIT */
/* wordpiece.c - BERT's uncased WordPiece tokenizer (wordpiece.h). */
#include "wordpiece.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wordpiece_tables.h"

/* ---- Unicode classes ---------------------------------------------------- */

/* index of cp in a {key, value} table sorted by key, or -1 */
static long pair_find(const uint16_t (*t)[2], size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t[mid][0] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && t[lo][0] == cp ? (long)lo : -1;
}

/* cp within one of the {first, last} ranges */
static int in_ranges(const uint16_t (*t)[2], size_t n, uint32_t cp)
{
    if (cp > 0xFFFF)
        return 0; /* the tables hold the Basic Multilingual Plane */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t[mid][1] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && t[lo][0] <= cp;
}
#define IN(table, cp) in_ranges(table, sizeof table / sizeof table[0], cp)

static int is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || IN(wp_space, cp);
}

static int is_control(uint32_t cp)
{
    if (cp == '\t' || cp == '\n' || cp == '\r')
        return 0;
    return IN(wp_control, cp);
}

static int is_punct(uint32_t cp)
{
    /* ASCII symbols such as $ + < = > ^ ` | ~ are punctuation to BERT although
     * Unicode files them as symbols (S*) */
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
        (cp >= 123 && cp <= 126))
        return 1;
    return IN(wp_punct, cp);
}

/* the CJK Unified Ideographs blocks (not Hiragana, Katakana or Hangul,
 * which BERT leaves to whitespace splitting) */
static int is_cjk(uint32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

static uint32_t unaccent(uint32_t cp)
{
    long i =
        cp <= 0xFFFF ? pair_find(wp_unaccent, sizeof wp_unaccent / sizeof wp_unaccent[0], cp) : -1;
    return i < 0 ? cp : wp_unaccent[i][1];
}

static uint32_t to_lower(uint32_t cp)
{
    long i = cp <= 0xFFFF ? pair_find(wp_lower, sizeof wp_lower / sizeof wp_lower[0], cp) : -1;
    return i < 0 ? cp : wp_lower[i][1];
}

/* Decode one code point at s[*i] (advancing *i); malformed or overlong
 * sequences, surrogates and values above U+10FFFF read as U+FFFD, one byte
 * consumed. */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned c = s[*i];
    int n;
    uint32_t cp, min;
    if (c < 0x80) {
        (*i)++;
        return c;
    } else if ((c & 0xE0) == 0xC0) {
        n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3, cp = c & 0x07, min = 0x10000;
    } else {
        (*i)++;
        return 0xFFFD;
    }
    if (*i + (size_t)n >= len) { /* truncated at the end of the text */
        (*i)++;
        return 0xFFFD;
    }
    for (int k = 1; k <= n; k++) {
        unsigned d = s[*i + (size_t)k];
        if ((d & 0xC0) != 0x80) {
            (*i)++;
            return 0xFFFD;
        }
        cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        (*i)++;
        return 0xFFFD;
    }
    *i += (size_t)n + 1;
    return cp;
}

static size_t utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- vocabulary ---------------------------------------------------------- */

/* FNV-1a */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return h;
}

int wp_lookup(const wp_tokenizer *tk, const char *piece, size_t len)
{
    size_t mask = tk->table_size - 1, j = (size_t)hash_bytes(piece, len) & mask;
    for (;; j = (j + 1) & mask) {
        int id = tk->table[j];
        if (id < 0)
            return -1;
        if (strlen(tk->tokens[id]) == len && !memcmp(tk->tokens[id], piece, len))
            return id;
    }
}

void wp_free(wp_tokenizer *tk)
{
    if (tk->tokens)
        for (int i = 0; i < tk->n_vocab; i++)
            free(tk->tokens[i]);
    free(tk->tokens);
    free(tk->table);
    memset(tk, 0, sizeof *tk);
}

static int fail(wp_tokenizer *tk, json_t *root, char *err, size_t errlen, const char *path,
                const char *why)
{
    snprintf(err, errlen, "%s: %s", path, why);
    wp_free(tk);
    json_decref(root);
    return 1;
}

int wp_load(wp_tokenizer *tk, const char *path, char *err, size_t errlen)
{
    memset(tk, 0, sizeof *tk);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s: not readable JSON (line %d: %s)", path, je.line, je.text);
        return 1;
    }
    json_t *model = json_object_get(root, "model");
    const char *type = json_string_value(json_object_get(model, "type"));
    if (!type || strcmp(type, "WordPiece"))
        return fail(tk, root, err, errlen, path, "model.type is not \"WordPiece\"");
    const char *prefix = json_string_value(json_object_get(model, "continuing_subword_prefix"));
    if (prefix && strcmp(prefix, "##"))
        return fail(tk, root, err, errlen, path, "continuing_subword_prefix is not \"##\"");
    json_t *norm = json_object_get(root, "normalizer");
    const char *ntype = json_string_value(json_object_get(norm, "type"));
    if (!ntype || strcmp(ntype, "BertNormalizer") ||
        !json_is_true(json_object_get(norm, "lowercase")))
        return fail(tk, root, err, errlen, path,
                    "normalizer is not a lower-casing BertNormalizer (only uncased BERT is read)");
    json_t *mx = json_object_get(model, "max_input_chars_per_word");
    tk->max_word_chars = json_is_integer(mx) ? (int)json_integer_value(mx) : 100;
    json_t *vocab = json_object_get(model, "vocab");
    if (!json_is_object(vocab) || json_object_size(vocab) == 0 || json_object_size(vocab) > 1000000)
        return fail(tk, root, err, errlen, path, "model.vocab is not a non-empty object");
    tk->n_vocab = (int)json_object_size(vocab);
    tk->tokens = calloc((size_t)tk->n_vocab, sizeof(char *));
    tk->table_size = 1;
    while (tk->table_size < 2 * (size_t)tk->n_vocab)
        tk->table_size *= 2;
    tk->table = malloc(tk->table_size * sizeof(int));
    if (!tk->tokens || !tk->table)
        return fail(tk, root, err, errlen, path, "out of memory");
    memset(tk->table, 0xff, tk->table_size * sizeof(int)); /* all -1 */
    const char *key;
    json_t *val;
    json_object_foreach(vocab, key, val)
    {
        json_int_t id = json_is_integer(val) ? json_integer_value(val) : -1;
        if (id < 0 || id >= tk->n_vocab || tk->tokens[id])
            return fail(tk, root, err, errlen, path,
                        "vocabulary ids are not 0 .. size-1, each once");
        if (!(tk->tokens[id] = strdup(key)))
            return fail(tk, root, err, errlen, path, "out of memory");
        size_t mask = tk->table_size - 1, j = (size_t)hash_bytes(key, strlen(key)) & mask;
        while (tk->table[j] >= 0)
            j = (j + 1) & mask;
        tk->table[j] = (int)id;
    }
    static const char *names[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    int *slots[] = {&tk->pad, &tk->unk, &tk->cls, &tk->sep, &tk->mask};
    for (int k = 0; k < 5; k++)
        if ((*slots[k] = wp_lookup(tk, names[k], strlen(names[k]))) < 0) {
            char why[64];
            snprintf(why, sizeof why, "the vocabulary lacks %s", names[k]);
            return fail(tk, root, err, errlen, path, why);
        }
    json_decref(root);
    return 0;
}

/* ---- encoding ------------------------------------------------------------ */

/* WordPiece of one word (w, n bytes, nchars code points): appends ids */
static void encode_word(const wp_tokenizer *tk, const char *w, size_t n, size_t nchars, char *piece,
                        int *ids, int max_ids, int *count)
{
    int first = *count;
    if (nchars > (size_t)tk->max_word_chars)
        goto unknown;
    for (size_t start = 0; start < n;) {
        /* the longest vocabulary piece w[start .. end): end only at a
         * character boundary (not on a UTF-8 continuation byte) */
        int found = -1;
        size_t end = n, pre = start ? 2 : 0;
        for (; end > start; end--) {
            if (end < n && ((unsigned char)w[end] & 0xC0) == 0x80)
                continue;
            memcpy(piece, "##", pre);
            memcpy(piece + pre, w + start, end - start);
            if ((found = wp_lookup(tk, piece, pre + end - start)) >= 0)
                break;
        }
        if (found < 0)
            goto unknown;
        if (*count < max_ids)
            ids[*count] = found;
        (*count)++;
        start = end;
    }
    return;
unknown:
    *count = first; /* the pieces found so far are dropped: the whole word is [UNK] */
    if (*count < max_ids)
        ids[*count] = tk->unk;
    (*count)++;
}

int wp_encode(const wp_tokenizer *tk, const char *text, size_t len, int *ids, int max_ids)
{
    /* Lower-casing can lengthen a character (U+023A, 2 bytes, becomes
     * U+2C65, 3 bytes) but never beyond 3/2 of its bytes; +2 for "##". */
    char *word = malloc(2 * len + 4), *piece = malloc(2 * len + 6);
    if (!word || !piece) {
        free(word);
        free(piece);
        return -1;
    }
    const unsigned char *s = (const unsigned char *)text;
    int count = 0;
    size_t wn = 0, wchars = 0;
    for (size_t i = 0; i <= len;) {
        uint32_t cp = i < len ? utf8_next(s, len, &i) : (i++, (uint32_t)' ');
        if (cp == 0 || cp == 0xFFFD || is_control(cp))
            continue;
        /* a mark after the decomposition: dropped with the accents */
        if (IN(wp_mark, cp))
            continue;
        cp = to_lower(unaccent(cp));
        int sep = is_space(cp), alone = !sep && (is_punct(cp) || is_cjk(cp));
        if ((sep || alone) && wn) {
            encode_word(tk, word, wn, wchars, piece, ids, max_ids, &count);
            wn = wchars = 0;
        }
        if (sep)
            continue;
        size_t k = utf8_put(word + wn, cp);
        if (alone) {
            encode_word(tk, word + wn, k, 1, piece, ids, max_ids, &count);
        } else {
            wn += k;
            wchars++;
        }
    }
    free(word);
    free(piece);
    return count;
}

int *wp_encode_text(const wp_tokenizer *tk, const char *text, size_t len, size_t *n)
{
    size_t cap = len / 3 + 64, used = 0;
    int *ids = malloc(sizeof(int) * cap);
    if (!ids)
        return NULL;
    for (size_t a = 0; a < len;) {
        const char *nl = memchr(text + a, '\n', len - a);
        size_t b = nl ? (size_t)(nl - text) + 1 : len;
        for (;;) {
            size_t room = cap - used;
            int got = wp_encode(tk, text + a, b - a, ids + used,
                                room > INT32_MAX ? INT32_MAX : (int)room);
            if (got < 0) {
                free(ids);
                return NULL;
            }
            if ((size_t)got <= room) {
                used += (size_t)got;
                break;
            }
            int *bigger = realloc(ids, sizeof(int) * (cap = 2 * cap + (size_t)got));
            if (!bigger) {
                free(ids);
                return NULL;
            }
            ids = bigger;
        }
        a = b;
    }
    *n = used;
    return ids;
}
