"""``wean generate``: outputs of a trained model, one per input line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wean.checkpoint import atomic_write_text
from wean.cli import options
from wean.errors import WeanError
from wean.textio import read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser("generate", help="generate outputs with a trained model",
                                   description="Read one input per line (a file or stdin), write one output "
                                   "per line in the same order (a file or stdout).")
    parser.add_argument("--model", type=Path, required=True, help="model directory written by wean train")
    parser.add_argument("--input", type=Path, help="input file (default: stdin)")
    parser.add_argument("--output", type=Path, help="output file (default: stdout)")
    options.add_generation_options(parser)
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="inputs are untokenized text and outputs are text for people "
                        "(default: the model's generation.plain_text)")
    parser.add_argument("--detokenize", choices=("none", "ptb"), default="none",
                        help="ptb: undo PTB tokenization (-LRB-, ``, do n't) in the outputs")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options.check_generation_arguments(args)
    generator, control = options.load_generator(args)
    if getattr(args, "text", None):
        sources = [" ".join(text.split()) for text in args.text]
    else:
        sources = read_lines(args.input) if args.input is not None else read_stdin()
    for number, line in enumerate(sources, start=1):
        if not line:
            print(f"warning: {args.input or 'stdin'}:{number}: empty input, empty output", file=sys.stderr)
    generations = generator.generate(
        sources, beam=args.beam, length_penalty=args.length_penalty, min_length=args.min_length,
        max_length=args.max_length, block_ngram_repeat=args.block_ngram_repeat,
        replace_unk=args.replace_unk, batch_size=args.batch_size, plain_text=args.plain_text, control=control,
    )
    from wean.data.ptb import detokenize

    for number, generation in enumerate(generations, start=1):
        if generation.warning:
            print(f"warning: {args.input or 'input'}:{number}: {generation.warning}", file=sys.stderr)
    texts = [detokenize(g.text, args.detokenize) for g in generations]
    text = "".join((f"{g.score:.4f}\t{t}" if args.scores else t) + "\n" for g, t in zip(generations, texts))
    if args.output is not None:
        atomic_write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def read_stdin() -> list[str]:
    data = sys.stdin.buffer.read()
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise WeanError(f"stdin:{line}: not valid UTF-8") from None
    if lines[-1] == "":
        lines.pop()
    return [line.strip() for line in lines]
