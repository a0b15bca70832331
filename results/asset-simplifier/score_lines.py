"""A system's outputs on one role's lines of split.json (never the training lines), scored
against their 18 references (TurkCorpus tune's 8 and ASSET's 10) with the fidelity statistics;
one JSON line appended to scores.jsonl, the outputs written to tune/LABEL.ROLE.txt (one line per
role line, in split.json's order). Choices read the selection and tuning lines' scores only; the
rating lines' are written for the record, after their rating.

    python results/asset-simplifier/score_lines.py --label pg-seed1 --model exports/pg-seed1 --role selection
    python results/asset-simplifier/score_lines.py --label shipped-guarded --model src/wean/pretrained/simplifier
    python results/asset-simplifier/score_lines.py --label pg-seed1-lev0.6 --model M --control levenshtein=0.6 \\
        --option fallback=none
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from split import SPLIT

from wean.control import parse_control
from wean.evaluation.evaluate import evaluate
from wean.inference.generator import load
from wean.inference.tune_control import tuning_set
from wean.textio import atomic_write_text

HERE = Path(__file__).parent
BENCHMARK = "turkcorpus-asset-tune"
KEYS = ("sari", "bleu", "fkgl", "identical_to_source", "invented_names", "invented_numbers", "repeated_ngrams",
        "non_ascii_kept")
ROLES = ("selection", "tuning", "rating")


def role_lines(role: str) -> list[int]:
    """The role's 0-based tune lines."""
    return [line - 1 for line in json.loads(SPLIT.read_text())["roles"][role]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True)
    parser.add_argument("--model", nargs="+", required=True, help="a model directory, or several: an ensemble")
    parser.add_argument("--role", choices=ROLES, default="selection")
    parser.add_argument("--control", type=parse_control, help="NAME=VALUE,...: control values over the model's")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a search option or fallback_control (value read as YAML)")
    parser.add_argument("--out", type=Path, default=HERE / "scores.jsonl", help="the JSON lines file appended to")
    args = parser.parse_args()
    if any("=" not in option for option in args.option):
        parser.error("--option: write NAME=VALUE")
    options = {name: yaml.safe_load(value) for name, value in (o.split("=", 1) for o in args.option)}
    sources, references, settings = tuning_set(BENCHMARK, role_lines(args.role), None, KEYS[2:])
    generator = load(args.model if len(args.model) > 1 else args.model[0])
    generations = generator.generate(sources, plain_text=True, split_sentences=False, control=args.control, **options)
    outputs = [g.text for g in generations]
    scores = evaluate(outputs, sources, references, settings, yardstick=False).scores
    record = {"label": args.label, "role": args.role, "control": args.control or {}, "options": options,
              **{key: round(scores[key], 3) for key in KEYS},
              "fell_back": round(100 * sum(g.fell_back for g in generations) / len(generations), 3)}
    (HERE / "tune").mkdir(exist_ok=True)
    atomic_write_text(HERE / "tune" / f"{args.label}.{args.role}.txt", "".join(o + "\n" for o in outputs))
    with args.out.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
