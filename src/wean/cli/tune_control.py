"""``wean tune-control``: default control values chosen on validation data."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.evaluation import get_benchmark
from wean.registry import selectable_key


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune-control", help="choose a controllable model's default control values on validation data",
        description="Coordinate ascent over the control values for the --objective (SARI) of a sample of a "
        "validation benchmark, counting only settings that meet every --require (and bleu>=60 unless one "
        "names bleu). The chosen values become the model's generation.control; the search is written to "
        "MODEL/control-tuning.json.",
    )
    parser.add_argument("--model", type=Path, required=True, help="model directory trained with data.control")
    parser.add_argument("--benchmark", default="turkcorpus-tune", help="a validation benchmark (default: turkcorpus-tune)")
    parser.add_argument("--sentences", type=int, default=300, help="sentences sampled for the search (default 300)")
    parser.add_argument("--skip", type=int, default=500,
                        help="leave out the first N sentences, e.g. those that selected the checkpoint (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--objective", default="sari",
                        help="the score key to optimise, any registered metric's, in its own direction (default: sari)")
    parser.add_argument("--require", action="append", metavar="KEY>=BOUND",
                        help="a setting counts only if it meets this: KEY>=NUMBER, KEY<=NUMBER, or KEY<=references "
                        "for the references' own rate of a reference-free key (e.g. invented_names<=references); "
                        "repeatable; bleu>=60 holds unless one names bleu (below it, outputs ignore the source)")
    parser.add_argument("--min-bleu", type=float, help="the same as --require bleu>=MIN_BLEU")
    parser.add_argument("--nearest", action="store_true",
                        help="where no setting meets every --require, take the one nearest to meeting them "
                        "(least summed shortfall; said, and recorded as met: false) instead of keeping the defaults")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the attributes (default 2)")
    parser.add_argument("--beam", type=int, help="beam width (default: the model's)")
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=None,
                        help="the benchmark's source is plain text (default: the model's generation.plain_text)")
    options.add_data_root_option(parser)
    options.add_device_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.generator import load
    from wean.inference.tune_control import Requirement, tunable_key, tune_control

    options.require_at_least_one(args, "sentences", "rounds", "beam")
    if args.skip < 0:
        raise WeanError("--skip must be 0 or more")
    get_benchmark(args.benchmark)
    requirements = list(args.require or [])
    if args.min_bleu is not None:
        requirements.append(f"bleu>={args.min_bleu:g}")
    parsed = [Requirement.parse(text) for text in requirements]  # a typo fails before the model is loaded
    if not any(requirement.key == "bleu" for requirement in parsed):
        requirements.insert(0, "bleu>=60")
    selectable_key(args.objective, "--objective")
    tunable_key(args.objective, "--objective")
    values = tune_control(
        load(args.model, args.device, trust_plugins=args.trust_plugins), args.model, args.benchmark, args.sentences, args.skip, args.seed,
        requirements, args.objective, args.rounds, args.plain_text, args.data_root, nearest=args.nearest,
        beam=args.beam,
    )
    print(f"{args.model}: generation.control set to " + ",".join(f"{k}={v:.2f}" for k, v in values.items()))
    return 0
