"""``wean export``: a trained model as a directory to ship."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options


def add(subparsers) -> None:
    parser = subparsers.add_parser("export", help="a trained model as a directory to ship (fp16, no checkpoints)")
    parser.add_argument("model", type=Path, help="model directory written by wean train")
    parser.add_argument("out", type=Path, help="new model directory")
    parser.add_argument("--fp16", action="store_true", help="store the weights in half precision (half the size)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="generation.KEY=VALUE",
                        help="change a generation setting, e.g. generation.plain_text=true")
    parser.add_argument("--rerank", metavar="NAME=WEIGHT,...",
                        help="the reranking the exported model does by itself in beam search (generation.rerank; "
                        "the list's size: --set generation.rerank_size=N); each channel:DIR or lm:DIR model is "
                        "exported into OUT/reranker/ with it")
    options.add_trust_options(parser)
    parser.add_argument("--overwrite", action="store_true",
                        help="out holds something: replace the model there (its model files are removed)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.export import export_model

    size = export_model(args.model, args.out, args.fp16, args.overrides, args.overwrite, args.trust_plugins,
                        args.rerank)
    print(f"{args.out}: weights {size / 2**20:.1f} MiB")
    return 0
