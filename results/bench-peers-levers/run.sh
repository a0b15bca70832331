#!/usr/bin/env bash
# wean's training levers of issue 94 (a decoder loop's weight gradients as one product; the
# cross-entropy taken from the logits in one step; the kernel choice measured on a training
# batch's size) against OpenNMT-py, the fastest peer, on the peers' model (bench/peers/README.md).
# Run from the repository root after `make install`, on a machine with nothing else running.
set -euo pipefail
PYTHON=${PYTHON:-python}  # the active environment's, unless set
PEERS=${PEERS:-.peers}
bash bench/peers/install.sh "$PEERS"
"$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt --peers "$PEERS" \
    --work "${RUNS:-runs}/bench-peers-levers" --out results/bench-peers-levers
sha256sum "${RUNS:-runs}"/bench-peers-levers/data/*.src "${RUNS:-runs}"/bench-peers-levers/data/*.dst | sed "s#  .*/#  #"
