"""The results tables of results/controllable/README.md, from metrics.json (and the simplifier
shipped before, from results/simplifier/metrics.json) and the significance-*.txt files written by
`wean compare`: python results/controllable/table.py

A system run with several seeds (``NAME-seedN``) gets one row of mean ± sample standard deviation
over its seeds, then one row per seed."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

HERE = Path(__file__).parent
COLUMNS = [("sari", "SARI"), ("sari_add", "add"), ("sari_keep", "keep"), ("sari_del", "delete"), ("bleu", "BLEU"),
           ("fkgl", "FKGL"), ("identical_to_source", "% unchanged"), ("compression_ratio", "compression")]
BENCHMARKS = ("turkcorpus-test", "wikismall-test")
SEEDED = re.compile(r"^(?P<system>.+)-seed(?P<seed>\d+)$")


def seed_groups(systems: dict) -> dict[str, dict[int, dict]]:
    """{system: {seed: records}}; a system without a seed suffix is seed 0."""
    groups: dict[str, dict[int, dict]] = {}
    for name, records in systems.items():
        match = SEEDED.match(name)
        system, seed = (match["system"], int(match["seed"])) if match else (name, 0)
        groups.setdefault(system, {})[seed] = records
    return groups


def cell(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def scores_table(groups: dict[str, dict[int, dict]], benchmark: str) -> list[str]:
    lines = ["| system | seeds | " + " | ".join(title for _, title in COLUMNS) + " |",
             "|---|---|" + "---:|" * len(COLUMNS)]
    for system, seeds in groups.items():
        runs = {seed: records[benchmark]["scores"] for seed, records in sorted(seeds.items()) if benchmark in records}
        if not runs:
            continue
        label = ", ".join(str(seed) for seed in runs) if 0 not in runs else "–"
        lines.append(f"| {system} | {label} | " + " | ".join(
            cell([scores[key] for scores in runs.values()]) for key, _ in COLUMNS) + " |")
    return lines


def significance_table(benchmark: str) -> list[str]:
    """One row per `wean compare` file of this benchmark: SARI and BLEU differences with p-values."""
    lines = ["| comparison (A vs B) | seed | SARI A − B | 95 % interval | p | BLEU A − B | p |",
             "|---|---|---:|---|---:|---:|---:|"]
    for path in sorted(HERE.glob(f"significance-*.{benchmark}.txt")):
        name = path.name[len("significance-"):-len(f".{benchmark}.txt")]
        match = SEEDED.match(name)
        comparison, seed = (match["system"], match["seed"]) if match else (name, "–")
        rows = {}
        for line in path.read_text().splitlines():
            fields = line.split()
            if fields and fields[0] in ("sari", "bleu"):
                # metric A B diff [low, high] p
                rows[fields[0]] = (fields[3], f"{fields[4]} {fields[5]}", fields[6])
        sari, bleu = rows["sari"], rows["bleu"]
        lines.append(f"| {comparison} | {seed} | {sari[0]} | {sari[1]} | {sari[2]} | {bleu[0]} | {bleu[2]} |")
    return lines


def main() -> None:
    systems = json.loads((HERE / "metrics.json").read_text())
    before = json.loads((HERE.parent / "simplifier" / "metrics.json").read_text())
    groups = seed_groups({"shipped before (results/simplifier)": before["wean-simplifier"], **systems})
    for benchmark in BENCHMARKS:
        print(f"\n{benchmark}\n")
        print("\n".join(scores_table(groups, benchmark)))
        print(f"\npaired bootstrap, {benchmark}\n")
        print("\n".join(significance_table(benchmark)))


if __name__ == "__main__":
    main()
