#!/usr/bin/env bash
# The decoder step compiled by torch.compile against eager (issue 73, part 2): from the repository
# root after `make install`, WEAN_DATA_ROOT set, on an otherwise idle machine. RUNS: where
# results/lib/unguarded_shipped.sh recreates the shipped weights without their pipeline.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-runs}
TEST=$WEAN_DATA_ROOT/turkcorpus/case_detok/test.src
source results/lib/unguarded_shipped.sh
unguarded_shipped "$RUNS/shipped"
export OMP_NUM_THREADS=1
${PYTHON:-python} bench/compiled_step.py --model src/wean/pretrained/simplifier --sentences-file "$TEST" --rounds 5 \
    --out results/bench-compiled-step/default
${PYTHON:-python} bench/compiled_step.py --model "$RUNS/shipped" --sentences-file "$TEST" --rounds 5 \
    --out results/bench-compiled-step/plain
