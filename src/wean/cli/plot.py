"""``wean plot``: validation curves."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.plotting import convergence, plot_curves, read_validations, run_name
from wean.registry import score_key


def add(subparsers) -> None:
    parser = subparsers.add_parser("plot", help="validation curves of training runs as a PNG")
    parser.add_argument("runs", type=Path, nargs="+",
                        help="model directories written by wean train, or copies of their validations.json")
    parser.add_argument("--metric", default="bleu",
                        help="a key of the validation records: loss, perplexity, or a score key of the metrics "
                        "validated (bleu, sari, rouge2, ..., and those of training.validation_metrics) (default: bleu)")
    parser.add_argument("--labels", help="comma-separated legend labels, one per run")
    parser.add_argument("--out", type=Path, required=True, help="PNG file to write")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    labels = options.labels(args.labels, len(args.runs), "runs")
    plot_curves(args.runs, args.metric, args.out, labels)
    print(f"wrote {args.out}")
    if _higher_is_better(args.metric):  # the convergence summary reads a peak
        for label, run in zip(labels or [run_name(run) for run in args.runs], args.runs):
            records = [record for record in read_validations(run) if args.metric in record]
            if min(record[args.metric] for record in records) < 0:  # "95 % of the peak" means nothing there
                continue
            summary = convergence(records, args.metric)
            print(f"{label}: best {args.metric} {summary['best']:.2f} at epoch {summary['best_epoch']:.2f}; "
                  f"95% of it first at epoch {summary['epochs_to_95pct']:.2f}"
                  f"{' (still improving at the last validation: lower bounds)' if summary['still_improving'] else ''}")
    return 0


def _higher_is_better(key: str) -> bool:
    try:
        return score_key(key)[1] == "higher"
    except WeanError:  # a plug-in's key, its file not loaded here: plotted without a summary
        return False
