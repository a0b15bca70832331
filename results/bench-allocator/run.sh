#!/usr/bin/env bash
# Training speed under tcmalloc and jemalloc against glibc's allocator (README.md). Needs Debian's
# libtcmalloc-minimal4 and libjemalloc2 (an allocator not installed is skipped); run on a quiet
# machine: pause background training first (lab/README.md).
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
cd "$(dirname "$0")/../.."
cd bench
OMP_NUM_THREADS=1 "$PYTHON" allocator_speed.py --rounds 3 --updates 50 --log-every 10 \
    --out ../results/bench-allocator
