#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest shell_lib: the exit codes and messages of tests/lib.sh, each helper
# run in a child script that sources it: a passing check exits 0, fail 1,
# skip 77, usage 2, fail_later goes on and finish exits 1; has tells a
# present string from a missing one (so a check built on it can fail).
# usage: lib_test.sh WORK_DIR
set -u
. "$(dirname "$0")/lib.sh"
lib=$(abs_file "$(dirname "$0")/lib.sh")
W=$(fresh_dir "$1") || exit 1
printf 'alpha beta\n' >"$W/f.txt"

# expect RC OUTPUT_TEXT BODY: the child exits RC and prints OUTPUT_TEXT,
# under sh and under bash (the tests use both)
expect() {
  printf '. "%s"\n%s\n' "$lib" "$3" >"$W/child.sh"
  for shell in sh bash; do
    rc=0
    (cd "$W" && "$shell" child.sh) >"$W/out.txt" 2>&1 || rc=$?
    [ "$rc" -eq "$1" ] || fail_later "$shell: '$3' exited $rc, expected $1: $(cat "$W/out.txt")"
    grep -qF -- "$2" "$W/out.txt" || fail_later "$shell: '$3' printed '$(cat "$W/out.txt")', not '$2'"
  done
}
expect 0 "ok" 'has f.txt beta; hasnt f.txt gamma; echo ok'
expect 1 "FAIL: f.txt lacks 'gamma': alpha beta" 'has f.txt gamma; echo reached'
expect 1 "FAIL: stderr has 'beta'" 'hasnt f.txt beta stderr'
expect 1 "FAIL (case7): broken" 't_tag case7; fail broken'
expect 77 "SKIPPED: no no-such-tool-x on PATH" 'need_cmd no-such-tool-x'
expect 77 "SKIPPED: no_such_module_x is not installed" 'need_py_module python3 no_such_module_x'
expect 2 "usage: x.sh DIR" 'usage x.sh DIR'
expect 1 "t: FAILED" 'fail_later one; fail_later two; echo went-on; finish t'
expect 1 "went-on" 'fail_later one; echo went-on; finish t'
expect 0 "t: all passed" 'finish t'
expect 0 "$W/new" 'fresh_dir new; [ -d new ]'
finish shell_lib
