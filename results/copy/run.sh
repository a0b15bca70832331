#!/usr/bin/env bash
# Copying from the source (issue 69): the pointer-generator (See et al. 2017) against the rows it
# extends, each trained to early stopping under results/lib/converge.sh's schedule, 3 seeds, at the
# scale of the results it is compared with (whose outputs are read from there, not retrained):
#   Gigaword (results/spm/converged's SCALE): EncDec | + pointer-generator | + pointer-generator +
#     coverage (the coverage vector in the attention and the coverage loss, lambda 1, from the
#     first update; See et al. add them for the last 3,000 iterations instead); test1951, beam 20;
#   LCSTS PART II, character level (results/lcsts/part2's SCALE): Seq2seq | WEAN | pointer-generator
#     over Seq2seq's linear layer; lcsts-test, beam 5;
#   the simplifier's configuration (configs/simplifier-control.yaml) on the training pairs without
#     lost-byte mojibake (configs/overlays/kauchak-clean.yaml; also issue 70's retrained simplifier):
#     without | with copying over its WEAN layer; TurkCorpus test (plain text) and WikiSmall test (tokenized).
# Run from the repository root after `make install`; running it again resumes where it stopped.
# ROWS / SEEDS / STAGE as results/lib/converge.sh says; TABLES: which of gigaword lcsts simplifier.
set -euo pipefail
source results/lib/converge.sh
OUT=results/copy
TABLES=${TABLES:-"gigaword lcsts simplifier"}
COPY="--set model.output_layer.type=pointer_generator"
COVERAGE="--set model.decoder.coverage=true --set model.coverage_loss=1.0"

# 1. Gigaword
if [[ " $TABLES " == *" gigaword "* ]]; then
    prepare gigaword
    SCALE="--set model.embedding_size=256 --set model.encoder.hidden_size=128 --set model.encoder.layers=1 \
           --set model.decoder.hidden_size=256 --set model.decoder.layers=1"
    declare -A GIGAWORD=(
        [pg]="$COPY --set model.output_layer.vocabulary_layer=linear"
        [pg-coverage]="$COPY --set model.output_layer.vocabulary_layer=linear $COVERAGE"
    )
    for seed in $SEEDS; do
        for row in ${ROWS:-pg pg-coverage}; do
            [ -n "${GIGAWORD[$row]+set}" ] || continue
            dir="$RUNS/copy-gigaword-$row-seed$seed"
            [ "$STAGE" = list ] && { echo "$seed $row $dir $OUT"; continue; }
            ! recorded "$dir" "$OUT" || continue
            # shellcheck disable=SC2086
            train_row configs/encdec-gigaword.yaml "$dir" $SCALE ${GIGAWORD[$row]} --set training.seed="$seed"
            "$WEAN" test --model "$dir" --system "gigaword-$row-seed$seed" --out-dir "$OUT" \
                --benchmark gigaword-test --device "$DEVICE"
            keep_run "$dir" "$OUT"
        done
    done
fi

# 2. LCSTS PART II
if [[ " $TABLES " == *" lcsts "* ]]; then
    prepare lcsts-part2
    SCALE="--set model.embedding_size=256 --set model.encoder.hidden_size=256 --set model.decoder.hidden_size=256 \
           --set model.dropout=0.3 --set data.train=data/lcsts-part2/train --set data.valid=data/lcsts-part2/valid \
           --set training.log_every=20"
    for seed in $SEEDS; do
        [[ " ${ROWS:-pg} " == *" pg "* ]] || continue
        dir="$RUNS/copy-lcsts-pg-seed$seed"
        [ "$STAGE" = list ] && { echo "$seed pg $dir $OUT"; continue; }
        ! recorded "$dir" "$OUT" || continue
        # shellcheck disable=SC2086
        train_row configs/seq2seq-lcsts.yaml "$dir" $SCALE $COPY --set model.output_layer.vocabulary_layer=linear \
            --set training.seed="$seed"
        "$WEAN" test --model "$dir" --system "lcsts-pg-seed$seed" --out-dir "$OUT" --benchmark lcsts-test \
            --device "$DEVICE"
        keep_run "$dir" "$OUT"
    done
fi

# 3. The simplifier's configuration, with and without copying
if [[ " $TABLES " == *" simplifier "* ]]; then
    declare -A SIMPLIFIER=([plain]="" [pg]="$COPY --set model.output_layer.vocabulary_layer=wean")
    for seed in $SEEDS; do
        for row in ${ROWS:-plain pg}; do
            [ -n "${SIMPLIFIER[$row]+set}" ] || continue
            dir="$RUNS/copy-simplifier-$row-seed$seed"
            [ "$STAGE" = list ] && { echo "$seed $row $dir $OUT"; continue; }
            ! recorded "$dir" "$OUT" || continue
            # shellcheck disable=SC2086
            OVERLAYS=configs/overlays/kauchak-clean.yaml train_row configs/simplifier-control.yaml "$dir" \
                ${SIMPLIFIER[$row]} --set training.seed="$seed"
            for benchmark in turkcorpus-test wikismall-test; do
                # each read as its references are written: TurkCorpus plain text, WikiSmall tokenized
                "$WEAN" test --model "$dir" --system "simplifier-$row-seed$seed" --out-dir "$OUT" \
                    --benchmark "$benchmark" --device "$DEVICE"
            done
            keep_run "$dir" "$OUT"
        done
    done
fi
[ "$STAGE" = all ] || exit 0

# 4. Paired tests per seed against the row each extends, and the odd-generation counts: of every
#    seed whose outputs are in, whatever SEEDS trained (the files are written whole); TABLES=none
#    redoes only these
for seed in 1 2 3; do
    encdec=results/spm/converged/encdec-seed$seed.gigaword-test.txt
    for row in pg pg-coverage; do
        hyp=$OUT/gigaword-$row-seed$seed.gigaword-test.txt
        test -e "$hyp" || continue
        "$WEAN" compare --hyp "$hyp" "$encdec" --benchmark gigaword-test
        "$WEAN" compare --hyp "$hyp" "$encdec" --benchmark gigaword-test --metrics repeated_tokens,length_shortfall
    done
    # what coverage adds to copying, on the same seed
    hyp=$OUT/gigaword-pg-coverage-seed$seed.gigaword-test.txt
    if test -e "$hyp" && test -e "$OUT/gigaword-pg-seed$seed.gigaword-test.txt"; then
        "$WEAN" compare --hyp "$hyp" "$OUT/gigaword-pg-seed$seed.gigaword-test.txt" --benchmark gigaword-test \
            --metrics +repeated_tokens,length_shortfall
    fi
    if test -e "$OUT/lcsts-pg-seed$seed.lcsts-test.txt"; then
        for base in seq2seq wean; do
            "$WEAN" compare --hyp "$OUT/lcsts-pg-seed$seed.lcsts-test.txt" \
                "results/lcsts/part2/$base-seed$seed.lcsts-test.txt" --benchmark lcsts-test
        done
    fi
    for benchmark in turkcorpus-test wikismall-test; do
        hyp=$OUT/simplifier-pg-seed$seed.$benchmark.txt
        test -e "$hyp" || continue
        "$WEAN" compare --hyp "$hyp" "$OUT/simplifier-plain-seed$seed.$benchmark.txt" --benchmark "$benchmark" \
            --metrics +fidelity
    done
done > "$OUT/significance.txt"
for seed in 1 2 3; do
    hyp=$OUT/lcsts-pg-seed$seed.lcsts-test.txt
    if test -e "$hyp"; then
        "$WEAN" compare --hyp "$hyp" results/lcsts/lead-18.lcsts-test.txt --benchmark lcsts-test
    fi
done > "$OUT/significance-lead-18.txt"
