"""The split of TurkCorpus tune's 2,000 sentences (ASSET valid's, line for line) by what each line
is for, written once into split.json and kept: a model trained on some of these lines is selected,
tuned and rated on none of them.

- selection: lines 1-500, which chose every checkpoint of this project's simplifiers (training's
  validation: data.max_valid_sentences 500), and choose this experiment's checkpoints and recipes;
- tuning: the 300 lines `wean tune-control --sentences 300 --skip 500 --seed 1` samples, which tuned
  the shipped model's control values, and tune this experiment's controls, guard and fallback;
- rating: the 100 lines of this project's two blind-rating sheets on tune (results/fidelity's and
  results/decoding's, which results/faithful and results/clean-simplifier rated again);
- training: the rest; their 8 TurkCorpus and 10 ASSET references are training targets.

    python results/asset-simplifier/split.py          # writes split.json (refuses to change it)
    python results/asset-simplifier/split.py --check  # the split and the data's checksums as recorded
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from wean.data.root import data_root
from wean.inference.tune_control import sample_sentences
from wean.textio import read_lines

HERE = Path(__file__).parent
SPLIT = HERE / "split.json"
RATING_SHEETS = ("results/fidelity/rating/key.json", "results/decoding/rating/key.json")
SOURCE = "turkcorpus/case_detok/tune.src"
REFERENCES = [f"turkcorpus/case_detok/tune.ref.{i}" for i in range(8)] + [f"asset/valid.ref.{i}" for i in range(10)]
FILES = [SOURCE, "asset/valid.src", *REFERENCES]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_split(root: Path) -> dict:
    total = len(read_lines(root / SOURCE))
    selection = list(range(1, 501))
    tuning = [line + 1 for line in sample_sentences(300, total, 500, 1)]
    rating = sorted({item["line"] for sheet in RATING_SHEETS for item in json.loads(Path(sheet).read_text())["items"]})
    held_out = set(selection) | set(tuning) | set(rating)
    if len(held_out) != len(selection) + len(tuning) + len(rating):
        raise SystemExit("split.py: the roles overlap")
    training = [line for line in range(1, total + 1) if line not in held_out]
    return {
        "lines": "1-based line numbers of turkcorpus/case_detok/tune.src (= asset/valid.src)",
        "roles": {"selection": selection, "tuning": tuning, "rating": rating, "training": training},
        "sha256": {name: sha256(root / name) for name in FILES},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with split.json instead of writing it")
    args = parser.parse_args()
    split = make_split(data_root(None))
    if args.check or SPLIT.exists():
        recorded = json.loads(SPLIT.read_text())
        if recorded != split:
            sys.exit("split.py: split.json differs from the split this data gives; it is never rewritten")
        print("split.json: as recorded")
        return
    # a role or a file a line, so that a change shows in a diff
    SPLIT.write_text("{\n" + ",\n".join(f" {json.dumps(key)}: {json.dumps(value)}" for key, value in split.items()) + "\n}\n")
    print(", ".join(f"{role} {len(lines)}" for role, lines in split["roles"].items()))


if __name__ == "__main__":
    main()
