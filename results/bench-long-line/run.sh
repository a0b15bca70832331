#!/usr/bin/env bash
# A 20,000-word paragraph on one line against its 1,447 sentences one per line, with the shipped
# simplifier (issue 93, item 10). Run from the repository root after `make install`, on a quiet
# machine.
set -euo pipefail
.venv/bin/python bench/long_line.py --words 20000 --rounds 3 --out results/bench-long-line
