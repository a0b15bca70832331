"""A table's rows over seeds, from the metrics.json that `wean test` writes: per row and metric the
mean ± sample standard deviation over seeds, and each seed's gap to the first row (the base), with
the gaps' mean ± standard deviation and the two-sided p of Student's t-test that their mean is 0.

That test is paired by seed (a seed fixes the batch order, the same for every row of a table) and
counts the spread from seed to seed, which a per-seed paired bootstrap, resampling test sentences
for fixed models, leaves out. With three seeds it has two degrees of freedom and rests on the gaps
being normal, which three values cannot check; an exact sign-flip test needs no such assumption
but cannot go below p = 0.25 with three seeds.

    python results/lib/seed_table.py results/spm/converged/metrics.json \\
        --rows encdec sgate spm sgate-spm --benchmark gigaword-test --metrics rouge1 rouge2 rougeL

A system is named ``--name`` with the row and seed filled in (default ``{row}-seed{seed}``, as the
convergence scripts name them). A seed whose systems are not all tested yet is left out, with a
note on stderr. The paired bootstrap per seed is `wean compare`'s (each table's significance.txt);
``--significance FILE`` turns such a file into one table as well:

    python results/lib/seed_table.py --significance results/spm/converged/significance.txt
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path
from typing import Callable

import mpmath  # installed with torch (through sympy); not one of wean's own dependencies


def paired_t_p(gaps: list[float]) -> float:
    """Two-sided p of Student's t-test that the gaps' mean is 0: with n - 1 degrees of freedom,
    P(|T| >= |t|) is the regularized incomplete beta I_{df / (df + t^2)}(df / 2, 1 / 2)."""
    mean, spread = statistics.mean(gaps), statistics.stdev(gaps)
    if spread == 0:
        return 1.0 if mean == 0 else 0.0
    t = mean / (spread / math.sqrt(len(gaps)))
    df = len(gaps) - 1
    return float(mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True))


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
            per_seed = [score(row, seed, key) - score(rows[0], seed, key) for seed in seeds]
            gap = ", ".join(f"{value:+.2f}" for value in per_seed)
            if row != rows[0] and len(per_seed) > 1:
                gap += (f"; mean {statistics.mean(per_seed):+.2f} ± {statistics.stdev(per_seed):.2f}, "
                        f"t-test over seeds p = {paired_t_p(per_seed):.3f}")
            gaps.append(gap)
        lines.append(f"| {row} | " + " | ".join(means) + " | " + " | ".join(gaps) + " |")
    return "\n".join(lines)


def significance_table(text: str) -> str:
    """`wean compare` blocks (A = ..., B = ..., then one line per metric) as one table, a line per
    comparison and metric: A's and B's systems and benchmark, the gap, its interval and p."""
    lines = ["| A | B | benchmark | metric | A | B | A - B | 95 % interval | p |", "|---|---|---|---|---:|---:|---:|---|---:|"]
    a = b = benchmark = None
    for line in text.splitlines():
        if line.startswith(("A = ", "B = ")):
            system, benchmark = Path(line[4:]).name.removesuffix(".txt").split(".", 1)
            a, b = (system, b) if line[0] == "A" else (a, system)
        elif match := re.fullmatch(r"(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\[.*\])\s+(\S+)", line.strip()):
            metric, score_a, score_b, gap, interval, p = match.groups()
            if metric != "metric":  # the header
                lines.append(f"| {a} | {b} | {benchmark} | {metric} | {score_a} | {score_b} | {gap} | {interval} | {p} |")
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
    parser.add_argument("metrics", type=Path, nargs="?")
    parser.add_argument("--rows", nargs="+", help="the base row first")
    parser.add_argument("--benchmark")
    parser.add_argument("--metrics", dest="keys", nargs="+", help="score keys of metrics.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--name", default="{row}-seed{seed}")
    parser.add_argument("--significance", type=Path, help="a significance.txt to tabulate instead")
    args = parser.parse_args()
    if args.significance:
        print(significance_table(args.significance.read_text()))
        return
    if not (args.metrics and args.rows and args.benchmark and args.keys):
        parser.error("METRICS, --rows, --benchmark and --metrics, or --significance")
    metrics = json.loads(args.metrics.read_text())
    seeds = tested_seeds(args.seeds, lambda seed: [
        row for row in args.rows if args.benchmark not in metrics.get(args.name.format(row=row, seed=seed), {})
    ], f"not tested on {args.benchmark}")
    if not seeds:
        sys.exit(f"{args.metrics}: no seed with every row tested on {args.benchmark}")
    print(seed_table(metrics, args.rows, seeds, args.benchmark, args.keys, args.name))


if __name__ == "__main__":
    main()
