"""``wean shortlist``: the vocabulary shortlist's table of a model directory (wean/inference/shortlist.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "shortlist", help="learn the vocabulary shortlist's table of a model (for --shortlist N)",
        description="Learn, from the model's training pairs, each source word's most likely target words "
        "(co-occurrence in a pair, beyond the most frequent words) and the target words by frequency; written "
        "to DIR/shortlist.safetensors. Then --shortlist N (generate, simplify, test, serve requests) scores only "
        "the N most frequent target words, the source's tokens and their table words.",
    )
    parser.add_argument("model_dir", type=Path, metavar="DIR", help="model directory")
    parser.add_argument("--train", metavar="PREFIX", help="training pairs PREFIX.src / PREFIX.dst (default: "
                        "the model's data.train)")
    parser.add_argument("--per-word", type=int, default=10, metavar="K", help="target words kept per source word")
    parser.add_argument("--frequent", type=int, default=1000, metavar="N",
                        help="the most frequent target words, left out of the table (every --shortlist of N or "
                        "more holds them)")
    options.add_trust_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.shortlist import make_shortlist_table

    table, pairs = make_shortlist_table(args.model_dir, args.train, args.per_word, args.frequent, args.trust_plugins)
    filled = int((table.translations >= 0).any(dim=1).sum())
    print(f"{args.model_dir}/shortlist.safetensors: {pairs:,} training pairs; {filled:,} of "
          f"{table.translations.size(0):,} source words have table words (up to {table.per_word} each)")
    return 0
