#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest train_smoke: tahq-train on a built-in paragraph (no corpus, no network).
#   smoke_test.sh TAHQ_TRAIN WORKDIR
# Checks: the loss falls over 40 steps (K = 2) and does not with lr 0 (the
# control: the check can fail); two fp32 runs write byte-identical CSVs; a
# TAH-Quant run (fixpoint-6 backward) trains and sends under a quarter of
# fp32's bytes; an existing result is skipped (resume); bad options exit 2
# with one line; a missing corpus exits 1 and names the fetch script.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
BIN=$1
W=$2
W="$(fresh_dir "$W")" || exit 1

# Text of the test (written for it): a few sentences, repeated, so that a
# small model can learn something in 40 steps.
i=0
while [ $i -lt 12 ]; do
    cat <<'EOF'
A pipeline cuts a model into stages that run on different machines. Each stage
sends its activations to the next one and receives gradients back. Over a slow
network those messages are the bottleneck, so they are compressed: a few bits
per value, a scale and a zero point per tile, and a rotation for the tiles that
hold one large outlier. The receiving stage computes with the decoded values.
EOF
    i=$((i + 1))
done >"$W/train.txt"
head -c 1500 "$W/train.txt" | tail -c 700 >"$W/val.txt"

SMALL="--channels 64 --layers 2 --heads 2 --context 32 --stages 2 --micro 2 --batch 2
       --train-file $W/train.txt --val-file $W/val.txt --eval-windows 4 --eval-every 10"

# drop = mean loss of steps 1-3 minus mean loss of steps 36-40
drop() {
    awk -F, 'NR > 1 && $1 <= 3 { a += $3; na++ } NR > 1 && $1 > 35 { b += $3; nb++ }
             END { printf "%.4f\n", a / na - b / nb }' "$1"
}

# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 40 --lr 3e-3 --out "$W/a" --print-every 10 >"$W/a.log" 2>&1 ||
    fail_later "fp32 run failed: $(tail -n 3 "$W/a.log")"
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 40 --lr 3e-3 --out "$W/b" --print-every 0 >"$W/b.log" 2>&1 ||
    fail_later "second fp32 run failed"
A=$W/a/fp32_k2_s1.csv
if [ -f "$A" ] && [ -f "$W/b/fp32_k2_s1.csv" ]; then
    cmp -s "$A" "$W/b/fp32_k2_s1.csv" || fail_later "two fp32 runs with the same seed wrote different CSVs"
    [ "$(wc -l <"$A")" -eq 41 ] || fail_later "$A: expected 41 lines"
    d=$(drop "$A")
    echo "fp32: loss drop over 40 steps $d (must be > 0.5)"
    awk -v d="$d" 'BEGIN { exit !(d > 0.5) }' || fail_later "fp32 loss did not fall (drop $d)"
else
    fail_later "fp32 CSVs missing"
fi

# control: with lr 0 the same check must see no drop
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 40 --lr 0 --out "$W/c" --print-every 0 >"$W/c.log" 2>&1 ||
    fail_later "lr-0 run failed"
if [ -f "$W/c/fp32_k2_s1.csv" ]; then
    d=$(drop "$W/c/fp32_k2_s1.csv")
    echo "control (lr 0): loss drop $d (must be < 0.1)"
    awk -v d="$d" 'BEGIN { exit !(d < 0.1) }' || fail_later "control: loss fell with lr 0 (drop $d)"
fi

# TAH-Quant forward (4/3 bits, token allocation) + fixpoint-6 backward
# shellcheck disable=SC2086
"$BIN" $SMALL --method tah --steps 40 --lr 3e-3 --out "$W/a" --print-every 0 >"$W/t.log" 2>&1 ||
    fail_later "tah run failed: $(tail -n 3 "$W/t.log")"
T=$W/a/tah_k2_s1.csv
if [ -f "$T" ] && [ -f "$A" ]; then
    d=$(drop "$T")
    echo "tah: loss drop $d (must be > 0.5)"
    awk -v d="$d" 'BEGIN { exit !(d > 0.5) }' || fail_later "tah loss did not fall (drop $d)"
    fb=$(awk -F, 'NR == 2 { print $6 }' "$T")
    f32=$(awk -F, 'NR == 2 { print $6 }' "$A")
    echo "forward bytes per step: tah $fb, fp32 $f32"
    [ "$fb" -gt 0 ] && [ $((fb * 4)) -lt "$f32" ] || fail_later "tah forward bytes $fb not under fp32/4 ($f32)"
else
    fail_later "tah CSV missing"
fi

# TAH-Quant with gain allocation (SPEC §4.3): trains, sends the same number
# of low-precision tokens as token allocation (forward bytes within the
# outlier flags' difference), and is another codec: its CSV differs from
# token allocation's (control: were "tah-gain" parsed as plain "tah", the
# files would be identical)
# shellcheck disable=SC2086
"$BIN" $SMALL --method tah-gain --steps 40 --lr 3e-3 --out "$W/a" --print-every 0 >"$W/g.log" 2>&1 ||
    fail_later "tah-gain run failed: $(tail -n 3 "$W/g.log")"
GN=$W/a/tah-gain_k2_s1.csv
if [ -f "$GN" ] && [ -f "$T" ]; then
    d=$(drop "$GN")
    echo "tah-gain: loss drop $d (must be > 0.5)"
    awk -v d="$d" 'BEGIN { exit !(d > 0.5) }' || fail_later "tah-gain loss did not fall (drop $d)"
    ! cmp -s "$GN" "$T" || fail_later "tah-gain wrote the same CSV as tah (token allocation)"
    gb=$(awk -F, 'NR == 2 { print $6 }' "$GN")
    echo "forward bytes per step: tah-gain $gb, tah $fb"
    [ "$gb" -gt 0 ] && [ $((gb * 4)) -lt "$f32" ] || fail_later "tah-gain forward bytes $gb not under fp32/4 ($f32)"
else
    fail_later "tah-gain CSV missing"
fi

# --codec-threads: the parallel codec (3 threads) encodes and decodes both
# directions (stochastic forward, tah backward) with the bytes of the
# reference codec, so the run's CSV is the same file; control: another seed
# gives another file (the comparison can fail)
for t in 1 3; do
    # shellcheck disable=SC2086
    "$BIN" $SMALL --method "tah-sr+bwd-tah" --steps 10 --lr 3e-3 --codec-threads $t --out "$W/ct$t" \
        --print-every 0 >"$W/ct$t.log" 2>&1 || fail_later "--codec-threads $t run failed: $(tail -n 3 "$W/ct$t.log")"
done
# shellcheck disable=SC2086
"$BIN" $SMALL --method "tah-sr+bwd-tah" --steps 10 --lr 3e-3 --seed 2 --out "$W/ct1" --print-every 0 \
    >"$W/ct2.log" 2>&1 || fail_later "--seed 2 run failed"
C1="$W/ct1/tah-sr_bwd-tah_k2_s1.csv"
if [ -f "$C1" ] && [ -f "$W/ct3/tah-sr_bwd-tah_k2_s1.csv" ] && [ -f "$W/ct1/tah-sr_bwd-tah_k2_s2.csv" ]; then
    cmp -s "$C1" "$W/ct3/tah-sr_bwd-tah_k2_s1.csv" || fail_later "--codec-threads 3 wrote another CSV than 1 thread"
    ! cmp -s "$C1" "$W/ct1/tah-sr_bwd-tah_k2_s2.csv" || fail_later "control: seeds 1 and 2 wrote the same CSV"
    echo "--codec-threads 3: CSV identical to 1 thread; control (seed 2) differs"
else
    fail_later "--codec-threads CSVs missing: $(ls "$W/ct1" "$W/ct3" 2>&1 | tr '\n' ' ')"
fi

# AQ-SGD on a set of 16 windows (4 steps per epoch): the first epoch sends
# every sample in binary32 (fp32's bytes), later steps the 4-bit deltas
# (under fp32's bytes); fp32 on the same window set for comparison. Control:
# a set of 1000 windows does not repeat within 40 steps (160 samples), so
# every step must send fp32's bytes.
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32,aqsgd --train-windows 16 --steps 40 --lr 3e-3 --out "$W/q" --print-every 0 \
    >"$W/q.log" 2>&1 || fail_later "aqsgd run failed: $(tail -n 3 "$W/q.log")"
Q=$W/q/aqsgd_k2_s1.csv
F=$W/q/fp32_k2_s1.csv
if [ -f "$Q" ] && [ -f "$F" ]; then
    d=$(drop "$Q")
    echo "aqsgd: loss drop $d (must be > 0.5)"
    awk -v d="$d" 'BEGIN { exit !(d > 0.5) }' || fail_later "aqsgd loss did not fall (drop $d)"
    # steps 1-4: equal to fp32's forward bytes; steps 5-40: under a quarter of them
    r=$(awk -F, 'NR == FNR { if (FNR > 1) f[$1] = $6; next }
                 FNR > 1 { if ($1 <= 4 && $6 != f[$1]) e = e " step " $1 ": " $6 " != fp32 " f[$1];
                           if ($1 > 4 && !($6 * 4 < f[$1])) e = e " step " $1 ": " $6 " not under fp32/4 " f[$1] }
                 END { print e == "" ? "ok" : e }' "$F" "$Q")
    echo "aqsgd forward bytes: step 1 $(awk -F, 'NR == 2 { print $6 }' "$Q"), step 5 $(awk -F, 'NR == 6 { print $6 }' "$Q"), fp32 $(awk -F, 'NR == 2 { print $6 }' "$F")"
    [ "$r" = ok ] || fail_later "aqsgd forward bytes:$r"
    grep -q "aqsgd cache: .* MiB per boundary" "$W/q.log" || fail_later "aqsgd: no cache size in the summary"
    grep -q "aqsgd wire: 16 first visits" "$W/q.log" || fail_later "aqsgd: summary does not count 16 first visits"
else
    fail_later "aqsgd or fp32 (window set) CSV missing"
fi
# shellcheck disable=SC2086
"$BIN" $SMALL --method aqsgd --train-windows 1000 --steps 40 --lr 3e-3 --out "$W/q2" --print-every 0 \
    >"$W/q2.log" 2>&1 || fail_later "aqsgd control run failed: $(tail -n 3 "$W/q2.log")"
if [ -f "$W/q2/aqsgd_k2_s1.csv" ] && [ -f "$F" ]; then
    f32=$(awk -F, 'NR == 2 { print $6 }' "$F")
    n=$(awk -F, -v f="$f32" 'NR > 1 && $6 != f { n++ } END { print n + 0 }' "$W/q2/aqsgd_k2_s1.csv")
    echo "control (aqsgd, no repeats): $n steps with other than fp32's $f32 forward bytes (must be 0)"
    [ "$n" -eq 0 ] || fail_later "control: aqsgd without repeats sent other than binary32 in $n steps"
fi

# activation dumps (K = 2: one boundary) at steps 1, 3 and 4: float32 .npy
# files of shape (B, T, C) = (2, 32, 64) that numpy reads (or, without
# numpy, whose .npy 1.0 header parses), and a statistics CSV with a row per
# dump and its columns
# shellcheck disable=SC2086
"$BIN" $SMALL --method tah --steps 4 --dump-activations "$W/dump" --dump-every 3 --print-every 0 \
    >"$W/d.log" 2>&1 || fail_later "dump run failed: $(tail -n 3 "$W/d.log")"
D=$W/dump/tah_k2_s1
for s in 1 3 4; do
    [ -f "$D/act_b0_step$s.npy" ] || fail_later "dump: $D/act_b0_step$s.npy missing"
done
n=0
for f in "$D"/*.npy; do
    [ -f "$f" ] && n=$((n + 1))
done
[ "$n" -eq 3 ] || fail_later "dump: expected 3 .npy files in $D, got $n"
PY=
for p in python3 /usr/bin/python3; do
    if "$p" -c "import numpy" 2>/dev/null; then
        PY=$p
        break
    fi
done
if [ -n "$PY" ]; then
    r=$("$PY" -c "
import sys, numpy as np
a = np.load(sys.argv[1])
b = np.load(sys.argv[2])
ok = a.shape == (2, 32, 64) and a.dtype == np.dtype('<f4') and a.flags.c_contiguous and np.isfinite(a).all()
ok = ok and float(np.abs(a).max()) > 0 and not np.array_equal(a, b)
print('ok' if ok else 'bad %s %s' % (a.shape, a.dtype))" "$D/act_b0_step1.npy" "$D/act_b0_step4.npy" 2>&1)
    echo "dump: numpy ($PY) reads act_b0_step1.npy: $r"
elif command -v python3 >/dev/null 2>&1; then
    r=$(python3 -c "
import ast, struct, sys, os
f = open(sys.argv[1], 'rb'); h = f.read(10)
n = struct.unpack('<H', h[8:10])[0]; d = ast.literal_eval(f.read(n).decode('latin1'))
ok = h[:8] == b'\x93NUMPY\x01\x00' and (10 + n) % 64 == 0 and d == {'descr': '<f4', 'fortran_order': False, 'shape': (2, 32, 64)}
ok = ok and os.path.getsize(sys.argv[1]) == 10 + n + 4 * 2 * 32 * 64
print('ok' if ok else 'bad %r' % (d,))" "$D/act_b0_step1.npy" 2>&1)
    echo "dump: the .npy header parses (python3 without numpy): $r"
else
    r=ok
    echo "dump: no python3, .npy not parsed"
fi
[ "$r" = ok ] || fail_later "dump: $D/act_b0_step1.npy: $r"
S=$D/act_stats.csv
if [ -f "$S" ]; then
    for col in step boundary rms_min rms_median rms_max excess_kurtosis top1_ch top1_ratio top5_ratio \
        gate flagged_share low_share; do
        head -n 1 "$S" | tr ',' '\n' | grep -qx "$col" || fail_later "dump: $S has no column $col"
    done
    [ "$(wc -l <"$S")" -eq 4 ] || fail_later "dump: $S: expected a header and 3 rows"
    # tah's token allocation at T = 32, r = 0.8: floor(32 x 0.2) = 6 of 32 tokens low
    awk -F, 'NR > 1 && ($18 != "tah" || $21 != "0.187500" || $4 <= 0 || $5 < $4) { e = 1 } END { exit e }' "$S" ||
        fail_later "dump: $S rows: $(sed -n 2p "$S")"
    grep -q "^activations step 1 boundary 0: channel RMS" "$W/d.log" || fail_later "dump: no statistics line on stdout"
else
    fail_later "dump: $S missing"
fi

# resume: the finished run is skipped and its file left as it was
cp "$A" "$W/a.before"
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 40 --lr 3e-3 --out "$W/a" >"$W/r.log" 2>&1 || fail_later "resume run failed"
grep -q "skipped" "$W/r.log" || fail_later "an existing result was not skipped"
cmp -s "$A" "$W/a.before" || fail_later "resume changed an existing result"

# progress when standard output is a file: --progress 0 gives a line with the
# ETA on stderr for every step; the default (10 s) at least the last step's;
# off none, and the step lines on stdout carry no ETA
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 3 --progress 0 >"$W/p.out" 2>"$W/p.err" || fail_later "--progress 0 run failed"
[ "$(grep -c "step [0-9]*/3 .*eta [0-9]* s" "$W/p.err")" -eq 3 ] ||
    fail_later "--progress 0: expected 3 progress lines with an ETA on stderr, got: $(cat "$W/p.err")"
! grep -q "eta" "$W/p.out" || fail_later "--progress: an ETA on stdout, which is a file"
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 3 >"$W/p.out" 2>"$W/p.err" || fail_later "default progress run failed"
grep -q "step 3/3 .*eta 0 s" "$W/p.err" || fail_later "default progress: no final line on stderr: $(cat "$W/p.err")"
# shellcheck disable=SC2086
"$BIN" $SMALL --method fp32 --steps 3 --progress off >"$W/p.out" 2>"$W/p.err" || fail_later "--progress off run failed"
[ ! -s "$W/p.err" ] || fail_later "--progress off: stderr not empty: $(cat "$W/p.err")"

# usage errors: exit 2, one line on stderr
for args in "--progress -1" "--steps 0" "--method nope" "--train-windows 0" "--dump-every -1" "--stages 9" "--heads 3" "--schedule sometimes" "--lr x" "--codec-threads 0" "--bogus 1"; do
    # shellcheck disable=SC2086
    "$BIN" $args --train-file "$W/train.txt" --val-file "$W/val.txt" >"$W/u.out" 2>"$W/u.err"
    rc=$?
    [ $rc -eq 2 ] || fail_later "'$args': exit $rc, expected 2"
    [ "$(wc -l <"$W/u.err")" -eq 1 ] || fail_later "'$args': expected one line on stderr, got: $(cat "$W/u.err")"
done
"$BIN" --data "$W/no-such-dir" --steps 1 >"$W/m.out" 2>"$W/m.err"
rc=$?
[ $rc -eq 1 ] || fail_later "missing corpus: exit $rc, expected 1"
grep -q "fetch_corpus.sh" "$W/m.err" || fail_later "missing corpus: the error does not name scripts/fetch_corpus.sh"
"$BIN" --help >"$W/h.out" || fail_later "--help failed"
grep -q "^usage: tahq-train" "$W/h.out" || fail_later "--help text"
"$BIN" --version | grep -q "^tahq-train " || fail_later "--version"

finish "train_smoke"
