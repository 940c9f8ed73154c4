/* SPDX-License-Identifier: MIT */
/*
 * wordpiece.h - BERT's uncased WordPiece tokenizer, read from a Hugging Face
 * tokenizer.json (model type WordPiece, normalizer BertNormalizer,
 * pre-tokenizer BertPreTokenizer).
 *
 * Steps, as BERT's basic uncased tokenizer defines them:
 *  1. clean-up: drop NUL, U+FFFD and control characters (Cc, Cf; tab,
 *     newline and carriage return count as whitespace), every whitespace
 *     character becomes a space;
 *  2. a space on each side of every CJK ideograph;
 *  3. accent stripping: canonical decomposition (NFD), then the nonspacing
 *     marks (Mn) removed. The decomposition is a table restricted to the
 *     precomposed letters of Latin-1, Latin Extended-A/B, Latin Extended
 *     Additional, Greek and Cyrillic (wordpiece_tables.h); other characters
 *     are kept whole, marks anywhere are dropped;
 *  4. lower-casing (one-to-one mappings of U+0000..U+052F);
 *  5. split at whitespace, every punctuation character (ASCII punctuation
 *     or Unicode P*) a word of its own;
 *  6. each word: greedy longest match against the vocabulary from its
 *     start, pieces after the first looked up with the "##" prefix; a word
 *     that cannot be covered, or longer than max_input_chars_per_word
 *     characters, becomes [UNK].
 * Invalid UTF-8 bytes are read as U+FFFD (and so dropped by step 1).
 */
#ifndef WORDPIECE_H
#define WORDPIECE_H

#include <stddef.h>

typedef struct wp_tokenizer {
    int n_vocab;        /* ids are 0 .. n_vocab - 1 */
    char **tokens;      /* [n_vocab] the piece of each id */
    int *table;         /* open-addressing hash of the pieces: id or -1 */
    size_t table_size;  /* a power of two */
    int max_word_chars; /* longer words become [UNK] */
    int pad, unk, cls, sep, mask;
} wp_tokenizer;

/* Read tokenizer.json. Returns 0, or 1 with a one-line reason in err (and
 * tk left empty: nothing to free). */
int wp_load(wp_tokenizer *tk, const char *path, char *err, size_t errlen);
void wp_free(wp_tokenizer *tk);

/* Token ids of text (len bytes of UTF-8), without [CLS] / [SEP]. Writes at
 * most max_ids ids and returns the number the whole text has (so a larger
 * return value than max_ids means the output was cut), or -1 when out of
 * memory. */
int wp_encode(const wp_tokenizer *tk, const char *text, size_t len, int *ids, int max_ids);

/* The ids of a whole text (no [CLS] / [SEP]), encoded line by line (a word
 * never spans a line break, so the ids are those of wp_encode on the whole
 * text): a malloc'ed array of *n ids, or NULL when out of memory. */
int *wp_encode_text(const wp_tokenizer *tk, const char *text, size_t len, size_t *n);

/* The id of a piece, or -1. */
int wp_lookup(const wp_tokenizer *tk, const char *piece, size_t len);

#endif
