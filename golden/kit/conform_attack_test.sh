#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest checks of `tahq conform --run` against hostile candidates (issue 41):
# each ATTACK is a candidate that tries one way of passing without working,
# of hanging conform, of reaching files outside its copies or of outliving
# conform, and the test fails if it succeeds.
# usage: conform_attack_test.sh ATTACK PATH/TO/tahq SOURCE_DIR WORKDIR [PV1_CANDIDATE]
# Exit 0 passed, 1 failed, 77 skipped (a tool the attack needs is missing).
set -euo pipefail
. "$(dirname "$0")/../../tests/lib.sh"
A="$1"
t_tag "$A"
T="$(abs_file "$2")"
SRC="$(abs_dir "$3")"
W="$4"
PV1="${5:-}"
V="$SRC/golden/v1"
ADAPTER="sh $SRC/golden/tahq_adapter.sh $T"
W="$(fresh_dir "$W")"
mkdir "$W/tmp"
export TMPDIR="$W/tmp"

# shellcheck source=conform_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/conform_lib.sh"
no_tmp_left() {
  local left
  left="$(find "$TMPDIR" -mindepth 1 2>/dev/null | head -n 5 || true)"
  [ -z "$left" ] || fail "temporary files left in \$TMPDIR: $left"
}
# conform RC SECONDS ARGS...: tahq conform ARGS exits with RC within SECONDS
# (a conform that hangs fails the test instead of hanging it)
conform() {
  local want="$1" limit="$2" rc=0
  shift 2
  timeout -s KILL "$limit" "$T" conform "$@" >"$W/out.txt" 2>"$W/err.txt" || rc=$?
  [ "$rc" -ne 137 ] || fail "conform $* did not end within $limit s"
  [ "$rc" -eq "$want" ] || fail "conform $* exited $rc, expected $want: $(tail -n 5 "$W/err.txt" "$W/out.txt")"
}
candidate() { cat >"$W/cand.sh"; }
# limit_memory KIB: cap this (sub)shell's address space, unless tahq cannot
# start under the cap (a sanitizer build reserves terabytes of shadow
# memory): then the memory part of the check is left out, the rest runs
limit_memory() {
  if (ulimit -v "$1" && "$T" --version >/dev/null 2>&1); then
    ulimit -v "$1"
  else
    echo "note ($A): tahq cannot start within $1 KiB of address space (a sanitizer build?); memory not capped" >&2
  fi
}

case "$A" in
crash_after_output)
  # 1. the right err_* word, then a crash: /bin/sh -c reports exit 139
  candidate <<EOF
#!/bin/sh
$ADAPTER "\$@"
kill -SEGV \$\$
EOF
  conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case decerr-a-crc-seed
  has "$W/out.txt" "FAIL decerr-a-crc-seed (decode_error)"
  has "$W/out.txt" "a shell's code for signal 11, SIGSEGV"
  ;;
hang_default_timeout)
  # 2. no --timeout: the default per case (here shortened for the test)
  candidate <<'EOF'
#!/bin/sh
exec sleep 600
EOF
  TAHQ_CONFORM_TIMEOUT=1 conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case decerr-a-crc-seed
  has "$W/out.txt" "TIMEOUT decerr-a-crc-seed"
  has "$W/out.txt" "did not finish within 1 s"
  # and the built-in default is documented
  "$T" conform --help >"$W/help.txt"
  has "$W/help.txt" "default 300"
  ;;
fifo_output)
  # 3. the output is a FIFO nobody writes: conform neither hangs nor blocks
  # SIGINT, and removes its files
  command -v mkfifo >/dev/null || skip "no mkfifo"
  candidate <<'EOF'
#!/bin/sh
rm -f "$3"
mkfifo "$3"
EOF
  conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1
  has "$W/out.txt" "sweep-g008-b1.bin: is not a regular file"
  no_tmp_left
  # Ctrl-C while the candidate's FIFO output is about: conform ends at once
  candidate <<'EOF'
#!/bin/sh
rm -f "$3"
mkfifo "$3"
exec sleep 600
EOF
  "$T" conform --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1 --timeout 600 \
    >"$W/out.txt" 2>&1 &
  pid=$!
  # once the candidate made its FIFO (a shell's background job starts with
  # SIGINT ignored: conform's own handler must be in place by then)
  for _ in $(seq 300); do
    [ -n "$(find "$TMPDIR" -type p 2>/dev/null)" ] && break
    sleep 0.1
  done
  kill -INT "$pid"
  rc=0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    fail "conform did not end on SIGINT"
  fi
  wait "$pid" || rc=$?
  [ "$rc" -eq 130 ] || fail "SIGINT: conform exited $rc, expected 130"
  no_tmp_left
  ;;
devzero_output)
  # 4. the output is a link to /dev/zero: refused, read neither through
  # the link nor past a bound (conform runs with 1 GiB of address space)
  candidate <<'EOF'
#!/bin/sh
rm -f "$3"
ln -s /dev/zero "$3"
EOF
  (
    limit_memory 1048576
    conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1
  )
  has "$W/out.txt" "sweep-g008-b1.npy: is a symbolic link"
  has "$W/out.txt" "sweep-g008-b1.bin: is a symbolic link"
  ;;
huge_output)
  # 4. an output far larger than the case's expected size is not read
  candidate <<'EOF'
#!/bin/sh
head -c 67108864 /dev/zero >"$3"
EOF
  (
    limit_memory 1048576
    conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1
  )
  has "$W/out.txt" "has 67108864 bytes, more than the"
  ;;
set_fifo)
  # 4. a FIFO in the vector set: --check fails at once, naming it
  command -v mkfifo >/dev/null || skip "no mkfifo"
  cp -r "$V" "$W/set"
  set -- "$W"/set/inputs/*
  f="$(basename "$1")"
  rm "$W/set/inputs/$f"
  mkfifo "$W/set/inputs/$f"
  conform 1 30 --vectors "$W/set" --check
  has "$W/err.txt" "is not a regular file"
  ;;
workdir_in_set)
  # 5. --workdir inside the set: refused before anything is removed
  cp -r "$V" "$W/set"
  conform 2 60 --vectors "$W/set" --run "$ADAPTER" --workdir "$W/set/expected" --case sweep-g008
  has "$W/err.txt" "is inside the vector set"
  conform 2 60 --vectors "$W/set" --run "$ADAPTER" --workdir "$W/set" --case sweep-g008
  conform 2 60 --vectors "$W/set" --run "$ADAPTER" --workdir "$W/set/new/sub" --case sweep-g008
  [ ! -e "$W/set/new" ] || fail "--workdir inside the set was created"
  conform 0 60 --vectors "$W/set" --check
  ;;
planted_symlink)
  # 6. the candidate plants links where later cases' input copies and
  # status files go, to a set file: the set stays intact
  cp -r "$V" "$W/set"
  candidate <<EOF
#!/bin/sh
d="\$(dirname "\$2")"
self="\$(basename "\$2")"
self="\${self%%.*}"
for id in \$(sed -n 's/^ *"id": "\\(.*\\)",\$/\\1/p' "$W/set/manifest.json" | grep -e sweep-g008 -e decerr-a-crc); do
  [ "\$id" = "\$self" ] && continue
  for ext in .in.npy .in.bin .msg.bin; do
    ln -sf "$W/set/inputs/\$id.npy" "\$d/\$id\$ext" 2>/dev/null
    ln -sf "$W/set/inputs/\$id.bin" "\$d/../\$id\$ext" 2>/dev/null
    ln -sf "$W/set/inputs/\$id.bin" "\$d/\$id\$ext" 2>/dev/null
  done
  ln -sf "$W/set/inputs/\$id.bin" "\$d/../\$id.err" 2>/dev/null
  ln -sf "$W/set/inputs/\$id.npy" "\$d/../\$id.err" 2>/dev/null
done
exec $ADAPTER "\$@"
EOF
  conform 0 120 --vectors "$W/set" --run "sh $W/cand.sh" --case sweep-g008 --case decerr-a-crc
  conform 0 60 --vectors "$W/set" --check
  ;;
huge_stderr)
  # 7. 64 MiB on stderr: kept as a bounded tail, not stored (the candidate
  # measures the temporary folder while its stderr is still open)
  candidate <<EOF
#!/bin/sh
echo "err_crc: bad CRC" >&2
head -c 67108864 /dev/zero | tr '\\0' x >&2
echo >&2
echo "last line" >&2
du -sk "$TMPDIR" | cut -f1 >"$W/tmp-kib"
exit 3
EOF
  conform 0 120 --vectors "$V" --run "sh $W/cand.sh" --case decerr-a-crc-seed
  kib="$(cat "$W/tmp-kib")"
  [ "$kib" -lt 4096 ] || fail "the temporary folder held $kib KiB while the candidate wrote 64 MiB on stderr"
  no_tmp_left
  ;;
subfolders)
  # 7. folders (one unreadable) and files the candidate makes in its
  # temporary folder are removed with it
  candidate <<'EOF'
#!/bin/sh
d="$(dirname "$2")"
mkdir -p "$d/sub/deeper" "$d/../top/x" && echo junk >"$d/sub/deeper/f" && echo junk >"$d/../top/x/f"
chmod 000 "$d/sub"
exec sh "$0.adapter" "$@"
EOF
  echo "exec $ADAPTER \"\$@\"" >"$W/cand.sh.adapter"
  conform 0 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1 --case decerr-a-crc-seed
  no_tmp_left
  ;;
setsid_child)
  # 7. a child in a session of its own outlives neither the case nor conform
  command -v setsid >/dev/null || skip "no setsid"
  candidate <<EOF
#!/bin/sh
setsid sh -c 'echo \$\$ >>"$W/pids"; exec sleep 300' </dev/null >/dev/null 2>&1 &
sleep 0.5
exec $ADAPTER "\$@"
EOF
  conform 0 60 --vectors "$V" --run "sh $W/cand.sh" --case decerr-a-crc-seed
  [ -s "$W/pids" ] || fail "the candidate's setsid child did not start"
  sleep 0.3
  [ -z "$(alive "$W/pids")" ] || fail "the setsid child survived conform: $(alive "$W/pids")"
  ;;
killed_conform)
  # 7. conform killed by SIGKILL: its temporary folder and JUnit temporary
  # file are removed by the next conform (they carry its process id)
  candidate <<'EOF'
#!/bin/sh
exec sleep 600
EOF
  "$T" conform --vectors "$V" --run "sh $W/cand.sh" --case decerr-a-crc-seed --junit "$W/r.xml" \
    >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    [ -n "$(ls -A "$TMPDIR")" ] && break
    sleep 0.1
  done
  sleep 0.3
  kill -KILL "$pid"
  wait "$pid" || true
  [ -n "$(ls -A "$TMPDIR")" ] || fail "no temporary folder while conform ran"
  conform 0 60 --vectors "$V" --run "$ADAPTER" --case decerr-a-crc-seed --junit "$W/r.xml"
  no_tmp_left
  [ -z "$(find "$W" -maxdepth 1 -name '.r.xml.tmp-*')" ] || fail "the JUnit temporary file of the killed conform is left"
  ;;
noncharacters)
  # 8. U+FFFE and U+FFFF on stderr: the JUnit file stays well-formed
  printf '#!/bin/sh\nprintf "bad \\357\\277\\276 and \\357\\277\\277 here\\\\n" >&2\nexit 3\n' >"$W/cand.sh"
  conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1 --junit "$W/r.xml"
  ! grep -q "$(printf '\357\277\276')" "$W/r.xml" || fail "U+FFFE in the JUnit file"
  ! grep -q "$(printf '\357\277\277')" "$W/r.xml" || fail "U+FFFF in the JUnit file"
  has "$W/r.xml" "bad ??? and ??? here"
  if command -v python3 >/dev/null; then
    python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$W/r.xml" ||
      fail "the JUnit file is not well-formed XML"
  fi
  ;;
wrappers)
  # 9. an interpreter that cannot find its script, behind options or a
  # wrapper, is one usage error (exit 2, one line), not a failing candidate
  command -v python3 >/dev/null || skip "no python3"
  for cmd in "python3 -u $W/missing.py" "env python3 $W/missing.py" \
    "nice python3 $W/missing.py" "nice -n 5 python3 -B $W/missing.py" \
    "env FOO=1 nice python3 $W/missing.py" "sh $W/wrap.sh"; do
    echo "exec python3 $W/missing.py \"\$@\"" >"$W/wrap.sh" # found only by the first-case probe
    conform 2 60 --vectors "$V" --run "$cmd" --case sweep-g008
    [ "$(wc -l <"$W/err.txt")" -eq 1 ] || fail "--run '$cmd': stderr is not one line: $(cat "$W/err.txt")"
    [ ! -s "$W/out.txt" ] || fail "--run '$cmd': wrote a report"
  done
  ;;
usage_errors)
  # 9. conform's own errors are exit 2: an unwritable --junit, a flag no
  # case has
  conform 2 60 --vectors "$V" --run "$ADAPTER" --case decerr-a-crc-seed --junit "$W/no/such/dir/r.xml"
  conform 2 60 --vectors "$V" --run "$ADAPTER" --exclude-flag bits_9
  has "$W/err.txt" "--exclude-flag 'bits_9': no case"
  conform 2 60 --vectors "$V" --candidate "$W" --flag no_such_flag
  ;;
report_wording)
  # 9. paper-v1 wording: the exact verdict names the paper-v1 rule; an "ok"
  # TAP line (TOLERANT) gives the reason it passes; summary.cases is the
  # set's number of cases; a progress line per tenth of the cases
  [ -n "$PV1" ] || skip "no paper-v1 candidate"
  PV1="$(cd "$(dirname "$PV1")" && pwd)/$(basename "$PV1")"
  candidate <<EOF
#!/bin/sh
[ "\$1" = encode ] && exec $PV1 --ties high "\$@"
exec $ADAPTER "\$@"
EOF
  conform 1 120 --vectors "$V" --run "sh $W/cand.sh" --case paper-v1-edge
  hasnt "$W/out.txt" "FAIL: outside tolerance"
  has "$W/out.txt" "encode: FAIL: outside the paper-v1 field tolerance"
  conform 0 120 --vectors "$V" --run "sh $W/cand.sh" --case paper-v1-edge --tolerance --tap
  has "$W/out.txt" "ok 1 - paper-v1-edge (paper_v1): TOLERANT"
  has "$W/out.txt" 'message: "within tolerance'
  hasnt "$W/out.txt" 'message: "outside'
  n_all=$(sed -n 's/^  "n_cases": \([0-9]*\),$/\1/p' "$V/manifest.json")
  conform 1 120 --vectors "$V" --run "sh $W/cand.sh" --case paper-v1-edge --json
  has "$W/out.txt" "\"cases\": $n_all, \"selected\": 1"
  conform 0 120 --vectors "$V" --run "$ADAPTER" --case decerr-a --progress
  has "$W/err.txt" "cases done"
  # a case that timed out: the run that never started prints no stderr line
  candidate <<'EOF'
#!/bin/sh
exec sleep 600
EOF
  conform 1 60 --vectors "$V" --run "sh $W/cand.sh" --case sweep-g008-b1 --timeout 0.3
  has "$W/out.txt" "decode was not run (the case's time ran out before it)"
  hasnt "$W/out.txt" "decode wrote nothing"
  ;;
*)
  echo "unknown attack '$A'" >&2
  exit 2
  ;;
esac
no_tmp_left
echo "conform_attack_test $A: passed"
