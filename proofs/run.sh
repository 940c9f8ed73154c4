#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# proofs/run.sh - machine-checked proofs of ref/ with Frama-C (WP + Eva).
#
# Usage: proofs/run.sh [--build-dir DIR] [--replay] [--no-eva] [--no-write]
#                      [--jobs N] [--timeout S]
#
#   --build-dir DIR  scratch directory (Why3 config, reports, logs);
#                    default: a fresh temporary directory
#   --replay         use the committed WP cache without adding to it (CI);
#                    the default updates proofs/wp-cache with new results
#   --no-eva         skip the Eva analysis of proofs/eva_driver.c
#   --no-write       do not rewrite proofs/stats.json and proofs/README.md
#   --jobs N         parallel prover processes (default 2)
#   --timeout S      prover timeout in seconds (default 10)
#
# Exit status: 0 all goals proved and nothing regressed; 1 an unproved goal,
# fewer proved goals than the committed proofs/stats.json, or an Eva alarm
# that proofs/README.md does not list; 77 Frama-C or a prover is missing
# (CTest reports SKIPPED); 2 usage or tool failure.
#
# Toolchain notes (Debian 12: Frama-C 25, Why3 1.5.1, cvc5 1.0.3, z3 4.8.12):
# Why3 finds provers only through its config file, and 1.5.1 does not know
# cvc5, so a [prover] entry with a driver importing the CVC4 1.6 driver is
# added by hand (cvc5 rejects the logic ALL_SUPPORTED that driver sets).
set -u
set -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
# fail, skip, usage, need_cmd: messages "FAIL (proofs): ...", exit 1, 77, 2
. "$ROOT/tests/lib.sh"
t_tag proofs

BUILD=""
CACHE_MODE=update
RUN_EVA=1
WRITE=1
JOBS=2
TIMEOUT=10
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) BUILD=$2; shift 2 ;;
    --build-dir=*) BUILD=${1#*=}; shift ;;
    --replay) CACHE_MODE=replay; shift ;;
    --no-eva) RUN_EVA=0; shift ;;
    --no-write) WRITE=0; shift ;;
    --jobs) JOBS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) usage "proofs/run.sh [--build-dir DIR] [--replay] [--no-eva] [--no-write] [--jobs N] [--timeout S] (unknown option $1)" ;;
    esac
done

# Background jobs, two at a time (one per core), for the WP replay and Eva:
# in_background NAME CMD... runs CMD with its output in $BUILD/NAME.out and
# its exit status in $BUILD/NAME.rc (CMD runs in a subshell of its own, so
# that an `exit` in it is its status); background_status NAME reads the
# status (2 when the job left none). Wait for all with `wait`.
in_background() {
    local name=$1
    shift
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
        wait -n
    done
    rm -f "$BUILD/$name.rc"
    ( ("$@") >"$BUILD/$name.out" 2>&1; echo $? >"$BUILD/$name.rc" ) &
}
background_status() {
    cat "$BUILD/$1.rc" 2>/dev/null || echo 2
}

for tool in frama-c why3 python3; do
    need_cmd "$tool" "$tool not found on PATH"
done
for prover in cvc5 z3; do
    need_cmd "$prover" "prover $prover not found on PATH"
done
FRAMAC_VERSION=$(frama-c -version 2>/dev/null | head -1)
case "$FRAMAC_VERSION" in
25.*) ;;
*) echo "proofs: note: tested with Frama-C 25.0, found '$FRAMAC_VERSION'" ;;
esac

if [ -z "$BUILD" ]; then
    BUILD=$(mktemp -d "${TMPDIR:-/tmp}/tahq-proofs.XXXXXX") || exit 2
fi
mkdir -p "$BUILD" || exit 2
BUILD=$(cd "$BUILD" && pwd)

# ---- Why3 configuration ----------------------------------------------------
WHY3CONFIG="$BUILD/why3.conf"
export WHY3CONFIG
rm -f "$WHY3CONFIG"
if ! why3 -C "$WHY3CONFIG" config detect >"$BUILD/why3-detect.log" 2>&1; then
    cat "$BUILD/why3-detect.log"
    skip "why3 config detect failed"
fi
DATADIR=$(sed -n 's/^datadir *= *"\(.*\)"/\1/p' "$WHY3CONFIG" | head -1)
[ -n "$DATADIR" ] || DATADIR=/usr/share/why3
GEN="$DATADIR/drivers/cvc4_16.gen"
[ -f "$GEN" ] || skip "Why3 driver $GEN not found (needed for cvc5)"
cat >"$BUILD/cvc5.drv" <<EOF
(* cvc5 through Why3's CVC4 1.6 driver; cvc5 rejects ALL_SUPPORTED *)
prelude ";; produced by proofs/run.sh cvc5.drv ;;"
prelude "(set-logic ALL)"
import "$GEN"
EOF
CVC5_VERSION=$(cvc5 --version 2>/dev/null | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)
cat >>"$WHY3CONFIG" <<EOF

[prover]
command = "$(command -v cvc5) --tlimit-per=%t000 --lang=smt2 %f"
driver = "$BUILD/cvc5.drv"
in_place = false
interactive = false
name = "CVC5"
shortcut = "cvc5"
version = "${CVC5_VERSION:-1.0.3}"
EOF
why3 config list-provers >"$BUILD/why3-provers.txt" 2>&1 || skip "why3 cannot read $WHY3CONFIG"
grep -q '^CVC5 ' "$BUILD/why3-provers.txt" || skip "why3 does not accept the cvc5 entry"
grep -q '^Z3 ' "$BUILD/why3-provers.txt" || skip "why3 did not detect z3"

# ---- inputs -----------------------------------------------------------------
cd "$ROOT" || exit 2
# The library sources (ref/test_*.c are test programs).
SOURCES=$(ls ref/*.c | grep -v '/test_')
EVA_SOURCES=$SOURCES
# WP also proves proofs/theorems.c: properties over several functions of ref/
# (the bit-stream round trip), proved from their contracts; not compiled.
SOURCES="$SOURCES proofs/theorems.c"
CPP="-I$ROOT/include -I$ROOT/ref"
KERNEL_OPTS=(-cpp-extra-args="$CPP" -warn-unsigned-overflow -warn-unsigned-downcast
             -warn-special-float none)

# The static inline helpers of internal.h and of the scalar core tahq_core.h
# are compiled into every file that includes them; Frama-C keeps one copy
# per file (name_0, name_1, ...). The copies are the same text as the first
# one, which is proved; the two memcpy bit views are assumed
# (proofs/README.md, trusted base).
frama-c "${KERNEL_OPTS[@]}" $SOURCES -print -ocode "$BUILD/merged.c" >"$BUILD/parse.log" 2>&1 || {
    cat "$BUILD/parse.log"; echo "proofs: Frama-C cannot parse ref/"; exit 2; }
HELPERS=$(grep -ohE '(static inline|TAHQ_CORE_FN) [a-z0-9_]+ \**(tahq_[a-z0-9_]+)\(' ref/internal.h ref/tahq_core.h |
          grep -oE 'tahq_[a-z0-9_]+\($' | tr -d '(')
# tahq_encode (the public wrapper) carves typed views out of the caller's
# byte workspace, which WP's typed memory model cannot relate; WP proves
# everything after that cast (encode_tiles), Eva checks the wrapper.
SKIP="tahq_bits_of,tahq_float_of,tahq_bits_of64,tahq_encode"
# Functions whose WP proof is not complete: they are not given to WP (so CI
# can insist that every goal it does generate is proved), and are listed in
# stats.json and proofs/README.md ("Not proved by WP") with the reason. They
# are one of the walks of paper_v1.c (the authors' compatibility profile, SPEC
# appendix A) over the tiles in reordered order: the encoder's.
WP_OPEN="tahq_paper_v1_encode"
SKIP="$SKIP${WP_OPEN:+,$WP_OPEN}"
for h in $HELPERS; do
    for c in $(grep -oE "\b${h}_[0-9]+\(" "$BUILD/merged.c" | tr -d '(' | sort -u); do
        SKIP="$SKIP,$c"
    done
done


# ---- WP ---------------------------------------------------------------------
# Two runs with the same options but a different prover order: the functions
# of the float files go to cvc5 first (Z3 times out on every goal that pulls
# in WP's float theory), the integer code to Z3 first. A goal is tried with
# the second prover only when the first does not prove it; the cache records
# each attempt, so a replay must use the same order (it does: it is fixed
# here).
FLOAT_FILES="ref/fp16.c ref/quant.c ref/hadamard.c ref/entropy.c ref/gain.c ref/fixpoint.c ref/codec.c"
FLOAT_FUNCS=$( (for f in $FLOAT_FILES; do
    grep -oE '^[A-Za-z_][A-Za-z0-9_ ]*[ *]([a-z_][a-z0-9_]*)\(' "$f" | grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '('
done
# The scalar core's functions of binary32/binary64 values (binary16, the
# metadata grid, log2, the gain key) are float code too.
grep -E '^TAHQ_CORE_FN .*\b(float|double)\b' ref/tahq_core.h | grep -oE '\btahq_[a-z0-9_]+\(' | tr -d '(') |
    grep -vxE 'if|for|while|switch|return' | sort -u |
    while read -r fn; do # only what Frama-C sees (not the vector paths)
        grep -qE "\b${fn}\(" "$BUILD/merged.c" && echo "$fn"
    done | paste -sd, -)
CACHE_DIR="$HERE/wp-cache"
mkdir -p "$CACHE_DIR"
echo "proofs: WP on ref/ (cache $CACHE_MODE, timeout ${TIMEOUT}s, $JOBS jobs)"
T0=$(date +%s)
wp_run() { # NAME PROVERS SELECTION...
    local name=$1 provers=$2
    shift 2
    frama-c "${KERNEL_OPTS[@]}" $SOURCES \
        -remove-unused-specified-functions \
        -wp -wp-rte -wp-model Typed -wp-prover "$provers" -wp-timeout "$TIMEOUT" -wp-par "$JOBS" \
        -wp-auto wp:bitshift,wp:bitrange,wp:range \
        -wp-cache "$CACHE_MODE" -wp-cache-dir "$CACHE_DIR" \
        "$@" \
        -wp-report-json "$BUILD/wp-$name.json" \
        >"$BUILD/wp-$name.log" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$BUILD/wp-$name.json" ]; then
        tail -40 "$BUILD/wp-$name.log"
        fail "frama-c -wp ($name) exited with status $rc"
    fi
    echo "proofs:   $name: $(grep -E '^\[wp\] Proved goals' "$BUILD/wp-$name.log" | sed 's/^\[wp\] //')"
}
# Any function selection (-wp-fct, -wp-skip-fct) leaves the lemmas out, so
# they get a run of their own.
wp_run lemmas z3,cvc5 -wp-prop=@lemma
# The two selections, written once so that an update and a replay cannot differ.
INT_RUN=(int z3,cvc5 -wp-skip-fct "$SKIP,$FLOAT_FUNCS")
FLOAT_RUN=(float cvc5,z3 -wp-fct "$FLOAT_FUNCS" -wp-skip-fct "$SKIP")
if [ "$CACHE_MODE" = replay ]; then
    # A replay calls no prover: each Frama-C process keeps one core busy
    # (goal generation and Qed), so the two selections run side by side.
    in_background wp-int wp_run "${INT_RUN[@]}"
    in_background wp-float wp_run "${FLOAT_RUN[@]}"
    wait
    cat "$BUILD/wp-int.out" "$BUILD/wp-float.out"
    [ "$(background_status wp-int)" -eq 0 ] && [ "$(background_status wp-float)" -eq 0 ] || exit 1
else
    # Provers run (-wp-par jobs each): one selection at a time, so that a
    # goal's time is not stretched towards the timeout by the other.
    wp_run "${INT_RUN[@]}"
    wp_run "${FLOAT_RUN[@]}"
fi
T1=$(date +%s)
echo "proofs: WP done in $((T1 - T0)) s"

# ---- Eva --------------------------------------------------------------------
EVA_RC=0
if [ $RUN_EVA -eq 1 ]; then
    # One analysis per entry point of proofs/eva_driver.c (see its header
    # comment and the Eva section of README.md), about 6 CPU minutes in all,
    # two analyses at a time (one core each).
    # -no-annot: Eva checks the C code alone (every alarm is its own), the
    # ACSL of ref/ is WP's business. The workspace is an absolute address so
    # that its alignment arithmetic is exact (see eva_driver.c).
    # Precision, instead of an -eva-precision preset:
    # - every loop of up to 300 iterations unrolled (all per-tile loops: the
    #   local tile buffers are then seen fully initialized);
    # - split-return: the states of a function are split by status code, so
    #   that outputs written only on success are initialized after a TAHQ_OK
    #   test (encode_tiles returns its status to tahq_encode untested, hence
    #   its explicit split on 0; open_message returns its status inside a
    #   struct, hence no merge of its return states at all);
    # - fwht_stages: the stride loop (h *= 2) is not unrolled automatically;
    #   1500 states keep every (h, i, j) apart for G = 256;
    # - encode_tiles: 100 states within one tile, merged after each tile.
    # The exhaustive round trips (eva_*_round_trip) add -eva-no-results: the
    # values of each statement are not kept (only the alarms are read),
    # which halves their time and saves 1 GB; the codec analyses keep them
    # (without, G = 256 is 5 times slower and less precise). The slowest
    # analyses (the round trips) go first.
    EVA_MAINS="eva_fp16_round_trip eva_bf16_round_trip eva_primitives eva_paper_v1 eva_codec_g8 eva_codec_g16 eva_codec_g32 eva_codec_g64 eva_codec_g128 eva_codec_g256"
    EVA_OPTS=(-eva-slevel 10 -eva-auto-loop-unroll 300
              -eva-split-return auto -eva-split-return-function encode_tiles:0,open_message:full
              -eva-slevel-function fwht_stages:1500,encode_tiles:100
              -eva-slevel-merge-after-loop encode_tiles)
    echo "proofs: Eva on proofs/eva_driver.c ($(echo $EVA_MAINS | wc -w) entry points, 2 at a time)"
    eva_main() { # MAIN: one analysis
        local extra=()
        case "$1" in *_round_trip) extra=(-eva-no-results) ;; esac
        frama-c "${KERNEL_OPTS[@]}" -no-annot $EVA_SOURCES proofs/eva_driver.c \
            -absolute-valid-range 0x10000-0x1FFFF -main "$1" \
            -eva "${EVA_OPTS[@]}" "${extra[@]}" -eva-no-show-progress -eva-print-callstacks \
            -eva-msg-key=-initial-state,-final-states \
            -then -report -report-csv "$BUILD/eva-$1.csv" \
            >"$BUILD/eva-$1.log" 2>&1
    }
    for main in $EVA_MAINS; do
        rm -f "$BUILD/eva-$main.csv"
        in_background "eva-$main" eva_main "$main"
    done
    wait
    : >"$BUILD/eva.log"
    printf 'directory\tfile\tline\tfunction\tproperty kind\tstatus\tproperty\n' >"$BUILD/eva-report.csv"
    for main in $EVA_MAINS; do
        rc=$(background_status "eva-$main")
        { echo "==== -main $main (status $rc)"; cat "$BUILD/eva-$main.log"; } >>"$BUILD/eva.log"
        if [ "$rc" -ne 0 ] || [ ! -s "$BUILD/eva-$main.csv" ]; then
            tail -20 "$BUILD/eva-$main.log"
            echo "proofs: frama-c -eva -main $main exited with status $rc"
            EVA_RC=1
            continue
        fi
        tail -n +2 "$BUILD/eva-$main.csv" >>"$BUILD/eva-report.csv"
        echo "proofs:   $main: $(grep -E '^  [0-9]+ alarms? generated' "$BUILD/eva-$main.log" | sed 's/^ *//;s/ by the analysis:\?//' || echo 'no alarm')"
    done
    T2=$(date +%s)
    echo "proofs: Eva done in $((T2 - T1)) s"
else
    T2=$T1
fi

# ---- statistics, README table, regression check ------------------------------
python3 "$HERE/stats.py" --report "$BUILD/wp-lemmas.json" "$BUILD/wp-int.json" "$BUILD/wp-float.json" \
    --log "$BUILD/wp-lemmas.log" "$BUILD/wp-int.log" "$BUILD/wp-float.log" \
    --eva-log "$BUILD/eva.log" --eva-csv "$BUILD/eva-report.csv" --eva-rc "$EVA_RC" \
    --run-eva "$RUN_EVA" --sources $SOURCES --stats "$HERE/stats.json" --readme "$HERE/README.md" \
    --write "$WRITE" --wp-seconds $((T1 - T0)) --eva-seconds $((T2 - T1)) \
    --skipped "tahq_encode${WP_OPEN:+,$WP_OPEN}" --cache-mode "$CACHE_MODE"
STATS_RC=$?

# ---- provenance of stats.json -------------------------------------------------
# What these results are of: the commit, the date, and the SHA-256 of every
# file the proofs read (the globs below, ref/test_*.c excepted), so that a
# reader (plots/report.py) can tell whether the tree still matches them.
if [ $WRITE -eq 1 ] && [ -s "$HERE/stats.json" ]; then
    python3 - "$HERE/stats.json" "$ROOT" "$CACHE_MODE" "$RUN_EVA" <<'PY' || STATS_RC=2
import datetime, glob, hashlib, json, os, subprocess, sys
path, root, cache, eva = sys.argv[1:5]
globs = ["ref/*.c", "ref/*.h", "include/*.h", "proofs/theorems.c", "proofs/eva_driver.c"]
exclude = ["ref/test_*"]
files = sorted({os.path.relpath(f, root) for g in globs for f in glob.glob(os.path.join(root, g))}
               - {os.path.relpath(f, root) for g in exclude for f in glob.glob(os.path.join(root, g))})
digests = {f: hashlib.sha256(open(os.path.join(root, f), "rb").read()).hexdigest() for f in files}
def git(*args):
    try:
        return subprocess.run(["git", "-C", root] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, check=True).stdout.decode().strip()
    except (OSError, subprocess.CalledProcessError):
        return None
changed = git("status", "--porcelain", "--untracked-files=all", "--", *files)
stats = json.load(open(path, encoding="utf-8"))
stats["last_run"] = {
    "commit": git("rev-parse", "HEAD"),
    "inputs_as_committed": None if changed is None else changed == "",
    "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "cache": cache, "eva": eva == "1",
    "input_globs": globs, "input_exclude": exclude, "input_sha256": digests,
}
with open(path, "w", encoding="utf-8") as f:
    f.write(json.dumps(stats, indent=1) + "\n")
print("proofs: stats.json records commit %s, %d input files" % (stats["last_run"]["commit"], len(files)))
PY
fi
exit $STATS_RC
