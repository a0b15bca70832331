#!/usr/bin/env bash
# Issue 24's rows on a lent GPU machine: each row of each table is one job (lab/jobs.sh),
# PARALLEL of them at a time (5 by default, below), since one small LSTM leaves a GPU mostly idle.
#
# Here, from the repository root:
#   bash lab/gpu.sh pending            the runs not started here, the GPU-only ones first
#                                              (concat at the cpu scale, then the paper-sized WEAN
#                                              table in jobs.sh's gpu_order), then the CPU workers'
#                                              list from its end: `| head -5` for one session
#   bash lab/gpu.sh carry              .devcarry/carry.tgz: ../shared/data's files that the
#                                              tables read, data/ (`wean prepare`), and the pure-Python
#                                              packages the machine's image lacks; .devcarry/resume/:
#                                              $RUNS's runs marked resume-on-gpu (below)
# There (the device tool's run, carry [".devcarry"]):
#   bash lab/gpu.sh start [JOB...]     copy the checkout to /tmp/wean-gpu/tree, check the GPU
#                                              paths (tests/test_device.py), start the jobs under setsid
#                                              (default: the lines of .devcarry/jobs, which `pending`
#                                              can write)
#   bash lab/gpu.sh wait SECONDS       wait until every job is done or SECONDS have passed,
#                                              then pack every finished run into $OUT/runs.tgz
# Here again:
#   bash lab/gpu.sh import DIR/runs.tgz   its outputs into results/ (metrics.json records
#                                              merged), its runs' logs and validations into $RUNS, each
#                                              marked finished-elsewhere (the CPU workers skip it)
# The jobs run in a copy of the checkout: every call of the device tool re-sends the working tree,
# and a run that read a script or wrote results/ while that happened broke (results/wean/gpu.sh).
# A job still running when the machine goes back is lost, but for one: the first unfinished job of
# a GPU-only table (one not in jobs.sh's CPU_TABLES) whose state fits RESUME_LIMIT comes back as
# its run directory's latest checkpoint and selected weights, in parts of at most 15 MiB
# ($OUT/resume.tar.part-*); `import` puts it in $RUNS marked resume-on-gpu, `carry` takes it to
# the next lent GPU and `start` resumes it there (the CPU-scale concat rows: some 53 MiB, by their
# parameter count). The CPU tables' runs are not carried: their workers would take a run left part
# way here.
# Stop the CPU workers before `import` and start them again after it (lab/README.md).
# A rehearsal on a machine without a GPU: DEVICE=cpu PYTHON=.venv/bin/python MAX_EPOCHS=1 on a clone.
set -euo pipefail
source lab/jobs.sh
BASE=${GPU_BASE:-/tmp/wean-gpu}
# 5, not more: a job still running when the session's device time runs out is lost. On
# 2026-11-26, 12 jobs at once kept an H200 97 % busy and each did only 7-10 epochs in about 11
# minutes (lab/README.md), and none had met its early stopping
PARALLEL=${PARALLEL:-5}
DEVICE=${DEVICE:-cuda}
# the device tool brings back 64 MiB in all, 16 MiB a file, and carries 64 MiB, carry.tgz (9 MiB)
# included; a CPU-scale concat run's state is some 53 MiB (3.4 M weights: its selected weights,
# and the latest checkpoint's weights and Adam's two moments)
RESUME_LIMIT=${RESUME_LIMIT:-$((54 * 1024 * 1024))}
RESUME_PART=${RESUME_PART:-15M}

machine() {
    if [ "$DEVICE" = cuda ]; then nvidia-smi --query-gpu=name --format=csv,noheader; else echo "the CPU ($DEVICE)"; fi
}

pending() {  # TABLE... -> the jobs neither recorded in results/ nor started here (but for a run
    # brought back to resume on the next GPU), last first
    job_list "$@" | tac | while read -r job dir out; do
        if { [ ! -e "$dir" ] || [ -e "$dir/resume-on-gpu" ]; } && ! recorded "$dir" "$out"; then echo "$job"; fi
    done
}

snapshot() {  # RUN_DIR STAGING: copy a run that may be training into STAGING/RUN, consistent: its
    # latest checkpoint (not older ones, nor tensorboard) and what that checkpoint's epoch wrote
    local run=$1 staging=$2 name copy tries
    for tries in 1 2 3; do
        name=$(cat "$run/checkpoints/latest") || return 1
        copy=$staging/$(basename "$run")
        rm -rf "$copy" && mkdir -p "$copy/checkpoints"
        find "$run" -maxdepth 1 -type f -exec cp {} "$copy/" \;
        cp -r "$run/checkpoints/$name" "$copy/checkpoints/" 2>/dev/null && echo "$name" > "$copy/checkpoints/latest"
        # consistent if no checkpoint came meanwhile and neither the validations nor a new best
        # (written just before their epoch's checkpoint) are newer than the checkpoint
        if [ "$(cat "$run/checkpoints/latest")" = "$name" ] && [ -e "$copy/checkpoints/$name" ] \
            && ! [ "$copy/best.json" -nt "$copy/checkpoints/$name/training.json" ] \
            && ! [ "$copy/validations.json" -nt "$copy/checkpoints/$name/training.json" ]; then
            return 0
        fi
        sleep 5
    done
    return 1
}

case ${1:?pending, carry, start, wait or import} in
pending)
    # concat at the cpu scale first: some 28 s of training an epoch on an H100, so a run may end
    # within a session's device time, where no paper-sized row has; it needs gpu-sweep.sh's choice
    # of initialisation first (results/wean/concat-init)
    pending wean-cpu-concat | sort -t: -k2,2n
    pending wean | gpu_order
    # shellcheck disable=SC2086
    pending $CPU_TABLES  # from the end of the CPU workers' list (lab/queue.sh): they meet it last
    ;;
carry)
    site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    staging=$(mktemp -d)
    mkdir -p "$staging/shared/data" "$staging/site/wean-0.1.0.dist-info"
    (cd ../shared/data && cp --parents kauchak_v2/train.* wikilarge/valid.* gigaword/test1951.* \
        lcsts/part3_label3plus.* "$staging/shared/data/" && cp -r --parents turkcorpus wikismall "$staging/shared/data/")
    # data/ holds `wean prepare`'s Gigaword split, which only the Gigaword tables read
    if [ -d data ]; then cp -rL data "$staging/data"; else mkdir "$staging/data"; fi
    for package in nltk rouge_score sacremoses; do cp -r "$site/$package" "$site/$package"-*.dist-info "$staging/site/"; done
    printf 'Metadata-Version: 2.1\nName: wean\nVersion: 0.1.0\n' > "$staging/site/wean-0.1.0.dist-info/METADATA"
    find "$staging" -name __pycache__ -prune -exec rm -r {} +
    mkdir -p .devcarry
    mkdir -p .git/info && grep -qx '/.devcarry/' .git/info/exclude 2>/dev/null || echo /.devcarry/ >> .git/info/exclude
    tar czf .devcarry/carry.tgz -C "$staging" .
    rm -r "$staging"
    rm -rf .devcarry/resume && mkdir -p .devcarry/resume
    for marker in "$RUNS"/*/resume-on-gpu; do  # runs that a lent GPU left part way: resumed there
        [ -e "$marker" ] || continue
        run=$(dirname "$marker")
        tar cf ".devcarry/resume/$(basename "$run").tar" --exclude=resume-on-gpu -C "$RUNS" "$(basename "$run")"
    done
    du -ch .devcarry/carry.tgz .devcarry/resume/* 2>/dev/null
    ;;
start)
    shift
    if [ $# -eq 0 ]; then mapfile -t jobs < .devcarry/jobs; set -- "${jobs[@]}"; fi
    # the image's python3 holds torch; an absolute path, symbolic links kept (it may be a virtualenv's)
    python=$(command -v "${PYTHON:-python3}") || { echo "no ${PYTHON:-python3} here" >&2; exit 1; }
    [[ $python = /* ]] || python=$PWD/$python
    rm -rf "$BASE" && mkdir -p "$BASE/tree" "$BASE/runs" "$BASE/logs" "$BASE/done"
    tar xzf .devcarry/carry.tgz -C "$BASE"  # shared/data (the tree's ../shared/data), site/, data/
    for state in .devcarry/resume/*.tar; do  # a run that a lent GPU left part way: its job resumes it
        [ -e "$state" ] || continue
        tar xf "$state" -C "$BASE/runs" && echo "resuming $(basename "$state" .tar)"
    done
    tar cf - --exclude=./.git --exclude=./.devcarry --exclude=./.venv --exclude=./data . | tar xf - -C "$BASE/tree"
    cd "$BASE/tree"
    ln -s "$BASE/data" data
    mkdir -p .venv/bin
    ln -s "$python" .venv/bin/python
    printf '#!/bin/sh\nexec %s -m wean "$@"\n' "$python" > .venv/bin/wean && chmod +x .venv/bin/wean
    export WEAN=$BASE/tree/.venv/bin/wean PYTHON=$BASE/tree/.venv/bin/python
    export PYTHONPATH=$BASE/tree/src:$BASE/site
    if [ "$DEVICE" = cuda ]; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
        "$python" -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
        "$python" -m pytest -q -x -p no:cacheprovider tests/test_device.py  # the GPU paths, before hours of training
    fi
    touch "$BASE/.started"
    printf '%s\n' "$@" > "$BASE/jobs"
    RUNS=$BASE/runs DEVICE=$DEVICE OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 setsid nohup \
        xargs -P "$PARALLEL" -n 1 bash lab/gpu.sh job < "$BASE/jobs" > "$BASE/logs/xargs.out" 2>&1 &
    echo "started $# jobs, $PARALLEL at a time"
    ;;
job)  # TABLE:SEED:ROW, inside $BASE/tree (start's xargs)
    log=$BASE/logs/$2.out
    dir=$(runs_of "${2%%:*}" | awk -v job="$2" '$1 == job {print $2}')
    if run_job "$2" > "$log" 2>&1; then
        echo "trained and tested on $(machine), finished $(date -u +%FT%TZ); its checkpoints stayed there" \
            > "$dir/finished-elsewhere"
    else
        echo "$2 failed: see $log" >&2
    fi
    touch "$BASE/done/$2"
    ;;
wait)
    deadline=$((SECONDS + ${2:?seconds}))
    # files, not processes, say which jobs ended: nothing to get wrong about setsid's forks
    while [ "$(ls "$BASE/done" | wc -l)" -lt "$(wc -l < "$BASE/jobs")" ] && [ $SECONDS -lt $deadline ]; do
        sleep 10
    done
    # a job cut off in its tests has written some outputs (ROW-seedSEED.* in its table's folder,
    # every table script's naming) but brings back no run: its outputs stay behind (2026-11-26)
    unfinished=() resumable=()
    while read -r job; do
        read -r _ dir out < <(RUNS=$BASE/runs runs_of "${job%%:*}" | awk -v job="$job" '$1 == job')
        IFS=: read -r table seed row <<< "$job"
        [ ! -e "$dir/finished-elsewhere" ] || continue
        unfinished+=("$out/$row-seed$seed.")
        # a table of a lent GPU only (not in jobs.sh's CPU_TABLES): no CPU worker takes its run
        if [[ " $CPU_TABLES " != *" $table "* && -e $dir/checkpoints/latest ]]; then resumable+=("$dir"); fi
    done < "$BASE/jobs"
    cd "$BASE/tree"
    outputs=()
    while read -r file; do
        for prefix in ${unfinished[@]+"${unfinished[@]}"}; do [[ $file == "$prefix"* ]] && continue 2; done
        outputs+=("$file")
    done < <(find results -type f -newer "$BASE/.started")
    for log in "$BASE"/logs/*:*.out; do
        echo "$(basename "$log" .out): $(grep -E '^(update|valid|the run)| on [a-z0-9-]+: |rror' "$log" | tail -1)"
    done
    [ "$DEVICE" != cuda ] || nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
    # a glob, not `ls`: with no run finished, ls's failure under pipefail ended `wait` before it
    # packed the logs (2026-11-26)
    finished=0 files=()
    for marker in "$BASE"/runs/*/finished-elsewhere; do
        [ -e "$marker" ] || continue
        run=$(basename "$(dirname "$marker")")
        finished=$((finished + 1))
        for name in finished-elsewhere validations.json best.json train.log config.yaml; do
            [ ! -e "$BASE/runs/$run/$name" ] || files+=("runs/$run/$name")
        done
    done
    tar czf "${OUT:?}/runs.tgz" ${outputs[@]+"${outputs[@]}"} -C "$BASE" logs ${files[@]+"${files[@]}"}
    echo "packed $finished finished runs"
    # the first unfinished GPU-only run whose state fits, to resume on the next lent GPU
    staging=$BASE/resume-staging
    for dir in ${resumable[@]+"${resumable[@]}"}; do
        if ! snapshot "$dir" "$staging"; then
            echo "$(basename "$dir"): no consistent checkpoint to bring back"
            continue
        fi
        run=$(basename "$dir")
        echo "left at $(cat "$staging/$run/checkpoints/latest") on $(machine), $(date -u +%FT%TZ)" > "$staging/$run/resume-on-gpu"
        size=$(du -sb "$staging/$run" | cut -f1)
        if [ "$size" -gt "$RESUME_LIMIT" ]; then
            echo "$run: its state ($size bytes) is over RESUME_LIMIT; not brought back"
            continue
        fi
        tar cf - -C "$staging" "$run" | split -b "$RESUME_PART" - "$OUT/resume.tar.part-"
        echo "packed $run's state to resume ($size bytes)"
        break
    done
    rm -rf "$staging"
    ;;
import)
    packed=$(mktemp -d)
    tar xzf "${2:?runs.tgz}" -C "$packed"
    mkdir -p "$RUNS/logs/gpu"
    cp "$packed"/logs/* "$RUNS/logs/gpu/"
    # a run left part way by a lent GPU (wait's resume.tar.part-*, beside runs.tgz)
    parts=("$(dirname "$2")"/resume.tar.part-*)
    if [ -e "${parts[0]}" ]; then mkdir "$packed/resume" && cat "${parts[@]}" | tar xf - -C "$packed/resume"; fi
    for run in "$packed"/runs/*/ "$packed"/resume/*/; do  # a run the CPU started meanwhile: the two would clash
        here=$RUNS/$(basename "$run")
        if [ -d "$run" ] && [ -e "$here" ] && [ ! -e "$here/finished-elsewhere" ] && [ ! -e "$here/resume-on-gpu" ]; then
            echo "$here was started here too: nothing imported; keep one of the two by hand" >&2
            exit 1
        fi
    done
    for run in "$packed"/runs/*/ "$packed"/resume/*/; do  # a newer state replaces one left part way
        here=$RUNS/$(basename "$run")
        [ -d "$run" ] || continue
        [ ! -e "$here/resume-on-gpu" ] || rm -r "$here"
        mkdir -p "$here" && cp -r "$run"/* "$here/"
        [ ! -e "$here/resume-on-gpu" ] || echo "$(basename "$run"): to resume on the next lent GPU ($(cat "$here/resume-on-gpu"))"
    done
    # the runs' outputs; their records merged into each folder's metrics.json (none where no run finished)
    mkdir -p "$packed/results"
    (cd "$packed" && find results -type f ! -name metrics.json) | while read -r file; do
        mkdir -p "$(dirname "$file")" && cp "$packed/$file" "$file"
    done
    (cd "$packed" && find results -name metrics.json) | while read -r metrics; do
        .venv/bin/python results/lib/merge_metrics.py "$packed/$metrics" "$metrics"
    done
    rm -r "$packed"
    ;;
*) echo "unknown command $1" >&2; exit 2 ;;
esac
