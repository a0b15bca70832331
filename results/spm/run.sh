#!/usr/bin/env bash
# Kiyono et al. (2018) Table 1 on the Gigaword sample we have: EncDec, +sGate, +SPM, +sGate+SPM,
# each configs/encdec-gigaword.yaml plus the keys below, with equal seed (1) and budget. The
# paper-sized model (2x400-d layers, input feeding) runs at about 2 s/update on one CPU core, so
# every row here shares one scale-down (SCALE); with a GPU, drop it and set BUDGET to the epochs
# the preset asks for. Then the odd-generation analysis (section 6.1, Figure 2) of the four test
# outputs and the SPM alignment map (Figure 4) for the first test sentence.
# Run from the repository root after `make install`; runs resume when the script is run again.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
OUT=results/spm
BUDGET=${BUDGET:-2000}
test -e data/gigaword/train.src || "$WEAN" prepare gigaword --out data/gigaword
SCALE="--set model.embedding_size=256 --set model.encoder.hidden_size=128 --set model.encoder.layers=1 \
       --set model.decoder.hidden_size=256 --set model.decoder.layers=1 --set training.validate_every=400 \
       --set training.max_updates=$BUDGET --set training.max_epochs=100 --set training.early_stopping_patience=100 \
       --set training.precision=bf16"  # bf16 autocast: faster here (results/bench-precision)
declare -A ROWS=(
    [encdec]=""
    [sgate]="--set model.encoder.selective_gate=true"
    [spm]="--set model.spm.enabled=true"
    [sgate-spm]="--set model.encoder.selective_gate=true --set model.spm.enabled=true"
    # diagnostic, not in the paper: SPM's <pad>-extended targets Y' without its bag-of-words loss
    # (C so large that l_src is nil), to tell which half of SPM slows learning
    [pad-only]="--set model.spm.enabled=true --set model.spm.c=1000000000.0"
)
NAMES=(encdec sgate spm sgate-spm pad-only)
for row in "${NAMES[@]}"; do
    dir="$RUNS/spm-gigaword-$row"
    if ! grep -q "\"updates\": $BUDGET," "$dir/validations.json" 2>/dev/null; then
        resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)
        # shellcheck disable=SC2086
        "$WEAN" train configs/encdec-gigaword.yaml --set model_dir="$dir" $SCALE ${ROWS[$row]} $resume
    fi
    [ "$OUT/$row.gigaword-test.txt" -nt "$dir/model.safetensors" ] ||  # tested since it was trained
        "$WEAN" test --model "$dir" --system "$row" --out-dir "$OUT" --benchmark gigaword-test
done
for row in sgate spm sgate-spm pad-only; do  # each row against EncDec on the same sentences: paired bootstrap
    "$WEAN" compare --hyp "$OUT/$row.gigaword-test.txt" "$OUT/encdec.gigaword-test.txt" --benchmark gigaword-test
done | tee "$OUT/significance.txt"
dirs=("${NAMES[@]/#/$RUNS/spm-gigaword-}")
labels=$(IFS=,; echo "${NAMES[*]}")
"$WEAN" plot "${dirs[@]}" --labels "$labels" --metric rouge2 --out "$OUT/valid-rouge2.png" | tee "$OUT/convergence.txt"
"$WEAN" plot "${dirs[@]}" --labels "$labels" --metric loss --out "$OUT/valid-loss.png"
outputs=("${NAMES[@]/#/$OUT/}")
"$WEAN" odd-gen --hyp "${outputs[@]/%/.gigaword-test.txt}" --labels "$labels" --benchmark gigaword-test \
    --out "$OUT/odd-generation.png" | tee "$OUT/odd-generation.txt"
"$WEAN" attention --model "$RUNS/spm-gigaword-spm" --source "$(head -1 $WEAN_DATA_ROOT/gigaword/test1951.src)" \
    --out-dir "$OUT/figures"
"$WEAN" attention --model "$RUNS/spm-gigaword-spm" --source "$(head -1 $WEAN_DATA_ROOT/gigaword/test1951.src)" \
    --target "$(head -1 $WEAN_DATA_ROOT/gigaword/test1951.dst)" --out-dir "$OUT/figures/reference"  # teacher-forced
# why SPM learns slowly here: probability given to <pad>, and Adam's step sizes
OMP_NUM_THREADS=1 "$PYTHON" "$OUT/probe_training.py" "${dirs[@]}" --updates 1600 2000 | tee "$OUT/training-probe.txt"
