#!/usr/bin/env bash
# The simplifier retrained on clean pairs (issue 70, step 3), against the shipped one. From the
# repository root after `make install`, with WEAN_DATA_ROOT set; every step whose output exists
# is skipped, so running it again goes on where it stopped.
# The models are results/copy's simplifier rows (that script trains them: the shipped recipe,
# configs/simplifier-control.yaml, on kauchak_v2 without lost-byte mojibake, to early stopping,
# seeds 1-3): `plain` (WEAN's output layer) and `pg` (copying over it). Here, per finished run:
#   1. its control values tuned (`wean tune-control`: 300 TurkCorpus tune sentences after the
#      first 500, seed 1) for SARI among settings whose invented names, invented numbers and
#      repeated phrases are at or below the references' own rates there (a fidelity floor), BLEU
#      >= 60, or, where no setting meets that floor, the nearest (`--nearest`; recorded as met:
#      false); a copy of the run is tuned, the run itself stays as results/copy tested it;
#   2. scored on the 400 tune sentences of results/decoding/tune_score.py, as it is and with the
#      names-and-numbers constraint (selection.jsonl): what the rating and shipping choose from;
#   3. each test set read once per system, as it is and with the constraint (TurkCorpus test
#      plain text, WikiSmall test tokenized), and compared with the shipped model's outputs
#      (results/faithful/shipped.*), fidelity included.
# RUNS: where results/copy trained the runs (default runs/); SEEDS, ROWS: a subset; OUT, SENTENCES:
# another folder and a smaller search, to try the script out.
set -euo pipefail
cd "$(dirname "$0")/../.."
WEAN=${WEAN:-wean}
PYTHON=${PYTHON:-python}
RUNS=${RUNS:-runs}
SEEDS=${SEEDS:-"1 2 3"}
ROWS=${ROWS:-"plain pg"}
OUT=${OUT:-results/clean-simplifier}
SENTENCES=${SENTENCES:-300}  # of tune-control's search
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
FLOOR=(--require invented_names\<=references --require invented_numbers\<=references
       --require repeated_ngrams\<=references)
mkdir -p "$OUT"

scored() {  # label: whether it is in selection.jsonl
    test -e $OUT/selection.jsonl && grep -q "\"label\": \"$1\"" $OUT/selection.jsonl
}

for seed in $SEEDS; do
    for row in $ROWS; do
        run=$RUNS/copy-simplifier-$row-seed$seed
        if ! test -e "$run/finished"; then
            echo "$row seed $seed: $run is not trained to its end yet (results/copy/run.sh); skipped"
            continue
        fi
        tuned=$run-tuned
        system=$row-seed$seed
        # 1. control values under the fidelity floor, on a copy of the run
        if ! test -e $OUT/control-tuning-$system.json; then
            test -e "$tuned/config.yaml" || "$WEAN" export "$run" "$tuned"
            "$WEAN" tune-control --model "$tuned" --plain-text --sentences "$SENTENCES" --skip 500 --seed 1 "${FLOOR[@]}" --nearest \
                | sed "s|^$RUNS/||"
            cp "$tuned/control-tuning.json" $OUT/control-tuning-$system.json
        fi
        # 2. validation scores, as it is and with the names-and-numbers constraint
        scored $system || "$PYTHON" results/decoding/tune_score.py --out $OUT/selection.jsonl --label $system \
            --model "$tuned"
        scored $system-names || "$PYTHON" results/decoding/tune_score.py --out $OUT/selection.jsonl \
            --label $system-names --model "$tuned" --option names_and_numbers=from_source
        # 3. the test sets, once per system, against the shipped model
        for benchmark in turkcorpus-test wikismall-test; do
            for names in any from_source; do
                name=$system; [ $names = any ] || name=$system-names
                test -e $OUT/$name.$benchmark.txt || "$WEAN" test --model "$tuned" --system $name \
                    --benchmark $benchmark --names-and-numbers $names --out-dir $OUT
                test -e $OUT/significance-$name-vs-shipped.$benchmark.txt || "$WEAN" compare \
                    --hyp $OUT/$name.$benchmark.txt results/faithful/shipped.$benchmark.txt --benchmark $benchmark \
                    --metrics +fidelity > $OUT/significance-$name-vs-shipped.$benchmark.txt
            done
        done
    done
done

# 4. Once every run is in (or CHOOSE=1): the candidate chosen on the 400 tune sentences
#    (choose.py: the highest SARI at or below the references' rates of invented names and
#    repeated phrases, else the nearest), and a blind rating of it on the 50 tune sentences
#    results/decoding rated (they selected and tuned nothing here): the shipped simplifier, the
#    candidate, the first human reference and the source, identical outputs merged; each rater
#    is given rating/sheet.csv and sheet.json's protocol only, never the key.
expected=$(( $(wc -w <<< "$SEEDS") * $(wc -w <<< "$ROWS") * 2 ))
found=$(test -e $OUT/selection.jsonl && wc -l < $OUT/selection.jsonl || echo 0)
if [ "${CHOOSE:-0}" != 1 ] && [ "$found" -lt "$expected" ]; then
    echo "selection: $found of $expected systems scored; the choice waits for the rest (CHOOSE=1 to choose now)"
    exit 0
fi
test -e $OUT/choice.json || "$PYTHON" results/clean-simplifier/choose.py --selection $OUT/selection.jsonl \
    --out $OUT/choice.json
# the chosen label (ROW-seedN[-names]) as: label, tuned model, names-and-numbers option
choice=$("$PYTHON" - "$OUT/choice.json" <<'PY'
import json, sys
label = json.load(open(sys.argv[1]))["chosen"]["label"]
names = label.endswith("-names")
print(label, label[: -len("-names")] if names else label, "from_source" if names else "any")
PY
)
read -r LABEL SYSTEM NAMES <<< "$choice"
MODEL=$RUNS/copy-simplifier-${SYSTEM%-seed*}-seed${SYSTEM##*-seed}-tuned
test -e $OUT/tune/$LABEL.turkcorpus-tune.txt || "$WEAN" test --model "$MODEL" --system "$LABEL" \
    --benchmark turkcorpus-tune --names-and-numbers "$NAMES" --out-dir $OUT/tune
if ! test -e $OUT/rating/key.json; then
    lines=$("$PYTHON" -c 'import json; print(",".join(str(i["line"]) for i in json.load(open("results/decoding/rating/key.json"))["items"]))')
    "$WEAN" rate prepare --benchmark turkcorpus-tune --lines "$lines" --seed 72 --out $OUT/rating \
        --system shipped=results/fidelity/tune/shipped.turkcorpus-tune.txt --system "$LABEL=$OUT/tune/$LABEL.turkcorpus-tune.txt" \
        --system human="$WEAN_DATA_ROOT"/turkcorpus/case_detok/tune.ref.0 \
        --system source="$WEAN_DATA_ROOT"/turkcorpus/case_detok/tune.src
fi
source results/lib/rating.sh
score_ratings $OUT
