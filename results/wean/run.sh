#!/usr/bin/env bash
# Seq2seq against WEAN (general) with the WEAN paper's settings, identical seeds and data:
# kauchak_v2 train, WikiLarge valid for selection, TurkCorpus test and WikiSmall test for scores.
# Run from the repository root after `make install`. Each training run is resumable: run this
# script again and it continues where it stopped. RUNS is outside the work tree (checkpoints of a
# 50k-word model are large and never committed).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
OUT=results/wean
DEVICE=${DEVICE:-auto}  # auto | cpu | cuda
# Seed 1 (CPU) trained in fp32 up to SWITCH, then continued with bf16 autocast, which reproduces
# fp32's validation loss to four decimals and trains faster there (results/bench-precision).
# WEAN ran until early stopping (5 validations without a BLEU gain: STOP 0 = no update limit);
# Seq2seq was stopped at 7,000 updates (14.4 epochs, the paper's ~15) while still gaining
# about 0.1 BLEU per validation: what the session's CPU time allowed.
declare -A SWITCH=([seq2seq-pwkp]=3600 [wean-pwkp]=2000)
declare -A STOP=([seq2seq-pwkp]=7000 [wean-pwkp]=0 [wean-dot-pwkp]=0 [wean-concat-pwkp]=0)
# WEAN's other score functions: the wean-pwkp preset with one key changed
declare -A CONFIG=([seq2seq-pwkp]=seq2seq-pwkp [wean-pwkp]=wean-pwkp [wean-dot-pwkp]=wean-pwkp
                   [wean-concat-pwkp]=wean-pwkp)
declare -A CHANGE=([wean-dot-pwkp]=model.output_layer.score=dot [wean-concat-pwkp]=model.output_layer.score=concat)
# SEED=2 results/wean/run.sh: another seed, under the same stopping rules, in PRECISION (default
# bf16, to save CPU time) from the first update; runs, outputs and tables get a -seed2 suffix.
# MODELS="wean-pwkp" trains (and tests) one model only, so that several runs can share a machine.
SEED=${SEED:-1}
MODELS=${MODELS:-seq2seq-pwkp wean-pwkp}
suffix=$([ "$SEED" = 1 ] || echo "-seed$SEED")
mkdir -p "$RUNS"
test_model() {  # run system: one at a time, since each adds its scores to $OUT/metrics.json
    (
        flock 9
        "$WEAN" test --model "$1" --system "$2" --out-dir "$OUT" --device "$DEVICE" \
            --benchmark turkcorpus-test-lower wikismall-test
        "$WEAN" test --model "$1" --system "$2" --out-dir "$OUT" --device "$DEVICE" \
            --benchmark turkcorpus-test --plain-text  # EASSE's detokenized source, PTB-tokenized on the way in
        "$WEAN" evaluate --hyp "$OUT/$2.turkcorpus-test.txt" --benchmark turkcorpus-test --metrics bleu \
            --no-lowercase --json > "$OUT/$2.turkcorpus-test.sacrebleu-default.json"  # sacreBLEU's own default: cased 13a
    ) 9> "$RUNS/.test.lock"
}
train_model() {  # name run precision updates
    resume=$(test -e "$2/checkpoints/latest" && echo --resume || true)  # past the budget: stops at once
    change=${CHANGE[$1]:-}
    "$WEAN" train "configs/${CONFIG[$1]}.yaml" --set model_dir="$2" --set training.validate_every=200 \
        --set training.seed="$SEED" --set training.precision="$3" --set training.max_updates="$4" \
        --set training.device="$DEVICE" ${change:+--set "$change"} $resume
}
for name in $MODELS; do
    run="$RUNS/$name$suffix"
    if [ "$SEED" = 1 ]; then
        train_model "$name" "$run" fp32 "${SWITCH[$name]}"
        train_model "$name" "$run" bf16 "${STOP[$name]}"
    else
        train_model "$name" "$run" "${PRECISION:-bf16}" "${STOP[$name]}"
    fi
    system=${name%-pwkp}$suffix
    test_model "$run" "$system"
done
(
    flock 9
    test -e "$OUT/wean$suffix.wikismall-test.txt" && test -e "$OUT/seq2seq$suffix.wikismall-test.txt" || exit 0
    for benchmark in turkcorpus-test-lower turkcorpus-test wikismall-test; do  # paired bootstrap, 1000 resamples
        "$WEAN" compare --hyp "$OUT/wean$suffix.$benchmark.txt" "$OUT/seq2seq$suffix.$benchmark.txt" \
            --benchmark "$benchmark"
    done > "$OUT/significance$suffix.txt"
    "$WEAN" plot "$RUNS/seq2seq-pwkp$suffix" "$RUNS/wean-pwkp$suffix" --labels Seq2seq,WEAN --metric bleu \
        --out "$OUT/valid-bleu$suffix.png" > "$OUT/convergence$suffix.txt"
    "$WEAN" plot "$RUNS/seq2seq-pwkp$suffix" "$RUNS/wean-pwkp$suffix" --labels Seq2seq,WEAN --metric loss \
        --out "$OUT/valid-loss$suffix.png"
    "$PYTHON" "$OUT/seed_table.py" > "$OUT/seeds.md"  # each seed's scores and gaps, side by side
) 9> "$RUNS/.test.lock"
