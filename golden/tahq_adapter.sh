#!/bin/sh
# SPDX-License-Identifier: MIT
# tahq_adapter.sh - the `tahq` program as a candidate of `tahq conform --run`
# (golden/README.md, "The --run protocol"). Usage:
#   tahq_adapter.sh TAHQ encode IN.npy OUT.bin --config JSON
#   tahq_adapter.sh TAHQ decode IN.bin OUT.npy
#   tahq_adapter.sh TAHQ decode IN.bin OUT.npy --config JSON --shape BxSxC   (paper_v1 cases)
# It maps the protocol's JSON configuration onto `tahq encode` options and
# prints tahq's message and the status name (err_crc, ...) of a failure on
# stderr.
set -u
TAHQ="$1"
shift
op="$1"
in="$2"
out="$3"

# value of "KEY":VALUE or "KEY":"VALUE" in the flat one-line JSON object,
# by parameter expansion (no process per key); empty if KEY is absent
val() {
  case "$cfg" in
  *"\"$1\":"*)
    v=${cfg#*"\"$1\":"}
    v=${v%%[,\}]*}
    v=${v#\"}
    printf '%s' "${v%\"}"
    ;;
  esac
}

# status name for the messages of `tahq` that do not carry one
name_of() {
  n=$(grep -o 'err_[a-z_]*' "$1" | head -n 1)
  if [ -z "$n" ]; then
    # a configuration tahq refuses, in the library ("invalid configuration")
    # or while parsing an option ("invalid value"): SPEC 3.3, err_config;
    # checked first, since its text also says "out of range"
    if grep -q 'invalid configuration\|invalid value' "$1"; then n=err_config
    elif grep -q 'payload inconsistent' "$1"; then n=err_payload
    elif grep -q 'shape invalid' "$1"; then n=err_shape
    elif grep -q 'NaN or infinity' "$1"; then n=err_nonfinite
    # before "out of range", which the header's text also contains
    elif grep -q 'header field' "$1"; then n=err_header
    elif grep -q 'out of range' "$1"; then n=err_range
    else n=err_unknown
    fi
  fi
  printf '%s\n' "$n"
}

errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
case "$op" in
encode)
  [ "${4:-}" = "--config" ] || { echo "usage: encode IN OUT --config JSON" >&2; exit 2; }
  cfg="$5"
  if [ "$(val profile)" = "paper-v1" ]; then
    "$TAHQ" encode --profile paper-v1 "$in" "$out" --tile "$(val tile)" \
      --bits "$(val hi_bits)/$(val lo_bits)" --ratio "$(val hi_permille)" 2>"$errf" >/dev/null
  else
  "$TAHQ" encode "$in" "$out" --tile "$(val tile)" --bits "$(val hi_bits)/$(val lo_bits)" \
    --ratio "$(val hi_permille)" --alloc "$(val alloc)" --tau "$(val tau)" \
    --rounding "$(val rounding)" --seed "$(val seed)" --meta "$(val meta)" 2>"$errf" >/dev/null
  fi
  ;;
decode)
  if [ "${4:-}" = "--config" ]; then
    # paper_v1: the message has no header; config and shape come with the call
    cfg="$5"
    [ "${6:-}" = "--shape" ] || { echo "usage: decode IN OUT --config JSON --shape BxSxC" >&2; exit 2; }
    "$TAHQ" decode --profile paper-v1 "$in" "$out" --shape "$7" --tile "$(val tile)" \
      --bits "$(val hi_bits)/$(val lo_bits)" --ratio "$(val hi_permille)" 2>"$errf" >/dev/null
  else
    "$TAHQ" decode "$in" "$out" 2>"$errf" >/dev/null
  fi
  ;;
*)
  echo "unknown operation '$op'" >&2
  exit 2
  ;;
esac
rc=$?
if [ "$rc" -ne 0 ]; then
  # tahq's own message, then the status name (the first err_* word of the
  # two is the same: name_of takes it from the message when it has one)
  cat "$errf" >&2
  name_of "$errf" >&2
  exit "$rc"
fi
exit 0
