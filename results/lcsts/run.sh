#!/usr/bin/env bash
# The character-level Chinese pipeline of the WEAN paper's LCSTS setting, end to end on the only
# part of LCSTS we have: PART III. `wean prepare lcsts` trains on the pairs scored < 3 (minus
# posts that also appear scored >= 3), keeps a tenth of them for selection, and leaves the 725
# pairs scored >= 3 (the paper's test set, lcsts-test) for testing. The paper's presets are used
# as they are (characters, vocabulary 4,000, 512-d, beam 5) on ~340 training pairs instead of
# PART I's 2.4M: this shows the pipeline working, not the paper's numbers.
# Run from the repository root after `make install`.
set -euo pipefail
RUNS=${RUNS:-/root/wean-runs}
OUT=results/lcsts
EPOCHS=${EPOCHS:-10}  # the public code's lcsts.yaml; more only overfits 339 pairs harder
.venv/bin/wean prepare lcsts --out data/lcsts-part3
for name in seq2seq-lcsts wean-lcsts; do
    dir="$RUNS/$name-part3"
    resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)  # a finished run stops at once
    .venv/bin/wean train "configs/$name.yaml" --set model_dir="$dir" --set data.train=data/lcsts-part3/train \
        --set data.valid=data/lcsts-part3/valid --set training.max_epochs="$EPOCHS" \
        --set training.early_stopping_patience=100 --set training.log_every=10 $resume
    .venv/bin/wean test --model "$dir" --system "${name%-lcsts}" --out-dir "$OUT" --benchmark lcsts-test
done
.venv/bin/wean plot "$RUNS/seq2seq-lcsts-part3" "$RUNS/wean-lcsts-part3" --labels Seq2seq,WEAN --metric rouge2 \
    --out "$OUT/valid-rouge2.png" | tee "$OUT/convergence.txt"
.venv/bin/wean plot "$RUNS/seq2seq-lcsts-part3" "$RUNS/wean-lcsts-part3" --labels Seq2seq,WEAN --metric loss \
    --out "$OUT/valid-loss.png"
