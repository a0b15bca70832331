"""``wean average``: a model directory whose weights are the mean of several checkpoints'."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "average", help="average the weights of a run's checkpoints into a new model directory",
        description="The element-wise mean of the weights of a run's last N checkpoints (or of those named), "
        "written to OUT as a model directory that wean generate, test and serve load like any other.",
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN", help="model directory written by wean train (its checkpoints/)")
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--last", type=int, metavar="N", help="the N newest checkpoints the run kept")
    chosen.add_argument("--checkpoints", nargs="+", metavar="NAME",
                        help="checkpoints by name (step-00001200) or as checkpoint directories")
    parser.add_argument("--out", type=Path, required=True, help="new model directory")
    options.add_trust_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.training.average import average_checkpoints, choose_checkpoints

    checkpoints = choose_checkpoints(args.run_dir, args.last, args.checkpoints or ())
    average_checkpoints(args.run_dir, checkpoints, args.out, args.trust_plugins)
    print(f"{args.out}: the mean of {len(checkpoints)} checkpoints ({', '.join(path.name for path in checkpoints)})")
    return 0
