#!/usr/bin/env bash
# The Seq2seq baseline preset (configs/seq2seq-pwkp.yaml: the WEAN paper's Seq2seq, 2 layers,
# 256/256, dropout 0.4, Adam 1e-3, clip 5, batch 64, vocabulary 50,000) on kauchak_v2 train,
# selected on WikiLarge valid, tested on TurkCorpus test and WikiSmall test against copying.
# Run from the repository root after `make install`. Resumable: run it again and it continues.
# RUNS is outside the work tree (a 28M-parameter model's checkpoints are never committed).
set -euo pipefail
: "${WEAN_DATA_ROOT:?set it to the folder of the corpora and benchmarks (the Makefile's default: ../shared/data)}"
RUNS=${RUNS:-runs}
OUT=results/seq2seq
BUDGET=${BUDGET:-3000}  # updates (6.2 epochs): what CPU time allowed; validation loss still falls
dir="$RUNS/seq2seq-pwkp"
resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)
.venv/bin/wean train configs/seq2seq-pwkp.yaml --set model_dir="$dir" \
    --set training.validate_every=200 --set training.max_updates="$BUDGET" $resume
.venv/bin/wean test --model "$dir" --system seq2seq --out-dir "$OUT" \
    --benchmark turkcorpus-test-lower wikismall-test
.venv/bin/wean test --model "$dir" --system seq2seq --out-dir "$OUT" \
    --benchmark turkcorpus-test --plain-text  # EASSE's detokenized source, PTB-tokenized on the way in
.venv/bin/wean plot "$dir" --labels Seq2seq --metric sari --out "$OUT/valid-sari.png"
.venv/bin/wean plot "$dir" --labels Seq2seq --metric loss --out "$OUT/valid-loss.png"
