"""``wean serve``: the HTTP server and its web page."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError


def add(subparsers) -> None:
    from dataclasses import fields

    from wean.server.limits import Limits

    parser = subparsers.add_parser("serve", help="serve a model over HTTP, with a web page at /",
                                   description="POST /v1/generate, GET /health, OpenAPI docs at /docs and "
                                   "a page at / to try the model. Concurrent requests share batches.")
    parser.add_argument("--model", type=Path, help="model directory (default: the pretrained simplifier)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    for limit in fields(Limits):
        parser.add_argument(f"--{limit.name.replace('_', '-')}", type=type(limit.default), default=limit.default,
                            metavar="N", help=f"{limit.metadata['help']} (default: {limit.default})")
    options.add_device_option(parser)
    options.add_quantize_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from wean.generator import load
    from wean.server.app import serve
    from wean.server.limits import Limits

    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)})
    for name, value in vars(limits).items():
        if value <= 0:
            raise WeanError(f"--{name.replace('_', '-')} must be positive")
    serve(load(args.model, args.device, args.quantize), args.host, args.port, limits)
    return 0
