#!/usr/bin/env bash
# int8 dynamic quantization of the shipped simplifier (wean/quantize.py): TurkCorpus test scores,
# and BLEU of the int8 outputs against the fp32 ones (results/controllable/shipped.turkcorpus-test.txt).
set -euo pipefail
: "${WEAN_DATA_ROOT:?set it to the folder of the corpora and benchmarks (the Makefile's default: ../shared/data)}"
OUT=results/int8
OMP_NUM_THREADS=1 .venv/bin/wean test --model src/wean/pretrained/simplifier --system shipped-int8 --out-dir "$OUT" \
    --benchmark turkcorpus-test --plain-text --quantize int8
.venv/bin/wean evaluate --hyp "$OUT/shipped-int8.turkcorpus-test.txt" \
    --refs results/controllable/shipped.turkcorpus-test.txt --metrics bleu --lowercase --tokenize 13a \
    | tee "$OUT/bleu-against-fp32.txt"
# which layers move the outputs
OMP_NUM_THREADS=1 .venv/bin/python results/int8/variants.py | tee "$OUT/variants.txt"
# speed (on a quiet machine: stop background work first)
OMP_NUM_THREADS=1 .venv/bin/python results/int8/speed.py | tee "$OUT/speed.txt"
