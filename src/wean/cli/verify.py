"""``wean verify``: check a model directory for damage."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify", help="check a model directory: sha256 of every weights file, tensors against the architecture, "
        "tokenizer against the config")
    parser.add_argument("model", type=Path, help="model directory")
    parser.add_argument("--trust-plugins", action="store_true",
                        help="import the plug-in files the model directory's config names (their code runs)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from wean.verify import verify_model_directory

    for line in verify_model_directory(args.model, args.trust_plugins):
        print(line)
    return 0
