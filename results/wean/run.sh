#!/usr/bin/env bash
# Seq2seq against WEAN (general) with the WEAN paper's settings, identical seeds and data:
# kauchak_v2 train, WikiLarge valid for selection, TurkCorpus test and WikiSmall test for scores.
# Run from the repository root after `make install`. Each training run is resumable: run this
# script again and it continues where it stopped. RUNS is outside the work tree (checkpoints of a
# 50k-word model are large and never committed).
set -euo pipefail
RUNS=${RUNS:-/root/wean-runs}
OUT=results/wean
# Each run trained in fp32 up to SWITCH, then continued with bf16 autocast, which reproduces fp32's
# validation loss to four decimals and trains 1.4-1.5x faster here (results/bench-precision).
# WEAN ran until early stopping (5 validations without a BLEU gain: STOP 0 = no update limit);
# Seq2seq was stopped at 7,000 updates (14.4 epochs, the paper's ~15) while still gaining
# about 0.1 BLEU per validation: what the session's CPU time allowed.
declare -A SWITCH=([seq2seq-pwkp]=3600 [wean-pwkp]=2000)
declare -A STOP=([seq2seq-pwkp]=7000 [wean-pwkp]=0)
# SEED=2 results/wean/run.sh: a second seed of both, under the same stopping rules but in bf16
# from the first update (to save CPU time); runs, outputs and tables get a -seed2 suffix.
# MODELS="wean-pwkp" trains (and tests) one model only, so that two seeds can share two cores.
SEED=${SEED:-1}
MODELS=${MODELS:-seq2seq-pwkp wean-pwkp}
suffix=$([ "$SEED" = 1 ] || echo "-seed$SEED")
for name in $MODELS; do
    run="$RUNS/$name$suffix"
    for precision in fp32 bf16; do
        if [ $precision = fp32 ]; then
            [ "$SEED" = 1 ] || continue
            updates=${SWITCH[$name]}
        else
            updates=${STOP[$name]}
        fi
        resume=$(test -e "$run/checkpoints/latest" && echo --resume || true)  # past the budget: stops at once
        .venv/bin/wean train "configs/$name.yaml" --set model_dir="$run" --set training.validate_every=200 \
            --set training.seed="$SEED" --set training.precision=$precision --set training.max_updates="$updates" $resume
    done
    system=${name%-pwkp}$suffix
    .venv/bin/wean test --model "$run" --system "$system" --out-dir "$OUT" \
        --benchmark turkcorpus-test-lower wikismall-test
    .venv/bin/wean test --model "$run" --system "$system" --out-dir "$OUT" \
        --benchmark turkcorpus-test --plain-text  # EASSE's detokenized source, PTB-tokenized on the way in
    .venv/bin/wean evaluate --hyp "$OUT/$system.turkcorpus-test.txt" --benchmark turkcorpus-test --metrics bleu \
        --no-lowercase --json > "$OUT/$system.turkcorpus-test.sacrebleu-default.json"  # sacreBLEU's own default: cased 13a
done
test -e "$OUT/wean$suffix.wikismall-test.txt" && test -e "$OUT/seq2seq$suffix.wikismall-test.txt" || exit 0
for benchmark in turkcorpus-test-lower turkcorpus-test wikismall-test; do  # paired bootstrap, 1000 resamples
    .venv/bin/wean compare --hyp "$OUT/wean$suffix.$benchmark.txt" "$OUT/seq2seq$suffix.$benchmark.txt" \
        --benchmark "$benchmark"
done | tee "$OUT/significance$suffix.txt"
.venv/bin/wean plot "$RUNS/seq2seq-pwkp$suffix" "$RUNS/wean-pwkp$suffix" --labels Seq2seq,WEAN --metric bleu \
    --out "$OUT/valid-bleu$suffix.png" | tee "$OUT/convergence$suffix.txt"
.venv/bin/wean plot "$RUNS/seq2seq-pwkp$suffix" "$RUNS/wean-pwkp$suffix" --labels Seq2seq,WEAN --metric loss \
    --out "$OUT/valid-loss$suffix.png"
.venv/bin/python "$OUT/seed_table.py" | tee "$OUT/seeds.md"  # each seed's scores and gaps, side by side
