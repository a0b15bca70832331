#!/usr/bin/env bash
# The vocabulary shortlist on the shipped simplifier (issue 73): the table learnt from its training
# pairs (wean shortlist); on TurkCorpus tune, the share of outputs identical to the full
# vocabulary's for each size; TurkCorpus and WikiSmall test with and without each; generate()
# speed (beam 5, plain text, one thread, interleaved rounds; on a quiet machine).
# Run from the repository root after `make install`, with WEAN_DATA_ROOT set.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
OUT=results/bench-shortlist
MODEL=${MODEL:-$(mktemp -d)/shipped}  # a copy of the shipped model, so that the package's stays as it is
SIZES=${SIZES:-"250 500 1000 2000"}
STEPS=${STEPS:-"1 2 3 4"}  # step 3 times: run it alone, on a quiet machine
source results/lib/unguarded_shipped.sh
unguarded_shipped "$MODEL"  # the shipped model as it was before its faithful pipeline
test -e "$MODEL/shortlist.safetensors" || "$WEAN" shortlist "$MODEL" | tee "$OUT/table.txt"
export OMP_NUM_THREADS=1
# 1. choose the size on the tune split
if [[ " $STEPS " == *" 1 "* ]]; then
    "$PYTHON" $OUT/measure.py --model "$MODEL" --sentences "$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.src" \
        --sizes 0 $SIZES --rounds 1 --out $OUT/tune.json | tee $OUT/tune.txt
fi
# 2. test sets: scores and outputs of the full vocabulary and of each shortlist (no size keeps 98 %
# of the tune outputs, so none is chosen: each is reported)
if [[ " $STEPS " == *" 2 "* ]]; then
    for benchmark in turkcorpus-test wikismall-test; do
        test -e $OUT/shipped.$benchmark.txt || "$WEAN" test --model "$MODEL" --system shipped --benchmark $benchmark \
            --out-dir $OUT
        for size in $SIZES; do
            test -e $OUT/shipped-shortlist-$size.$benchmark.txt || "$WEAN" test --model "$MODEL" \
                --system shipped-shortlist-$size --benchmark $benchmark --shortlist "$size" --out-dir $OUT
            "$WEAN" compare --hyp $OUT/shipped-shortlist-$size.$benchmark.txt $OUT/shipped.$benchmark.txt \
                --benchmark $benchmark > $OUT/significance-shortlist-$size-vs-full.$benchmark.txt
        done
    done
fi
# 3. speed and agreement on TurkCorpus test, 3 interleaved rounds
if [[ " $STEPS " == *" 3 "* ]]; then
    "$PYTHON" $OUT/measure.py --model "$MODEL" --sentences "$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src" \
        --sizes 0 $SIZES --rounds 3 --out $OUT/speed.json | tee $OUT/speed.txt
fi
# 4. words per source word in the table against the shortlist's size and agreement (tune, beam 5)
if [[ " $STEPS " == *" 4 "* ]]; then
    "$PYTHON" $OUT/per_word.py --model "$MODEL" \
        --sentences "$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.src" | tee $OUT/per-word.txt
fi
