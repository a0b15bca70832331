#!/usr/bin/env bash
# Kiyono et al. (2018) Table 2 rows trained to early stopping, 3 seeds each (issue 24): EncDec,
# +sGate, +SPM, +sGate+SPM, each configs/encdec-gigaword.yaml at one scale-down (SCALE, the same as
# results/spm's 2,000-update study, in fp32) under results/lib/converge.sh's schedule. Seeds are
# the outer loop, so that a partial run has whole seeds. Each row is tested (beam 20, length
# normalisation) once it has stopped; then the paired bootstrap against EncDec, per seed, of the
# ROUGE scores and of the odd-generation counts.
# Run from the repository root after `make install`; running it again resumes where it stopped.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
source results/lib/converge.sh
OUT=results/spm/converged
prepare gigaword
SCALE="--set model.embedding_size=256 --set model.encoder.hidden_size=128 --set model.encoder.layers=1 \
       --set model.decoder.hidden_size=256 --set model.decoder.layers=1"
declare -A CHANGE=(
    [encdec]=""
    [sgate]="--set model.encoder.selective_gate=true"
    [spm]="--set model.spm.enabled=true"
    [sgate-spm]="--set model.encoder.selective_gate=true --set model.spm.enabled=true"
)
NAMES=(encdec sgate spm sgate-spm)
for seed in $SEEDS; do
    for row in ${ROWS:-${NAMES[*]}}; do
        dir="$RUNS/spm-converged-$row-seed$seed"
        [ "$STAGE" = list ] && { echo "$seed $row $dir $OUT"; continue; }
        ! recorded "$dir" "$OUT" || continue
        # shellcheck disable=SC2086
        train_row configs/encdec-gigaword.yaml "$dir" $SCALE ${CHANGE[$row]} --set training.seed="$seed"
        "$WEAN" test --model "$dir" --system "$row-seed$seed" --out-dir "$OUT" --benchmark gigaword-test \
            --device "$DEVICE"
        keep_run "$dir" "$OUT"
    done
done
[ "$STAGE" = all ] || exit 0
# One report per seed, so that reporting a seed as it finishes leaves the others' files alone.
for seed in $SEEDS; do
    for row in sgate spm sgate-spm; do
        "$WEAN" compare --hyp "$OUT/$row-seed$seed.gigaword-test.txt" "$OUT/encdec-seed$seed.gigaword-test.txt" \
            --benchmark gigaword-test
    done | tee "$OUT/significance-seed$seed.txt"
    runs=("${NAMES[@]/#/spm-converged-}")
    labels=$(IFS=,; echo "${NAMES[*]}")
    plot_kept "$OUT" rouge2 "$OUT/valid-rouge2-seed$seed.png" "$labels" "${runs[@]/%/-seed$seed}" \
        | tee "$OUT/convergence-seed$seed.txt"
    outputs=("${NAMES[@]/#/$OUT/}")
    "$WEAN" odd-gen --hyp "${outputs[@]/%/-seed$seed.gigaword-test.txt}" --labels "$labels" \
        --benchmark gigaword-test --out "$OUT/odd-generation-seed$seed.png" | tee "$OUT/odd-generation-seed$seed.txt"
    for row in sgate spm sgate-spm; do  # each count's paired bootstrap against EncDec
        "$WEAN" compare --hyp "$OUT/$row-seed$seed.gigaword-test.txt" "$OUT/encdec-seed$seed.gigaword-test.txt" \
            --benchmark gigaword-test --metrics repeated_tokens,length_shortfall
    done | tee -a "$OUT/odd-generation-seed$seed.txt"
done
