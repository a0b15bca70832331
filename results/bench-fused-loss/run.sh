#!/usr/bin/env bash
# A fused cross-entropy gradient against PyTorch's log_softmax + nll_loss (issue 73, training):
# from the repository root after `make install`, on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
OMP_NUM_THREADS=1 ${PYTHON:-python} bench/fused_cross_entropy.py --rounds 5 --out results/bench-fused-loss
