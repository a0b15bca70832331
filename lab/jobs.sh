# Issue 24's runs as jobs, sourced by lab/queue.sh (this machine's cores) and
# lab/gpu.sh (a lent GPU machine). A job is TABLE:SEED:ROW; it runs its table's script
# with SEEDS=SEED ROWS=ROW STAGE=train (results/lib/converge.sh), which trains and tests that row.
RUNS=${RUNS:-runs}
# recorded RUN_DIR OUT: the run is done (trained, tested and recorded in OUT), whatever machine
source results/lib/record.sh
# the paper-sized wean table is a GPU's work; wean-cpu is the same table scaled for this CPU
CPU_TABLES=${CPU_TABLES:-"lcsts spm gigaword simplification wean-cpu"}

script_of() {  # TABLE -> its script and argument
    case $1 in
        wean) echo results/wean/converged/run.sh paper ;;
        wean-cpu) echo results/wean/converged/run.sh cpu ;;
        wean-cpu-concat) echo results/wean/converged/run.sh cpu-concat ;;  # a GPU's work, not in CPU_TABLES
        spm) echo results/spm/converged/run.sh ;;
        lcsts) echo results/lcsts/part2/run.sh ;;
        gigaword | simplification) echo "results/word-attention/converged/run.sh $1" ;;
        *) echo "unknown table $1" >&2; return 2 ;;
    esac
}

runs_of() {  # TABLE... -> "TABLE:SEED:ROW RUN_DIR OUT" per run (OUT: the results folder that
    # records it), from each table script itself
    local table seed row dir out
    for table in "$@"; do
        # shellcheck disable=SC2046
        STAGE=list bash $(script_of "$table") | while read -r seed row dir out; do
            echo "$table:$seed:$row $dir $out"
        done
    done
}

# tables whose every seed comes before the other tables' seeds (seeds outermost among them too):
# LCSTS, the cheapest table (about two hours a run here), whose config had shown itself sound on
# seed 1 of both rows, so that one claim has its three seeds early; then Kiyono's, whose last two
# runs (2-3 hours each) complete a table that the simplification rows' seeds 2-3 (about 45 hours)
# would otherwise hold back; then WEAN's at this CPU's scale, whose last two runs (2-3 hours each;
# a lent GPU trained the three others) would likewise wait behind them
COMPLETE_FIRST=${COMPLETE_FIRST-lcsts spm wean-cpu}

# jobs (TABLE:SEED:ROW) to take before all others, in this order: on a machine that lost the run
# directories, the ones that finish within the session, since a run that outlives its session is
# lost whenever the machine is
FIRST_JOBS=${FIRST_JOBS-}

job_list() {  # TABLE... -> runs_of's lines: FIRST_JOBS, COMPLETE_FIRST's tables, then seeds
    # outermost across the others (seed 1 of every table, then seed 2, ...): every row of every
    # table has a first converged run early, and a table whose config misbehaves shows it after one
    # seed, not three
    runs_of "$@" | sort -s -t: -k2,2n | awk -v tables="$COMPLETE_FIRST" -v jobs="$FIRST_JOBS" '
        BEGIN {
            n = split(tables, names, " "); for (i = 1; i <= n; i++) early[names[i]] = 1
            firsts = split(jobs, first, " "); for (i = 1; i <= firsts; i++) rank[first[i]] = i
        }
        $1 in rank { chosen[rank[$1]] = $0; next }
        { split($1, job, ":"); if (job[1] in early) early_line[++earlies] = $0; else later[++count] = $0 }
        END {
            for (i = 1; i <= firsts; i++) if (!(i in chosen)) {
                print "FIRST_JOBS: no job " first[i] " in these tables" > "/dev/stderr"; exit 2
            }
            for (i = 1; i <= firsts; i++) print chosen[i]
            for (i = 1; i <= earlies; i++) print early_line[i]
            for (i = 1; i <= count; i++) print later[i]
        }'
}

comes_early() {  # TABLE:SEED:ROW: true if it is one of FIRST_JOBS or of a COMPLETE_FIRST table, the
    # jobs that job_list puts first and lab/queue.sh finishes, replays and reports first
    [ -n "$1" ] && [[ " $FIRST_JOBS " == *" $1 "* || " $COMPLETE_FIRST " == *" ${1%%:*} "* ]]
}

run_job() {  # TABLE:SEED:ROW: train and test that row
    local table seed row
    IFS=: read -r table seed row <<< "$1"
    # shellcheck disable=SC2046
    SEEDS="$seed" ROWS="$row" STAGE=train bash $(script_of "$table") < /dev/null
}

benchmark_of() {  # TABLE -> the test set a replay compares outputs on (lab/replay.sh)
    case $1 in
        spm | gigaword) echo gigaword-test ;;
        lcsts) echo lcsts-test ;;
        simplification) echo turkcorpus-test ;;
        wean | wean-cpu | wean-cpu-concat) echo wikismall-test ;;
        *) echo "unknown table $1" >&2; return 2 ;;
    esac
}

replay_list() {  # TABLE... -> "TABLE RUN OUT SYSTEM BENCHMARK" for each recorded run whose
    # validation history is not kept (its curve is missing): the first seven runs of issue 24,
    # recorded before histories were (results/lib/record.sh), and any run lost the same way
    local job dir out table seed row
    runs_of "$@" | while read -r job dir out; do
        recorded "$dir" "$out" && ! test -e "$(history_of "$out" "${dir##*/}")" || continue
        IFS=: read -r table seed row <<< "$job"
        echo "$table ${dir##*/} $out $row-seed$seed $(benchmark_of "$table")"
    done
}

gpu_order() {  # TABLE:SEED:ROW lines on stdin -> the paper-sized WEAN table's, in the order a lent
    # GPU should take them: its 15 minutes must see a job to its end, so the rows that stopped
    # soonest in results/wean first (WEAN, dot, then Seq2seq), seed by seed. concat is left out, for
    # a session to try on its own (`gpu.sh start wean:1:wean-concat`): its tanh over target tokens x
    # vocabulary x hidden, about 18 billion values a batch at this size, has never run on a GPU here,
    # so how long its row takes is unknown, and a job that does not finish is lost
    local jobs row
    jobs=$(cat)
    for row in wean wean-dot seq2seq; do
        grep -x "wean:[0-9]*:$row" <<< "$jobs" | sort -t: -k2,2n || true
    done
}
