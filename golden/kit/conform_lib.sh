# SPDX-License-Identifier: MIT
# conform_lib.sh - shared by conform_test.sh and conform_attack_test.sh
# (sourced after tests/lib.sh, which gives fail, has and hasnt; the sourcing
# script sets TMPDIR).
# alive PIDFILE: prints the processes of PIDFILE that still run (zombies are dead)
alive() {
  local p s
  for p in $(cat "$1" 2>/dev/null); do
    s="$(ps -o stat= -p "$p" 2>/dev/null || true)"
    case "$s" in "" | Z*) ;; *) echo "$p" ;; esac
  done
}
