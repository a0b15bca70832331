#!/usr/bin/env bash
# wean with oneDNN's products (the default kernels) and with PyTorch's own (kernels: blas) against
# the two fastest peers of results/bench-peers, OpenNMT-py and fairseq, on one model
# (bench/peers/README.md; issue 73). Run from the repository root after `make install`, on a
# machine with nothing else running.
set -euo pipefail
PYTHON=${PYTHON:-python}  # the active environment's, unless set
PEERS=${PEERS:-.peers}
bash bench/peers/install.sh "$PEERS"
"$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
    --work "${RUNS:-runs}/bench-peers-kernels" --out results/bench-peers-kernels
sha256sum "${RUNS:-runs}"/bench-peers-kernels/data/*.src "${RUNS:-runs}"/bench-peers-kernels/data/*.dst | sed "s#  .*/#  #"
