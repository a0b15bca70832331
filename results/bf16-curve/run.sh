#!/usr/bin/env bash
# bf16 autocast against fp32 in training, three seeds each (issue 94: the opt-in bf16 mode's
# validation curve before any speed claim): the peer benchmark's model (bench/peers/configs/wean.yaml)
# on its synthetic simplification corpus (bench/peers/corpus.py, a learnable deterministic task),
# 600 updates, validated every 100. Run from the repository root after `make install`, on a CPU
# with AVX512-BF16 or AMX (elsewhere bf16 is refused), nothing else running.
set -euo pipefail
PYTHON=${PYTHON:-python}
WEAN=${WEAN:-wean}
RUNS=${RUNS:-runs}
OUT=${OUT:-results/bf16-curve}  # the Xeon run of the README: OUT=results/bf16-curve/xeon
WORK=$RUNS/bf16-curve
test -e "$WORK/data/train.src" || "$PYTHON" bench/peers/corpus.py --out "$WORK/data"
sed "s#@DATA@#$WORK/data#; s#@RUN@#$WORK/unused#" bench/peers/configs/wean.yaml > "$WORK/wean.yaml"
for seed in 1 2 3; do
    for precision in fp32 bf16; do
        run=$WORK/$precision-seed$seed
        test -e "$OUT/validations-$precision-seed$seed.json" && continue  # done before
        OMP_NUM_THREADS=2 "$WEAN" train "$WORK/wean.yaml" --overwrite --set model_dir="$run" \
            --set training.seed=$seed --set training.precision=$precision --set training.max_updates=600 \
            --set training.max_epochs=2 --set training.validate_every=100 --set training.kernels=onednn
        cp "$run/validations.json" "$OUT/validations-$precision-seed$seed.json"
    done
done
for metric in loss bleu; do
    "$WEAN" plot "$OUT"/validations-fp32-seed{1,2,3}.json "$OUT"/validations-bf16-seed{1,2,3}.json \
        --labels fp32-1,fp32-2,fp32-3,bf16-1,bf16-2,bf16-3 --metric $metric --out "$OUT/curve-$metric.png"
done
sha256sum "$WORK"/data/*.src "$WORK"/data/*.dst | sed "s#  .*/#  #"
