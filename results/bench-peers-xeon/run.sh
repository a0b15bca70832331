#!/usr/bin/env bash
# wean against OpenNMT-py and fairseq on a 2-core Intel Xeon with AVX-512, AVX512-BF16 and AMX
# (issue 94: every CPU family the project's machines provide), the peers' model and corpus
# (bench/peers/README.md), kernels chosen by measurement (auto, the default) beside oneDNN's and
# PyTorch's own, and bf16 training. Then where a training update's time goes here, per kernels.
# Run from the repository root after `make install`, on a machine with nothing else running.
set -euo pipefail
PYTHON=${PYTHON:-python}  # the active environment's, unless set
PEERS=${PEERS:-.peers}
RUNS=${RUNS:-runs}
bash bench/peers/install.sh "$PEERS"
"$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
    --work "$RUNS/bench-peers-xeon" --out results/bench-peers-xeon
sha256sum "$RUNS"/bench-peers-xeon/data/*.src "$RUNS"/bench-peers-xeon/data/*.dst | sed "s#  .*/#  #"
cd bench
for kernels in blas onednn; do
    OMP_NUM_THREADS=1 "$PYTHON" training_profile.py --updates 60 --kernels "$kernels" \
        --out "../results/bench-peers-xeon/profile-$kernels"
done
# the rerun at 8ab126c (calls-per-length/, README "The benchmark at this commit"):
# "$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
#     --work "$RUNS/bench-peers-xeon3" --out results/bench-peers-xeon/calls-per-length
# the rerun at 7e0ee7f (deferred-memory/, README "Each kernel timed in ABBA order"):
# "$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
#     --work "$RUNS/bench-peers-xeon4" --out results/bench-peers-xeon/deferred-memory
# the rerun at 41f194c (output-groups/, README "The benchmark at 41f194c"):
# "$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
#     --work "$RUNS/bench-peers-xeon5" --out results/bench-peers-xeon/output-groups
# the rerun at 456acac (rerun-456acac/, README "The benchmark at 456acac"):
# "$PYTHON" bench/peers/run.py --rounds 3 --toolkits wean,opennmt,fairseq --peers "$PEERS" \
#     --work "$RUNS/bench-peers-xeon6" --out results/bench-peers-xeon/rerun-456acac
