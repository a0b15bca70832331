# Issue 24's record of each finished run in its table's results folder, sourced by
# results/lib/converge.sh (the table scripts) and lab/jobs.sh (the workers).
# A run is recorded in its table's results once trained and tested: its resolved config in
# OUT/configs/RUN.yaml (model_dir made relative: no machine's paths in results/) and its validation
# history in OUT/validations/RUN.json (the curves). A recorded run is done even where its run
# directory is gone: run directories do not outlive a machine, and a session may get a new one
# (delete its config there to train and test it again).
# The first seven finished runs (LCSTS Seq2seq seeds 1-3 and WEAN seeds 1-2, Kiyono EncDec and
# +sGate seed 1) were recorded by their config alone; their histories went with their machine
# (replay.sh recovered LCSTS seed 1's two by training them again).

# history_of OUT RUN: where OUT keeps the run RUN's validation history
history_of() {
    echo "$1/validations/$2.json"
}

# recorded DIR OUT: true if the run DIR is recorded in OUT
recorded() {
    [ -e "$2/configs/$(basename "$1").yaml" ]
}

# keep_run DIR OUT: record the run DIR in OUT (after its tests: a record means done)
keep_run() {
    local run
    run=$(basename "$1")
    mkdir -p "$2/configs" "$2/validations"
    cp "$1/validations.json" "$(history_of "$2" "$run")"
    sed "s|^model_dir: .*|model_dir: runs/$run|" "$1/config.yaml" > "$2/configs/$run.yaml"
}

# plot_kept OUT METRIC PNG LABELS RUN...: `wean plot` of the runs (names) whose validation history
# OUT holds, a line for each one whose history it does not
plot_kept() {
    local out=$1 metric=$2 png=$3 names i
    IFS=, read -r -a names <<< "$4"
    shift 4
    local runs=() labels=()
    for ((i = 1; i <= $#; i++)); do
        local run=${!i} history
        history=$(history_of "$out" "$run")
        if [ -e "$history" ]; then
            runs+=("$history")
            labels+=("${names[i - 1]}")
        else
            echo "${names[i - 1]}: no curve ($run's validation history was not kept)"
        fi
    done
    [ ${#runs[@]} -eq 0 ] || "${WEAN:-wean}" plot "${runs[@]}" --labels "$(IFS=,; echo "${labels[*]}")" \
        --metric "$metric" --out "$png"
}
