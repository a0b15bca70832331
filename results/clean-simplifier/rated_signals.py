"""Which model scores tell the outputs readers judged broken or false from the rest?

Every changed output rated in results/*/rating*/ (TurkCorpus tune sentences only), with the mean of
its raters' scores, is scored by a language model of the simple side (log P(output) per token, and
that less the source's) and by channel models (log P(source | output) per source token). Printed:
per signal, the area under the ROC curve for flagging broken outputs (fluency <= 2), meaning changes
(adequacy <= 2) and either, a low score flagging (0.5: no better than chance; below 0.5: the signal
points the other way). Written: --out, one JSON record per output with its scores.

    python results/clean-simplifier/rated_signals.py --lm DIR --channel NAME=DIR [NAME=DIR ...] --out FILE
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import torch

from wean.data.corpus import LM_SOURCE
from wean.inference.forced_scores import forced_log_probs
from wean.inference.generator import load

SCALES = ("adequacy", "fluency", "simplicity")
FLAGS = {
    "broken": lambda r: r["fluency"] <= 2,
    "meaning changed": lambda r: r["adequacy"] <= 2,
    "either": lambda r: r["fluency"] <= 2 or r["adequacy"] <= 2,
}


def rated_outputs(results: Path) -> list[dict]:
    """Each distinct (source, output) rated anywhere, its scales the mean over sheets of each
    sheet's mean over raters."""
    per_sheet: dict[tuple[str, str], list[dict[str, float]]] = {}
    for sheet in sorted(results.glob("*/rating*/")):
        scores: dict[tuple[str, str], list[dict[str, int]]] = {}
        for rater in sorted(sheet.glob("rater-*.csv")):
            with rater.open(encoding="utf-8") as file:
                for row in csv.DictReader(file):
                    if all(row.get(scale, "").isdigit() for scale in SCALES):
                        scores.setdefault((row["source"], row["output"]), []).append(
                            {scale: int(row[scale]) for scale in SCALES})
        for key, ratings in scores.items():
            per_sheet.setdefault(key, []).append(
                {scale: sum(r[scale] for r in ratings) / len(ratings) for scale in SCALES})
    return [{"source": source, "output": output,
             **{scale: sum(m[scale] for m in means) / len(means) for scale in SCALES}}
            for (source, output), means in per_sheet.items()]


def per_token(scores: list[tuple[float, int]]) -> list[float]:
    return [total / max(1, count) for total, count in scores]


def auc(scores: list[float], flagged: list[bool]) -> float:
    """P(a flagged output scores below an unflagged one), ties counting half."""
    low = [s for s, f in zip(scores, flagged) if f]
    high = [s for s, f in zip(scores, flagged) if not f]
    return sum((a < b) + 0.5 * (a == b) for a in low for b in high) / (len(low) * len(high))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm", type=Path, required=True)
    parser.add_argument("--channel", nargs="+", required=True, metavar="NAME=DIR")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--results", type=Path, default=Path("results"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = [r for r in rated_outputs(args.results) if r["output"] != r["source"]]
    sources, outputs = [r["source"] for r in rows], [r["output"] for r in rows]
    language_model = load(args.lm)
    lm_output = per_token(forced_log_probs(language_model, [LM_SOURCE] * len(rows), outputs, plain_text=True))
    lm_source = per_token(forced_log_probs(language_model, [LM_SOURCE] * len(rows), sources, plain_text=True))
    signals = {"lm": lm_output, "lm - lm(source)": [o - s for o, s in zip(lm_output, lm_source)]}
    for named in args.channel:
        name, directory = named.split("=", 1)
        signals[f"channel {name}"] = per_token(forced_log_probs(load(directory), outputs, sources, plain_text=True))
    with args.out.open("w", encoding="utf-8") as file:
        for i, row in enumerate(rows):
            file.write(json.dumps({**row, **{name: values[i] for name, values in signals.items()}}) + "\n")
    print(f"{len(rows)} changed outputs rated; AUC of a low score flagging each kind")
    print(f"{'signal':<24}" + "".join(f"{flag:>18}" for flag in FLAGS))
    print(f"{'(outputs flagged)':<24}" + "".join(f"{sum(map(test, rows)):>18}" for test in FLAGS.values()))
    for name, values in signals.items():
        print(f"{name:<24}" + "".join(f"{auc(values, [test(r) for r in rows]):>18.3f}" for test in FLAGS.values()))


if __name__ == "__main__":
    main()
