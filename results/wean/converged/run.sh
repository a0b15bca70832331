#!/usr/bin/env bash
# Seq2seq against WEAN with each of its three scores (general, dot, concat), the WEAN paper's
# model sizes (configs/seq2seq-pwkp.yaml, configs/wean-pwkp.yaml), 3 seeds each, to early stopping
# on WikiLarge valid BLEU under results/lib/converge.sh's schedule (issue 24): kauchak_v2 train,
# TurkCorpus test (lowercased, and EASSE's plain text) and WikiSmall test for scores. Paper-sized
# models take hours per run on a CPU: DEVICE=cuda on a GPU machine (results/lib/gpu.sh runs each
# row as its own job: ROWS=wean-concat SEEDS=2 STAGE=train). Run from the repository root after
# `make install`; run it again to resume.
set -euo pipefail
source results/lib/converge.sh
OUT=results/wean/converged
NAMES=(seq2seq wean wean-dot wean-concat)
declare -A CONFIG=([seq2seq]=seq2seq-pwkp [wean]=wean-pwkp [wean-dot]=wean-pwkp [wean-concat]=wean-pwkp)
declare -A CHANGE=([seq2seq]="" [wean]="" [wean-dot]="--set model.output_layer.score=dot"
                   [wean-concat]="--set model.output_layer.score=concat")
for seed in $SEEDS; do
    for name in ${ROWS:-${NAMES[*]}}; do
        dir="$RUNS/wean-converged-$name-seed$seed"
        [ "$STAGE" = list ] && { echo "$seed $name $dir"; continue; }
        # shellcheck disable=SC2086
        train_row "configs/${CONFIG[$name]}.yaml" "$dir" ${CHANGE[$name]} --set training.seed="$seed"
        keep_config "$dir" "$OUT"
        system=$name-seed$seed
        [ "$OUT/$system.wikismall-test.txt" -nt "$dir/model.safetensors" ] || {
            .venv/bin/wean test --model "$dir" --system "$system" --out-dir "$OUT" --device "$DEVICE" \
                --benchmark turkcorpus-test-lower wikismall-test
            .venv/bin/wean test --model "$dir" --system "$system" --out-dir "$OUT" --device "$DEVICE" \
                --benchmark turkcorpus-test --plain-text
        }
    done
done
[ "$STAGE" = all ] || exit 0
for seed in $SEEDS; do
    for name in wean wean-dot wean-concat; do
        for benchmark in turkcorpus-test-lower turkcorpus-test wikismall-test; do
            test -e "$OUT/$name-seed$seed.$benchmark.txt" || continue
            .venv/bin/wean compare --hyp "$OUT/$name-seed$seed.$benchmark.txt" "$OUT/seq2seq-seed$seed.$benchmark.txt" \
                --benchmark "$benchmark"
        done
    done
done | tee "$OUT/significance.txt"
for seed in $SEEDS; do  # the paper's Figure 2: validation BLEU per epoch
    dirs=("${NAMES[@]/#/$RUNS/wean-converged-}")
    labels=$(IFS=,; echo "${NAMES[*]}")
    .venv/bin/wean plot "${dirs[@]/%/-seed$seed}" --labels "$labels" --metric bleu --out "$OUT/valid-bleu-seed$seed.png" \
        | tee "$OUT/convergence-seed$seed.txt"
done
