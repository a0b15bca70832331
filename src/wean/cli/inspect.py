"""``wean inspect``: parameters per module."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.config import load_config
from wean.data.vocabulary import SPECIALS


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
    # deferred: they import torch, which `wean --help` and the light commands never load
    from wean.model_dir import load_assets
    from wean.models.parameter_counts import inspect_model

    if args.target.is_dir():
        assets = load_assets(args.target, args.trust_plugins)
        config = assets.config
        source_size, target_size = len(assets.source_vocabulary), len(assets.target_vocabulary)
    else:
        config = load_config(args.target, args.overrides)
        default = config.data.tokenizer.vocab_size + len(SPECIALS)
        source_size = args.source_vocabulary or default
        target_size = args.target_vocabulary or (source_size if config.data.tokenizer.shared_vocab else default)
    print(inspect_model(config, source_size, target_size, args.compare_output_layers))
    return 0
