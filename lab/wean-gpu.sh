#!/usr/bin/env bash
# How the seed-2 and seed-3 runs (and WEAN dot / concat) ran on a lent GPU machine, all at once:
# small LSTMs leave one GPU mostly idle, so six trainings share it. The machine has the image's
# python3 with torch; .devcarry/ (not committed) brings the data and the pure-Python packages it lacks:
#   .devcarry/data/...  the files of ../shared/data that run.sh reads
#   .devcarry/site/     nltk, rouge_score, sacremoses copied from .venv with their dist-info, and a
#                       wean-0.1.0.dist-info/METADATA (wean is run from the checkout, not installed)
#   bash lab/wean-gpu.sh start     set up and start the runs in the background
#   bash lab/wean-gpu.sh status    each run's last log line
#   bash lab/wean-gpu.sh pack DIR  results/wean's new files and each run's logs into DIR/runs.tgz
# Each call to the machine re-sends the working tree, even to a warm machine: a run that starts a
# program while that happens fails (seq2seq-seed2's tests did, and its outputs were lost). So call
# only `status` and `pack` while runs are in flight, and `start` again only on a fresh machine.
set -euo pipefail
RUNS=/tmp/wean-runs
export PYTHONPATH=$PWD/.devcarry/site:$PWD OMP_NUM_THREADS=2 PYTHONUNBUFFERED=1
JOBS=("2 seq2seq-pwkp" "2 wean-pwkp" "3 seq2seq-pwkp" "3 wean-pwkp" "2 wean-dot-pwkp" "2 wean-concat-pwkp")
[ -z "${ONLY:-}" ] || JOBS=("$ONLY")  # ONLY="2 wean-dot-pwkp": that run alone
case "$1" in
start)
    mkdir -p ../shared "$RUNS" .venv/bin
    [ -e "$RUNS/.started" ] || touch "$RUNS/.started"  # pack takes the files of results/wean written since
    ln -sfn "$PWD/.devcarry/data" ../shared/data
    printf '#!/bin/sh\nexec python3 -m wean.cli "$@"\n' > .venv/bin/wean && chmod +x .venv/bin/wean
    ln -sfn "$(command -v python3)" .venv/bin/python
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
    python3 -m pytest -q -x -p no:cacheprovider tests/test_device.py  # the GPU paths, before hours of training
    for job in "${JOBS[@]}"; do
        set -- $job
        RUNS=$RUNS SEED=$1 MODELS=$2 DEVICE=cuda PRECISION=fp32 \
            setsid nohup bash results/wean/run.sh > "$RUNS/$2-seed$1.out" 2>&1 < /dev/null &
    done
    ;;
status)
    for log in "$RUNS"/*.out; do
        echo "$(basename "$log"): $(grep -E 'update|valid|on (turk|wiki)|Error|error' "$log" | tail -1)"
    done
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    ;;
pack)
    files=$(find results/wean -type f -newer "$RUNS/.started")
    tar czf "$2/runs.tgz" $files -C "$RUNS" \
        $(cd "$RUNS" && ls -d */validations.json */train.log */best.json *.out 2>/dev/null)
    ;;
esac
