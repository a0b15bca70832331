#!/usr/bin/env bash
# The decoding toolbox on the shipped simplifier and its three seeds (configs/simplifier-control.yaml,
# results/controllable), from the repository root after `make install`; every step whose output
# exists is skipped, every training resumes.
#   RUNS=DIR   where the three training runs live (default runs/); not part of the results
#   SEEDS="2"  step 4 for these seeds only, then stop (to run seeds side by side)
# Settings (coverage weight, checkpoints averaged) are chosen on 400 TurkCorpus tune sentences
# (tune_score.py), the test sets read once per system after.
set -euo pipefail
cd "$(dirname "$0")/../.."
source results/lib/rating.sh
WEAN=${WEAN:-wean}
PYTHON=${PYTHON:-python}
RUNS=${RUNS:-runs}
OUT=results/decoding
source results/lib/unguarded_shipped.sh
SHIPPED=$RUNS/shipped-unguarded  # the shipped model as it was before its faithful pipeline
unguarded_shipped $SHIPPED
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$RUNS"

test_system() {  # model... -- system [options]: TurkCorpus test and WikiSmall test, once
    local models=() ; while [ "$1" != -- ]; do models+=("$1"); shift; done; shift
    local system=$1; shift
    test -e "$OUT/$system.turkcorpus-test.txt" ||
        "$WEAN" test --model "${models[@]}" --system "$system" --out-dir "$OUT" --benchmark turkcorpus-test --plain-text "$@"
    test -e "$OUT/$system.wikismall-test.txt" ||
        "$WEAN" test --model "${models[@]}" --system "$system" --out-dir "$OUT" --benchmark wikismall-test "$@"
}
selected() {  # label: whether tune_score.py has scored it
    test -e $OUT/selection.jsonl && grep -q "\"label\": \"$1\"" $OUT/selection.jsonl
}

# 1. Speed: the default search against the code before this change (0507b96), interleaved
#    rounds on the shipped model (a checkout of that commit in ../wean-before); pause any other
#    work on the machine first.
test -e $OUT/speed/metrics.json || "$PYTHON" bench/revisions.py --old ../wean-before --new . \
    --decode-model $SHIPPED --sentences-file $WEAN_DATA_ROOT/turkcorpus/case_detok/test.src \
    --sentences 359 --rounds 9 --out $OUT/speed

# 2. Alternatives: 5-best lists of beam search, diverse beam search and sampling (settings fixed
#    in advance), distinct-n.
test -e $OUT/distinct.json || "$PYTHON" $OUT/distinct.py

# 3. Coverage penalty on the shipped simplifier: weights tried on tune; tested against "off": the
#    setting with the best SARI among those with BLEU >= 60 (tune-control's floor) and no more
#    repeated phrases or invented names than "off" (tables.py --best-coverage).
selected shipped || "$PYTHON" $OUT/tune_score.py --label shipped --model $SHIPPED
for beta in 0.1 0.2 0.5 1.0; do
    selected shipped-summary$beta || "$PYTHON" $OUT/tune_score.py --label shipped-summary$beta --model $SHIPPED \
        --option coverage_penalty=summary --option coverage_weight=$beta
done
for beta in 0.1 0.3 1.0; do
    selected shipped-wu$beta || "$PYTHON" $OUT/tune_score.py --label shipped-wu$beta --model $SHIPPED \
        --option coverage_penalty=wu --option coverage_weight=$beta
done
read -r FORM BETA < <("$PYTHON" $OUT/tables.py --best-coverage)
test_system $SHIPPED -- shipped
test_system $SHIPPED -- shipped-coverage --coverage-penalty "$FORM" --coverage-weight "$BETA"

# 3b. A blind rating of the coverage penalty on 50 tune sentences that selected nothing here, in
#     results/controllable or in results/fidelity (nor were rated there); the ratings
#     (rating/rater-*.csv) come from raters given sheet.csv and sheet.json's protocol only.
test -e $OUT/tune/shipped-coverage.turkcorpus-tune.txt || "$WEAN" test --model $SHIPPED --system shipped-coverage \
    --benchmark turkcorpus-tune --plain-text --coverage-penalty "$FORM" --coverage-weight "$BETA" --out-dir $OUT/tune
if ! test -e $OUT/rating/key.json; then
    LINES=$("$PYTHON" - <<'EOF'
import json, random, sys
sys.path.insert(0, "results/decoding")
from tune_score import selection_lines
tuned = set(json.load(open("src/wean/pretrained/simplifier/control-tuning.json"))["lines"])  # 1-based
fidelity_pool = [line for line in range(501, 2001) if line not in tuned]
fidelity_rated = set(random.Random(67).sample(fidelity_pool, 50))  # results/fidelity/run.sh's sheet
selection = {i + 1 for i in selection_lines()}
pool = [line for line in range(501, 2001) if line not in tuned | fidelity_rated | selection]
print(",".join(str(line) for line in sorted(random.Random(68).sample(pool, 50))))
EOF
)
    "$WEAN" rate prepare --benchmark turkcorpus-tune --lines "$LINES" --seed 68 --out $OUT/rating \
        --system shipped=results/fidelity/tune/shipped.turkcorpus-tune.txt \
        --system shipped-coverage=$OUT/tune/shipped-coverage.turkcorpus-tune.txt \
        --system human=$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.ref.0 \
        --system source=$WEAN_DATA_ROOT/turkcorpus/case_detok/tune.src
fi
score_ratings $OUT

# 4. The three seeds, retrained with every checkpoint kept (training.keep_best 7 of 7 validations),
#    with the control values results/controllable tuned for the same seed's first training (the
#    retrained weights differ from those in floating point from update ~1,000: another machine),
#    the same for every system of a seed.
for seed in ${SEEDS:-1 2 3}; do
    run=$RUNS/simplifier-control-seed$seed
    if ! grep -qs "validation at update 2800" "$run/train.log"; then
        resume=$(test -e "$run/checkpoints/latest" && echo --resume || true)
        "$WEAN" train configs/simplifier-control.yaml --set model_dir="$run" --set name=simplifier-control \
            --set training.seed=$seed --set training.max_updates=2800 --set training.keep_best=7 $resume
    fi
    "$PYTHON" - "$run" results/controllable/control-tuning-seed$seed.json <<'EOF'
import dataclasses, json, sys
from pathlib import Path
from wean.model_dir import load_assets, save_assets
run, tuning = Path(sys.argv[1]), json.load(open(sys.argv[2]))
assets = load_assets(run)
generation = dataclasses.replace(assets.config.generation, control=tuning["chosen"]["control"])
save_assets(run, dataclasses.replace(assets, config=dataclasses.replace(assets.config, generation=generation)))
EOF
    # the last checkpoint, and the mean of the last k, as model directories
    for k in 1 2 3 4; do
        test -e "$run-last$k/model.safetensors" || "$WEAN" average "$run" --last $k --out "$run-last$k"
        selected last$k-seed$seed || "$PYTHON" $OUT/tune_score.py --label last$k-seed$seed --model "$run-last$k"
    done
    K=$("$PYTHON" $OUT/tables.py --best-average $seed)  # the k of 2-4 with the best tune SARI
    test_system "$run" -- seed$seed
    test_system "$run-last1" -- last-seed$seed
    test_system "$run-last$K" -- average-seed$seed
    test_system "$run" -- coverage-seed$seed --coverage-penalty "$FORM" --coverage-weight "$BETA"
done

[ "${SEEDS:-1 2 3}" = "1 2 3" ] || exit 0

# 5. The ensemble of the three seeds (the first one's control values and search settings).
test_system $RUNS/simplifier-control-seed1 $RUNS/simplifier-control-seed2 $RUNS/simplifier-control-seed3 -- ensemble

# 6. Paired tests and tables
for benchmark in turkcorpus-test wikismall-test; do
    for pair in "shipped-coverage shipped" "ensemble seed1" "ensemble seed2" "ensemble seed3" \
                "average-seed1 last-seed1" "average-seed2 last-seed2" "average-seed3 last-seed3" \
                "coverage-seed1 seed1" "coverage-seed2 seed2" "coverage-seed3 seed3"; do
        set -- $pair
        if test -e $OUT/$1.$benchmark.txt && test -e $OUT/$2.$benchmark.txt; then
            "$WEAN" compare --hyp $OUT/$1.$benchmark.txt $OUT/$2.$benchmark.txt --benchmark $benchmark \
                > $OUT/significance-$1-vs-$2.$benchmark.txt
        fi
    done
done
"$PYTHON" $OUT/tables.py > $OUT/tables.md
