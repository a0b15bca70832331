#!/usr/bin/env bash
# Training updates/s of the word-attention and conv-encoder tables' rows with the decoder's LSTM
# unrolled over the teacher-forced target (UnrolledLSTM) against one nn.LSTM call per step:
# bench/decoder_speed.py, 3 interleaved rounds of 6 updates, one thread. Needs data/gigaword
# (`wean prepare gigaword`) for the Gigaword lengths. Run from the repository root after
# `make install`, with other work stopped.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
test -e data/gigaword/train.src || "$WEAN" prepare gigaword --out data/gigaword
OMP_NUM_THREADS=1 "$PYTHON" bench/decoder_speed.py --rounds 3 --updates 6 --out results/bench-decoder-speed
