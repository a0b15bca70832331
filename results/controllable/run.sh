#!/usr/bin/env bash
# Control tokens (ACCESS, Martin et al. 2020) on the shipped simplifier's architecture: one config
# (configs/simplifier-control.yaml) trained with and without data.control, same data (kauchak_v2
# train), seed, selection (SARI on TurkCorpus tune 1-500) and budget. The control model's default
# values are then chosen by `wean tune-control` on 300 other TurkCorpus tune sentences. Only then
# are the test sets read. Run from the repository root after `make install`; every step resumes.
#   SEED=1|2|3        the seed of both rows
#   ARCH=wean         the shipped simplifier's architecture (WEAN output layer)
#   ARCH=seq2seq      the same with the plain linear output layer (the papers' Seq2seq)
#   ROWS="control nocontrol"  the rows to train and test (default both); a paired test needs both
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
OUT=results/controllable
SEED=${SEED:-1}
ARCH=${ARCH:-wean}
ROWS=" ${ROWS:-control nocontrol} "
# training.max_updates (0: until early stopping, 6 validations without a SARI gain). Seed 1: the
# no-control run early-stopped at update 2,800; the control run, still improving, was stopped at
# the same count (the session's time), so both rows had the same budget.
BUDGET=${BUDGET:-2800}
ACCESS_VALUES=chars_ratio=0.95,levenshtein=0.75,word_rank=0.75  # ACCESS's WikiLarge values, the config's defaults
case $ARCH in
    wean) prefix=simplifier; system=""; arch=() ;;
    seq2seq) prefix=seq2seq; system=seq2seq-; arch=(--set model.output_layer.type=linear) ;;
    *) echo "ARCH must be wean or seq2seq, not $ARCH" >&2; exit 2 ;;
esac
control=$RUNS/$prefix-control-seed$SEED
nocontrol=$RUNS/$prefix-nocontrol-seed$SEED
mkdir -p "$RUNS" "$OUT/logs"

train() {  # model_dir name [--set ...]
    resume=$(test -e "$1/checkpoints/latest" && echo --resume || true)
    OMP_NUM_THREADS=1 "$WEAN" train configs/simplifier-control.yaml --set model_dir="$1" --set name="$2" \
        --set training.seed="$SEED" --set training.max_updates="$BUDGET" "${arch[@]}" "${@:3}" $resume
}
has() { [[ $ROWS == *" $1 "* ]]; }
has control && { train "$control" "$prefix-control" >> "$control.out" 2>&1 & }
has nocontrol && { train "$nocontrol" "$prefix-nocontrol" --set 'data.control.attributes=[]' \
    --set 'generation.control={}' >> "$nocontrol.out" 2>&1 & }
wait

if has control && ! test -e "$control/control-tuning.json"; then
    "$WEAN" tune-control --model "$control" --plain-text --sentences 300 --skip 500 --seed 1 \
        | sed "s|^$RUNS/||" | tee "$OUT/${system}tune-control-seed$SEED.txt"  # the run's name, no machine path
fi

suffix=-seed$SEED
test_system() {  # model system [--control ...]
    "$WEAN" test --model "$1" --system "$2" --out-dir "$OUT" --benchmark turkcorpus-test --plain-text "${@:3}"
    "$WEAN" test --model "$1" --system "$2" --out-dir "$OUT" --benchmark wikismall-test "${@:3}"
}
if has control; then
    test_system "$control" "${system}control-tuned$suffix"
    test_system "$control" "${system}control-access$suffix" --control "$ACCESS_VALUES"
    cp "$control/control-tuning.json" "$OUT/${system}control-tuning$suffix.json"
    cp "$control/train.log" "$OUT/logs/${system}control$suffix.train.log"
fi
if has nocontrol; then
    test_system "$nocontrol" "${system}nocontrol$suffix"
    cp "$nocontrol/train.log" "$OUT/logs/${system}nocontrol$suffix.train.log"
fi

for benchmark in turkcorpus-test wikismall-test; do
    for other in nocontrol control-access; do
        tuned=$OUT/${system}control-tuned$suffix.$benchmark.txt other_file=$OUT/$system$other$suffix.$benchmark.txt
        if test -e "$tuned" && test -e "$other_file"; then
            "$WEAN" compare --hyp "$tuned" "$other_file" --benchmark "$benchmark" \
                > "$OUT/significance-${system}tuned-vs-$other$suffix.$benchmark.txt"
        fi
    done
done
if has control && has nocontrol; then
    "$WEAN" plot "$nocontrol" "$control" --labels "no control,control" --metric sari \
        --out "$OUT/${system}valid-sari$suffix.png"
fi

if [ "$ARCH-$SEED" = wean-1 ]; then
    # against the simplifier shipped before (results/simplifier)
    "$WEAN" compare --hyp "$OUT/control-tuned$suffix.turkcorpus-test.txt" \
        results/simplifier/wean-simplifier.turkcorpus-test.txt --benchmark turkcorpus-test \
        > "$OUT/significance-tuned-vs-shipped-before$suffix.turkcorpus-test.txt"
    "$PYTHON" results/controllable/sweep.py --model "$control" --out-dir "$OUT"
    # Shipped: the control model as src/wean/pretrained/simplifier, in fp16, plain text in and out
    "$WEAN" export "$control" src/wean/pretrained/simplifier --fp16 --set generation.plain_text=true
    test_system src/wean/pretrained/simplifier shipped
fi
"$PYTHON" results/controllable/table.py > "$OUT/table.md"
