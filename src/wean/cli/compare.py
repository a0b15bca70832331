"""``wean compare``: paired bootstrap test of two systems."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wean.cli import options
from wean.evaluation import METRICS
from wean.errors import WeanError
from wean.evaluation.significance import PAIRED_METRICS, paired_bootstrap, paired_metrics
from wean.textio import check_same_length, read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired bootstrap test of two systems' outputs (SARI, BLEU, ROUGE, output statistics)",
        description="Is system A better than system B on this test set beyond what resampling its "
        "sentences explains? Prints each score, the difference A - B with its 95 % bootstrap interval "
        "and the p-value of the paired bootstrap test (Koehn 2004, as sacreBLEU's --paired-bs).",
    )
    parser.add_argument("--hyp", type=Path, nargs=2, required=True, metavar=("A", "B"), help="two output files")
    options.add_scoring_options(parser, PAIRED_METRICS + ("fidelity", "reverse"))
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the resampling (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    pairable = paired_metrics()
    benchmark, source, references, settings, metrics = options.scoring_inputs(
        args, default_metrics=pairable, output_statistics=tuple(m for m in pairable if m not in METRICS.names()))
    unknown = [m for m in metrics if m not in pairable]
    if unknown:
        raise WeanError(f"no paired test for metric {unknown[0]!r}; choose from {', '.join(pairable)}")
    source_lines = read_lines(source) if source is not None else None
    reference_streams = [read_lines(path) for path in references]
    outputs = [read_lines(path) for path in args.hyp]
    for path, lines in zip(args.hyp, outputs):
        if not lines:
            raise WeanError(f"{path}: empty file, no outputs to compare")
    named = [(Path(source), source_lines)] if source is not None else []
    named += list(zip(map(Path, references), reference_streams)) + list(zip(args.hyp, outputs))
    check_same_length(named)
    results = paired_bootstrap(
        outputs[0], outputs[1], source_lines, reference_streams, metrics, settings.sari_variant,
        settings.lowercase, settings.tokenizer, args.samples, args.seed,
        reverse_model=settings.reverse_model, plain_text=settings.plain_text,
    )
    if args.json:
        record = {"a": str(args.hyp[0]), "b": str(args.hyp[1]), "benchmark": benchmark.name if benchmark else None,
                  "comparisons": [result.as_dict() for result in results]}
        print(json.dumps(record, indent=2))
        return 0
    print(f"A = {args.hyp[0]}\nB = {args.hyp[1]}\n{args.samples} paired bootstrap resamples of "
          f"{len(outputs[0])} sentences")
    width = max(10, *(len(r.metric) for r in results))
    print(f"{'metric':<{width}}  {'A':>7}  {'B':>7}  {'A - B':>7}  {'95 % interval':>17}  {'p':>6}")
    for r in results:
        interval = f"[{r.low:+.2f}, {r.high:+.2f}]"
        print(f"{r.metric:<{width}}  {r.score_a:7.2f}  {r.score_b:7.2f}  {r.difference:+7.2f}  {interval:>17}  {r.p_value:6.3f}")
    return 0
