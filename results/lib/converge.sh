# The papers' run scripts source this: every row of a table trained to early stopping on its
# validation split, three seeds, under one schedule (results/lib/converge.yaml says it and why).
# Halving after 2 (not 1) validations without progress keeps one noisy validation from starving a
# row of learning rate; counting the loss as progress keeps a row that still learns through a flat
# stretch of its metric from being halved or stopped.
# Each table's script takes, besides SEEDS: ROWS (a subset of its rows), DEVICE (training.device
# and wean test's --device), MAX_EPOCHS (the schedule's safety net) and STAGE: all (default),
# train (train and test only, leaving the seeds' comparisons and curves for later) or list (print
# "SEED ROW RUN_DIR OUT" per run, OUT the results folder that records it, and do nothing):
# lab/gpu.sh runs every row as its own job.
SEEDS=${SEEDS:-"1 2 3"}
RUNS=${RUNS:-runs}
WEAN=${WEAN:-wean}  # the wean command of the environment wean is installed in
MAX_EPOCHS=${MAX_EPOCHS:-100}
DEVICE=${DEVICE:-auto}
STAGE=${STAGE:-all}
SCHEDULE=results/lib/converge.yaml

# prepare NAME: `wean prepare NAME` into data/NAME, once; listing the runs (STAGE=list) prepares nothing
prepare() {
    [ "$STAGE" = list ] || test -e "data/$1/train.src" || "$WEAN" prepare "$1" --out "data/$1"
}

# allocator_library: the tcmalloc library to preload into training, where one is installed (Debian:
# libtcmalloc-minimal4) and WEAN_ALLOCATOR is not glibc. A training step frees and asks again for
# tensors of tens of megabytes, which glibc returns to the kernel and faults in anew every step;
# tcmalloc keeps them: 1.13-1.20x the tokens/s of the simplification rows on one thread, every
# logged loss (4 decimals) identical (results/bench-allocator). ALLOCATOR_DIRS: the folders searched (tests
# set it); the default is bench/allocator_speed.py's LIBRARY_DIRS, so that the benchmark times the library training uses.
allocator_library() {
    [ "${WEAN_ALLOCATOR:-tcmalloc}" != glibc ] || return 0
    local directory
    for directory in ${ALLOCATOR_DIRS:-/usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib}; do
        if [ -e "$directory/libtcmalloc_minimal.so.4" ]; then
            echo "$directory/libtcmalloc_minimal.so.4"
            return
        fi
    done
}

# train_to_end CONFIG DIR [--set ...]: train DIR as CONFIG (read under $schedule's file, where
# set, and then under OVERLAYS's, space-separated config files such as a data cleaning) says,
# resuming a run that stopped part way; DIR/finished marks a run trained to its end, DIR/finished-elsewhere one trained on another
# machine whose checkpoints stayed there (lab/gpu.sh): both are skipped.
train_to_end() {
    local config=$1 dir=$2
    shift 2
    { test -e "$dir/finished" || test -e "$dir/finished-elsewhere"; } && return
    local resume=
    if test -e "$dir/checkpoints/latest"; then
        resume=--resume
    elif test -e "$dir/config.yaml"; then
        resume=--overwrite  # killed before its first checkpoint: nothing trained to keep
    fi
    local allocator
    allocator=$(allocator_library)
    echo "allocator: ${allocator:-glibc}"
    local overlays
    read -r -a overlays <<< "${OVERLAYS:-}"
    LD_PRELOAD="$allocator${LD_PRELOAD:+ $LD_PRELOAD}" "$WEAN" train "$config" ${schedule:+"$schedule"} \
        "${overlays[@]}" --set model_dir="$dir" "$@" $resume
    date -u +%FT%TZ > "$dir/finished"
}

# train_row CONFIG DIR [--set ...]: train DIR to early stopping under this schedule
train_row() {
    local config=$1 dir=$2
    shift 2
    schedule=$SCHEDULE train_to_end "$config" "$dir" --set training.max_epochs="$MAX_EPOCHS" \
        --set training.device="$DEVICE" "$@"
}

# how a finished run is recorded in results/ (recorded, keep_run, plot_kept)
source results/lib/record.sh
