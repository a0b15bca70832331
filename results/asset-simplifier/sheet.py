"""A blind rating sheet on one role's lines of split.json (tuning: the settings that choose the
defaults; rating: what ships), from outputs score_lines.py wrote for that role (tune/LABEL.ROLE.txt).
`wean rate prepare` underneath: identical outputs merged, candidates shuffled, key.json naming the
TurkCorpus tune line of each item. ``--human K``: ASSET's reference K of each line as a system
(a person's simplification, with deletions and splits); the source is always a system.

    python results/asset-simplifier/sheet.py --role tuning --sentences 50 --seed 91 \\
        --out results/asset-simplifier/rating-settings --system pg-seed1-guarded --system shipped-guarded --human 0
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from score_lines import HERE, role_lines

from wean.evaluation import data_root, get_benchmark
from wean.rating.sheet import prepare
from wean.textio import read_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("tuning", "rating"), required=True)
    parser.add_argument("--system", action="append", required=True, help="a label with tune/LABEL.ROLE.txt")
    parser.add_argument("--human", type=int, choices=range(10), help="ASSET reference K (0-9) as the system 'human'")
    parser.add_argument("--sentences", type=int, help="a sample of the role's lines (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    lines = role_lines(args.role)
    if args.sentences is not None and not 1 <= args.sentences <= len(lines):
        parser.error(f"--sentences: 1 to {len(lines)}, the {args.role} lines")
    root = data_root(None)
    source_path, references = get_benchmark("turkcorpus-asset-tune").paths(root)
    sources = read_lines(source_path)
    chosen = sorted(random.Random(args.seed).sample(lines, args.sentences)) if args.sentences else lines

    def whole(outputs: list[str]) -> list[str]:  # the role's outputs at their tune lines, empty elsewhere
        full = [""] * len(sources)
        for line, output in zip(lines, outputs, strict=True):
            full[line] = output
        return full

    systems = {label: whole(read_lines(HERE / "tune" / f"{label}.{args.role}.txt")) for label in args.system}
    if args.human is not None:
        systems["human"] = read_lines(references[8 + args.human])
    systems["source"] = sources
    prepare(sources, systems, args.out, seed=args.seed, lines=[line + 1 for line in chosen], source_name="turkcorpus-tune")
    print(f"{args.out}: {len(chosen)} items from {len(systems)} systems; give raters sheet.csv and the protocol only")


if __name__ == "__main__":
    main()
