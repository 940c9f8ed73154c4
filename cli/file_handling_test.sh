#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest checks of the CLI's file handling (issue 41, points 10-13): messages
# from pipes and devices read only as far as their header says, temporary
# outputs removed on SIGINT/SIGTERM and swept when their writer is gone, the
# mode of a replaced file kept, `inspect --tiles` streamed.
# usage: file_handling_test.sh PART PATH/TO/tahq WORKDIR
# Exit 0 passed, 1 failed, 77 skipped.
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"
P="$1"
t_tag "$P"
T="$(abs_file "$2")"
W="$3"
W="$(fresh_dir "$W")"
cd "$W"

# limit_memory KIB: cap this (sub)shell's address space, unless tahq cannot
# start under the cap (a sanitizer build reserves terabytes of shadow
# memory): then the memory part of the check is left out, the rest runs
limit_memory() {
  if (ulimit -v "$1" && "$T" --version >/dev/null 2>&1); then
    ulimit -v "$1"
  else
    echo "note ($P): tahq cannot start within $1 KiB of address space (a sanitizer build?); memory not capped" >&2
  fi
}
# a tensor of zeros as raw float32 (exactly representable, any size)
zeros() { head -c "$(($1 * 4))" /dev/zero >"$2"; }

case "$P" in
pipe_bounded)
  # the writers of the pipes below die of SIGPIPE once tahq stops reading
  set +o pipefail
  # 10. /dev/zero: err_magic after 4 bytes, within 200 MB of address space
  (
    limit_memory 204800
    rc=0
    timeout -s KILL 20 "$T" inspect /dev/zero >out.txt 2>err.txt || rc=$?
    [ "$rc" -eq 1 ] || fail "inspect /dev/zero exited $rc: $(cat err.txt)"
  )
  has err.txt "(err_magic)"
  # a valid message through a pipe is read whole; with bytes after it, err_size
  zeros 4096 z.f32
  "$T" encode z.f32 z.bin --shape 64x64 --tile 16 >/dev/null
  cat z.bin | "$T" inspect - >out.txt
  has out.txt "message bytes"
  rc=0
  { cat z.bin; echo extra; } | "$T" inspect - >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq 1 ] || fail "a message with bytes after it: exit $rc"
  has err.txt "(err_size)"
  # a header that claims a huge payload on an endless stream: read to its
  # claimed end only (here: refused at the header's size check)
  { head -c 56 z.bin; printf '\377\377\377\377\377\377\377\000'; cat /dev/zero; } 2>/dev/null |
    (
      limit_memory 204800
      rc=0
      timeout -s KILL 20 "$T" inspect - >out.txt 2>err.txt || rc=$?
      [ "$rc" -eq 1 ] || fail "a header with a huge payload: exit $rc: $(cat err.txt)"
    )
  # paper-v1 streams: no more than the shape's largest stream is read
  (
    limit_memory 204800
    rc=0
    timeout -s KILL 20 "$T" decode --profile paper-v1 /dev/zero y.npy --shape 4x64 >out.txt 2>err.txt || rc=$?
    [ "$rc" -eq 1 ] || fail "paper-v1 decode of /dev/zero exited $rc: $(cat err.txt)"
  )
  [ ! -e y.npy ] || fail "paper-v1 decode of /dev/zero wrote an output"
  ;;
mode_kept)
  # 13. a replaced output keeps its mode; a new one gets 0666 & ~umask
  zeros 4096 z.f32
  umask 022
  "$T" encode z.f32 z.bin --shape 64x64 --tile 16 >/dev/null
  [ "$(stat -c %a z.bin)" = 644 ] || fail "new output mode $(stat -c %a z.bin)"
  chmod 600 z.bin
  "$T" encode z.f32 z.bin --shape 64x64 --tile 16 >/dev/null
  [ "$(stat -c %a z.bin)" = 600 ] || fail "a mode-0600 output became $(stat -c %a z.bin)"
  chmod 640 z.bin
  "$T" decode z.bin z.bin.npy >/dev/null
  chmod 640 z.bin.npy
  "$T" decode z.bin z.bin.npy >/dev/null
  [ "$(stat -c %a z.bin.npy)" = 640 ] || fail "a mode-0640 .npy became $(stat -c %a z.bin.npy)"
  ;;
stale_tmp)
  # 11. temporary files of a writer that is gone (killed by SIGKILL) are
  # removed by the next write of the same output; a live writer's stay
  zeros 4096 z.f32
  sh -c 'exit 0' &
  dead=$!
  wait "$dead" || true
  printf partial >".z.bin.tmp-$dead-abcdef"
  printf partial >".z.bin.tmp-$$-abcdef"
  "$T" encode z.f32 z.bin --shape 64x64 --tile 16 >/dev/null
  [ ! -e ".z.bin.tmp-$dead-abcdef" ] || fail "the stale temporary file of process $dead is left"
  [ -e ".z.bin.tmp-$$-abcdef" ] || fail "a live writer's temporary file was removed"
  ;;
signal_tmp)
  # 11. SIGINT or SIGTERM while the output is being written: the temporary
  # file is removed, the old output kept. The signal is sent as soon as the
  # temporary file appears (a 128 MiB .npy being written).
  zeros $((32 << 20)) big.f32
  "$T" encode big.f32 big.bin --shape 8192x4096 --tile 256 --bits 8 >/dev/null
  shopt -s nullglob
  # job control: background jobs keep SIGINT (otherwise they start with it
  # ignored, and an ignored signal stays ignored)
  set -m
  caught=0
  for sig in INT TERM INT TERM INT TERM; do
    printf 'old\n' >y.npy
    "$T" decode big.bin y.npy >/dev/null 2>&1 &
    pid=$!
    seen=0
    for _ in $(seq 200000); do
      t=(.y.npy.tmp-*)
      if [ "${#t[@]}" -gt 0 ]; then
        kill -"$sig" "$pid" 2>/dev/null && seen=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
    done
    rc=0
    wait "$pid" || rc=$?
    t=(.y.npy.tmp-*)
    [ "${#t[@]}" -eq 0 ] || fail "SIG$sig during the write left ${t[*]}"
    if [ "$seen" -eq 1 ] && [ "$rc" -eq $((128 + $(kill -l "$sig"))) ]; then
      [ "$(cat y.npy)" = old ] || fail "SIG$sig: the old output was replaced"
      caught=$((caught + 1))
      eval "caught_$sig=1"
    fi
  done
  rm -f big.f32 big.bin y.npy
  [ "$caught" -gt 0 ] || skip "the write was never caught in progress"
  echo "signal_tmp: $caught interrupted writes (SIGINT ${caught_INT:-0}, SIGTERM ${caught_TERM:-0}), no temporary file left"
  ;;
tiles_stream)
  # 12. inspect --tiles --json of a 5.4 MB message (G = 8, 1 bit, 1 M
  # tiles): streamed within 400 MB of address space, its size said first,
  # the same document as before
  zeros $((8 << 20)) z.f32
  "$T" encode z.f32 z.bin --shape 8192x1024 --tile 8 --bits 1 >/dev/null
  (
    limit_memory 409600
    rc=0
    "$T" inspect z.bin --tiles --json >out.json 2>err.txt || rc=$?
    [ "$rc" -eq 0 ] || fail "inspect --tiles --json exited $rc: $(cat err.txt)"
  )
  has err.txt "1048576 tile records, about"
  if command -v python3 >/dev/null; then
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["tile_info"]) == d["tiles"] == 1048576, "tile count"
assert d["tile_info"][-1]["tile"] == 1048575
' out.json || fail "the streamed JSON is not the document"
  fi
  ;;
*)
  echo "unknown part '$P'" >&2
  exit 2
  ;;
esac
echo "file_handling_test $P: passed"
