"""A table's rows over seeds, from the metrics.json that `wean test` writes: per row and metric the
mean ± sample standard deviation over seeds, and each seed's gap to the first row (the base).

    .venv/bin/python results/lib/seed_table.py results/spm/converged/metrics.json \\
        --rows encdec sgate spm sgate-spm --benchmark gigaword-test --metrics rouge1 rouge2 rougeL

A system is named ``--name`` with the row and seed filled in (default ``{row}-seed{seed}``, as the
convergence scripts name them). A seed whose systems are not all tested yet is left out, with a
note on stderr. The paired bootstrap per seed is `wean compare`'s (each table's significance.txt).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Callable


def seed_table(metrics: dict, rows: list[str], seeds: list[int], benchmark: str, keys: list[str], name: str) -> str:
    def score(row: str, seed: int, key: str) -> float:
        return metrics[name.format(row=row, seed=seed)][benchmark]["scores"][key]

    header = "| row | " + " | ".join(f"{key} (mean ± std)" for key in keys) + " | " + " | ".join(
        f"{key} gap to {rows[0]}, seeds {', '.join(map(str, seeds))}" for key in keys) + " |"
    lines = [header, "|---|" + "---:|" * (2 * len(keys))]
    for row in rows:
        means, gaps = [], []
        for key in keys:
            values = [score(row, seed, key) for seed in seeds]
            spread = f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else ""
            means.append(f"{statistics.mean(values):.2f}{spread}")
            gaps.append(", ".join(f"{score(row, seed, key) - score(rows[0], seed, key):+.2f}" for seed in seeds))
        lines.append(f"| {row} | " + " | ".join(means) + " | " + " | ".join(gaps) + " |")
    return "\n".join(lines)


def tested_seeds(seeds: list[int], missing: Callable[[int], list[str]], what: str) -> list[int]:
    """The seeds for which ``missing(seed)`` names no system; the others are said on stderr."""
    tested = []
    for seed in seeds:
        if missing(seed):
            print(f"seed {seed}: {', '.join(missing(seed))} {what}; left out", file=sys.stderr)
        else:
            tested.append(seed)
    return tested


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--rows", nargs="+", required=True, help="the base row first")
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--metrics", dest="keys", nargs="+", required=True, help="score keys of metrics.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--name", default="{row}-seed{seed}")
    args = parser.parse_args()
    metrics = json.loads(args.metrics.read_text())
    seeds = tested_seeds(args.seeds, lambda seed: [
        row for row in args.rows if args.benchmark not in metrics.get(args.name.format(row=row, seed=seed), {})
    ], f"not tested on {args.benchmark}")
    if not seeds:
        sys.exit(f"{args.metrics}: no seed with every row tested on {args.benchmark}")
    print(seed_table(metrics, args.rows, seeds, args.benchmark, args.keys, args.name))


if __name__ == "__main__":
    main()
