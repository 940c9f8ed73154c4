# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# tests/lib.sh: the helpers every shell test shares. Source it first, by a
# path relative to the calling script, so any working folder will do:
#   . "$(dirname "$0")/../tests/lib.sh"          (one folder deep)
#   . "$(dirname "$0")/../../tests/lib.sh"       (two folders deep)
# POSIX sh (dash) and bash alike. Exit codes: 0 passed, 1 failed,
# 77 skipped (CTest's SKIP_RETURN_CODE), 2 usage.
# t_tag NAME names the case in every later message: "FAIL (NAME): ...".

T_TAG=
t_tag() { T_TAG=$1; }

# fail MSG...: stop now, failed
fail() {
  echo "FAIL${T_TAG:+ ($T_TAG)}: $*" >&2
  exit 1
}
# skip MSG...: stop now, the check cannot run here (a tool, a model missing)
skip() {
  echo "SKIPPED${T_TAG:+ ($T_TAG)}: $*" >&2
  exit 77
}
# usage MSG...: stop now, the script was called wrongly
usage() {
  echo "usage: $*" >&2
  exit 2
}

# fail_later MSG...: record a failure and go on, so that one run reports
# them all; finish NAME ends the script: 1 if any was recorded, else 0
T_FAILED=0
fail_later() {
  echo "FAIL${T_TAG:+ ($T_TAG)}: $*"
  T_FAILED=1
}
finish() {
  if [ "$T_FAILED" -ne 0 ]; then
    echo "$1: FAILED"
    exit 1
  fi
  echo "$1: all passed"
  exit 0
}

# abs_file PATH / abs_dir PATH: the absolute path of an existing file/folder
# (the tests cd into their work folder; a relative tool path would break)
abs_file() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }
abs_dir() { (cd "$1" && pwd); }

# fresh_dir DIR: empty DIR (made anew) and print its absolute path
fresh_dir() {
  rm -rf "$1" && mkdir -p "$1" && abs_dir "$1"
}

# has FILE TEXT [NAME] / hasnt FILE TEXT [NAME]: FILE holds (lacks) the
# fixed string TEXT; a failure names FILE (or NAME) and shows its start
has() { grep -qF -- "$2" "$1" || fail "${3:-$1} lacks '$2': $(head -c 3000 "$1")"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "${3:-$1} has '$2': $(head -c 3000 "$1")"; }

# need_cmd CMD [WHY]: skip unless CMD is on PATH
need_cmd() {
  command -v "$1" >/dev/null 2>&1 || skip "${2:-no $1 on PATH}"
}
# need_py_module PYTHON MODULE: skip unless PYTHON can import MODULE
need_py_module() {
  "$1" -c "import $2" 2>/dev/null || skip "$2 is not installed"
}
