#!/usr/bin/env bash
# results/wean/concat-init: from the repository root after `make install`; runs go to ${RUNS:-runs}.
# The speed part wants a quiet machine: on 2026-11-27 the two training workers were paused for it
# (kill -STOP, lab/README.md) and the load average let fall first.
set -euo pipefail
export OMP_NUM_THREADS=1
.venv/bin/python results/wean/concat-init/run.py learning
.venv/bin/python results/wean/concat-init/run.py speed
