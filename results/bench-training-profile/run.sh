#!/usr/bin/env bash
# Where a training update's time goes on the peer benchmark's model (issue 94, item 2). From the
# repository root after `make install`, on a quiet machine.
set -euo pipefail
cd bench
OMP_NUM_THREADS=1 ../.venv/bin/python training_profile.py --updates 60 --out ../results/bench-training-profile
