"""``wean simplify``: simplify plain English (the shipped model by default)."""

from __future__ import annotations

from pathlib import Path

from wean.cli import options
from wean.cli.generate import run as run_generate


def add(subparsers) -> None:
    parser = subparsers.add_parser("simplify", help="simplify plain English with the shipped model (or --model)",
                                   description="Simplify the sentences given as arguments, or one per line "
                                   "of stdin. Plain untokenized text goes in and comes out.")
    parser.add_argument("text", nargs="*", help="sentences to simplify (default: read stdin)")
    parser.add_argument("--model", type=Path, help="model directory (default: the pretrained simplifier)")
    options.add_generation_options(parser)
    parser.set_defaults(run=run_generate, input=None, output=None, plain_text=True, detokenize="none")
