"""``wean generate``: outputs of a trained model, one per input line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tqdm import tqdm

from wean.cli import options
from wean.data.ptb import detokenize
from wean.errors import WeanError
from wean.textio import one_line, one_line_json, read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser("generate", help="generate outputs with a trained model",
                                   description="Read one input per line (a file or stdin), write one output "
                                   "per line in the same order (a file or stdout); with --nbest above 1, one JSON "
                                   'object per line instead: {"source": ..., "nbest": [{"text", "score", '
                                   '"log_prob"}, ...]}, best first.')
    parser.add_argument("--model", type=Path, nargs="+", required=True,
                        help="model directory written by wean train; several: their ensemble (same vocabularies)")
    parser.add_argument("--input", type=Path, help="input file (default: stdin)")
    parser.add_argument("--output", type=Path, help="output file (default: stdout)")
    options.add_generation_options(parser)
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="inputs are untokenized text and outputs are text for people "
                        "(default: the model's generation.plain_text)")
    parser.add_argument("--detokenize", choices=("none", "ptb"), default="none",
                        help="ptb: undo PTB tokenization (-LRB-, ``, do n't) in the outputs")
    parser.set_defaults(run=run)


BLOCK = 64  # lines per generate() call: outputs are written block by block, in input order


def run(args: argparse.Namespace) -> int:
    return write_outputs(args, plain_text=args.plain_text, detokenizer=args.detokenize)


def write_outputs(args: argparse.Namespace, plain_text: bool | None, detokenizer: str) -> int:
    """The outputs of the texts ``args`` gives (arguments, --input or stdin), one line each, to
    --output or stdout; shared by ``wean generate`` and ``wean simplify``."""
    options.check_generation_arguments(args)
    if args.output is not None:  # said before the model loads, not after it has generated
        if args.output.is_dir():
            raise WeanError(f"--output {args.output}: a folder; name a file")
        if not args.output.parent.is_dir():
            raise WeanError(f"--output {args.output}: the folder {args.output.parent} does not exist")
    generator, control = options.load_generator(args)
    search = options.search_arguments(args)
    as_json = generator.search_options(**search).nbest > 1
    rerank = getattr(args, "rerank", None)  # NAME=WEIGHT,... (checked with the other options); None: the model's own
    if getattr(args, "text", None):
        sources = [" ".join(text.split()) for text in args.text]
    elif args.input is not None:
        sources = read_lines(args.input)
    else:
        if sys.stdin.isatty():  # not a silent wait: say what is expected
            print("reading one input per line from stdin; end with Ctrl-D", file=sys.stderr)
        sources = read_stdin()
    where = args.input or ("argument" if getattr(args, "text", None) else "stdin")
    for number, line in enumerate(sources, start=1):
        if not line:
            print(f"warning: {where}:{number}: empty input, empty output", file=sys.stderr)

    # a file is written under a temporary name as outputs come, and renamed when complete: an
    # interrupted run keeps what it finished there, and never leaves a half file under the name
    partial = args.output.with_name(args.output.name + ".partial") if args.output is not None else None
    out = partial.open("w", encoding="utf-8") if partial is not None else sys.stdout
    written = 0
    try:
        # on a terminal: sentences done, batch by batch (a long text is many sentences in one line)
        with tqdm(total=0, unit="sentence", disable=None, file=sys.stderr, leave=False) as progress:
            for start in range(0, len(sources), BLOCK):
                finished_before = progress.n

                def advance(done: int, total: int, before: int = finished_before) -> None:
                    progress.total = before + total
                    progress.update(before + done - progress.n)

                generations = generator.generate(
                    sources[start : start + BLOCK], replace_unk=args.replace_unk, batch_size=args.batch_size,
                    plain_text=plain_text, control=control, rerank=rerank, progress=advance, **search,
                )
                for number, generation in enumerate(generations, start=start + 1):
                    for warning in (generation.warning or "").splitlines():  # one per sentence concerned
                        print(f"warning: {where}:{number}: {warning}", file=sys.stderr)
                    if as_json:
                        out.write(nbest_line(generation, detokenizer) + "\n")
                        continue
                    text = one_line(detokenize(generation.text, detokenizer))
                    out.write((f"{generation.score:.4f}\t{text}" if args.scores else text) + "\n")
                out.flush()
                written += len(generations)
    except KeyboardInterrupt:
        kept = f"; they are in {partial}" if partial is not None else ""
        print(f"interrupted: {written} of {len(sources)} outputs written{kept}", file=sys.stderr)
        return 130
    finally:
        if partial is not None:
            out.close()
    if partial is not None:
        os.replace(partial, args.output)
    return 0


def nbest_line(generation, detokenizer: str) -> str:
    """One input's n-best list as a line of JSON. Where the fallback returned the source unchanged
    (every output failed a check), it comes first marked ``"fell_back": true``, without a score the
    search never gave it, and the outputs after it ``"rejected": true``."""
    nbest = []
    for position, hypothesis in enumerate(generation.nbest):
        if generation.returned_source and position == 0:
            nbest.append({"text": detokenize(hypothesis.text, detokenizer), "fell_back": True})
            continue
        entry = {"text": detokenize(hypothesis.text, detokenizer), "score": round(hypothesis.score, 6),
                 "log_prob": round(hypothesis.log_prob, 6), **({"rejected": True} if generation.returned_source else {})}
        if hypothesis.rerank_scores:
            entry["rerank_scores"] = {name: round(value, 6) for name, value in hypothesis.rerank_scores.items()}
        nbest.append(entry)
    return one_line_json({"source": generation.source, "nbest": nbest})


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
