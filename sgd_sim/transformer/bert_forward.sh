#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest bert_forward: the C forward pass of the pretrained MiniLM
# (test_bert_forward), then the independent numpy forward over the same
# weights and token ids (bert_numpy_check.py).
#   bert_forward.sh TEST_BINARY MODEL_DIR WORK_DIR [PYTHON3]
# Exit 77 (SKIPPED) without the model, or without python3/numpy for the
# second half.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
BIN=$1 MODEL=$2 W=$3 PY=${4:-python3}
mkdir -p "$W"
"$BIN" "$MODEL" "$W/c_forward.txt"
rc=$?
[ $rc -eq 0 ] || exit $rc
need_cmd "$PY" "the numpy check: no $PY"
"$PY" "$(dirname "$0")/bert_numpy_check.py" "$MODEL" "$W/c_forward.txt"
