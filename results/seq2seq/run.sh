#!/usr/bin/env bash
# The Seq2seq baseline preset (configs/seq2seq-pwkp.yaml: the WEAN paper's Seq2seq, 2 layers,
# 256/256, dropout 0.4, Adam 1e-3, clip 5, batch 64, vocabulary 50,000) on kauchak_v2 train,
# selected on WikiLarge valid, tested on TurkCorpus test and WikiSmall test against copying.
# Run from the repository root after `make install`. Resumable: run it again and it continues.
# RUNS is outside the work tree (a 28M-parameter model's checkpoints are never committed).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
OUT=results/seq2seq
BUDGET=${BUDGET:-3000}  # updates (6.2 epochs): what CPU time allowed; validation loss still falls
dir="$RUNS/seq2seq-pwkp"
resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)
"$WEAN" train configs/seq2seq-pwkp.yaml --set model_dir="$dir" \
    --set training.validate_every=200 --set training.max_updates="$BUDGET" $resume
"$WEAN" test --model "$dir" --system seq2seq --out-dir "$OUT" \
    --benchmark turkcorpus-test-lower wikismall-test
"$WEAN" test --model "$dir" --system seq2seq --out-dir "$OUT" \
    --benchmark turkcorpus-test --plain-text  # EASSE's detokenized source, PTB-tokenized on the way in
"$WEAN" plot "$dir" --labels Seq2seq --metric sari --out "$OUT/valid-sari.png"
"$WEAN" plot "$dir" --labels Seq2seq --metric loss --out "$OUT/valid-loss.png"
