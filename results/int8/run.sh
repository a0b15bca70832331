#!/usr/bin/env bash
# int8 dynamic quantization of the shipped simplifier (wean/inference/quantize.py): TurkCorpus test scores,
# and BLEU of the int8 outputs against the fp32 ones (results/controllable/shipped.turkcorpus-test.txt).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
OUT=results/int8
source results/lib/unguarded_shipped.sh
MODEL=${RUNS:-runs}/shipped-unguarded  # the shipped model as it was before its faithful pipeline
unguarded_shipped "$MODEL"
OMP_NUM_THREADS=1 "$WEAN" test --model "$MODEL" --system shipped-int8 --out-dir "$OUT" \
    --benchmark turkcorpus-test --plain-text --quantize int8
"$WEAN" evaluate --hyp "$OUT/shipped-int8.turkcorpus-test.txt" \
    --refs results/controllable/shipped.turkcorpus-test.txt --metrics bleu --lowercase --tokenize 13a \
    | tee "$OUT/bleu-against-fp32.txt"
# which layers move the outputs
OMP_NUM_THREADS=1 "$PYTHON" results/int8/variants.py | tee "$OUT/variants.txt"
# speed (on a quiet machine: stop background work first)
OMP_NUM_THREADS=1 "$PYTHON" results/int8/speed.py | tee "$OUT/speed.txt"
