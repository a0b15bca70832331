"""``wean odd-gen``: odd-generation counts (Kiyono et al. 2018)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, data_root, evaluate_files, get_benchmark
from wean.evaluation.normalize import TOKENIZERS
from wean.plotting import plot_odd_generation


def add(subparsers) -> None:
    parser = subparsers.add_parser("odd-gen", help="odd-generation counts of several systems, table and bar plot",
                                   description="Kiyono et al. (2018) section 6.1: per system, repeated tokens "
                                   "beyond the reference's and the length shortfall against the reference.")
    parser.add_argument("--hyp", type=Path, nargs="+", required=True, help="one output file per system")
    parser.add_argument("--labels", help="comma-separated system names (default: file names)")
    parser.add_argument("--benchmark", help="take the references from a named benchmark")
    parser.add_argument("--refs", type=Path, nargs="+", default=[], help="reference files instead of --benchmark")
    options.add_data_root_option(parser)
    parser.add_argument("--tokenize", choices=TOKENIZERS, help="default: the benchmark's, else 13a")
    parser.add_argument("--out", type=Path, help="PNG with the paper's Figure 2")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    tokenizer, lowercase, references = "13a", True, list(args.refs)
    if args.benchmark:
        benchmark = get_benchmark(args.benchmark)
        _, references = benchmark.paths(data_root(args.data_root))
        tokenizer, lowercase = benchmark.tokenizer, benchmark.lowercase
    if not references:
        raise WeanError("no references: give --refs FILE [FILE ...] or --benchmark NAME")
    tokenizer = args.tokenize or tokenizer
    labels = options.labels(args.labels, len(args.hyp), "output files") or [p.stem for p in args.hyp]
    settings = EvaluationSettings(metrics=("stats",), lowercase=lowercase, tokenizer=tokenizer)
    summaries = {}
    for label, path in zip(labels, args.hyp):
        scores = evaluate_files(path, None, references, settings, root=args.data_root).scores
        summaries[label] = scores
    keys = ("repeated_tokens", "outputs_with_repeats", "length_shortfall", "outputs_shorter_than_reference")
    print("system".ljust(20) + "".join(k.rjust(32) for k in keys))
    for label, scores in summaries.items():
        print(label.ljust(20) + "".join(f"{scores[k]:>32}" for k in keys))
    if args.out:
        plot_odd_generation(summaries, args.out)
        print(f"wrote {args.out}")
    return 0
