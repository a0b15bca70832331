#!/usr/bin/env bash
# wean's training and decoding speed as batch size (16/64/256) and source length (10/30/100)
# grow: bench/scaling.py, 3 rounds, 2 threads. Run from the repository root after `make install`,
# with other work stopped (`kill -STOP`).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
"$PYTHON" bench/scaling.py --rounds 3 --out results/bench-scaling | tee results/bench-scaling/log.txt
