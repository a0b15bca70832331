#!/usr/bin/env bash
# The simplifier, round two (issue 91): the shipped simplifier's recipe trained on kauchak_v2 without
# its mojibake plus the TurkCorpus and ASSET references of 1,100 tune sentences (split.json), its
# checkpoints chosen on 500 other tune sentences with 18 references each. Each finished run is
# exported in fp16 into exports/ and committed, so that later steps (ensembles, tuning, rating) need
# no run folder that died with its machine.
# Run from the repository root after `make install`; running it again resumes where it stopped.
# SEEDS (default "1 2 3"), ROWS (default pg), RUNS (run folders), STAGE: all | train.
set -euo pipefail
source results/lib/converge.sh
OUT=results/asset-simplifier
PYTHON=${PYTHON:-python}
DATA=$RUNS/asset-data
# the schedule's safety net, in epochs: 13 fits a run into ~100 minutes on two AVX-512 cores
MAX_EPOCHS=${MAX_EPOCHS:-13}

"$PYTHON" $OUT/split.py --check
test -e $DATA/counts.json || "$PYTHON" $OUT/make_data.py $DATA

declare -A RECIPE=(
    [pg]="--set model.output_layer.type=pointer_generator --set model.output_layer.vocabulary_layer=wean"
    [plain]=""
)
for seed in $SEEDS; do
    for row in ${ROWS:-pg}; do
        dir=$RUNS/asset-simplifier-$row-seed$seed
        test -e "$OUT/exports/$row-seed$seed/model.safetensors" && continue
        # shellcheck disable=SC2086
        train_row configs/simplifier-control.yaml "$dir" ${RECIPE[$row]} --set training.seed="$seed" \
            --set training.kernels=onednn --set data.train="$DATA/train" --set data.valid="$DATA/valid"
        "$WEAN" export "$dir" "$OUT/exports/$row-seed$seed" --fp16 --set generation.plain_text=true
        keep_run "$dir" "$OUT"
    done
done
