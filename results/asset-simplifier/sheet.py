"""A blind rating sheet on lines of split.json (tuning: the settings that choose the defaults;
rating: what ships; selection too, where a choice between two settings needs more lines), from
outputs score_lines.py wrote for each role (tune/LABEL.ROLE.txt). `wean rate prepare` underneath:
identical outputs merged, candidates shuffled, key.json naming the TurkCorpus tune line of each
item. ``--human K``: ASSET's reference K of each line as a system (a person's simplification, with
deletions and splits); the source is always a system. ``--differing``: only the lines where the
systems' outputs are not all the same (where they are, a rating cannot tell them apart);
``--exclude KEY``: not the lines of a sheet rated before.

    python results/asset-simplifier/sheet.py --role tuning --sentences 50 --seed 91 \\
        --out results/asset-simplifier/rating-settings --system pg-seed1-guarded --system shipped-guarded --human 0
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from score_lines import HERE, role_lines

from wean.evaluation import data_root, get_benchmark
from wean.rating.sheet import prepare
from wean.textio import read_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("selection", "tuning", "rating"), action="append", required=True,
                        help="whose lines (repeat: several roles' lines)")
    parser.add_argument("--system", action="append", required=True, help="a label with tune/LABEL.ROLE.txt")
    parser.add_argument("--human", type=int, choices=range(10), help="ASSET reference K (0-9) as the system 'human'")
    parser.add_argument("--sentences", type=int, help="a sample of the role's lines (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--differing", action="store_true", help="only lines where the systems' outputs differ")
    parser.add_argument("--exclude", type=Path, action="append", default=[], help="a key.json whose lines to leave out")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.role = list(dict.fromkeys(args.role))
    if args.differing and len(set(args.system)) < 2:
        parser.error("--differing: give two systems or more (one system differs from nothing)")
    if "rating" in args.role and len(args.role) > 1:
        parser.error("--role rating: alone (its lines decide what ships, on a sheet of their own)")
    root = data_root(None)
    source_path, references = get_benchmark("turkcorpus-asset-tune").paths(root)
    sources = read_lines(source_path)
    systems = {label: [""] * len(sources) for label in args.system}  # each role's outputs at their lines
    lines = []
    for role in args.role:
        role_of = role_lines(role)
        lines += role_of
        for label, full in systems.items():
            for line, output in zip(role_of, read_lines(HERE / "tune" / f"{label}.{role}.txt"), strict=True):
                full[line] = output
    excluded = {item["line"] - 1 for key in args.exclude for item in json.loads(key.read_text())["items"]}
    lines = [line for line in lines if line not in excluded]
    if args.differing:
        lines = [line for line in lines if len({full[line] for full in systems.values()}) > 1]
    if args.sentences is not None and not 1 <= args.sentences <= len(lines):
        parser.error(f"--sentences: 1 to {len(lines)}, the lines chosen")
    chosen = sorted(random.Random(args.seed).sample(lines, args.sentences)) if args.sentences else lines
    if args.human is not None:
        systems["human"] = read_lines(references[8 + args.human])
    systems["source"] = sources
    prepare(sources, systems, args.out, seed=args.seed, lines=[line + 1 for line in chosen], source_name="turkcorpus-tune")
    print(f"{args.out}: {len(chosen)} items from {len(systems)} systems; give raters sheet.csv and the protocol only")


if __name__ == "__main__":
    main()
