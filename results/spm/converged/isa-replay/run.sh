#!/usr/bin/env bash
# +sGate seed 1 of results/spm/converged trained again from its kept config (lab/replay.sh),
# and one epoch of it with AVX2 kernels and with this machine's own, to see whether the CPU's
# instruction set changes fp32 training. From the repository root after `make install`:
#   RUNS=$HOME/wean-runs OMP_NUM_THREADS=1 bash results/spm/converged/isa-replay/run.sh
# The README's replay ran on an AVX-512 machine before replay.sh held the runs of
# lab/trained-on-avx2.txt to AVX2 kernels; today replay.sh does, so the first step below
# is the AVX2 replay (to see the AVX-512 one again, remove this run from that list first).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
RUNS=${RUNS:-runs}
export OMP_NUM_THREADS=1
bash lab/replay.sh results/spm/converged spm-converged-sgate-seed1 sgate-seed1 gigaword-test || true
config=results/spm/converged/configs/spm-converged-sgate-seed1.yaml
one_epoch="--set training.max_epochs=1 --set training.max_updates=0 --set training.validate_every=0"
# shellcheck disable=SC2086
ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
    "$WEAN" train "$config" --set model_dir="$RUNS/isa-check/avx2-epoch1" $one_epoch
# shellcheck disable=SC2086
"$WEAN" train "$config" --set model_dir="$RUNS/isa-check/native-epoch1" $one_epoch
