#!/usr/bin/env bash
# The shipped simplifier's guard against plain beam 5 of the same model on TurkCorpus test (issue
# 94, item 4). From the repository root after `make install`, on a quiet machine, with the data
# root set (WEAN_DATA_ROOT; `make` sets it to ../shared/data). before.json: the same script run on
# the commit before the change (a worktree of it first on PYTHONPATH).
set -euo pipefail
cd bench
OMP_NUM_THREADS=1 ../.venv/bin/python guard_cost.py --rounds 3 --out ../results/bench-guard-cost
