"""The meaning check's threshold, chosen on the tuning lines (split.json) only: for a model whose
config has the faithful pipeline (names_and_numbers from_source, fallback source), each threshold
of ``generation.fallback_channel`` is tried as the fallback applies it: the first output of the
beam free of fidelity faults whose source the channel model finds likely enough (log-probability
per token at least the threshold), else, with ``--lighter``, the first such output of the beam
searched at that lighter control setting, else the source. Each beam is decoded once and each
output scored once. The rule: the strictest threshold that leaves at most ``--most-unchanged``
percent of outputs identical to their source; every threshold is kept in --out.

    python results/asset-simplifier/guard_sweep.py --model M-faithful --channel src/wean/pretrained/simplifier/reranker/channel \\
        --lighter levenshtein=0.8 --out results/asset-simplifier/guard-pg-seed1.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from score_lines import BENCHMARK, role_lines

from wean.control import parse_control
from wean.evaluation.evaluate import evaluate
from wean.evaluation.fidelity import faults
from wean.inference.generator import load
from wean.inference.model_scores import ChannelScore
from wean.inference.tune_control import tuning_set

KEYS = ("sari", "bleu", "identical_to_source", "invented_names", "repeated_ngrams")
# the stricter end reaches -0.5 for a channel model that reads sources as more likely
THRESHOLDS = [-math.inf, -5.0, -4.5, -4.0, -3.5, -3.0, -2.75, -2.5, -2.25, -2.0, -1.75, -1.5, -1.25, -1.0, -0.75, -0.5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a faithful copy: fallback source in its config")
    parser.add_argument("--channel", required=True, help="the reverse model, reading plain text")
    parser.add_argument("--control", type=parse_control, help="control values over the model's")
    parser.add_argument("--lighter", type=parse_control, help="the lighter setting searched where every output fails")
    parser.add_argument("--unknown-words", action="store_true", help="unknown words are faults (fallback_words known)")
    parser.add_argument("--most-unchanged", type=float, default=20.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sources, references, settings = tuning_set(BENCHMARK, role_lines("tuning"), None, KEYS[3:])
    generator = load(args.model)
    beam = generator.config.generation.beam
    settings_searched = [args.control or {}] + ([{**(args.control or {}), **args.lighter}] if args.lighter else [])
    channel = ChannelScore(args.channel)
    channel.plain_text = True  # as the fallback's check reads the plain-text sentences generate is given
    # per sentence, per control setting: (text, free of fidelity faults, channel log-probability per token)
    scored: list[list[list[tuple[str, bool, float]]]] = [[] for _ in sources]
    for control in settings_searched:
        nbest = [g.nbest for g in generator.generate(sources, plain_text=True, split_sentences=False, fallback="none",
                                                     nbest=beam, control=control, fallback_control=[])]
        flat = [(i, g.text) for i, outputs in enumerate(nbest) for g in outputs]
        per_token = channel.log_probs_per_token([text for _, text in flat], [sources[i] for i, _ in flat])
        for i in range(len(sources)):
            scored[i].append([])
        for (i, text), score in zip(flat, per_token):
            scored[i][-1].append((text, not faults(sources[i], text, args.unknown_words), score))
    trials = []
    for threshold in THRESHOLDS:
        outputs, lighter_used = [], 0
        for source, per_setting in zip(sources, scored):
            chosen = source
            for number, outputs_of_setting in enumerate(per_setting):
                passing = [text for text, faithful, score in outputs_of_setting if faithful and score >= threshold]
                if passing:
                    chosen, lighter_used = passing[0], lighter_used + (number > 0)
                    break
            outputs.append(chosen)
        result = evaluate(outputs, sources, references, settings, yardstick=False).scores
        trials.append({"threshold": threshold, **{key: round(result[key], 3) for key in KEYS},
                       "lighter_used": round(100 * lighter_used / len(sources), 3)})
        print(json.dumps(trials[-1]))
    allowed = [t for t in trials if t["identical_to_source"] <= args.most_unchanged]
    chosen = max(allowed, key=lambda t: t["threshold"]) if allowed else trials[0]
    record = {"model_control": args.control or {}, "lighter": args.lighter or {}, "unknown_words": args.unknown_words,
              "chosen": chosen, "rule": f"the strictest threshold with identical_to_source <= {args.most_unchanged:g}",
              "met": bool(allowed), "trials": trials}
    args.out.write_text(json.dumps(record, indent=1).replace("-Infinity", '"none"') + "\n", encoding="utf-8")
    print(json.dumps(chosen))


if __name__ == "__main__":
    main()
