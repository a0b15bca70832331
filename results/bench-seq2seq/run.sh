#!/usr/bin/env bash
# Training tokens/s and beam-5 sentences/s of wean's baseline encoder-decoder against the plain
# PyTorch reference (bench/reference_seq2seq.py): bench/seq2seq_speed.py, 5 interleaved rounds
# after a warm-up, two threads. Run from the repository root after `make install`, with other
# work stopped (README.md: how, beside background training).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
"$PYTHON" bench/seq2seq_speed.py --rounds 5 --out results/bench-seq2seq
