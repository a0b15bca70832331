#!/usr/bin/env bash
# The fidelity tables and the blind rating of results/fidelity, from the repository root:
#   bash results/fidelity/run.sh            # every step; a step whose output exists is skipped
# Needs $WEAN_DATA_ROOT and wean installed (make install; WEAN / PYTHON name them unless active). The ratings themselves
# (rating/rater-*.csv) come from raters, between steps 3 and 4.
set -euo pipefail
cd "$(dirname "$0")/../.."
WEAN=${WEAN:-wean}
PYTHON=${PYTHON:-python}
OUT=results/fidelity
source results/lib/unguarded_shipped.sh
MODEL=${RUNS:-runs}/shipped-unguarded  # the shipped model as it was before its faithful pipeline
unguarded_shipped $MODEL
TUNE=$WEAN_DATA_ROOT/turkcorpus/case_detok/tune

# 1. the shipped simplifier on all of TurkCorpus tune (validation data): as shipped, and asked to
#    change less (levenshtein 0.8 instead of its tuned 0.6), and with bigram blocking (block 2, not 3)
test -e $OUT/tune/shipped.turkcorpus-tune.txt ||
    "$WEAN" test --model $MODEL --benchmark turkcorpus-tune --system shipped --out-dir $OUT/tune
test -e $OUT/tune/shipped-change-less.turkcorpus-tune.txt ||
    "$WEAN" test --model $MODEL --benchmark turkcorpus-tune --system shipped-change-less \
        --control levenshtein=0.8 --out-dir $OUT/tune
test -e $OUT/tune/shipped-block2.turkcorpus-tune.txt ||
    "$WEAN" test --model $MODEL --benchmark turkcorpus-tune --system shipped-block2 \
        --block-ngram-repeat 2 --out-dir $OUT/tune

# 2. fidelity statistics of every system of results/controllable and results/wean/converged-cpu
#    on TurkCorpus test and WikiSmall test, and of step 1's on TurkCorpus tune, beside the
#    references, the source and the published outputs
"$PYTHON" $OUT/tables.py > /dev/null
for system in ACCESS Dress-Ls; do  # the shipped simplifier against the published systems, paired
    "$WEAN" compare --hyp results/controllable/shipped.turkcorpus-test.txt \
        ../shared/metric-parity/turkcorpus/$system.txt --benchmark turkcorpus-test \
        > $OUT/significance-shipped-vs-$system.turkcorpus-test.txt
done

# 3. the blind sheet: 50 tune sentences after those that selected the checkpoint (1-500) and
#    outside the 300 that tuned its control values; five systems, identical outputs merged
if ! test -e $OUT/rating/key.json; then
    LINES=$("$PYTHON" - <<'EOF'
import json, random
tuned = set(json.load(open("src/wean/pretrained/simplifier/control-tuning.json"))["lines"])
pool = [line for line in range(501, 2001) if line not in tuned]
print(",".join(str(line) for line in sorted(random.Random(67).sample(pool, 50))))
EOF
)
    "$WEAN" rate prepare --benchmark turkcorpus-tune --lines "$LINES" --seed 67 --out $OUT/rating \
        --system shipped=$OUT/tune/shipped.turkcorpus-tune.txt \
        --system shipped-change-less=$OUT/tune/shipped-change-less.turkcorpus-tune.txt \
        --system shipped-block2=$OUT/tune/shipped-block2.turkcorpus-tune.txt \
        --system human=$TUNE.ref.0 \
        --system source=$TUNE.src
fi

# 4. the ratings (rating/rater-*.csv, filled copies of rating/sheet.csv) per system, and which
#    automatic statistic tracks them
if ls $OUT/rating/rater-*.csv > /dev/null 2>&1; then
    "$WEAN" rate score $OUT/rating $OUT/rating/rater-*.csv > $OUT/ratings.txt
    "$WEAN" rate score $OUT/rating $OUT/rating/rater-*.csv --json > $OUT/ratings.json
    "$PYTHON" $OUT/track.py > /dev/null
fi
