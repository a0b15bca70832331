"""``wean attention``: attention maps of one sentence pair."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.plotting import plot_attention_maps


def add(subparsers) -> None:
    parser = subparsers.add_parser("attention", help="attention maps of one sentence pair as PNGs",
                                   description="Write attention.png (and, for word attention models, "
                                   "word_attention.png, gated_attention.png and gates.png) for a source and "
                                   "a target (teacher-forced) or the model's own greedy output.")
    parser.add_argument("--model", type=Path, required=True, help="model directory written by wean train")
    parser.add_argument("--source", required=True, help="the input sentence")
    parser.add_argument("--target", help="the output to explain (default: the model's greedy output)")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for the PNGs")
    options.add_device_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.generator import load

    maps = load(args.model, args.device, trust_plugins=args.trust_plugins).attention_maps(args.source, args.target)
    for path in plot_attention_maps(maps, args.out_dir):
        print(f"wrote {path}")
    return 0
