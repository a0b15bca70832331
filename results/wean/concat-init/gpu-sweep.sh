#!/usr/bin/env bash
# WEAN concat's initialisation, chosen on validation data before its rows train (README.md): at
# results/wean/converged-cpu's scale, concat with W_q and W_e drawn from U(-r, r) for each r below
# (0: every weight's U(-0.1, 0.1), the presets' start), seed 1, the fused kernel, side by side on
# one lent GPU, 400 updates each (cut at SECONDS_EACH), validated every 100 on WikiLarge valid
# (loss, greedy BLEU, the table's selection metric). choose_range.py then picks the r with the best
# BLEU and writes it to chosen-range.txt here, which the concat rows read
# (results/wean/converged/run.sh), so that `gpu.sh start` can follow in the same call:
#   bash results/wean/concat-init/gpu-sweep.sh && bash lab/gpu.sh start wean-cpu-concat:1:wean-concat && ...
# On the device tool, carry [".devcarry"] (`bash lab/gpu.sh carry` first). Back in $OUT:
# sweep-R.log (the training log) and sweep-R.json (its validations) for each R, chosen-range.txt.
# A rehearsal without a GPU (slow): PYTHON=python DEVICE=cpu UPDATES=2 EVERY=1 VALID=20 RANGES="0 0.5".
set -u
HERE=$PWD/results/wean/concat-init
PYTHON=${PYTHON:-python3}
BASE=/tmp/wean-sweep; mkdir -p $BASE/tree; tar xzf .devcarry/carry.tgz -C $BASE
cp -r src configs $BASE/tree/; cd $BASE/tree || exit 1; ln -sfn $BASE/data data
export PYTHONPATH=$BASE/tree/src:$BASE/site PYTHONUNBUFFERED=1
OUT=${OUT:-$BASE/out}; mkdir -p "$OUT"
# results/wean/converged/run.sh's cpu scale
SCALE="--set data.tokenizer.type=bpe --set data.tokenizer.vocab_size=8000 --set data.max_tokens=80 \
       --set model.encoder.layers=1 --set model.decoder.layers=1"
for r in ${RANGES:-0 0.3 0.5 1.0}; do
    # shellcheck disable=SC2086
    timeout "${SECONDS_EACH:-240}" "$PYTHON" -m wean train configs/wean-pwkp.yaml --set model_dir=$BASE/sweep-$r $SCALE \
        --set model.output_layer.score=concat --set model.output_layer.concat_kernel=fused \
        --set model.output_layer.concat_init_range="$r" --set training.seed=1 --set training.precision=fp32 \
        --set training.max_updates="${UPDATES:-400}" --set training.validate_every="${EVERY:-100}" \
        --set training.max_valid_sentences="${VALID:-0}" --set training.log_every=20 \
        --set training.device="${DEVICE:-cuda}" > "$OUT/sweep-$r.log" 2>&1 &
done
wait
for r in ${RANGES:-0 0.3 0.5 1.0}; do
    cp "$BASE/sweep-$r/validations.json" "$OUT/sweep-$r.json" 2>/dev/null || echo "sweep $r: no validations"
    grep '^validation' "$OUT/sweep-$r.log" | sed "s/^/r = $r: /"
done
"$PYTHON" "$HERE/choose_range.py" "$OUT" --write "$OUT/chosen-range.txt" && cp "$OUT/chosen-range.txt" "$HERE/chosen-range.txt"
