#!/usr/bin/env bash
# Speed and outputs before and after issue 92's new house (the inference package, the layers, the
# model-directory module): training and beam search of an untrained model, and generate() of the
# shipped simplifier, the two checkouts interleaved in one run (bench/revisions.py); and the shipped
# simplifier's TurkCorpus and WikiSmall test outputs, compared byte for byte with results/clean-simplifier's.
# Run from the repository root after `make install`, on a quiet machine.
set -euo pipefail
BEFORE=${BEFORE:-../wean-before}
OUT=results/bench-layers
PYTHON=${PYTHON:-.venv/bin/python}
test -e "$BEFORE/src/wean" || git worktree add "$BEFORE" 005af46  # the last commit before issue 92
export OMP_NUM_THREADS=1
"$PYTHON" bench/revisions.py --old "$BEFORE" --new . --rounds 3 --updates 60 --sentences 64 --out $OUT/train-beam
"$PYTHON" bench/revisions.py --old "$BEFORE" --new . --rounds 3 --decode-model src/wean/pretrained/simplifier \
    --sentences-file "$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src" --out $OUT/generate
for benchmark in turkcorpus-test wikismall-test; do
    .venv/bin/wean test --model src/wean/pretrained/simplifier --system shipped-guarded --benchmark $benchmark \
        --out-dir "$OUT/outputs"
    cmp "$OUT/outputs/shipped-guarded.$benchmark.txt" results/clean-simplifier/shipped-guarded.$benchmark.txt
done
rm -r "$OUT/outputs"  # identical to the committed ones: cmp stops the script where they are not
