"""The ``wean`` command: one module per subcommand, each a thin layer over the library function of
the same name (``add`` declares its options, ``run`` runs it). A :class:`~wean.errors.WeanError`
becomes one line on stderr and exit status 1."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from wean.cli.options import load_plugin_files
from wean.errors import WeanError

# in the order `wean --help` lists them
COMMANDS = ("train", "simplify", "serve", "generate", "evaluate", "compare", "test", "tune_control", "inspect",
            "plot", "attention", "data", "prepare", "odd_gen", "export", "average", "shortlist", "verify", "rate")


def build_parser() -> argparse.ArgumentParser:
    try:
        installed = version("wean")
    except PackageNotFoundError:  # run from a checkout that was never installed
        installed = "unknown (not installed)"
    parser = argparse.ArgumentParser(prog="wean", description="Simplification and headline generation toolkit.")
    parser.add_argument("--version", action="version", version=f"wean {installed}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        import_module(f"wean.cli.{command}").add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said with the command's usage, not the top level's
        commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    # wean's warnings as one line each, like its errors, without the source line Python adds;
    # main() called from Python leaves the format as it found it
    previous = warnings.formatwarning
    warnings.formatwarning = lambda message, category, *rest: (
        f"wean {args.command}: warning: {message}\n" if category.__module__.startswith("wean")
        else previous(message, category, *rest))
    try:
        return _run(args)
    finally:
        warnings.formatwarning = previous


def _run(args: argparse.Namespace) -> int:
    try:
        if getattr(args, "plugins", None):
            load_plugin_files(args)
        status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below, not at exit
        return status
    except WeanError as error:
        # under torchrun every process may report: say which
        process = f" (process {os.environ['RANK']})" if os.environ.get("WORLD_SIZE", "1") != "1" and "RANK" in os.environ else ""
        print(f"wean {args.command}{process}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `wean ... | head`: the reader left; stop quietly like other filters
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
