#!/usr/bin/env bash
# Issue 24's convergence runs on this machine: start one worker per core (one thread each), or one on
# two threads where a run must finish within the session (lab/README.md); every
# worker walks the same list of jobs (lab/jobs.sh's job_list: the jobs in FIRST_JOBS, the
# tables of COMPLETE_FIRST whole, then seeds outermost, then the tables in the order of CPU_TABLES)
# and takes each job that no other worker holds (flock on $RUNS/claims/, released by the kernel
# when its holder dies); runs that stopped part way come first. A recorded run (trained, tested,
# kept in results/: results/lib/record.sh) passes at once; a recorded run whose history was lost is
# replayed; a table's comparisons and curves are made once all its runs are recorded
# ($RUNS/report-TABLE.done: delete it to make them again). The COMPLETE_FIRST tables' replays and
# reports come right after their jobs, the other tables' after every job:
#   RUNS=$HOME/wean-runs OMP_NUM_THREADS=1 nohup bash lab/queue.sh > $HOME/wean-runs/logs/worker-1.log 2>&1 &
#   RUNS=$HOME/wean-runs OMP_NUM_THREADS=1 nohup bash lab/queue.sh > $HOME/wean-runs/logs/worker-2.log 2>&1 &
# Sourced (tests), it only defines its functions.
set -euo pipefail
source lab/jobs.sh

holding() {  # NAME: true if this worker now holds NAME's claim (on file descriptor $claim)
    exec {claim}> "$RUNS/claims/$1"
    flock -n "$claim" || { exec {claim}>&-; return 1; }
}

work() {  # "JOB RUN_DIR OUT" lines: take each job that no other worker holds
    while read -r job dir out; do
        [ -n "$job" ] || continue
        holding "${dir##*/}" || continue
        echo "$(date -u +%FT%TZ) $job"
        run_job "$job" || echo "$(date -u +%FT%TZ) $job failed" >&2
        exec {claim}>&-
    done <<< "$1"
}

replay() {  # TABLE...: their recorded runs whose validation history was lost, trained again for
    # their curves (lab/replay.sh; one whose output differs is marked and not tried again);
    # a table with a new history has its comparisons and curves made again by report
    local replays table run out system benchmark
    replays=$(replay_list "$@")
    while read -r table run out system benchmark; do
        [ -n "$table" ] && [ ! -e "$RUNS/replay/$run/differs" ] || continue
        holding "replay-$run" || continue
        if [ -e "$(history_of "$out" "$run")" ]; then  # another worker replayed it since the list
            exec {claim}>&-
            continue
        fi
        echo "$(date -u +%FT%TZ) replay $run"
        if bash lab/replay.sh "$out" "$run" "$system" "$benchmark" < /dev/null; then
            rm -f "$RUNS/report-$table.done"
        else
            echo "$(date -u +%FT%TZ) replay $run failed" >&2
        fi
        exec {claim}>&-
    done <<< "$replays"
}

report() {  # TABLE...: the comparisons and curves of each whose runs are all recorded
    local table
    for table in "$@"; do
        [ ! -e "$RUNS/report-$table.done" ] || continue
        runs_of "$table" | while read -r job dir out; do recorded "$dir" "$out" || exit 1; done || continue
        holding "report-$table" || continue
        echo "$(date -u +%FT%TZ) $table: comparisons and curves"
        # shellcheck disable=SC2046
        if bash $(script_of "$table") < /dev/null; then
            date -u +%FT%TZ > "$RUNS/report-$table.done"
        else
            echo "$(date -u +%FT%TZ) $table's report failed" >&2
        fi
        exec {claim}>&-
    done
}

main() {  # every job, then the replays and reports, as the header says
    mkdir -p "$RUNS/claims"
    local jobs started early_tables early_jobs later_jobs table
    # shellcheck disable=SC2086
    jobs=$(job_list $CPU_TABLES)
    started=$(while read -r job dir out; do
        [ -d "$dir" ] && ! recorded "$dir" "$out" && echo "$job $dir $out"
    done <<< "$jobs" || true)
    # COMPLETE_FIRST's tables (and FIRST_JOBS, which job_list puts before them) are finished whole,
    # replays and report included, before the other tables' jobs
    early_tables=$(for table in $COMPLETE_FIRST; do [[ " $CPU_TABLES " == *" $table "* ]] && echo "$table"; done || true)
    early_jobs=$(while read -r job rest; do comes_early "$job" && echo "$job $rest"; done <<< "$jobs" || true)
    later_jobs=$(while read -r job rest; do comes_early "$job" || echo "$job $rest"; done <<< "$jobs" || true)
    work "$started
$early_jobs"
    # shellcheck disable=SC2086
    replay $early_tables
    # shellcheck disable=SC2086
    report $early_tables
    work "$later_jobs"
    # shellcheck disable=SC2086
    replay $CPU_TABLES
    # shellcheck disable=SC2086
    report $CPU_TABLES
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    main
fi
