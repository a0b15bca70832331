"""``wean rate``: human evaluation by the WEAN paper's protocol (adequacy, fluency, simplicity)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wean.cli import options
from wean.errors import WeanError
from wean.evaluation import data_root, get_benchmark
from wean.rating.score import score_ratings, table
from wean.rating.sheet import candidate_ids, load_sheet, prepare, read_ratings
from wean.textio import read_json, read_lines


def add(subparsers) -> None:
    parser = subparsers.add_parser(
        "rate", help="blind human rating of systems' outputs: prepare a sheet, score the ratings",
        description="prepare: a blind rating sheet from several systems' outputs (sampled sentences, "
        "identical outputs merged, candidates shuffled, the key kept apart); rate it in a spreadsheet "
        "(sheet.csv) or on the page of `wean serve --rating-sheet FOLDER` (/rate). score: per system the "
        "mean adequacy, fluency and simplicity, the shares that change the meaning, are broken or are good, "
        "with bootstrap intervals, paired comparisons and the raters' agreement (Krippendorff's alpha).",
    )
    commands = parser.add_subparsers(dest="rate_command", required=True, metavar="STEP",
                                     help="prepare a sheet, or score its ratings")

    prepare = commands.add_parser("prepare", help="write a blind rating sheet and its key into a folder")
    prepare.add_argument("--system", action="append", required=True, metavar="NAME=FILE",
                         help="a system's outputs, one line per source line; repeat for each system")
    prepare.add_argument("--src", type=Path, help="the source sentences")
    prepare.add_argument("--benchmark", help="take the source from a named benchmark (wean evaluate --list-benchmarks)")
    options.add_data_root_option(prepare)
    prepare.add_argument("--sentences", type=int, default=50, help="sentences sampled (default 50)")
    prepare.add_argument("--lines", help="comma-separated 1-based source lines to rate, in place of a sample")
    prepare.add_argument("--seed", type=int, default=1, help="seed of the sample and the shuffles (default 1)")
    prepare.add_argument("--out", type=Path, required=True, help="folder for sheet.json, sheet.csv, key.json, ratings/")
    prepare.set_defaults(run=run_prepare)

    score = commands.add_parser("score", help="aggregate the ratings of a sheet per system")
    score.add_argument("folder", type=Path, help="the folder wean rate prepare wrote (its key.json is read)")
    score.add_argument("ratings", type=Path, nargs="*",
                       help="rating files: filled copies of sheet.csv (rater: the file's name) or .jsonl "
                       "(default: FOLDER/ratings/*.jsonl, what the rating page saved)")
    score.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    score.add_argument("--seed", type=int, default=1, help="seed of the resampling (default 1)")
    score.add_argument("--json", action="store_true", help="print one JSON record instead of a table")
    score.set_defaults(run=run_score)


def run_prepare(args: argparse.Namespace) -> int:
    options.require_at_least_one(args, "sentences")
    if (args.src is None) == (args.benchmark is None):
        raise WeanError("give the source: --src FILE or --benchmark NAME")
    source = args.src or get_benchmark(args.benchmark).source_path(data_root(args.data_root))
    systems = {}
    for entry in args.system:
        name, separator, path = entry.partition("=")
        if not separator or not name or not path:
            raise WeanError(f"--system {entry!r}: write NAME=FILE")
        if name in systems:
            raise WeanError(f"--system: {name!r} is named twice")
        systems[name] = read_lines(Path(path))
    lines = None
    if args.lines is not None:
        try:
            lines = [int(part) for part in args.lines.split(",") if part.strip()]
        except ValueError:
            lines = []
        if not lines:
            raise WeanError(f"--lines {args.lines!r}: comma-separated line numbers")
    sheet = prepare(read_lines(source), systems, args.out, args.sentences, args.seed, lines,
                    args.benchmark or str(source))
    candidates = sum(len(item["candidates"]) for item in sheet["items"])
    print(f"{args.out}: {len(sheet['items'])} items, {candidates} candidates from {len(systems)} systems; "
          f"give raters sheet.csv or `wean serve --rating-sheet {args.out}` (/rate), never key.json")
    return 0


def run_score(args: argparse.Namespace) -> int:
    options.require_at_least_one(args, "samples")
    key_path = args.folder / "key.json"
    if not key_path.is_file():
        raise WeanError(f"{key_path}: not found; is {args.folder} a folder wean rate prepare wrote?")
    key = read_json(key_path)
    paths = args.ratings or sorted((args.folder / "ratings").glob("*.jsonl"))
    if not paths:
        raise WeanError(f"no ratings: {args.folder / 'ratings'} holds no .jsonl file, and none was named")
    ratings = read_ratings(paths, candidate_ids(load_sheet(args.folder)))
    scores = score_ratings(key, ratings, args.samples, args.seed)
    print(json.dumps(scores, indent=2) if args.json else table(scores))
    return 0
