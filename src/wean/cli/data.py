"""``wean data``: which benchmark data the data root holds, where the rest come from, and laying
them out from a clone of their repository."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from wean.cli import options
from wean.data.layout import layout
from wean.data.root import VARIABLE
from wean.data.sources import fetch_commands, status
from wean.errors import WeanError


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "data", help="which benchmark data are under the data root, where the rest come from, and laying them out",
        description="status: each dataset's files present (sha256 as recorded), damaged or missing, and for a "
        "missing one the repository and commit it comes from with the commands that fetch it. layout --from DIR: "
        "every recorded file DIR holds (a clone of a source repository at its commit, or another data root) "
        "written under the data root, checked against its recorded sha256, then the files wean derives from "
        "them. See docs/data.md.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", help="status or layout")
    show = actions.add_parser("status", help="each dataset's files present, damaged or missing, and where to get them")
    options.add_data_root_option(show)
    lay = actions.add_parser("layout", help="lay out the recorded files a clone or another data root holds")
    lay.add_argument("--from", dest="origin", type=Path, metavar="DIR",
                     help="a clone of a source repository (at the recorded commit), or a data root; without it, "
                     "only the derived files are rebuilt from what is laid out")
    options.add_data_root_option(lay)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    root = _root(args.data_root)
    if args.action == "layout":
        return _layout(args, root)
    if not root.exists():  # a newcomer's: said, with everything it would hold
        print(f"{root}: no such folder yet; `wean data layout` creates it")
    elif not root.is_dir():
        raise WeanError(f"data root {root} is not a folder")
    for dataset, files in status(root).items():
        counts = ", ".join(f"{len(found)} {state}" for state, found in files.items() if found)
        print(f"{dataset}/: {counts}")
        for entry in files["damaged"]:
            print(f"  damaged: {entry.path} (not the recorded size and sha256 {entry.sha256[:12]})")
        needed = files["missing"] + files["damaged"]
        for repository, commit in dict.fromkeys((entry.repository, entry.commit) for entry in needed if entry.repository):
            print(f"  from {repository}: {fetch_commands(repository, commit, args.data_root)}")
        for entry in needed:
            if entry.derive:
                print(f"  {entry.path}: rebuilt by `wean data layout` once {', '.join(entry.derive['from'][:2])}"
                      f"{', ...' if len(entry.derive['from']) > 2 else ''} are laid out")
            elif not entry.repository:
                print(f"  {entry.path}: derived ({entry.note}); lay it out from a data root that holds it")
    return 0


def _root(given: Path | None) -> Path:
    """--data-root, else $WEAN_DATA_ROOT, which may not exist yet (data.root.data_root insists it does)."""
    if given is not None and str(given):
        return given
    if os.environ.get(VARIABLE):
        return Path(os.environ[VARIABLE])
    raise WeanError(f"no data root: pass --data-root DIR or set {VARIABLE} to the folder the data go to")


def _layout(args: argparse.Namespace, root: Path) -> int:
    report = layout(args.origin, root)
    for line in report.refused:
        print(f"refused {line}")
    print(f"{root}: {len(report.written)} file(s) written, {len(report.kept)} already there, "
          f"{len(report.refused)} refused")
    if args.origin is not None and not report.written and not report.refused and not report.kept:
        raise WeanError(f"--from {args.origin}: holds none of the recorded files; give a clone of a source "
                        "repository at its commit (`wean data status` prints the commands), or a data root")
    return 1 if report.refused else 0
