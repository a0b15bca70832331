"""The meaning check of the faithful pipeline, chosen on validation data only: the threshold of
``generation.fallback_channel`` (the least log-probability per token a channel model, simple ->
complex, may give the source given an output) on the 400 TurkCorpus tune sentences of
results/decoding/tune_score.py. Each beam's outputs are decoded once, and each scored once by the
fidelity checks and the channel model; each threshold then picks, as the fallback does, the
first output that passes both, else the source (with ``--unknown-words``, unknown words count among the
fidelity faults). The rule: the strictest threshold that leaves at most 30 % of outputs
unchanged (the issue's bound); every threshold tried is kept in --out.

    python results/clean-simplifier/choose_guard.py --model RUN-faithful --channel RUNS/faithful-reverse-plain \
        --out results/clean-simplifier/guard-plain-seed1.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from wean.evaluation.evaluate import evaluate
from wean.evaluation.fidelity import faults
from wean.inference.generator import load
from wean.inference.model_scores import ChannelScore
from wean.inference.tune_control import tuning_set

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decoding"))
from tune_score import selection_lines  # noqa: E402  the 400 sentences

KEYS = ("sari", "bleu", "identical_to_source", "repeated_ngrams", "invented_names")
THRESHOLDS = [-math.inf, -5.0, -4.0, -3.5, -3.0, -2.75, -2.5, -2.25, -2.0, -1.75, -1.5, -1.25, -1.0]
MOST_UNCHANGED = 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a faithful copy: fallback source in its config")
    parser.add_argument("--channel", required=True, help="the reverse model, reading plain text")
    parser.add_argument("--unknown-words", action="store_true",
                        help="count unknown words as faults, as fallback_words: known does")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sources, references, settings = tuning_set("turkcorpus-tune", selection_lines(), None, KEYS[3:])
    generator = load(args.model)
    beam = generator.config.generation.beam
    nbest = [g.nbest for g in generator.generate(sources, plain_text=True, split_sentences=False, fallback="none",
                                                 nbest=beam)]
    channel = ChannelScore(args.channel)
    channel.plain_text = True  # as the fallback's check reads the plain-text sentences generate is given
    flat = [(i, g.text) for i, outputs in enumerate(nbest) for g in outputs]
    per_token = channel.log_probs_per_token([text for _, text in flat], [sources[i] for i, _ in flat])
    scored: list[list[tuple[str, bool, float]]] = [[] for _ in sources]
    for (i, text), score in zip(flat, per_token):
        scored[i].append((text, not faults(sources[i], text, args.unknown_words), score))
    trials = []
    for threshold in THRESHOLDS:
        outputs = [next((text for text, faithful, score in outputs if faithful and score >= threshold), source)
                   for source, outputs in zip(sources, scored)]
        result = evaluate(outputs, sources, references, settings, yardstick=False).scores
        trials.append({"threshold": threshold, **{key: round(result[key], 3) for key in KEYS}})
        print(json.dumps(trials[-1]))
    allowed = [t for t in trials if t["identical_to_source"] <= MOST_UNCHANGED]
    chosen = max(allowed, key=lambda t: t["threshold"]) if allowed else trials[0]
    record = {"chosen": chosen, "rule": f"the strictest threshold with identical_to_source <= {MOST_UNCHANGED:g}",
              "trials": trials}
    args.out.write_text(json.dumps(record, indent=1).replace("-Infinity", '"none"') + "\n", encoding="utf-8")
    print(json.dumps(chosen))


if __name__ == "__main__":
    main()
