#!/usr/bin/env bash
# The vocabulary shortlist on the shipped simplifier of issue 91 (issue 94's target: beam 5 at 2x
# with 98 % of outputs identical): the table learnt from its training pairs (`wean shortlist`, on
# a copy of the model), the sizes compared on the selection lines (TurkCorpus tune 1-500, one
# pass), then speed and agreement on TurkCorpus test (3 interleaved rounds), beam 5 without the
# guard and with it. From the repository root after `make install`, WEAN_DATA_ROOT set,
# `runs/asset-data` made by results/asset-simplifier/make_data.py, on a quiet machine.
set -euo pipefail
OUT=results/bench-shortlist-asset
MODEL=${MODEL:-$(mktemp -d)/shipped}
test -e "$MODEL/config.yaml" || cp -r src/wean/pretrained/simplifier "$MODEL"
test -e "$MODEL/shortlist.safetensors" || .venv/bin/wean shortlist "$MODEL" --train runs/asset-data/train | tee $OUT/table.txt
export OMP_NUM_THREADS=1
TUNE=$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.src
TEST=$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src
.venv/bin/python $OUT/measure.py --model "$MODEL" --sentences "$TUNE" --role selection --rounds 1 \
    --settings fp32:0 fp32:250 fp32:500 fp32:1000 fp32:2000 fp32:4000 int8:0 int8:1000 int8:2000 \
    --out $OUT/selection.json | tee $OUT/selection.txt
.venv/bin/python $OUT/measure.py --model "$MODEL" --sentences "$TEST" --rounds 3 \
    --settings fp32:0 fp32:1000 fp32:2000 fp32:4000 int8:0 int8:1000 \
    --out $OUT/test-plain.json --outputs $OUT/outputs | tee $OUT/test-plain.txt
.venv/bin/python $OUT/measure.py --model "$MODEL" --sentences "$TEST" --rounds 3 --pipeline guarded \
    --settings fp32:0 fp32:1000 fp32:4000 --out $OUT/test-guarded.json --outputs $OUT/outputs | tee $OUT/test-guarded.txt
