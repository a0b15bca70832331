#!/usr/bin/env bash
# The character-level Chinese pipeline of the WEAN paper's LCSTS setting, end to end on the only
# part of LCSTS we have: PART III. `wean prepare lcsts` trains on the pairs scored < 3 (minus
# posts that also appear scored >= 3), keeps a tenth of them for selection, and leaves the 725
# pairs scored >= 3 (the paper's test set, lcsts-test) for testing. 339 training pairs instead of
# PART I's 2.4M: this shows the pipeline working, not the paper's numbers. The presets' 512-d
# model learns nothing from so few pairs in their 10 epochs (a first run wrote one repeated
# character for every post), and halving the learning rate on the 37 validation pairs' plateau
# stopped learning within a few epochs, so both presets are scaled down alike (SMALL): smaller
# model, dropout 0.3, batches of 16, a fixed learning rate, 40 epochs, selection by the presets'
# validation ROUGE-2. A lead baseline (the post's first 18 characters: the median length of the
# training headlines) is scored beside them.
# Run from the repository root after `make install`.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
OUT=results/lcsts
EPOCHS=${EPOCHS:-40}
SMALL="--set model.embedding_size=128 --set model.encoder.hidden_size=256 --set model.decoder.hidden_size=256 \
       --set model.dropout=0.3 --set training.batch_size=16 --set training.lr_patience=1000"
"$WEAN" prepare lcsts --out data/lcsts-part3
"$PYTHON" -c 'import sys; [print(line.rstrip("\n")[:18]) for line in sys.stdin]' \
    < $WEAN_DATA_ROOT/lcsts/part3_label3plus.src > "$OUT/lead-18.lcsts-test.txt"
"$WEAN" evaluate --hyp "$OUT/lead-18.lcsts-test.txt" --benchmark lcsts-test --json > "$OUT/lead-18.lcsts-test.json"
for name in seq2seq-lcsts wean-lcsts; do
    dir="$RUNS/$name-part3-small"
    resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)  # a finished run stops at once
    # shellcheck disable=SC2086
    "$WEAN" train "configs/$name.yaml" --set model_dir="$dir" --set data.train=data/lcsts-part3/train \
        --set data.valid=data/lcsts-part3/valid --set training.max_epochs="$EPOCHS" \
        --set training.early_stopping_patience=100 --set training.log_every=20 $SMALL $resume
    "$WEAN" test --model "$dir" --system "${name%-lcsts}" --out-dir "$OUT" --benchmark lcsts-test
done
dirs=("$RUNS/seq2seq-lcsts-part3-small" "$RUNS/wean-lcsts-part3-small")
"$WEAN" plot "${dirs[@]}" --labels Seq2seq,WEAN --metric rouge2 --out "$OUT/valid-rouge2.png" \
    | tee "$OUT/convergence.txt"
"$WEAN" plot "${dirs[@]}" --labels Seq2seq,WEAN --metric loss --out "$OUT/valid-loss.png"
