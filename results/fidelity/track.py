"""Which automatic statistic tracks the ratings? For every rated candidate of the sheet in
rating/, its sentence-level statistics (the fidelity flags, sentence SARI against the 8
references but the one the sheet's "human" system is, the length ratio) beside its mean rating on each scale; Spearman's rho over the
candidates, and the mean ratings of flagged and unflagged candidates. Writes track.json and
track.md here; run from the repository root after the ratings are in (run.sh does)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from wean.evaluation import data_root, get_benchmark, sentence_sari
from wean.evaluation.fidelity import invented_names, invented_numbers, repeated_ngrams, sentence_statistics
from wean.rating.score import candidate_means
from wean.rating.sheet import SCALES, candidate_ids, load_sheet, read_ratings
from wean.textio import read_lines

HERE = Path(__file__).parent
FOLDER = HERE / "rating"


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank (as Spearman's rho needs)."""
    order = np.argsort(values, kind="stable")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        tied = values == value
        ranked[tied] = ranked[tied].mean()
    return ranked


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def statistics(source: str, output: str, references: list[str]) -> dict[str, float]:
    row = sentence_statistics([source], [output])[0]
    sari = sentence_sari(source, output, references, "default", True, "13a")
    return {
        "invented_number": float(bool(invented_numbers(source, output))),
        "invented_name": float(bool(invented_names(source, output))),
        "repeated_ngram": float(bool(repeated_ngrams(source, output))),
        "any_fidelity_flag": float(bool(invented_numbers(source, output) or invented_names(source, output)
                                        or repeated_ngrams(source, output))),
        "copied": float(row[4]),
        "non_ascii_lost": float(row[5] < row[6]),
        "sentence_sari": sari.sari,
        "length_ratio": len(output) / max(1, len(source)),
    }


def main() -> int:
    sheet, key = load_sheet(FOLDER), json.loads((FOLDER / "key.json").read_text())
    benchmark = get_benchmark(key["source"])
    _, reference_paths = benchmark.paths(data_root())
    # reference 0 is the "human" system of the sheet: every candidate's SARI is against the other 7
    streams = [read_lines(p) for p in reference_paths[1:]]
    paths = sorted(FOLDER.glob("ratings/*.jsonl")) + sorted(FOLDER.glob("rater-*.csv"))
    means = candidate_means(read_ratings(paths, candidate_ids(sheet)))
    lines = {item["item"]: item["line"] for item in key["items"]}
    rows, by_candidate = [], {}
    for item in sheet["items"]:
        line = lines[item["item"]] - 1
        for candidate in item["candidates"]:
            if candidate["id"] in means:
                stats = statistics(item["source"], candidate["text"], [s[line] for s in streams])
                rating = dict(zip(SCALES, means[candidate["id"]].tolist()))
                rating["good"] = float(all(rating[s] >= 4 for s in SCALES))
                rows.append((stats, rating))
                by_candidate[candidate["id"]] = (stats, rating)
    record = {"candidates": len(rows)}
    text = [f"{len(rows)} rated candidates (mean of the raters per candidate).", ""]
    for title, subset in (("All candidates", rows),
                          ("Changed candidates only (copies of the source left out)",
                           [row for row in rows if not row[0]["copied"]])):
        record[title], table = correlations(subset)
        text += [f"## {title}: Spearman's rho of each statistic with each mean rating ({len(subset)})", "", *table, ""]
    record["systems"], table = systems(key, by_candidate)
    text += ["## Per system, on the rated items: ratings and the automatic statistics", "", *table, ""]
    (HERE / "track.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (HERE / "track.md").write_text("\n".join(text), encoding="utf-8")
    print("\n".join(text))
    return 0


def systems(key: dict, by_candidate: dict) -> tuple[dict, list[str]]:
    """Per system, over the items: the mean ratings, the share good, and the mean of each statistic."""
    per_system: dict[str, list] = {name: [] for name in key["systems"]}
    for item in key["items"]:
        for candidate, writers in item["candidates"].items():
            for name in writers:
                per_system[name].append(by_candidate[candidate])
    names = list(next(iter(by_candidate.values()))[0])
    table = ["| system | adequacy | fluency | simplicity | good % | " + " | ".join(names) + " |",
             "|---|" + "---:|" * (4 + len(names))]
    record = {}
    for name, entries in sorted(per_system.items(), key=lambda e: -np.mean([r["adequacy"] for _, r in e[1]])):
        means = {s: float(np.mean([r[s] for _, r in entries])) for s in (*SCALES, "good")}
        stats = {n: float(np.mean([st[n] for st, _ in entries])) for n in names}
        record[name] = {**means, **stats}
        shares = [f"{100 * stats[n]:.0f} %" if n not in ("sentence_sari", "length_ratio") else f"{stats[n]:.2f}"
                  for n in names]
        table.append(f"| {name} | {means['adequacy']:.2f} | {means['fluency']:.2f} | {means['simplicity']:.2f} | "
                     f"{100 * means['good']:.0f} | " + " | ".join(shares) + " |")
    return record, table


def correlations(rows: list) -> tuple[dict, list[str]]:
    scales = (*SCALES, "good")
    record = {"spearman": {}, "flagged": {}}
    table = ["| statistic | " + " | ".join(f"rho with {s}" for s in scales) + " | flagged | "
             + " | ".join(f"{s} flagged / not" for s in SCALES) + " |",
             "|---|" + "---:|" * len(scales) + "---:|" + "---:|" * len(SCALES)]
    for name in rows[0][0]:
        values = np.array([stats[name] for stats, _ in rows])
        if len(np.unique(values)) < 2:  # constant here (no copies among changed candidates)
            continue
        correlations = {s: spearman(values, np.array([rating[s] for _, rating in rows])) for s in scales}
        record["spearman"][name] = correlations
        cells = [f"{correlations[s]:+.2f}" for s in scales]
        if set(np.unique(values)) <= {0.0, 1.0}:
            flagged = values == 1
            split = {s: [float(np.mean([r[s] for (_, r), f in zip(rows, flagged) if f == side]))
                         if (flagged == side).any() else None for side in (True, False)] for s in SCALES}
            record["flagged"][name] = {"count": int(flagged.sum()), **split}
            cells.append(str(int(flagged.sum())))
            cells += [" / ".join("-" if v is None else f"{v:.2f}" for v in split[s]) for s in SCALES]
        else:
            cells += ["-"] + ["-"] * len(SCALES)
        table.append(f"| {name} | " + " | ".join(cells) + " |")
    return record, table


if __name__ == "__main__":
    sys.exit(main())
