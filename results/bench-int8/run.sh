#!/usr/bin/env bash
# int8 against fp32 on the shipped simplifier (issue 73, part 3): why its outputs move (sensitivity.py,
# on TurkCorpus tune), and the speed and agreement of fp32, int8, the shortlist and int8 with the
# shortlist on TurkCorpus and WikiSmall test (modes.py; time it on a quiet machine).
# Run from the repository root after `make install`, with WEAN_DATA_ROOT set.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
OUT=results/bench-int8
MODEL=${MODEL:-$(mktemp -d)/shipped}  # a copy of the shipped model with its shortlist table
STEPS=${STEPS:-"1 2 3"}
export OMP_NUM_THREADS=1
source results/lib/unguarded_shipped.sh
unguarded_shipped "$MODEL"  # the shipped model as it was before its faithful pipeline
test -e "$MODEL/shortlist.safetensors" || "$WEAN" shortlist "$MODEL"
# 1. why int8 moves the outputs (validation sentences)
if [[ " $STEPS " == *" 1 "* ]]; then
    "$PYTHON" $OUT/sensitivity.py --sentences "$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.src" --count 300 \
        --out $OUT/sensitivity.json | tee $OUT/sensitivity.txt
fi
# 2. test sets: each mode's outputs and scores, a paired test against fp32
if [[ " $STEPS " == *" 2 "* ]]; then
    declare -A MODES=([fp32]="" [int8]="--quantize int8" [shortlist-1000]="--shortlist 1000"
                      [int8-shortlist-1000]="--quantize int8 --shortlist 1000")
    for benchmark in turkcorpus-test wikismall-test; do
        for mode in fp32 int8 shortlist-1000 int8-shortlist-1000; do
            # shellcheck disable=SC2086
            test -e $OUT/shipped-$mode.$benchmark.txt || "$WEAN" test --model "$MODEL" --system shipped-$mode \
                --benchmark $benchmark --out-dir $OUT ${MODES[$mode]}
            [ $mode = fp32 ] || "$WEAN" compare --hyp $OUT/shipped-$mode.$benchmark.txt $OUT/shipped-fp32.$benchmark.txt \
                --benchmark $benchmark > $OUT/significance-$mode-vs-fp32.$benchmark.txt
        done
    done
fi
# 3. speed and agreement on TurkCorpus test, 3 interleaved rounds: alone, on a quiet machine
if [[ " $STEPS " == *" 3 "* ]]; then
    "$PYTHON" $OUT/modes.py --model "$MODEL" --sentences "$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src" \
        --benchmark turkcorpus-test --rounds 3 --out $OUT | tee $OUT/modes.turkcorpus-test.txt
fi
