"""``wean serve``: the HTTP server and its web page."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.rating.sheet import load_sheet
from wean.server.limits import Limits
from wean.textio import read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="serve a model over HTTP, with a web page at /",
                                   description="POST /v1/generate, GET /health, OpenAPI docs at /docs and "
                                   "a page at / to try the model. Concurrent requests share batches.")
    parser.add_argument("--model", type=Path, nargs="+",
                        help="model directory (default: the pretrained simplifier); several: their ensemble")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8000, help="(default: 8000)")
    parser.add_argument("--token-file", type=Path, help="a file holding an access token: requests to /v1/ must "
                        "send 'Authorization: Bearer <token>' (default: no token)")
    parser.add_argument("--allowed-hosts", metavar="NAME,...",
                        help="the names clients may reach the server by (Host header), '*' for any "
                        "(default: localhost, 127.0.0.1 and ::1 on a loopback address; any otherwise)")
    parser.add_argument("--rating-sheet", type=Path, metavar="FOLDER",
                        help="a folder written by wean rate prepare: rate it on the page at /rate, each rating "
                        "saved to FOLDER/ratings/ as it is given")
    for limit in fields(Limits):
        parser.add_argument(f"--{limit.name.replace('_', '-')}", type=type(limit.default), default=limit.default,
                            metavar="N", help=f"{limit.metadata['help']} (default: {limit.default})")
    options.add_device_option(parser)
    options.add_product_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.inference.generator import load
    from wean.server.app import Access, serve

    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)})
    for name, value in vars(limits).items():
        if not value > 0:  # NaN too
            raise WeanError(f"--{name.replace('_', '-')} must be positive")
    access = Access(_read_token(args.token_file) if args.token_file else None, _allowed_hosts(args))
    if args.rating_sheet is not None:
        if args.token_file:  # the page sends no token; the ratings' folder must not be open to all
            raise WeanError("--rating-sheet cannot be served with --token-file: the rating page sends no token; "
                            "serve the sheet from a server of its own")
        load_sheet(args.rating_sheet)  # before the model loads: a wrong folder fails at once
    generator = load(args.model, args.device, args.quantize, trust_plugins=args.trust_plugins, kernels=args.kernels)
    serve(generator, args.host, args.port, limits, access, args.rating_sheet)
    return 0


def _read_token(path: Path) -> str:
    lines = [line for line in read_lines(path) if line.strip()]
    if len(lines) != 1 or len(lines[0].split()) != 1:
        raise WeanError(f"{path}: expected one line holding the token")
    return lines[0].strip()


def _allowed_hosts(args: argparse.Namespace) -> tuple[str, ...]:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.server.app import LOOPBACK_NAMES, host_name

    if args.allowed_hosts:
        return tuple(host_name(name.strip()) for name in args.allowed_hosts.split(",") if name.strip())
    loopback = args.host in LOOPBACK_NAMES or args.host.startswith("127.")
    return (*LOOPBACK_NAMES, args.host) if loopback else ("*",)
