#!/usr/bin/env bash
# Seq2seq against WEAN with each of its three scores (general, dot, concat), 3 seeds each, to
# early stopping on WikiLarge valid BLEU under results/lib/converge.sh's schedule (issue 24):
# kauchak_v2 train, TurkCorpus test (lowercased, and EASSE's plain text) and WikiSmall test for
# scores. Two scales, each a table of its own:
#   results/wean/converged/run.sh paper   the WEAN paper's sizes (configs/seq2seq-pwkp.yaml,
#       wean-pwkp.yaml: 50,000 words, 2+2 LSTM layers): Seq2seq trains about 220 target tokens/s
#       on one CPU thread here, a GPU's work (DEVICE=cuda; lab/gpu.sh) -> results/wean/converged
#   results/wean/converged/run.sh cpu     the same presets scaled for this CPU (below): 8,000 BPE
#       pieces, one LSTM layer each side, about 920 tokens/s -> results/wean/converged-cpu;
#       without concat, whose score takes a tanh over hidden x vocabulary x target positions: its
#       first update took about 6 minutes here (about 50 hours for the 502 updates of an epoch)
#   results/wean/converged/run.sh cpu-concat   concat at the cpu scale, with the fused kernel: about
#       28 s of training an epoch on a lent H100, a GPU's work (lab/gpu.sh) -> the same folder
# (speeds: a few dozen updates on one thread beside two other runs, results/wean/converged-cpu/README.md)
# lab/gpu.sh runs each row as its own job (ROWS=wean-concat SEEDS=2 STAGE=train). Run
# from the repository root after `make install`; run it again to resume.
set -euo pipefail
WEAN=${WEAN:-wean} PYTHON=${PYTHON:-python}  # the active environment's, unless set
source results/lib/converge.sh
SCALE_NAME=${1:-paper}
case $SCALE_NAME in
    paper) OUT=results/wean/converged PREFIX=wean-converged SCALE="" NAMES=(seq2seq wean wean-dot wean-concat) ;;
    # pieces instead of words (a 50,000-word softmax is most of the paper-sized model's time);
    # pairs up to 80 pieces, as configs/rnnsearch-simplification.yaml (the same training data)
    cpu | cpu-concat)
         OUT=results/wean/converged-cpu PREFIX=wean-cpu-converged CPU_NAMES=(seq2seq wean wean-dot)
         NAMES=("${CPU_NAMES[@]}")
         SCALE="--set data.tokenizer.type=bpe --set data.tokenizer.vocab_size=8000 --set data.max_tokens=80 \
                --set model.encoder.layers=1 --set model.decoder.layers=1 --set training.log_every=20"
         # concat at this scale, a lent GPU's work (lab/gpu.sh), listed apart so that this
         # CPU's workers, which list the cpu scale, never take it
         [ "$SCALE_NAME" = cpu ] || NAMES=(wean-concat) ;;
    *) echo "unknown scale $SCALE_NAME: paper, cpu or cpu-concat" >&2; exit 2 ;;
esac
declare -A CONFIG=([seq2seq]=seq2seq-pwkp [wean]=wean-pwkp [wean-dot]=wean-pwkp [wean-concat]=wean-pwkp)
declare -A CHANGE=([seq2seq]="" [wean]="" [wean-dot]="--set model.output_layer.score=dot"
                   [wean-concat]="--set model.output_layer.score=concat --set model.output_layer.concat_kernel=fused")
# concat learned nothing from the presets' initialisation on a toy task (results/wean/concat-init):
# its W_q and W_e start from U(-r, r), r chosen on WikiLarge valid at the cpu scale by that
# folder's gpu-sweep.sh, the same r for every seed and both scales
CHOSEN_RANGE=${CHOSEN_RANGE:-results/wean/concat-init/chosen-range.txt}
concat_range() {
    if ! test -s "$CHOSEN_RANGE"; then
        echo "$CHOSEN_RANGE is missing: run results/wean/concat-init/gpu-sweep.sh first" >&2
        return 1
    fi
    head -n 1 "$CHOSEN_RANGE"
}
for seed in $SEEDS; do
    for name in ${ROWS:-${NAMES[*]}}; do
        dir="$RUNS/$PREFIX-$name-seed$seed"
        [ "$STAGE" = list ] && { echo "$seed $name $dir $OUT"; continue; }
        ! recorded "$dir" "$OUT" || continue
        change=${CHANGE[$name]}
        [ "$name" != wean-concat ] || change+=" --set model.output_layer.concat_init_range=$(concat_range)"
        # shellcheck disable=SC2086
        train_row "configs/${CONFIG[$name]}.yaml" "$dir" $SCALE $change --set training.seed="$seed"
        system=$name-seed$seed
        "$WEAN" test --model "$dir" --system "$system" --out-dir "$OUT" --device "$DEVICE" \
            --benchmark turkcorpus-test-lower wikismall-test
        "$WEAN" test --model "$dir" --system "$system" --out-dir "$OUT" --device "$DEVICE" \
            --benchmark turkcorpus-test --plain-text
        keep_run "$dir" "$OUT"
    done
done
[ "$STAGE" = all ] || exit 0
# compare_with BASE SEED ROW...: each row's outputs against BASE's, every test set (paired bootstrap):
# the benchmark's paired metrics and the share of outputs left unchanged, which SARI gaps have followed
compare_with() {
    local base=$1 seed=$2 name benchmark
    shift 2
    for name in "$@"; do
        for benchmark in turkcorpus-test-lower turkcorpus-test wikismall-test; do
            test -e "$OUT/$name-seed$seed.$benchmark.txt" || continue
            "$WEAN" compare --hyp "$OUT/$name-seed$seed.$benchmark.txt" "$OUT/$base-seed$seed.$benchmark.txt" \
                --benchmark "$benchmark" --metrics +identical_to_source
        done
    done
}
for seed in $SEEDS; do
    compare_with seq2seq "$seed" wean wean-dot wean-concat
    compare_with wean "$seed" wean-dot wean-concat  # Ma et al. §2.3: is general the best of the three scores?
done | tee "$OUT/significance.txt"
for seed in $SEEDS; do  # the paper's Figure 2: validation BLEU per epoch
    plotted=("${NAMES[@]}")
    if [ "$SCALE_NAME" != paper ]; then  # the cpu scale's table, concat where its seed was trained
        plotted=("${CPU_NAMES[@]}")
        ! test -e "$OUT/wean-concat-seed$seed.wikismall-test.txt" || plotted+=(wean-concat)
    fi
    runs=("${plotted[@]/#/$PREFIX-}")
    labels=$(IFS=,; echo "${plotted[*]}")
    plot_kept "$OUT" bleu "$OUT/valid-bleu-seed$seed.png" "$labels" "${runs[@]/%/-seed$seed}" \
        | tee "$OUT/convergence-seed$seed.txt"
done
# what the TurkCorpus outputs' changes are made of (mangled non-ASCII characters, looping spans,
# SARI with the mangled outputs restored: results/lib/changed_outputs.py)
shopt -s nullglob
tested=("$OUT"/*-seed?.turkcorpus-test.txt)
[ ${#tested[@]} -eq 0 ] || "$PYTHON" results/lib/changed_outputs.py turkcorpus-test "${tested[@]}" \
    > "$OUT/changed-outputs.txt"
