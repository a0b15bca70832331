"""Scores of one decoding setting on validation data: 400 TurkCorpus tune sentences that neither
selected the checkpoints (tune lines 1-500) nor tuned the control values (the 300 that
`wean tune-control --sentences 300 --skip 500 --seed 1` samples). One JSON line per call,
appended to results/decoding/selection.jsonl; the settings of results/decoding are chosen from it.

    python results/decoding/tune_score.py --label avg3-seed1 --model RUN-avg3
    python results/decoding/tune_score.py --label summary0.2-seed1 --model RUN \
        --option coverage_penalty=summary --option coverage_weight=0.2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from wean.evaluation import data_root, get_benchmark
from wean.evaluation.evaluate import evaluate
from wean.inference.generator import load
from wean.inference.tune_control import sample_sentences, tuning_set
from wean.textio import read_lines

OUT = Path(__file__).parent / "selection.jsonl"
KEYS = ("sari", "bleu", "identical_to_source", "repeated_ngrams", "invented_names")


def selection_lines() -> list[int]:
    source, _ = get_benchmark("turkcorpus-tune").paths(data_root(None))
    total = len(read_lines(source))
    control_tuning = set(sample_sentences(300, total, 500, 1))
    pool = [line for line in range(500, total) if line not in control_tuning]
    return [pool[i] for i in sample_sentences(400, len(pool), 0, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--model", nargs="+", required=True)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a search option (value read as YAML)")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON lines file appended to")
    args = parser.parse_args()
    options = {name: yaml.safe_load(value) for name, value in (o.split("=", 1) for o in args.option)}
    sources, references, settings = tuning_set("turkcorpus-tune", selection_lines(), None,
                                               ("repeated_ngrams", "invented_names"))
    generator = load(args.model if len(args.model) > 1 else args.model[0])
    outputs = [g.text for g in generator.generate(sources, plain_text=True, split_sentences=False, **options)]
    scores = evaluate(outputs, sources, references, settings, yardstick=False).scores
    record = {"label": args.label, "options": options, **{key: round(scores[key], 3) for key in KEYS}}
    with args.out.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
