#!/usr/bin/env bash
# Issue 24's convergence runs as two queues, one per CPU core, each a list of table scripts run in
# order (every script resumes where it stopped, and a finished one passes at once):
#   RUNS=/root/wean-runs OMP_NUM_THREADS=1 nohup bash results/lib/queue.sh a > /root/wean-runs/logs/queue-a.log 2>&1 &
#   RUNS=/root/wean-runs OMP_NUM_THREADS=1 nohup bash results/lib/queue.sh b > /root/wean-runs/logs/queue-b.log 2>&1 &
# The paper-sized WEAN table (results/wean/converged/run.sh) is left out: it is a GPU's work.
set -euo pipefail
case ${1:?a or b} in
    a) bash results/spm/converged/run.sh
       bash results/word-attention/converged/run.sh gigaword ;;
    b) bash results/lcsts/part2/run.sh
       bash results/word-attention/converged/run.sh simplification ;;
    *) echo "queue a or b" >&2; exit 2 ;;
esac
