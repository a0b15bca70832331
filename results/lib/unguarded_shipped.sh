# The shipped simplifier without its faithful pipeline (results/clean-simplifier): the same weights
# with the generation defaults it shipped with before, which the results computed before that
# read (their outputs are byte-identical to it). Sourced; unguarded_shipped DIR writes that model
# directory to DIR once.
unguarded_shipped() {
    test -e "$1/config.yaml" || "${WEAN:-wean}" export src/wean/pretrained/simplifier "$1" --fp16 \
        --set generation.names_and_numbers=any --set generation.fallback=none \
        --set 'generation.fallback_channel=""' --set generation.control.chars_ratio=1.0
}
