"""The shipped simplifier's n-gram blocking (generation.block_ngram_repeat: no n-gram written
twice), chosen on validation data: the 300 TurkCorpus tune sentences that chose its control values
(src/wean/pretrained/simplifier/control-tuning.json: after the 500 that selected the checkpoint),
scored as `wean tune-control` scores them, with the control values it chose. Run from the
repository root: python results/controllable/ngram-blocking/sweep.py --out results/controllable/ngram-blocking
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import wean
from wean.evaluation import evaluate
from wean.inference.tune_control import tuning_set
from wean.pretrained import SIMPLIFIER


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, nargs="+", default=[0, 2, 3, 4])
    parser.add_argument("--min-bleu", type=float, default=60.0, help="tune-control's floor")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    tuning = json.loads((SIMPLIFIER / "control-tuning.json").read_text())
    sources, references, settings = tuning_set(tuning["benchmark"], [line - 1 for line in tuning["lines"]])
    simplifier = wean.load()
    results = {}
    for block in args.blocks:
        outputs = [g.text for g in simplifier.generate(sources, block_ngram_repeat=block, split_sentences=False)]
        scores = evaluate(outputs, sources, references, settings).scores
        results[block] = {key: scores[key] for key in ("sari", "bleu", "identical_to_source", "mean_repeated_tokens",
                                                        "outputs_with_repeats")}
        (args.out / f"block-{block}.turkcorpus-tune-300.txt").write_text("".join(o + "\n" for o in outputs))
        print(f"block_ngram_repeat {block}: SARI {scores['sari']:.2f} BLEU {scores['bleu']:.2f} unchanged "
              f"{scores['identical_to_source']:.1f} % repeated tokens per output {scores['mean_repeated_tokens']:.2f}",
              flush=True)
    feasible = {block: r for block, r in results.items() if r["bleu"] >= args.min_bleu}
    chosen = max(feasible, key=lambda block: feasible[block]["sari"]) if feasible else None
    print(f"chosen (highest SARI with BLEU >= {args.min_bleu:g}): {chosen}")
    (args.out / "metrics.json").write_text(json.dumps(
        {"benchmark": tuning["benchmark"], "lines": tuning["lines"], "control": tuning["chosen"]["control"],
         "min_bleu": args.min_bleu, "results": results, "chosen": chosen}, indent=1) + "\n")


if __name__ == "__main__":
    main()
