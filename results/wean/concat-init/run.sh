#!/usr/bin/env bash
# results/wean/concat-init: from the repository root after `make install`; runs go to ${RUNS:-runs}.
# The speed part wants a quiet machine: on 2026-11-27 the two training workers were paused for it
# (kill -STOP, lab/README.md) and the load average let fall first.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
export OMP_NUM_THREADS=1
"$PYTHON" results/wean/concat-init/run.py learning
"$PYTHON" results/wean/concat-init/run.py speed
