#!/usr/bin/env bash
# Train a recorded run again from the config its table kept, to recover a validation history that
# went with its machine (lab/README.md), and check that training is deterministic: the
# history is kept only if the replay's test output is byte-identical to the recorded one.
#   RUNS=$HOME/wean-runs OMP_NUM_THREADS=1 bash lab/replay.sh OUT RUN SYSTEM BENCHMARK [wean test options]
# e.g. lab/replay.sh results/lcsts/part2 lcsts-part2-wean-seed1 wean-seed1 lcsts-test
# OUT/configs/RUN.yaml is the config as it trained; OUT/SYSTEM.BENCHMARK.txt the recorded output.
# The replay trains in $RUNS/replay/RUN (run it again to resume) and is tested into that folder.
set -euo pipefail
OUT=${1:?results folder} RUN=${2:?run name} SYSTEM=${3:?system name} BENCHMARK=${4:?benchmark}
shift 4
source results/lib/converge.sh  # train_to_end; RUNS
if grep -qx "$RUN" lab/trained-on-avx2.txt; then
    # the kernels of the machine it trained on: fp32 training differs with the kernels
    # (results/spm/converged/isa-replay)
    export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
fi
dir=$RUNS/replay/$RUN
kept_output=$OUT/$SYSTEM.$BENCHMARK.txt
recorded "$dir" "$OUT" && test -e "$kept_output" || { echo "$RUN: not recorded in $OUT" >&2; exit 1; }
train_to_end "$OUT/configs/$RUN.yaml" "$dir"  # the kept config as it is: no schedule overrides
.venv/bin/wean test --model "$dir" --system "$SYSTEM" --out-dir "$dir/test" --benchmark "$BENCHMARK" "$@"
if cmp -s "$dir/test/$SYSTEM.$BENCHMARK.txt" "$kept_output"; then
    mkdir -p "$OUT/validations"
    cp "$dir/validations.json" "$(history_of "$OUT" "$RUN")"
    echo "$RUN: replayed, test output byte-identical to $kept_output ($(sha256sum < "$kept_output" | cut -c1-16)); history kept"
else
    date -u +%FT%TZ > "$dir/differs"  # lab/queue.sh does not try it again
    echo "$RUN: replayed, but its test output differs from $kept_output: history not kept" >&2
    exit 1
fi
