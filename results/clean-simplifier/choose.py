"""The candidate to rate and, if readers prefer it, to ship: chosen from selection.jsonl (the 400
TurkCorpus tune sentences of results/decoding/tune_score.py) by results/faithful's rule, the
highest SARI among the systems whose invented names and repeated phrases are at or below the
human references' own rates on the same sentences; where none is, the system nearest that floor
(the sum of its excesses). Validation data only. Writes --out (choice.json) and prints it.

    python results/clean-simplifier/choose.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "decoding"))
sys.path.insert(0, str(HERE.parent / "faithful"))
from tune_rerank import FLOOR, KEYS, references_rates  # noqa: E402  results/faithful's floor and yardstick
from tune_score import selection_lines  # noqa: E402  the 400 sentences

from wean.inference.tune_control import tuning_set  # noqa: E402


def excess(record: dict, human: dict) -> float:
    return sum(max(0.0, record[key] - human[key]) for key in FLOOR)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--selection", type=Path, default=HERE / "selection.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "choice.json")
    args = parser.parse_args()
    records = [json.loads(line) for line in args.selection.read_text(encoding="utf-8").splitlines() if line.strip()]
    sources, references, settings = tuning_set("turkcorpus-tune", selection_lines(), None, KEYS[3:])
    human = references_rates(sources, references, settings)
    meeting = [r for r in records if excess(r, human) == 0.0]
    chosen = max(meeting, key=lambda r: r["sari"]) if meeting else min(records, key=lambda r: (excess(r, human),
                                                                                              -r["sari"]))
    choice = {"chosen": chosen, "meets_floor": bool(meeting), "references": human,
              "floor": [f"{key}<=references" for key in FLOOR], "candidates": len(records)}
    args.out.write_text(json.dumps(choice, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(choice, indent=2))


if __name__ == "__main__":
    main()
