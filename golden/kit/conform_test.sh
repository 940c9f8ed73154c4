#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest checks of `tahq conform` for CI use (golden/README.md, "In your CI"):
# a failed candidate's exit status and stderr, one error for a missing
# command or folder, case selection, --timeout, --jobs, --junit, --tap, the
# candidate working on copies, the temporary folder removed on SIGINT and
# SIGTERM, and the option checks. bash and coreutils; python3, where present,
# also parses the JUnit file. With PV1_CANDIDATE (conform_pv1_candidate.c):
# the tie-tolerant judgement of paper_v1 cases.
# usage: conform_test.sh PATH/TO/tahq SOURCE_DIR WORKDIR [PV1_CANDIDATE]
set -euo pipefail
. "$(dirname "$0")/../../tests/lib.sh"
T="$(abs_file "$1")"
SRC="$(abs_dir "$2")"
W="$3"
PV1="${4:-}"
[ -z "$PV1" ] || PV1="$(abs_file "$PV1")"
V="$SRC/golden/v1"
ADAPTER="sh $SRC/golden/tahq_adapter.sh $T"
W="$(fresh_dir "$W")"
mkdir "$W/tmp"
export TMPDIR="$W/tmp" # conform's private folders go here: checked empty below

n_checks=0
ok() { n_checks=$((n_checks + 1)); }
# shellcheck source=conform_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/conform_lib.sh"
no_tmp_left() {
  local left
  left="$(ls -A "$TMPDIR")"
  [ -z "$left" ] || fail "$1: temporary files left in \$TMPDIR: $left"
}
# run RC ARGS...: tahq conform ARGS exits with RC; stdout in out.txt, stderr in err.txt
run() {
  local want="$1" rc=0
  shift
  "$T" conform "$@" >"$W/out.txt" 2>"$W/err.txt" || rc=$?
  [ "$rc" -eq "$want" ] || fail "conform $* exited $rc, expected $want: $(tail -n 5 "$W/err.txt" "$W/out.txt")"
  ok
}
# usage_error ARGS...: exit 2, exactly one line on stderr naming tahq conform, nothing on stdout
usage_error() {
  run 2 "$@"
  [ "$(wc -l <"$W/err.txt")" -eq 1 ] || fail "conform $*: stderr is not one line: $(cat "$W/err.txt")"
  grep -q '^tahq conform: ' "$W/err.txt" || fail "conform $*: $(cat "$W/err.txt")"
  [ ! -s "$W/out.txt" ] || fail "conform $*: wrote to stdout: $(head -c 500 "$W/out.txt")"
}
count_kind() { grep -c "\"kind\": \"$1\"" "$V/manifest.json"; }
n_all=$(sed -n 's/^  "n_cases": \([0-9]*\),$/\1/p' "$V/manifest.json")

# --- 9. --help names every option; bad options are refused ---------------------
"$T" conform --help >"$W/help.txt"
for opt in --vectors --candidate --run --check --case --exclude --flag --exclude-flag --kind \
  --profile --tolerance \
  --jobs --timeout --workdir --json --tap --junit -v; do
  grep -qe " $opt " "$W/help.txt" || fail "--help does not document $opt"
done
ok
mkdir -p "$W/empty"
usage_error --vectors "$V" --candidate "$W/empty" --bogus
usage_error --vectors "$V" --vectors "$V" --candidate "$W/empty"
usage_error --vectors "$V" --candidate "$W/empty" --json --json
usage_error --vectors "$V" --candidate "$W/empty" --json --tap
usage_error --vectors "$V" --candidate "$W/empty" --jobs 2
usage_error --vectors "$V" --candidate "$W/empty" --timeout 5
usage_error --vectors "$V" --run "$ADAPTER" --jobs 0
usage_error --vectors "$V" --run "$ADAPTER" --jobs 257
usage_error --vectors "$V" --run "$ADAPTER" --jobs two
usage_error --vectors "$V" --run "$ADAPTER" --jobs 2 --jobs 3
usage_error --vectors "$V" --run "$ADAPTER" --timeout 0
usage_error --vectors "$V" --run "$ADAPTER" --timeout -1
usage_error --vectors "$V" --run "$ADAPTER" --timeout 1e3
usage_error --vectors "$V" --run "$ADAPTER" --timeout ''
usage_error --vectors "$V" --candidate "$W/empty" --kind encoder
has "$W/err.txt" "not a case kind"
usage_error --vectors "$V" --candidate "$W/empty" --profile format2
has "$W/err.txt" "not a profile"
usage_error --vectors "$V" --candidate "$W/empty" --case
usage_error --vectors "$V" --check --case sweep
usage_error --vectors "$V" --candidate "$W/empty" --case no-such-case-id
has "$W/err.txt" "no case selected"

# --- 3. one error for a missing command or folder -------------------------------
usage_error --vectors "$W/no-such-set" --candidate "$W/empty"
has "$W/err.txt" "no such folder"
usage_error --vectors "$W/empty" --candidate "$W/empty"
has "$W/err.txt" "not a golden set"
usage_error --vectors "$V" --candidate "$W/no-such-candidate"
usage_error --vectors "$V" --run "$W/no-such-candidate encode"
has "$W/err.txt" "does not exist"
usage_error --vectors "$V" --run "no-such-candidate-program-xyz"
has "$W/err.txt" "not found on PATH"
usage_error --vectors "$V" --run "sh $W/no-such-script.sh"
has "$W/err.txt" "no-such-script.sh"
printf '#!/bin/sh\nexit 0\n' >"$W/not-executable"
usage_error --vectors "$V" --run "$W/not-executable"
has "$W/err.txt" "is not executable"
# found by the shell only when run: exit status 127 on the first case
usage_error --vectors "$V" --run "sh -c 'echo \"x: not found\" >&2; exit 127'"
has "$W/err.txt" "cannot be run (exit status 127 on the first case"
# the adapter is there, the program it runs is not: the shell's message is shown
usage_error --vectors "$V" --run "sh $SRC/golden/tahq_adapter.sh $W/no-such-tahq"
has "$W/err.txt" "no-such-tahq: not found"
no_tmp_left "a missing command"

# --- 4. selection ---------------------------------------------------------------
n_dec=$(count_kind decode_error)
run 1 --vectors "$V" --candidate "$W/empty" --kind decode_error
has "$W/out.txt" "conform: $n_dec cases selected, $((n_all - n_dec)) skipped"
n_f1=$((n_all - $(count_kind paper_v1)))
run 1 --vectors "$V" --candidate "$W/empty" --profile format1
has "$W/out.txt" "conform: $n_f1 cases selected, $((n_all - n_f1)) skipped"
hasnt "$W/out.txt" "(paper_v1)"
run 1 --vectors "$V" --candidate "$W/empty" --profile paper-v1 --json
has "$W/out.txt" "\"selected\": $(count_kind paper_v1), "
# repeatable --case (union) and --exclude
run 1 --vectors "$V" --candidate "$W/empty" --case sweep-g008-b1 --case sweep-g016-b2 --case decerr-a-crc-seed
has "$W/out.txt" "conform: 3 cases selected, $((n_all - 3)) skipped"
run 1 --vectors "$V" --candidate "$W/empty" --case sweep-g008 --exclude b1 --exclude b2
has "$W/out.txt" "conform: 6 cases selected"
hasnt "$W/out.txt" "sweep-g008-b1 "
# by manifest flag: an encoder limited to 7 bits (as the authors' packer is)
# passes the paper-v1 cases without bits_8
n_t=$(grep -c '"tie_entropy"' "$V/manifest.json")
run 1 --vectors "$V" --candidate "$W/empty" --flag tie_entropy
has "$W/out.txt" "conform: $n_t cases selected"
usage_error --vectors "$V" --candidate "$W/empty" --flag 'bits 8'
cat >"$W/no-8-bits.sh" <<EOF
#!/bin/sh
case "\$*" in *'_bits":8'*) echo "err_config: at most 7 bits" >&2; exit 1 ;; esac
exec $ADAPTER "\$@"
EOF
run 1 --vectors "$V" --run "sh $W/no-8-bits.sh" --profile paper-v1
has "$W/out.txt" "FAIL paper-v1-g32-8-2 (paper_v1)"
run 0 --vectors "$V" --run "sh $W/no-8-bits.sh" --profile paper-v1 --exclude-flag bits_8
has "$W/out.txt" "conform: $(($(count_kind paper_v1) - 1)) cases selected"
# a format-1-only candidate (it rejects the paper-v1 profile) exits 0 with --profile format1
cat >"$W/format1-only.sh" <<EOF
#!/bin/sh
case "\$*" in *'"profile":"paper-v1"'*) echo "err_config: no paper-v1 here" >&2; exit 1 ;; esac
exec $ADAPTER "\$@"
EOF
run 1 --vectors "$V" --run "sh $W/format1-only.sh" --case sweep-g008-b1 --case paper-v1-hand
run 0 --vectors "$V" --run "sh $W/format1-only.sh" --case sweep-g008-b1 --case paper-v1-hand --profile format1
has "$W/out.txt" "conform: 1 cases selected, $((n_all - 1)) skipped: exact 1 passed, 0 failed"

# --- 2. a failed candidate: exit status and the tail of its stderr ----------------
cat >"$W/noisy.sh" <<'EOF'
#!/bin/sh
for i in 1 2 3 4 5 6 7 8; do echo "noise line $i of $1" >&2; done
[ "$1" = decode ] && kill -SEGV $$
exit 3
EOF
run 1 --vectors "$V" --run "sh $W/noisy.sh" --case sweep-g008-b1
has "$W/out.txt" "no message: the candidate's encode exited with status 3"
has "$W/out.txt" "stderr of the candidate's encode (last 5 lines):"
has "$W/out.txt" "    | noise line 4 of encode"
has "$W/out.txt" "    | noise line 8 of encode"
hasnt "$W/out.txt" "noise line 3 of encode"
has "$W/out.txt" "(a shell's code for signal 11, SIGSEGV)"
hasnt "$W/out.txt" "reported (none)"
run 1 --vectors "$V" --run "sh $W/noisy.sh" --case sweep-g008-b1 --json
has "$W/out.txt" '"exit_status": 3, "signal": null, "timed_out": false'
has "$W/out.txt" 'noise line 7 of encode\nnoise line 8 of encode"'
# a candidate killed by a signal itself (not through a shell)
run 1 --vectors "$V" --run "exec sh $W/noisy.sh" --case decerr-a-crc-seed
has "$W/out.txt" "expected err_crc, but the candidate's decode was killed by signal 11 (SIGSEGV)"

# --- 6. the candidate gets copies; the set is never written ---------------------
cp -r "$V" "$W/set"
cat >"$W/vandal.sh" <<EOF
#!/bin/sh
# runs the reference, then destroys its input
$ADAPTER "\$@"; rc=\$?
printf 'garbage' >"\$2"
exit \$rc
EOF
run 0 --vectors "$W/set" --run "sh $W/vandal.sh" --case sweep-g008 --case decerr-a-crc
"$T" conform --vectors "$W/set" --check >/dev/null 2>"$W/err.txt" ||
  fail "a candidate that writes to its input changed the set: $(cat "$W/err.txt")"
ok
rm -rf "$W/set"
no_tmp_left "a finished --run"

# --- 5. --timeout: the process group is killed, the case is a TIMEOUT --------------
cat >"$W/sleepy.sh" <<EOF
#!/bin/sh
echo \$\$ >>"$W/pids"
sleep 60 &
echo \$! >>"$W/pids"
wait
EOF
rm -f "$W/pids"
start=$(date +%s)
run 1 --vectors "$V" --run "sh $W/sleepy.sh" --case sweep-g008-b1 --case decerr-a-crc-seed \
  --timeout 0.5 --jobs 2
[ $(($(date +%s) - start)) -lt 20 ] || fail "--timeout 0.5 took $(($(date +%s) - start)) s"
has "$W/out.txt" "TIMEOUT sweep-g008-b1 (encode)"
has "$W/out.txt" "did not finish within 0.5 s (TIMEOUT: its process group was killed)"
has "$W/out.txt" "TIMEOUT decerr-a-crc-seed (decode_error)"
has "$W/out.txt" "; 2 timed out"
sleep 0.2
[ -z "$(alive "$W/pids")" ] || fail "--timeout left candidate processes: $(alive "$W/pids")"
ok

# --- 5. --jobs: cases run at once, output in case order and the same for any N ---
# Each run waits (up to 10 s) until another run has started: with --jobs 2
# two cases run together and pass at once; one at a time they cannot.
mkdir -p "$W/barrier"
cat >"$W/together.sh" <<EOF
#!/bin/sh
touch "$W/barrier/\$\$"
i=0
while [ "\$(ls "$W/barrier" | wc -l)" -lt 2 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
[ "\$(ls "$W/barrier" | wc -l)" -ge 2 ] || { echo "ran alone" >&2; exit 9; }
exec $ADAPTER "\$@"
EOF
# The first case runs alone (the check that the command can run at all): it
# passes the barrier by a marker file; then two cases meet there.
rm -rf "$W/barrier"
mkdir -p "$W/barrier"
cat >"$W/first-then-together.sh" <<EOF
#!/bin/sh
if [ -e "$W/barrier/first" ]; then rm -f "$W/barrier/first"; exec $ADAPTER "\$@"; fi
exec sh "$W/together.sh" "\$@"
EOF
touch "$W/barrier/first"
run 0 --vectors "$V" --run "sh $W/first-then-together.sh" --case decerr-a-crc-seed \
  --case decerr-a-crc-field --case decerr-a-crc-last-byte --jobs 2 --timeout 30
has "$W/out.txt" "exact 3 passed, 0 failed"
sel=(--case alloc-none --case decerr-a --case paper-v1 --case edge-)
run 1 --vectors "$V" --run "sh $W/noisy.sh" "${sel[@]}" -v --jobs 1
cp "$W/out.txt" "$W/jobs1.txt"
run 1 --vectors "$V" --run "sh $W/noisy.sh" "${sel[@]}" -v --jobs 3
cmp -s "$W/jobs1.txt" "$W/out.txt" || fail "--jobs 3 output differs from --jobs 1: $(diff "$W/jobs1.txt" "$W/out.txt" | head)"
ok

# --- 5. --tap and --junit ----------------------------------------------------------
run 1 --vectors "$V" --run "sh $W/noisy.sh" --case sweep-g008-b1 --case decerr-a-crc-seed --tap \
  --junit "$W/report.xml"
head -n 2 "$W/out.txt" >"$W/tap_head.txt"
printf 'TAP version 13\n1..2\n' | cmp -s - "$W/tap_head.txt" || fail "TAP header: $(cat "$W/tap_head.txt")"
has "$W/out.txt" "not ok 1 - sweep-g008-b1 (encode)"
has "$W/out.txt" "not ok 2 - decerr-a-crc-seed (decode_error)"
has "$W/out.txt" "  ---"
has "$W/out.txt" "  ..."
has "$W/out.txt" "# conform: 2 cases selected"
hasnt "$W/out.txt" "FAIL sweep-g008-b1"
has "$W/report.xml" '<?xml version="1.0" encoding="UTF-8"?>'
has "$W/report.xml" '<testsuite name="tahq conform v1" tests="2" failures="2" errors="0"'
has "$W/report.xml" '<testcase classname="tahq.conform.encode" name="sweep-g008-b1"'
has "$W/report.xml" '<failure type="FAIL" message="encode: no message: the candidate&apos;s encode exited with status 3">'
has "$W/report.xml" '    | noise line 8 of encode'
has "$W/report.xml" '<property name="cases_not_selected" value="'"$((n_all - 2))"'"/>'
if command -v python3 >/dev/null 2>&1; then
  python3 - "$W/report.xml" <<'EOF' || fail "the JUnit file does not parse"
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find("testsuite")
assert len(s.findall("testcase")) == 2 and len(s.findall("testcase/failure")) == 2
EOF
fi
run 0 --vectors "$V" --run "$ADAPTER" --case decerr-a-crc-seed --case sweep-g008-b1 --tap --junit "$W/report.xml"
has "$W/out.txt" "ok 1 - sweep-g008-b1 (encode)"
has "$W/out.txt" "ok 2 - decerr-a-crc-seed (decode_error)"
has "$W/report.xml" 'tests="2" failures="0" errors="0"'
hasnt "$W/report.xml" '<failure'
# a timeout is a JUnit error
rm -f "$W/pids"
run 1 --vectors "$V" --run "sh $W/sleepy.sh" --case decerr-a-crc-seed --timeout 0.3 --junit "$W/report.xml"
has "$W/report.xml" '<error type="TIMEOUT"'
# the JUnit file cannot be created: refused before anything runs, as a usage
# error (2), not as a failing candidate (1)
run 2 --vectors "$V" --run "sh $W/sleepy.sh" --case decerr-a-crc-seed --junit "$W/no-such-dir/r.xml"
[ ! -s "$W/out.txt" ] || fail "conform ran although its --junit file cannot be written"

# --- paper_v1: ties in the token ranking (issue 23, point 4) ---------------------
# A paper-v1 encoder whose tie order is the SPEC's gives tahq's bytes; one
# that breaks ties highest position first fails the exact verdict and passes
# --tolerance (TOLERANT); one that gives the highest-entropy tokens the low
# width fails both.
if [ -n "$PV1" ]; then
  for ties in low high wrong; do
    {
      echo '#!/bin/sh'
      echo "[ \"\$1\" = encode ] && exec $PV1 --ties $ties \"\$@\""
      echo "exec $ADAPTER \"\$@\""
    } >"$W/pv1-$ties.sh"
  done
  n_pv1=$(count_kind paper_v1)
  run 0 --vectors "$V" --run "sh $W/pv1-low.sh" --profile paper-v1
  has "$W/out.txt" "exact $n_pv1 passed, 0 failed"
  run 1 --vectors "$V" --run "sh $W/pv1-high.sh" --profile paper-v1
  has "$W/out.txt" "FAIL paper-v1-edge (paper_v1)"
  has "$W/out.txt" "outside the paper-v1 field tolerance: bitmap 2,"
  run 0 --vectors "$V" --run "sh $W/pv1-high.sh" --profile paper-v1 --tolerance
  has "$W/out.txt" "TOLERANT paper-v1-edge (paper_v1)"
  has "$W/out.txt" "encode (tolerant): pass: within tolerance: the token bitmap differs from the SPEC's selection in 2 tokens, a lowest-entropy selection within the entropy tolerance"
  has "$W/out.txt" "$n_pv1 passed ($((n_pv1 - 1)) exact, 1 tolerant), 0 failed"
  run 1 --vectors "$V" --run "sh $W/pv1-wrong.sh" --profile paper-v1 --tolerance
  has "$W/out.txt" "exceeds the entropy tolerance"
  hasnt "$W/out.txt" "TOLERANT"
fi

# --- 6. SIGINT / SIGTERM: candidates killed, temporary folder removed ----------------
for sig in INT TERM; do
  rm -f "$W/pids"
  printf 'old report\n' >"$W/report.xml"
  "$T" conform --vectors "$V" --run "sh $W/sleepy.sh" --jobs 2 --junit "$W/report.xml" \
    >"$W/sig.txt" 2>&1 &
  cpid=$!
  for _ in $(seq 100); do
    [ -s "$W/pids" ] && break
    sleep 0.1
  done
  [ -s "$W/pids" ] || fail "SIG$sig: the candidate did not start"
  [ -n "$(ls -A "$TMPDIR")" ] || fail "SIG$sig: no temporary folder while running"
  kill -"$sig" "$cpid"
  rc=0
  wait "$cpid" || rc=$?
  want=$((128 + $(kill -l "$sig")))
  [ "$rc" -eq "$want" ] || fail "SIG$sig: conform exited $rc, expected $want: $(cat "$W/sig.txt")"
  no_tmp_left "SIG$sig"
  [ "$(cat "$W/report.xml")" = "old report" ] || fail "SIG$sig: the JUnit file was replaced"
  [ -z "$(find "$W" -maxdepth 1 -name '*.tmp-*')" ] || fail "SIG$sig: the JUnit temporary file was left"
  sleep 0.2
  [ -z "$(alive "$W/pids")" ] || fail "SIG$sig left candidate processes: $(alive "$W/pids")"
  ok
done

no_tmp_left "the end"
echo "conform_test: $n_checks checks passed"
