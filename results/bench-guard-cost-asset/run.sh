#!/usr/bin/env bash
# The guard of the simplifier shipped by issue 91 (results/asset-simplifier) against plain beam 5 of
# the same model on TurkCorpus test (issue 94, item 4). From the repository root after
# `make install`, on a quiet machine, with the data root set (WEAN_DATA_ROOT).
set -euo pipefail
cd bench
OMP_NUM_THREADS=1 ../.venv/bin/python guard_cost.py --rounds 3 --control chars_ratio=0.8 --out ../results/bench-guard-cost-asset
# the channel's scores read at the targets alone (README, "What it does not show"):
# OMP_NUM_THREADS=1 ../.venv/bin/python ../results/bench-guard-cost-asset/channel_targets_alone.py
# at 456acac (README "At 456acac"):
# OMP_NUM_THREADS=1 ../.venv/bin/python guard_cost.py --rounds 3 --control chars_ratio=0.8 --out ../results/bench-guard-cost-asset/xeon-456acac
