#!/usr/bin/env bash
# Word attention and contextual gates (Wu et al. 2018) against RNNsearch, and the convolutional
# encoder (Gehring et al. 2016) against the LSTM encoder under the same conditional decoder, each
# row trained to early stopping, 3 seeds (issue 24):
#   results/word-attention/converged/run.sh gigaword         (configs/rnnsearch-gigaword.yaml)
#   results/word-attention/converged/run.sh simplification   (configs/rnnsearch-simplification.yaml)
# Every row is the task's config (its model scale, the one of the 2,000-update study) plus the keys
# below, in fp32, under results/lib/converge.sh's schedule. Word-attention rows and their outputs go
# to results/word-attention/converged, the conv-encoder table to results/conv-encoder/converged
# (RNNsearch is in both). Run from the repository root after `make install`; run it again to resume.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
source results/lib/converge.sh
TASK=${1:?gigaword or simplification}
CONFIG=configs/rnnsearch-$TASK.yaml
case $TASK in
    gigaword)
        prepare gigaword
        BENCHMARKS=(gigaword-test)
        ALSO_TESTED="" ;;
    simplification)
        BENCHMARKS=(turkcorpus-test wikismall-test)  # turkcorpus-test: plain text (wean test's default)
        ALSO_TESTED=identical_to_source ;;  # the share left unchanged, which SARI gaps have followed
    *) echo "unknown task $TASK" >&2; exit 2 ;;
esac
CONV="--set model.encoder.type=conv --set model.encoder.layers=6 --set model.encoder.hidden_size=256 \
      --set model.decoder.type=conditional --set model.decoder.bridge=zero"
declare -A CHANGE=(
    [rnnsearch]=""
    [word-attention]="--set model.decoder.word_attention=attention"
    [contextual-gates]="--set model.decoder.word_attention=gates"
    [conv-encoder]="$CONV"
    [lstm-conditional]="--set model.decoder.type=conditional --set model.decoder.bridge=zero"
)
declare -A TABLES=([word-attention]="rnnsearch word-attention contextual-gates"
                   [conv-encoder]="rnnsearch lstm-conditional conv-encoder")
out_dirs() {
    case $1 in
        rnnsearch) echo results/word-attention/converged results/conv-encoder/converged ;;
        conv-encoder | lstm-conditional) echo results/conv-encoder/converged ;;
        *) echo results/word-attention/converged ;;
    esac
}
for seed in $SEEDS; do
    for row in ${ROWS:-rnnsearch word-attention contextual-gates lstm-conditional conv-encoder}; do
        dir="$RUNS/$TASK-converged-$row-seed$seed"
        outs=($(out_dirs "$row"))
        [ "$STAGE" = list ] && { echo "$seed $row $dir ${outs[-1]}"; continue; }
        ! recorded "$dir" "${outs[-1]}" || continue  # recorded in the last of its tables: in all of them
        # shellcheck disable=SC2086
        train_row "$CONFIG" "$dir" --set training.precision=fp32 ${CHANGE[$row]} --set training.seed="$seed"
        for out in "${outs[@]}"; do
            for benchmark in "${BENCHMARKS[@]}"; do
                "$WEAN" test --model "$dir" --system "$row-seed$seed" --out-dir "$out" --benchmark "$benchmark" \
                    --device "$DEVICE"
            done
            case $row in  # the conv table's question: does its attention follow words or positions?
                conv-encoder | lstm-conditional) "$PYTHON" results/conv-encoder/probe_attention.py "$dir" \
                    > "$out/$TASK-attention-probe-$row-seed$seed.txt" ;;
            esac
            keep_run "$dir" "$out"
        done
    done
done
[ "$STAGE" = all ] || exit 0
# per table, per seed: each row against its base on the same test sentences (paired bootstrap);
# REPORT_TABLES=word-attention (with ROWS of that table) reports one table before the other's rows finish
for table in ${REPORT_TABLES:-word-attention conv-encoder}; do
    read -r -a rows <<< "${TABLES[$table]}"
    out=results/$table/converged
    for seed in $SEEDS; do
        for row in "${rows[@]:1}"; do
            for benchmark in "${BENCHMARKS[@]}"; do
                "$WEAN" compare --hyp "$out/$row-seed$seed.$benchmark.txt" "$out/${rows[0]}-seed$seed.$benchmark.txt" \
                    --benchmark "$benchmark" --metrics "+$ALSO_TESTED"
            done
        done
        [ "$table" = word-attention ] || for benchmark in "${BENCHMARKS[@]}"; do  # conv against the LSTM encoder
            "$WEAN" compare --hyp "$out/conv-encoder-seed$seed.$benchmark.txt" \
                "$out/lstm-conditional-seed$seed.$benchmark.txt" --benchmark "$benchmark" --metrics "+$ALSO_TESTED"
        done
    done | tee "$out/$TASK-significance.txt"
    METRIC=$(sed -n 's/^ *selection_metric: *\([a-z0-9]*\).*/\1/p' "$CONFIG")
    for seed in $SEEDS; do
        runs=("${rows[@]/#/$TASK-converged-}")
        labels=$(IFS=,; echo "${rows[*]}")
        plot_kept "$out" "$METRIC" "$out/$TASK-valid-$METRIC-seed$seed.png" "$labels" "${runs[@]/%/-seed$seed}" \
            | tee "$out/$TASK-convergence-seed$seed.txt"
    done
done
# simplification, every run of both tables: what their changed outputs are made of (mangled
# non-ASCII characters, looping spans, and SARI with the mangled ones restored; the README)
[ "$TASK" = simplification ] || exit 0
out=results/word-attention/converged
"$PYTHON" results/lib/changed_outputs.py turkcorpus-test \
    "$out"/{rnnsearch,word-attention,contextual-gates}-seed?.turkcorpus-test.txt \
    results/conv-encoder/converged/{lstm-conditional,conv-encoder}-seed?.turkcorpus-test.txt \
    > "$out/simplification-changed-outputs.txt"
