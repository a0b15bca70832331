#!/usr/bin/env bash
# wean serve under 100 concurrent loopback clients: the server before issue 21's decoding changes
# (commit 7e4bd90, the parent of the first), after them, and after them with --quantize int8, on
# the shipped simplifier, interleaved over 3 rounds. Run from the repository root after
# `make install`, with other work stopped.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
BEFORE=${BEFORE:-${RUNS:-runs}/wean-before}
test -d "$BEFORE" || git worktree add --detach "$BEFORE" 7e4bd90
"$PYTHON" bench/server_load.py --system before="$BEFORE" --system after=. --system after-int8=.:int8 \
    --rounds 3 --out results/bench-server | tee results/bench-server/log.txt
# a quarter of the clients give up on each request after 0.5 s; two loads on one server
mkdir -p results/bench-server/hang-up
"$PYTHON" bench/server_load.py --system after=. --hang-up 0.25 --loads 2 --rounds 1 \
    --out results/bench-server/hang-up | tee results/bench-server/hang-up/log.txt
