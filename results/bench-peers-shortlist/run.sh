#!/usr/bin/env bash
# wean's decoding modes (fp32, int8, the vocabulary shortlist, int8 with it) against fairseq, OpenNMT-py,
# Joey NMT and plain PyTorch on one model (bench/peers/README.md; issue 73).
# Run from the repository root after `make install`, on a machine with nothing else running.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
PEERS=${PEERS:-.peers}
bash bench/peers/install.sh "$PEERS"
"$PYTHON" bench/peers/run.py --rounds 3 --peers "$PEERS" --work "${RUNS:-runs}/bench-peers" \
    --out results/bench-peers-shortlist
sha256sum "${RUNS:-runs}"/bench-peers/data/*.src "${RUNS:-runs}"/bench-peers/data/*.dst | sed "s#  .*/#  #"
