# SPDX-License-Identifier: MIT
# conform_lib.sh - shared by conform_test.sh and conform_attack_test.sh
# (sourced; the sourcing script defines fail and sets TMPDIR).

# has FILE TEXT / hasnt FILE TEXT: FILE holds TEXT, or does not
has() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(head -c 3000 "$1")"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$1 has '$2': $(head -c 3000 "$1")"; }
# alive PIDFILE: prints the processes of PIDFILE that still run (zombies are dead)
alive() {
  local p s
  for p in $(cat "$1" 2>/dev/null); do
    s="$(ps -o stat= -p "$p" 2>/dev/null || true)"
    case "$s" in "" | Z*) ;; *) echo "$p" ;; esac
  done
}
