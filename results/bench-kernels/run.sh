#!/usr/bin/env bash
# The float32 products of search through oneDNN against PyTorch's own (issue 73, part 2): from the
# repository root after `make install`, WEAN_DATA_ROOT set, on an otherwise idle machine. RUNS:
# where results/lib/unguarded_shipped.sh recreates the shipped weights without their pipeline.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-runs}
OUT=results/bench-kernels
TURK=$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src
WIKI=$WEAN_DATA_ROOT/wikismall/test.src
source results/lib/unguarded_shipped.sh
unguarded_shipped "$RUNS/shipped"
bench() {  # bench NAME THREADS MODEL FILE BENCHMARK [--no-plain-text]
    local name=$1 threads=$2 model=$3 file=$4 benchmark=$5
    shift 5
    OMP_NUM_THREADS=$threads ${PYTHON:-python} bench/kernels_speed.py --model "$model" --sentences-file "$file" \
        --benchmark "$benchmark" --rounds 5 --out "$OUT/$name" "$@"
}
bench default-turkcorpus 1 src/wean/pretrained/simplifier "$TURK" turkcorpus-test
bench default-wikismall 1 src/wean/pretrained/simplifier "$WIKI" wikismall-test --no-plain-text
bench plain-turkcorpus 1 "$RUNS/shipped" "$TURK" turkcorpus-test
bench plain-wikismall 1 "$RUNS/shipped" "$WIKI" wikismall-test --no-plain-text
bench default-turkcorpus-2-threads 2 src/wean/pretrained/simplifier "$TURK" turkcorpus-test
sha256sum "$TURK" "$WIKI" | sed "s#  .*/#  #"
