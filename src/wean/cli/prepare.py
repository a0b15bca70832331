"""``wean prepare``: training splits from the benchmark data."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.data.prepare import prepare
from wean.evaluation import data_root


def add(subparsers) -> None:
    parser = subparsers.add_parser("prepare", help="build training splits from the benchmark data",
                                   description="gigaword: train10k + validation samples without duplicates "
                                   "and without test1951/valid1k sources; lcsts: PART III score < 3 for "
                                   "training, >= 3 for testing; lcsts-part2: the 10,336 PART II pairs, 1,000 "
                                   "held out for selection. See src/wean/data/prepare.py.")
    parser.add_argument("corpus", choices=("gigaword", "lcsts", "lcsts-part2"), help="which training splits to build")
    parser.add_argument("--out", type=Path, required=True, help="folder for <split>.src / <split>.dst")
    options.add_data_root_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    counts = prepare(args.corpus, data_root(args.data_root), args.out)
    print(", ".join(f"{name} {count}" for name, count in counts.items()))
    return 0
