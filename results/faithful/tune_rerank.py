"""Noisy-channel reranking's weights, chosen on validation data only: the 400 TurkCorpus tune
sentences of results/decoding/tune_score.py (which neither selected the shipped checkpoint nor
tuned its control values). Each n-best list is decoded once per list size and every output scored
once by the channel model, the language model and its length; each weight setting then picks an
output per sentence and is scored, the weights searched by coordinate ascent (wean tune-control's)
from zero. One JSON line per (list size, weights) tried, appended to --out; the chosen setting is
printed and written to --choice.

    python results/faithful/tune_rerank.py --model src/wean/pretrained/simplifier \
        --channel RUNS/faithful-reverse-plain --lm RUNS/faithful-lm-plain

The rule: the highest SARI among the settings whose invented names and repeated n-grams are at or
below the human references' own rates on the same sentences (the issue's fidelity floor); where
none is, the setting nearest the floor (the sum of its excesses).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wean.evaluation.evaluate import evaluate
from wean.inference.generator import load
from wean.inference.tune_control import Requirement, Trial, coordinate_ascent, tuning_set

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decoding"))
from tune_score import selection_lines  # noqa: E402  the 400 sentences results/decoding tuned on

HERE = Path(__file__).parent
KEYS = ("sari", "bleu", "identical_to_source", "repeated_ngrams", "invented_names", "invented_numbers")
FLOOR = ("invented_names", "repeated_ngrams")
GRIDS = {"channel": [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0], "lm": [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5],
         "length": [0.0, 0.05, 0.1, 0.2, 0.5, 1.0]}


def scores(outputs: list[str], sources: list[str], references: list[list[str]], settings) -> dict[str, float]:
    result = evaluate(outputs, sources, references, settings, yardstick=False).scores
    return {key: round(result[key], 3) for key in KEYS}


def references_rates(sources, references, settings) -> dict[str, float]:
    """Each reference stream scored as an output against the others: the human rates."""
    rates = []
    for k, stream in enumerate(references):
        others = [other for j, other in enumerate(references) if j != k]
        rates.append(scores(stream, sources, others, settings))
    return {key: round(sum(r[key] for r in rates) / len(rates), 3) for key in KEYS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the simplifier whose n-best lists are reranked")
    parser.add_argument("--channel", required=True, help="the reverse model (data.direction: reverse)")
    parser.add_argument("--lm", required=True, help="the language model (data.direction: lm)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10], help="beam = n-best list sizes")
    parser.add_argument("--out", type=Path, default=HERE / "rerank-selection.jsonl")
    parser.add_argument("--choice", type=Path, default=HERE / "rerank-choice.json")
    args = parser.parse_args()
    sources, references, settings = tuning_set("turkcorpus-tune", selection_lines(), None, KEYS[3:])
    human = references_rates(sources, references, settings)
    generator = load(args.model)
    channel, lm = f"channel:{args.channel}", f"lm:{args.lm}"
    requirements = [Requirement.parse(f"{key}<=references") for key in FLOOR]
    chosen = []
    with args.out.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"references": human}) + "\n")
        for size in args.sizes:
            lists = generator.generate(sources, plain_text=True, split_sentences=False, beam=size, nbest=size,
                                       rerank=[(channel, 0.0), (lm, 0.0), ("length", 0.0)])

            def trial(weights: dict[str, float]) -> Trial:
                def total(output):
                    values = output.rerank_scores
                    return (values["search"] + weights["channel"] * values[channel] + weights["lm"] * values[lm]
                            + weights["length"] * values["length"])
                picked = [max(best.nbest, key=total).text for best in lists]  # ties: the search's order
                result = scores(picked, sources, references, settings)
                shortfall = sum(requirement.shortfall(result, human) for requirement in requirements)
                out.write(json.dumps({"size": size, **weights, **result, "shortfall": round(shortfall, 3)}) + "\n")
                out.flush()
                return Trial(weights, result, shortfall)

            start = {"channel": 0.0, "lm": 0.0, "length": 0.0}
            weights, trials = coordinate_ascent(trial, start, GRIDS)
            plain = next(t for t in trials if t.control == start)  # beam search's own choice
            best = next(t for t in trials if t.control == weights)
            chosen.append((size, best, plain))

    def rank(entry):  # as coordinate_ascent ranks: feasible first, then the nearest, then SARI
        _, trial, _ = entry
        return (not trial.feasible, trial.shortfall, -trial.scores["sari"])

    size, best, plain = min(chosen, key=rank)
    choice = {"chosen": {"size": size, **best.control, **best.scores}, "meets_floor": best.feasible,
              "references": human, "floor": [f"{key}<=references" for key in FLOOR],
              "plain_beam": {"size": size, **plain.scores}}
    args.choice.write_text(json.dumps(choice, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(choice))


if __name__ == "__main__":
    main()
