#!/usr/bin/env bash
# The pointer-generator's mixture taken at the source's words only (issue 94), against the tree
# before it (OLD: a checkout of 98cac00): the shipped simplifier's beam 5 with and without its
# guard on TurkCorpus test, one thread, the two trees interleaved, 3 rounds, outputs compared;
# then the simplifier's training recipe in ABBA order (train_abba.sh). From the repository root
# after `make install`, WEAN_DATA_ROOT set, on a quiet machine.
set -euo pipefail
OLD=${OLD:?a checkout of the commit before the lever, e.g. git worktree add ../old 98cac00}
OLD_LABEL=${OLD_LABEL:-"before (98cac00)"}
OUT=results/bench-copy-mixture
RESULT=${RESULT:-$OUT}  # where decoding.jsonl and the outputs go
TEST=$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src
MODEL=src/wean/pretrained/simplifier
STEPS=${STEPS:-"decode train"}
WORK=$(mktemp -d)
if [[ " $STEPS " == *" decode "* ]]; then for round in 1 2 3; do
    for pipeline in plain guarded; do
        for tree in old new; do
            src=src label="this lever"; [ "$tree" = old ] && src=$OLD/src label=$OLD_LABEL
            OMP_NUM_THREADS=1 PYTHONPATH=$src .venv/bin/python $OUT/decode_one.py $MODEL "$TEST" $pipeline \
                "$WORK/$tree.$pipeline.txt" "$label" | tee -a $RESULT/decoding.jsonl
        done
        cmp "$WORK/old.$pipeline.txt" "$WORK/new.$pipeline.txt" && echo "$pipeline: outputs identical"
    done
done; fi
if [[ " $STEPS " == *" decode "* ]]; then
    cp "$WORK/new.plain.txt" $RESULT/shipped-beam5.turkcorpus-test.txt
    cp "$WORK/new.guarded.txt" $RESULT/shipped-guarded.turkcorpus-test.txt
fi
rm -rf "$WORK"
if [[ " $STEPS " == *" train "* ]]; then OLD=$OLD bash $OUT/train_abba.sh | tee $OUT/training.txt; fi
