#!/bin/sh
# SPDX-License-Identifier: MIT
# CTests bert_mpi (part 1) and bert_train (parts 2-4): the pretrained
# MiniLM encoder in tahq-train's pipeline (--model minilm), masked-language-
# model fine-tuning on a small text.
#  1. single process against tahq-train-mpi (one rank per stage): the CSVs
#     (loss per step, validation loss and accuracy, message bytes) must be
#     byte-identical for K = 2 (fp32), K = 3 (TAH 4/3, token allocation,
#     tau = 2), K = 3 (gain allocation), K = 6 (TAH 4/3, tau = inf: no gate);
#     control: another seed differs;
#  2. the pretrained weights were loaded: after the same 8 fp32 steps the
#     validation loss from random initialisation is worse by more than 1 nat,
#     and the pretrained run's training loss falls;
#  3. -tauX sets the gate threshold (dumps: tau = inf flags no tile, tau = 0
#     all; a negative tau is refused);
#  4. a missing model folder gives an error naming scripts/fetch_model.sh.
#   bert_train_test.sh train TAHQ_TRAIN MODEL_DIR WORKDIR
#   bert_train_test.sh mpi TAHQ_TRAIN MODEL_DIR WORKDIR MPIRUN TAHQ_TRAIN_MPI
# Exit 77 (SKIPPED) without the model.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
MODE=$1 BIN=$2 MODEL=$3 W=$4 MPIRUN=${5:-} MPIBIN=${6:-}
[ -s "$MODEL/model.safetensors" ] || skip "no model in $MODEL (scripts/fetch_model.sh)"
W="$(fresh_dir "$W")" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

i=0
while [ $i -lt 6 ]; do
    cat <<'TXT'
The quick brown fox jumps over the lazy dog while the farmer watches from the
gate. In the evening the children walk home along the river and count the
boats that pass under the old stone bridge. Their mother waits at the door
with bread and warm milk, and the dog sleeps by the fire until morning.
TXT
    i=$((i + 1))
done >"$W/train.txt"
cat >"$W/val.txt" <<'TXT'
The farmer's children count the boats under the bridge, and their mother
waits at the door with warm bread. The lazy dog sleeps by the fire while the
quick fox runs along the river until the morning comes over the old gate.
TXT

opts="--model minilm --model-dir $MODEL --context 16 --micro 2 --batch 2 --lr 2e-4
      --train-file $W/train.txt --val-file $W/val.txt --eval-windows 4 --print-every 0"

if [ "$MODE" = mpi ]; then
    pair() { # name K method steps seed_single seed_mpi
        # shellcheck disable=SC2086
        "$BIN" $opts --stages "$2" --method "$3" --steps "$4" --eval-every 2 --seed "$5" \
            --out "$W/$1-single" >"$W/$1-single.log" 2>&1 ||
            fail_later "$1: single-process run failed: $(tail -n 3 "$W/$1-single.log")"
        # shellcheck disable=SC2086
        "$MPIRUN" --oversubscribe --mca mpi_yield_when_idle 1 -np "$2" "$MPIBIN" $opts \
            --method "$3" --steps "$4" --eval-every 2 --seed "$6" --out "$W/$1-mpi" \
            >"$W/$1-mpi.log" 2>&1 || fail_later "$1: mpirun -np $2 failed: $(tail -n 5 "$W/$1-mpi.log")"
        a=$(ls "$W/$1-single/"*.csv 2>/dev/null | head -n 1)
        b=$(ls "$W/$1-mpi/"*.csv 2>/dev/null | head -n 1)
        if [ -z "$a" ] || [ -z "$b" ]; then echo missing
        elif cmp -s "$a" "$b"; then echo identical
        else echo different
        fi
    }
    for spec in "fp32 2 fp32" "tah43 3 tah4/3" "gain 3 tah4/3-gain" "tauinf 6 tah4/3-tauinf"; do
        # shellcheck disable=SC2086
        set -- $spec
        r=$(pair "$1" "$2" "$3" 2 1 1)
        echo "$1 (K = $2, $3): single process vs MPI: $r"
        [ "$r" = identical ] || fail_later "$1: the MPI run's CSV is $r from the single-process one"
    done
    r=$(pair control 2 tah4/3 2 1 2)
    echo "control (seed 1 vs seed 2): $r"
    [ "$r" = different ] || fail_later "control: different seeds compare $r (the comparison cannot fail)"
fi

if [ "$MODE" = train ]; then
# pretrained vs random initialisation, 8 fp32 steps, K = 2
for init in pretrained random; do
    # shellcheck disable=SC2086
    "$BIN" $opts --stages 2 --method fp32 --steps 8 --eval-every 8 --init $init \
        --out "$W/$init" >"$W/$init.log" 2>&1 || fail_later "$init run failed: $(tail -n 3 "$W/$init.log")"
done
val() { tail -n 1 "$W/$1/fp32_k2_s1.csv" | cut -d, -f4; }
first() { sed -n 2p "$W/$1/fp32_k2_s1.csv" | cut -d, -f3; }
last() { tail -n 1 "$W/$1/fp32_k2_s1.csv" | cut -d, -f3; }
vp=$(val pretrained) vr=$(val random)
echo "after 8 steps: validation masked-token loss pretrained $vp, random initialisation $vr;" \
     "pretrained training loss $(first pretrained) -> $(last pretrained)"
awk -v p="$vp" -v r="$vr" 'BEGIN { exit !(r - p > 1) }' ||
    fail_later "random initialisation is not worse than the pretrained weights by 1 nat ($vr vs $vp)"
awk -v a="$(first pretrained)" -v b="$(last pretrained)" 'BEGIN { exit !(a - b > 1) }' ||
    fail_later "the pretrained run's loss does not fall by 1 nat"

# -tauX reaches the codec: the byte model's dumps at tau = inf flag no tile,
# at tau = 0 every tile (the flagged_share column of act_stats.csv)
for tau in inf 0; do
    "$BIN" --train-file "$W/train.txt" --val-file "$W/val.txt" --channels 64 --heads 2 --layers 2 \
        --stages 2 --context 32 --micro 1 --batch 2 --steps 1 --eval-windows 2 --print-every 0 \
        --method "tah-tau$tau" --dump-activations "$W/tau$tau" >"$W/tau$tau.log" 2>&1 ||
        fail_later "tah-tau$tau run failed: $(tail -n 3 "$W/tau$tau.log")"
done
col() { awk -F, -v name=flagged_share 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next } { print $c }' "$1"; }
fi_=$(col "$W/tauinf/tah-tauinf_k2_s1/act_stats.csv") f0=$(col "$W/tau0/tah-tau0_k2_s1/act_stats.csv")
echo "flagged-tile share at tau = inf: $fi_, at tau = 0: $f0"
[ "$fi_" = 0.000000 ] || fail_later "tah-tauinf flags tiles ($fi_)"
[ "$f0" = 1.000000 ] || fail_later "tah-tau0 does not flag every tile ($f0)"
"$BIN" --method tah-tau-1 --steps 1 >/dev/null 2>&1
[ $? -eq 2 ] || fail_later "a negative tau is not refused as a usage error"

# a missing model
"$BIN" $opts --model-dir "$W/nowhere" --steps 1 >"$W/missing.out" 2>"$W/missing.err"
rc=$?
[ $rc -eq 1 ] || fail_later "missing model: exit status $rc, not 1"
grep -q "fetch_model.sh" "$W/missing.err" || fail_later "missing model: the error does not name scripts/fetch_model.sh"
fi

finish "bert_$MODE"
