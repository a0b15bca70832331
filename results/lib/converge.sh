# Issue 24's schedule, sourced by the papers' run scripts: every row of a table trained to early
# stopping on its validation split, three seeds, under one rule.
#   validation at the end of every epoch; a validation without progress is one that improves
#   neither the table's selection metric nor the validation loss; the learning rate is halved
#   every 2 of them in a row, training stops at 4; the checkpoint tested is the best in the
#   selection metric. MAX_EPOCHS (100) is a safety net, not a budget: a row that reaches it is
#   reported as not converged.
# Halving after 2 (not 1) bad validations keeps one noisy validation from starving a row of
# learning rate (the plateau schedule of results/wean reached 1e-5 while BLEU still rose).
# The loss counts as progress since 2026-11-24 (a row still learning through a flat stretch of its
# metric is neither halved nor stopped); runs trained before were checked against the new rule
# (lab/README.md).
# Each table's script takes, besides SEEDS: ROWS (a subset of its rows), DEVICE (training.device
# and wean test's --device) and STAGE: all (default), train (train and test only, leaving the
# seeds' comparisons and curves for later) or list (print "SEED ROW RUN_DIR OUT" per run, OUT the
# results folder that records it, and do nothing):
# lab/gpu.sh runs every row as its own job.
SEEDS=${SEEDS:-"1 2 3"}
RUNS=${RUNS:-runs}
WEAN=${WEAN:-wean}  # the wean command of the environment wean is installed in
MAX_EPOCHS=${MAX_EPOCHS:-100}
DEVICE=${DEVICE:-auto}
STAGE=${STAGE:-all}
CONVERGE="--set training.max_updates=0 --set training.max_epochs=$MAX_EPOCHS --set training.validate_every=0 \
          --set training.lr_patience=2 --set training.early_stopping_patience=4 \
          --set training.patience_watches_loss=true --set training.keep_best=1"

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

# train_to_end CONFIG DIR [--set ...]: train DIR as CONFIG says, resuming a run that stopped part
# way; DIR/finished marks a run trained to its end, DIR/finished-elsewhere one trained on another
# machine whose checkpoints stayed there (lab/gpu.sh): both are skipped.
train_to_end() {
    local config=$1 dir=$2
    shift 2
    { test -e "$dir/finished" || test -e "$dir/finished-elsewhere"; } && return
    local resume=
    test -e "$dir/checkpoints/latest" && resume=--resume
    local allocator
    allocator=$(allocator_library)
    echo "allocator: ${allocator:-glibc}"
    LD_PRELOAD="$allocator${LD_PRELOAD:+ $LD_PRELOAD}" "$WEAN" train "$config" --set model_dir="$dir" "$@" $resume
    date -u +%FT%TZ > "$dir/finished"
}

# train_row CONFIG DIR [--set ...]: train DIR to early stopping under this schedule
train_row() {
    local config=$1 dir=$2
    shift 2
    # shellcheck disable=SC2086
    train_to_end "$config" "$dir" $CONVERGE --set training.device="$DEVICE" "$@"
}

# how a finished run is recorded in results/ (recorded, keep_run, plot_kept)
source results/lib/record.sh
