#!/usr/bin/env bash
# The simplifier's training recipe (results/asset-simplifier, pointer-generator seed 1), 300 updates,
# with the tree before this lever (OLD: a checkout of its parent commit) and this one, in ABBA
# order on two threads; each run's speed is the mean tokens/s of its log's windows after update
# 100. From the repository root after `make install`, with `runs/asset-data` made by
# results/asset-simplifier/make_data.py, on a quiet machine.
set -euo pipefail
OLD=${OLD:?a checkout of the commit before the lever}
ORDER=${ORDER:-"old new new old"}
RUN=$(mktemp -d)
for tree in $ORDER; do
    src=src; [ "$tree" = old ] && src=$OLD/src
    rm -rf "$RUN/model"; date -u +%H:%M:%SZ
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 PYTHONPATH=$src .venv/bin/python -m wean train \
        results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml --set model_dir="$RUN/model" \
        --set training.max_updates=300 --set training.validate_every=100000 > "$RUN/$tree.out" 2>&1
    .venv/bin/python - "$tree" "$RUN/model/train.log" <<'PY'
import re, statistics, sys
rates = [(int(m[1]), float(m[2])) for m in re.finditer(r"update (\d+) loss \S+ tokens/s (\d+)", open(sys.argv[2]).read())]
losses = re.findall(r"update 300 loss (\S+)", open(sys.argv[2]).read())
print(sys.argv[1], f"{statistics.mean(r for u, r in rates if u > 100):.1f} tokens/s", "loss at 300:", losses[-1] if losses else "?")
PY
done
rm -rf "$RUN"
