"""``wean inspect``: parameters per module."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options


def add(subparsers) -> None:
    parser = subparsers.add_parser("inspect", help="parameters per module of a model or config")
    parser.add_argument("target", type=Path, help="a model directory or a YAML config")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key (repeatable), as for wean train")
    parser.add_argument("--source-vocabulary", type=int, help="vocabulary size to assume for a config "
                        "(default: data.tokenizer.vocab_size + 4 specials)")
    parser.add_argument("--target-vocabulary", type=int, help="likewise for the target side")
    parser.add_argument("--compare-output-layers", action="store_true",
                        help="also count the output-layer parameters of the linear layer and of each WEAN "
                        "score function at these sizes (the WEAN paper's Table 5)")
    options.add_trust_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wean.parameter_counts import inspect_target

    print(inspect_target(args.target, args.overrides, args.source_vocabulary, args.target_vocabulary,
                         args.compare_output_layers, args.trust_plugins))
    return 0
