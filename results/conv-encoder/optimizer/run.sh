#!/usr/bin/env bash
# Is the conv encoder's attention by position an artefact of Adam? The Gigaword conv row of
# results/conv-encoder (configs/rnnsearch-gigaword.yaml: 2,000 updates, seed 1, fp32) trained
# twice, with the same data, model, initialization and batches:
#   adam: Adam 1e-3, clip 5 on the loss per target token (every row of every table here)
#   sgd:  fairseq-lua's recipe for this encoder (train.lua): plain SGD 0.1, clip 25, both per
#         sentence, each convolution's gradient scaled by 1/sqrt(fan-in) (training.optimizer: sgd)
# then tested (beam 10) and probed (probe_attention.py). Run from the repository root after
# `make install`; run it again to resume. RUNS holds checkpoints (never committed).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
source results/lib/record.sh  # keep_run: the config (without machine paths) and validation history
RUNS=${RUNS:-runs}
OUT=results/conv-encoder/optimizer
CONFIG=configs/rnnsearch-gigaword.yaml
test -e data/gigaword/train.src || "$WEAN" prepare gigaword --out data/gigaword
CONV="--set model.encoder.type=conv --set model.encoder.layers=6 --set model.encoder.hidden_size=256 \
      --set model.decoder.type=conditional --set model.decoder.bridge=zero --set training.precision=fp32"
declare -A OPTIMIZER=(
    [adam]="--set training.optimizer=adam"
    [sgd]="--set training.optimizer=sgd --set training.learning_rate=0.1 --set training.clip_grad_norm=25 \
           --set training.loss_per=sentence"
)
train() {  # ROW: train to the config's budget (resumes), test
    local dir="$RUNS/conv-optimizer-$1"
    if ! grep -q '"updates": 2000,' "$dir/validations.json" 2>/dev/null; then
        local resume; resume=$(test -e "$dir/checkpoints/latest" && echo --resume || true)
        # shellcheck disable=SC2086
        "$WEAN" train "$CONFIG" --set model_dir="$dir" $CONV ${OPTIMIZER[$1]} $resume > "$dir.log" 2>&1
    fi
    "$WEAN" test --model "$dir" --system "conv-$1" --out-dir "$OUT" --benchmark gigaword-test
    keep_run "$dir" "$OUT"
}
mkdir -p "$RUNS"
train adam & adam=$!
train sgd & sgd=$!
wait $adam; wait $sgd  # one thread each, side by side
"$WEAN" compare --hyp "$OUT/conv-sgd.gigaword-test.txt" "$OUT/conv-adam.gigaword-test.txt" \
    --benchmark gigaword-test | tee "$OUT/significance.txt"
"$PYTHON" results/conv-encoder/probe_attention.py "$RUNS/conv-optimizer-adam" "$RUNS/conv-optimizer-sgd" \
    | tee "$OUT/attention-probe.txt"
for metric in loss rouge2; do
    plot_kept "$OUT" "$metric" "$OUT/valid-$metric.png" adam,sgd conv-optimizer-adam conv-optimizer-sgd
done
