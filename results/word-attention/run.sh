#!/usr/bin/env bash
# Word attention and contextual gates (Wu et al. 2018) against their RNNsearch base, and the
# convolutional encoder (Gehring et al. 2016) against the LSTM encoder:
#   results/word-attention/run.sh gigaword         (configs/rnnsearch-gigaword.yaml)
#   results/word-attention/run.sh simplification   (configs/rnnsearch-simplification.yaml)
# Every row is the task's config plus the keys below, so data, seed (1) and budget
# (training.max_updates) are equal. Run from the repository root after `make install`; each run
# resumes where it stopped when the script is run again. RUNS holds checkpoints (never committed).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
TASK=${1:?gigaword or simplification}
RUNS=${RUNS:-runs}
CONFIG=configs/rnnsearch-$TASK.yaml
case $TASK in
    gigaword)
        test -e data/gigaword/train.src || "$WEAN" prepare gigaword --out data/gigaword
        TESTS=(--benchmark gigaword-test)
        PRECISION=fp32 ;;  # how these rows were trained (before bf16 existed)
    simplification)  # EASSE's TurkCorpus test is plain text: PTB-tokenized in, detokenized out
        TESTS=(--benchmark turkcorpus-test --plain-text)
        PRECISION=bf16 ;;  # faster on this CPU (results/bench-precision); all rows alike
    *) echo "unknown task $TASK" >&2; exit 2 ;;
esac
BUDGET=$(sed -n 's/^ *max_updates: *\([0-9]*\).*/\1/p' "$CONFIG")
CONV="--set model.encoder.type=conv --set model.encoder.layers=6 --set model.encoder.hidden_size=256 \
      --set model.decoder.type=conditional --set model.decoder.bridge=zero"
fresh() { [ "$1" -nt "$2/model.safetensors" ]; }  # an output newer than its model: not tested again
declare -A ROWS=(
    [rnnsearch]=""
    [word-attention]="--set model.decoder.word_attention=attention"
    [contextual-gates]="--set model.decoder.word_attention=gates"
    [conv-encoder]="$CONV"
    [conv-no-positions]="$CONV --set model.encoder.position_embeddings=false"  # ablation: no position embeddings
    [lstm-conditional]="--set model.decoder.type=conditional --set model.decoder.bridge=zero"  # which half lags?
)
for row in rnnsearch word-attention contextual-gates conv-encoder conv-no-positions lstm-conditional; do
    dir="$RUNS/$TASK-$row"
    if ! grep -q "\"updates\": $BUDGET," "$dir/validations.json" 2>/dev/null; then
        resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)
        # shellcheck disable=SC2086
        "$WEAN" train "$CONFIG" --set model_dir="$dir" --set training.precision=$PRECISION ${ROWS[$row]} $resume
    fi
    case $row in
        rnnsearch) outs="results/word-attention results/conv-encoder" ;;  # the base of both tables
        conv-* | lstm-conditional) outs=results/conv-encoder ;;
        *) outs=results/word-attention ;;
    esac
    for out in $outs; do
        fresh "$out/$row.${TESTS[1]}.txt" "$dir" || "$WEAN" test --model "$dir" --system "$row" --out-dir "$out" "${TESTS[@]}"
        if [ "$TASK" = simplification ]; then
            fresh "$out/$row.wikismall-test.txt" "$dir" ||
                "$WEAN" test --model "$dir" --system "$row" --out-dir "$out" --benchmark wikismall-test
        fi
    done
done
if [ "$TASK" = gigaword ]; then  # reference row: the first 8 words of the article (Rush et al.'s prefix baseline)
    for out in results/word-attention results/conv-encoder; do
        awk '{n = NF < 8 ? NF : 8; line = $1; for (i = 2; i <= n; i++) line = line " " $i; print line}' \
            $WEAN_DATA_ROOT/gigaword/test1951.src > "$out/prefix-8.gigaword-test.txt"
        "$WEAN" evaluate --hyp "$out/prefix-8.gigaword-test.txt" --benchmark gigaword-test --json \
            > "$out/prefix-8.gigaword-test.json"
    done
fi
# each row against RNNsearch on the same test sentences: paired bootstrap, 1000 resamples
for table in word-attention conv-encoder; do
    if [ $table = word-attention ]; then rows=(word-attention contextual-gates); else rows=(conv-encoder conv-no-positions lstm-conditional); fi
    for row in "${rows[@]}"; do
        for benchmark in "${TESTS[1]}" $([ "$TASK" = simplification ] && echo wikismall-test); do
            "$WEAN" compare --hyp "results/$table/$row.$benchmark.txt" "results/$table/rnnsearch.$benchmark.txt" \
                --benchmark "$benchmark"
        done
    done | tee "results/$table/$TASK-significance.txt"
done
METRIC=$(sed -n 's/^ *selection_metric: *\([a-z0-9]*\).*/\1/p' "$CONFIG")
for table in word-attention conv-encoder; do
    if [ $table = word-attention ]; then rows=(rnnsearch word-attention contextual-gates); else rows=(rnnsearch conv-encoder conv-no-positions lstm-conditional); fi
    dirs=("${rows[@]/#/$RUNS/$TASK-}")
    labels=$(IFS=,; echo "${rows[*]}")
    "$WEAN" plot "${dirs[@]}" --labels "$labels" --metric "$METRIC" --out "results/$table/$TASK-valid-$METRIC.png" \
        | tee "results/$table/$TASK-convergence.txt"
    "$WEAN" plot "${dirs[@]}" --labels "$labels" --metric loss --out "results/$table/$TASK-valid-loss.png"
done
# The paper's Figures 2 and 3 for the first test sentence: hidden attention, word attention, their
# gated mix and the gate strip 1 - o_i, for the model's own greedy output
case $TASK in
    gigaword) first=$(head -1 $WEAN_DATA_ROOT/gigaword/test1951.src) ;;
    simplification) first=$(head -1 $WEAN_DATA_ROOT/turkcorpus/case_tok/test.src) ;;
esac
"$WEAN" attention --model "$RUNS/$TASK-contextual-gates" --source "$first" \
    --out-dir "results/word-attention/$TASK-figures"
