#!/usr/bin/env bash
# Training throughput on 1 process (1 thread), 2 processes under torchrun (1 thread each) and 1
# process with 2 threads, on this machine: bench/distributed.py, 3 interleaved rounds. Run from the
# repository root after `make install`, with other work stopped.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
"$PYTHON" bench/distributed.py --system 1:fp32 --system 2:fp32 --system 1:fp32:2 \
    --rounds 3 --updates 80 --out results/bench-distributed | tee results/bench-distributed/log.txt
