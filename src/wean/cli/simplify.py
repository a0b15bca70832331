"""``wean simplify``: simplify plain English (the shipped model by default)."""

from __future__ import annotations

from pathlib import Path

from wean.cli import options
from wean.cli.generate import write_outputs
from wean.errors import WeanError
from wean.textio import is_file


def add(subparsers) -> None:
    parser = subparsers.add_parser("simplify", help="simplify plain English with the shipped model (or --model)",
                                   description="Simplify the sentences given as arguments, or one per line "
                                   "of stdin. Plain untokenized text goes in and comes out.")
    parser.add_argument("text", nargs="*", help="sentences to simplify (default: --input, else stdin)")
    parser.add_argument("--model", type=Path, help="model directory (default: the pretrained simplifier)")
    parser.add_argument("--input", type=Path, help="a file of texts to simplify, one per line")
    parser.add_argument("--output", type=Path, help="output file (default: stdout)")
    options.add_generation_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    if args.text and args.input is not None:
        raise WeanError("simplify: give sentences as arguments or --input FILE, not both")
    if len(args.text) == 1 and is_file(args.text[0]):  # a file name would be simplified as a sentence
        raise WeanError(f"simplify: {args.text[0]!r} is a file: to simplify its lines, use --input {args.text[0]}")
    return write_outputs(args, plain_text=True, detokenizer="none")  # plain text in, plain text out
