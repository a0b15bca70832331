"""``wean test``: generate for named benchmarks and score."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.evaluation import EvaluationSettings, get_benchmark
from wean.evaluation.evaluate import metric_list


def add(subparsers) -> None:
    parser = subparsers.add_parser("test", help="generate for named benchmarks and score the outputs",
                                   description="For each benchmark: generate for its source, write "
                                   "OUT_DIR/SYSTEM.BENCHMARK.txt, score it with the benchmark's conventions "
                                   "and gather the scores in OUT_DIR/metrics.json.")
    parser.add_argument("--model", type=Path, nargs="+", required=True,
                        help="model directory written by wean train; several: their ensemble (same vocabularies)")
    parser.add_argument("--benchmark", nargs="+", required=True, help="names from wean evaluate --list-benchmarks")
    parser.add_argument("--system", help="name of the system in file names (default: the model directory's name; "
                        "an ensemble's joined by +)")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for SYSTEM.BENCHMARK.txt and metrics.json")
    options.add_data_root_option(parser)
    parser.add_argument("--metrics", help="comma-separated registered metrics in place of each benchmark's "
                        "(a list that starts with + adds to them), e.g. +rouge")
    options.add_search_options(parser)
    options.add_rerank_option(parser)
    parser.add_argument("--detokenize", choices=("none", "ptb"), default="none",
                        help="ptb: undo PTB tokenization, for benchmarks with detokenized references")
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="the benchmark's source is plain text: tokenize it as the model's corpus was, "
                        "and detokenize the outputs (default: yes for benchmarks of plain text, as "
                        "turkcorpus-test; no for tokenized ones)")
    options.add_control_option(parser)
    options.add_device_option(parser)
    options.add_product_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.benchmark_scores import score_on_benchmarks

    options.check_generation_arguments(args)
    for name in args.benchmark:  # typos fail before loading anything
        EvaluationSettings(metric_list(args.metrics, get_benchmark(name).metrics))
    system = args.system or "+".join(model.resolve().name for model in args.model)
    generator, control = options.load_generator(args)
    records = score_on_benchmarks(
        generator, args.benchmark, system, args.out_dir, args.data_root, args.detokenize,
        plain_text=args.plain_text, metrics=args.metrics, control=control, rerank=args.rerank,
        **options.search_arguments(args),
    )
    for name, record in records.items():
        scores = ", ".join(f"{k} {v:.2f}" for k, v in record["scores"].items()
                           if k in ("sari", "bleu", "multi_bleu", "fkgl", "rouge1", "rouge2", "rougeL",
                                    "invented_numbers", "invented_names", "repeated_ngrams"))
        print(f"{system} on {name}: {scores}")
    return 0
