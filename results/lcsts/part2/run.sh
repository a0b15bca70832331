#!/usr/bin/env bash
# The WEAN paper's LCSTS comparison (Seq2seq against WEAN, character level, its Table 4 setting)
# on the 10,336 LCSTS pairs of $WEAN_DATA_ROOT/lcsts/part2 (probably PART II; the paper trains on
# PART I's 2.4M, which we do not have): `wean prepare lcsts-part2` holds 1,000 of them out for
# selection, the test set is PART III's 725 pairs scored >= 3 (lcsts-test). Both presets at one
# scale-down (SCALE), 3 seeds each, to early stopping on validation ROUGE-2 (greedy, character
# level) under results/lib/converge.sh's schedule; tested with beam 5 (the presets' setting).
# Run from the repository root after `make install`; running it again resumes where it stopped.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
source results/lib/converge.sh
OUT=results/lcsts/part2
prepare lcsts-part2
SCALE="--set model.embedding_size=256 --set model.encoder.hidden_size=256 --set model.decoder.hidden_size=256 \
       --set model.dropout=0.3 --set data.train=data/lcsts-part2/train --set data.valid=data/lcsts-part2/valid \
       --set training.log_every=20"
for seed in $SEEDS; do
    for name in ${ROWS:-seq2seq wean}; do
        dir="$RUNS/lcsts-part2-$name-seed$seed"
        [ "$STAGE" = list ] && { echo "$seed $name $dir $OUT"; continue; }
        ! recorded "$dir" "$OUT" || continue
        # shellcheck disable=SC2086
        train_row "configs/$name-lcsts.yaml" "$dir" $SCALE --set training.seed="$seed"
        "$WEAN" test --model "$dir" --system "$name-seed$seed" --out-dir "$OUT" --benchmark lcsts-test \
            --device "$DEVICE"
        keep_run "$dir" "$OUT"
    done
done
[ "$STAGE" = all ] || exit 0
for seed in $SEEDS; do
    "$WEAN" compare --hyp "$OUT/wean-seed$seed.lcsts-test.txt" "$OUT/seq2seq-seed$seed.lcsts-test.txt" \
        --benchmark lcsts-test
done | tee "$OUT/significance.txt"
for seed in $SEEDS; do  # against copying the post's first 18 characters (results/lcsts/run.sh writes it)
    "$WEAN" compare --hyp "$OUT/wean-seed$seed.lcsts-test.txt" results/lcsts/lead-18.lcsts-test.txt \
        --benchmark lcsts-test
done | tee "$OUT/significance-lead-18.txt"
for seed in $SEEDS; do
    plot_kept "$OUT" rouge2 "$OUT/valid-rouge2-seed$seed.png" Seq2seq,WEAN \
        "lcsts-part2-seq2seq-seed$seed" "lcsts-part2-wean-seed$seed" | tee "$OUT/convergence-seed$seed.txt"
done
