#!/usr/bin/env bash
# The shipped simplifier's generation.block_ngram_repeat, swept on the 300 TurkCorpus tune
# sentences that chose its control values. Run from the repository root after `make install`.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
"$PYTHON" results/controllable/ngram-blocking/sweep.py --out results/controllable/ngram-blocking \
    | tee results/controllable/ngram-blocking/log.txt
