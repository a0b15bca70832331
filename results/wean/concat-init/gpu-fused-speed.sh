#!/usr/bin/env bash
# WEAN concat's fused kernel (model.output_layer.concat_kernel: fused) timed in training on a lent
# GPU, against general at results/wean/converged-cpu's scale, and at the paper's sizes; alone on the
# GPU, one run after another, no validation. On the device tool, from the repository root, carry
# [".devcarry"] (`bash results/lib/gpu.sh carry` first): bash results/wean/concat-init/gpu-fused-speed.sh
# Back in $OUT: gpu-fused-speed.log (the runs' stdout, then each train.log's "update N ... tokens/s"
# lines). The first logged window of each run holds start-up and, for fused, torch.compile's work.
set -u
R=$PWD BASE=/tmp/wc
mkdir -p $BASE/tree && tar xzf "$R/.devcarry/carry.tgz" -C $BASE && cp -r "$R/src" "$R/configs" $BASE/tree/
cd $BASE/tree || exit 1
export PYTHONPATH=$BASE/tree/src:$BASE/site PYTHONUNBUFFERED=1
SCALE="--set data.tokenizer.type=bpe --set data.tokenizer.vocab_size=8000 --set data.max_tokens=80 \
       --set model.encoder.layers=1 --set model.decoder.layers=1"
COMMON="--set training.validate_every=100000 --set training.device=cuda --set training.seed=1"
train() {  # NAME SECONDS FLAGS...
    local name=$1 seconds=$2; shift 2
    echo "== $name $(date -u +%T)"
    # shellcheck disable=SC2086
    timeout "$seconds" python3 -m wean train configs/wean-pwkp.yaml --set model_dir=/tmp/$name $COMMON "$@" 2>&1 | grep -v '^warning'
}
{
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader  # alone on it?
    # shellcheck disable=SC2086
    train cpu-scale-general 40 $SCALE --set training.max_updates=100 --set training.log_every=10
    # shellcheck disable=SC2086
    train cpu-scale-concat-fused 100 $SCALE --set model.output_layer.score=concat \
        --set model.output_layer.concat_kernel=fused --set training.max_updates=300 --set training.log_every=10
    train paper-concat-fused 90 --set model.output_layer.score=concat \
        --set model.output_layer.concat_kernel=fused --set training.max_updates=200 --set training.log_every=5
    echo "== end $(date -u +%T)"
    for name in cpu-scale-general cpu-scale-concat-fused paper-concat-fused; do
        echo "== $name"; grep -E 'update|tokens' /tmp/$name/train.log
    done
} 2>&1 | tee "${OUT:?}/gpu-fused-speed.log"
