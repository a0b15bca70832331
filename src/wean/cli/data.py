"""``wean data``: which benchmark data the data root holds, where the rest come from, and laying
them out from a clone of their repository."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.cli import options
from wean.data.sources import default_root, fetch_commands, layout, status


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "data", help="which benchmark data are under the data root, where the rest come from, and laying them out",
        description="status: each dataset's files present (sha256 as recorded), damaged or missing, and for a "
        "missing one the repository and commit it comes from with the commands that fetch it. layout --from DIR: "
        "every recorded file DIR holds (a clone of a source repository at its commit, or another data root) "
        "written under the data root, checked against its recorded sha256. See docs/data.md.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", help="status or layout")
    show = actions.add_parser("status", help="each dataset's files present, damaged or missing, and where to get them")
    options.add_data_root_option(show)
    lay = actions.add_parser("layout", help="lay out the recorded files a clone or another data root holds")
    lay.add_argument("--from", dest="origin", type=Path, required=True, metavar="DIR",
                     help="a clone of a source repository (at the recorded commit), or a data root")
    options.add_data_root_option(lay)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    root = default_root(args.data_root)
    if args.action == "layout":
        report = layout(args.origin, root)
        for line in report.refused:
            print(f"refused {line}")
        print(f"{root}: {len(report.written)} file(s) written, {len(report.kept)} already there, "
              f"{len(report.refused)} refused")
        return 1 if report.refused else 0
    for dataset, files in status(root).items():
        counts = ", ".join(f"{len(found)} {state}" for state, found in files.items() if found)
        print(f"{dataset}/: {counts}")
        for entry in files["damaged"]:
            print(f"  damaged: {entry.path} (sha256 is not the recorded {entry.sha256[:12]})")
        needed = files["missing"] + files["damaged"]
        for repository, commit in dict.fromkeys((entry.repository, entry.commit) for entry in needed if entry.repository):
            print(f"  from {repository}: {fetch_commands(repository, commit)}")
        for entry in needed:
            if not entry.repository:
                print(f"  {entry.path}: derived ({entry.note}); lay it out from a data root that holds it")
    return 0
