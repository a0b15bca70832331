# WEAN concat's training speed on a lent GPU (the CPU-scale and paper-sized configs), against general,
# with its chunked kernel and with the fused one (model.output_layer.concat_kernel; the fused rows'
# first updates include torch.compile's work, so compare the later windows).
# On the device tool, carry [".devcarry"] (lab/gpu.sh carry): bash results/wean/converged-cpu/gpu-concat-speed.sh
# tokens/s: the "update N ... tokens/s" lines of each run's train.log, at the end of $OUT/concat-speed.log.
# ONLY="NAME ..." runs those rows alone (2026-11-28, an H100: cpu-scale-general cpu-scale-concat-fused
# paper-concat-fused; results/wean/concat-init).
set -u
BASE=/tmp/wc; mkdir -p $BASE/tree; tar xzf .devcarry/carry.tgz -C $BASE
cp -r src configs $BASE/tree/; cd $BASE/tree; ln -s $BASE/data data
export PYTHONPATH=$BASE/tree/src:$BASE/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader -l 5 > $OUT/memory.log 2>&1 &
SCALE="--set data.tokenizer.type=bpe --set data.tokenizer.vocab_size=8000 --set data.max_tokens=80 --set model.encoder.layers=1 --set model.decoder.layers=1"
COMMON="--set training.validate_every=100000 --set training.device=cuda --set training.seed=1"
train() {
    name=$1 seconds=$2; shift 2
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || return 0
    echo "== $name $(date -u +%T)"
    ran+=" $name"
    timeout $seconds python3 -m wean train configs/wean-pwkp.yaml --set model_dir=/tmp/$name $COMMON "$@" 2>&1 | grep -v '^warning'
}
ran=""
{
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader  # alone on the GPU?
train cpu-scale-general 35 $SCALE --set training.max_updates=100 --set training.log_every=10
train cpu-scale-concat 60 $SCALE --set model.output_layer.score=concat --set training.max_updates=100 --set training.log_every=5
train cpu-scale-concat-fused 120 $SCALE --set model.output_layer.score=concat --set model.output_layer.concat_kernel=fused \
    --set training.max_updates=300 --set training.log_every=10
train paper-concat 45 --set model.output_layer.score=concat --set training.max_updates=40 --set training.log_every=2
train paper-concat-fused 100 --set model.output_layer.score=concat --set model.output_layer.concat_kernel=fused \
    --set training.max_updates=200 --set training.log_every=5
echo "== end $(date -u +%T)"
for name in $ran; do echo "== $name"; grep -E 'update|tokens' "/tmp/$name/train.log"; done
} 2>&1 | tee $OUT/concat-speed.log
