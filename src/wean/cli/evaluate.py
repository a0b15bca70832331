"""``wean evaluate``: score system outputs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.evaluation import BENCHMARKS, evaluate_files
from wean.evaluation.sari import sentence_sari
from wean.textio import read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score system outputs (SARI, BLEU, ROUGE, FKGL, statistics)",
        description="Score a file of system outputs against a source and references, or against a "
        "named benchmark. Every score is printed with the signature of the settings it used.",
    )
    parser.add_argument("--hyp", type=Path, help="system outputs, one line per source line")
    options.add_scoring_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON record instead of a table")
    parser.add_argument("--sentence-sari", type=Path, metavar="FILE",
                        help="also write the SARI of every sentence to FILE (tab-separated: sari add keep del)")
    parser.add_argument("--list-benchmarks", action="store_true", help="list the named benchmarks and exit")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.list_benchmarks:
        print(list_benchmarks())
        return 0
    if args.hyp is None:
        raise WeanError("--hyp FILE is required (or --list-benchmarks)")
    benchmark, source, references, settings, _ = options.scoring_inputs(args)
    evaluation = evaluate_files(args.hyp, source, references, settings, benchmark, args.data_root)
    if args.sentence_sari:
        write_sentence_sari(args.sentence_sari, args.hyp, source, references, settings)
    if args.json:
        print(json.dumps(evaluation.to_dict(), indent=2, ensure_ascii=False))
    else:
        against = benchmark.name if benchmark else ", ".join(str(p) for p in references)
        print(f"{args.hyp}: {evaluation.segments} segments against {against} ({evaluation.references} references)")
        print(evaluation.table())
    return 0


def list_benchmarks() -> str:
    lines = []
    for benchmark in BENCHMARKS.values():
        lines.append(f"{benchmark.name}: {benchmark.note}")
        lines.append(f"    outputs must be: {benchmark.output_convention}")
        lines.append(
            f"    default scoring: metrics {','.join(benchmark.metrics)}; "
            f"{'lowercased' if benchmark.lowercase else 'cased'}; tokenizer {benchmark.tokenizer}"
        )
    return "\n".join(lines)


def write_sentence_sari(path: Path, hyp: Path, source: Path | None, references, settings) -> None:
    if source is None:
        raise WeanError("--sentence-sari needs a source (--src or --benchmark)")
    outputs, sources = read_lines(hyp), read_lines(source)
    streams = [read_lines(p) for p in references]
    with open(path, "w", encoding="utf-8") as out:
        for i, (src, output) in enumerate(zip(sources, outputs)):
            scores = sentence_sari(
                src, output, [s[i] for s in streams], settings.sari_variant, settings.lowercase, settings.tokenizer
            )
            out.write(f"{scores.sari:.4f}\t{scores.add:.4f}\t{scores.keep:.4f}\t{scores.delete:.4f}\n")
