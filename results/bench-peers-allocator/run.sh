#!/usr/bin/env bash
# Training keeps freed memory (src/wean/training/allocator.py; issue 73): its own ratio against the
# commit before it, then wean against OpenNMT-py and fairseq on the peers' model (bench/peers/README.md).
# Run from the repository root after `make install`, on a machine with nothing else running;
# BEFORE: a checkout of 6a5e88f (the commit before the change).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
PEERS=${PEERS:-.peers}
BEFORE=${BEFORE:-../wean-before-allocator}
OUT=results/bench-peers-allocator
OMP_NUM_THREADS=1 "$PYTHON" bench/revisions.py --old "$BEFORE" --new . --rounds 5 --updates 40 --out "$OUT/revisions"
mv "$OUT/revisions/metrics.json" "$OUT/revisions.json" && rmdir "$OUT/revisions"
bash bench/peers/install.sh "$PEERS"
"$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
    --work "${RUNS:-runs}/bench-peers-allocator" --out "$OUT"
sha256sum "${RUNS:-runs}"/bench-peers-allocator/data/*.src "${RUNS:-runs}"/bench-peers-allocator/data/*.dst | sed "s#  .*/#  #"
