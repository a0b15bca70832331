#!/usr/bin/env bash
# 1,100 slow-body clients (half trickling, half stalled) against `wean serve` with the shipped
# simplifier, normal requests beside them (issue 93, item 1). From the repository root after
# `make install`, on a quiet machine.
set -euo pipefail
cd bench
../.venv/bin/python slow_bodies.py --slow 1100 --seconds 60 --out ../results/bench-slow-bodies
