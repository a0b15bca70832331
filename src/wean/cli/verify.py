"""``wean verify``: check a model directory for damage."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify", help="check a model directory: sha256 of every weights file, tensors against the architecture, "
        "tokenizer against the config")
    parser.add_argument("model", type=Path, help="model directory")
    options.add_trust_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.model_dir import verify_model_directory

    for line in verify_model_directory(args.model, args.trust_plugins):
        print(line)
    return 0
