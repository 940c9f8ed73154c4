#!/bin/sh
# SPDX-License-Identifier: MIT
# CTest train_mpi: tahq-train-mpi under mpirun against the single-process
# tahq-train, same options and seed: the CSVs (loss per step, validation
# loss, message bytes) must be byte-identical, for fp32 and TAH-Quant with
# K = 2, and for a 3-stage pipeline (a middle stage that receives and sends
# both ways) with stochastic rounding (keys from seed, step, boundary and
# micro-batch), and AQ-SGD with K = 3 on a set of 8 windows (2 steps per
# epoch: first visits, then deltas against the caches that each side of a
# boundary keeps). Control: a run with another seed must differ, so the
# comparison can fail. Activation dumps (.npy and statistics) are the same
# files too. The untied head (--tied-exchange none: no exchange between the
# first and last stage) agrees between the two as well and must differ from
# the tied run (control: the option changes the training); waiting by
# test-and-sleep (--mpi-wait sleep, K = 3) leaves every byte as it is.
#   mpi_test.sh MPIRUN TAHQ_TRAIN_MPI TAHQ_TRAIN WORKDIR
set -u
. "$(dirname "$0")/../../tests/lib.sh"
MPIRUN=$1
MPIBIN=$2
BIN=$3
W=$4
W="$(fresh_dir "$W")" || exit 1
# mpirun refuses to run as root without these; --oversubscribe lets K exceed the cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

i=0
while [ $i -lt 10 ]; do
    cat <<'TXT'
Every stage of the pipeline runs in its own process here, and the messages
between them are the encoded bytes: the same bytes the single process hands
from one stage to the next. So the losses must agree to the last bit.
TXT
    i=$((i + 1))
done >"$W/train.txt"
head -c 600 "$W/train.txt" >"$W/val.txt"

run_pair() { # name layers K method seed_single seed_mpi
    opts="--channels 64 --heads 2 --context 32 --micro 2 --batch 2 --steps 12 --lr 3e-3
          --train-file $W/train.txt --val-file $W/val.txt --eval-windows 4 --eval-every 4
          --print-every 0 --layers $2 --stages $3 --method $4"
    # shellcheck disable=SC2086
    "$BIN" $opts --seed "$5" --out "$W/$1-single" >"$W/$1-single.log" 2>&1 ||
        fail_later "$1: single-process run failed: $(tail -n 3 "$W/$1-single.log")"
    # shellcheck disable=SC2086
    "$MPIRUN" --oversubscribe -np "$3" "$MPIBIN" $opts --seed "$6" --out "$W/$1-mpi" \
        >"$W/$1-mpi.log" 2>&1 || fail_later "$1: mpirun -np $3 failed: $(tail -n 5 "$W/$1-mpi.log")"
}

same() { # name method-file
    a=$(ls "$W/$1-single/"*.csv 2>/dev/null | head -n 1)
    b=$(ls "$W/$1-mpi/"*.csv 2>/dev/null | head -n 1)
    [ -n "$a" ] && [ -n "$b" ] || { echo "missing"; return 2; }
    cmp -s "$a" "$b" && echo "identical" || echo "different"
}

run_pair fp32 2 2 fp32 1 1
run_pair tah 2 2 tah 1 1
run_pair sr3 3 3 tah-sr 1 1
run_pair aq3 3 3 "aqsgd --train-windows 8" 1 1
run_pair control 2 2 tah 1 2
run_pair untied 2 2 "tah --tied-exchange none" 1 1
run_pair sleep3 3 3 "tah-sr --mpi-wait sleep" 1 1
for n in fp32 tah sr3 aq3 untied sleep3; do
    r=$(same "$n")
    echo "$n: single process vs MPI: $r"
    [ "$r" = identical ] || fail_later "$n: the MPI run's CSV is $r from the single-process one"
done
# activation dumps: each rank writes its boundary's .npy files, rank 0
# gathers the statistics; all files as the single process writes them
dopts="--channels 64 --heads 2 --context 32 --micro 2 --batch 2 --steps 4 --layers 3 --stages 3
       --train-file $W/train.txt --val-file $W/val.txt --eval-windows 4 --print-every 0 --method tah
       --dump-every 2"
# shellcheck disable=SC2086
"$BIN" $dopts --dump-activations "$W/dump-single" >"$W/dump-single.log" 2>&1 ||
    fail_later "dump: single-process run failed: $(tail -n 3 "$W/dump-single.log")"
# shellcheck disable=SC2086
"$MPIRUN" --oversubscribe -np 3 "$MPIBIN" $dopts --dump-activations "$W/dump-mpi" >"$W/dump-mpi.log" 2>&1 ||
    fail_later "dump: mpirun -np 3 failed: $(tail -n 5 "$W/dump-mpi.log")"
n=0
for f in "$W/dump-single/tah_k3_s1/"*; do
    n=$((n + 1))
    cmp -s "$f" "$W/dump-mpi/tah_k3_s1/${f##*/}" || fail_later "dump: ${f##*/} differs between the single process and MPI"
done
echo "dump: $n files (6 .npy and the statistics) compared"
[ "$n" -eq 7 ] || fail_later "dump: expected 7 files, got $n"

r=$(same control)
echo "control (seed 1 vs seed 2): $r"
[ "$r" = different ] || fail_later "control: runs with different seeds compare $r (the comparison cannot fail)"
a=$(ls "$W/untied-single/"*.csv 2>/dev/null | head -n 1)
b=$(ls "$W/tah-single/"*.csv 2>/dev/null | head -n 1)
if [ -n "$a" ] && [ -n "$b" ] && ! cmp -s "$a" "$b"; then
    echo "untied head vs tied: different (as it must: the head learns from its own gradient)"
else
    fail_later "untied: the run with --tied-exchange none is missing or identical to the tied one"
fi
grep -q "wire bytes" "$W/tah-mpi.log" || fail_later "the MPI run printed no summary on rank 0"
[ "$(grep -c '^run tah_k2_s1: loss' "$W/tah-mpi.log")" -eq 1 ] || fail_later "the summary was printed by more than rank 0"

finish "train_mpi"
