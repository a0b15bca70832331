"""The tables of results/decoding, from its metrics.json, selection.jsonl, distinct.json and
speed/metrics.json; and the settings run.sh chooses on tune (--best-coverage, --best-average SEED).

    python results/decoding/tables.py > results/decoding/tables.md
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

OUT = Path(__file__).parent
BENCHMARKS = ("turkcorpus-test", "wikismall-test")
COLUMNS = (("sari", "SARI"), ("bleu", "BLEU"), ("identical_to_source", "unchanged %"),
           ("repeated_ngrams", "repeats %"), ("invented_names", "invented names %"))


def selection() -> dict[str, dict]:
    path = OUT / "selection.jsonl"
    if not path.exists():
        return {}
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {record["label"]: record for record in records}  # the last score of a label counts


def best_coverage() -> tuple[str, float]:
    """The coverage setting with the best tune SARI among those with BLEU >= 60 and no more
    repeated phrases or invented names than the search without a penalty."""
    scores = selection()
    off = scores["shipped"]
    allowed = [r for label, r in scores.items() if label.startswith("shipped-") and r["bleu"] >= 60
               and r["repeated_ngrams"] <= off["repeated_ngrams"] and r["invented_names"] <= off["invented_names"]]
    if not allowed:
        raise SystemExit("no coverage setting meets the fidelity requirements on tune")
    best = max(allowed, key=lambda r: r["sari"])
    return best["options"]["coverage_penalty"], best["options"]["coverage_weight"]


def best_average(seed: int) -> int:
    scores = selection()
    return max((2, 3, 4), key=lambda k: scores[f"last{k}-seed{seed}"]["sari"])


def row(values: list[str]) -> str:
    return "| " + " | ".join(values) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--best-coverage", action="store_true")
    parser.add_argument("--best-average", type=int, metavar="SEED")
    args = parser.parse_args()
    if args.best_coverage:
        print(*best_coverage())
        return
    if args.best_average is not None:
        print(best_average(args.best_average))
        return

    lines = []
    speed = OUT / "speed" / "metrics.json"
    if speed.exists():
        ratios = json.loads(speed.read_text())["ratios_new_over_old"]
        keys = (("beam5_sentences_per_second", "beam 5"), ("greedy_sentences_per_second", "greedy (blocks n-grams now)"),
                ("greedy_unblocked_sentences_per_second", "greedy without blocking"))
        lines += ["## Speed of the shipped model's search (new / before, median of interleaved rounds)", "",
                  row([title for _, title in keys]), row(["---"] * len(keys)),
                  row([f"{ratios[key]:.3f}" for key, _ in keys]), ""]
    scores = selection()
    if scores:
        keys = ("sari", "bleu", "identical_to_source", "repeated_ngrams", "invented_names")
        lines += ["## Settings on 400 TurkCorpus tune sentences (selection)", "",
                  row(["setting", "options"] + [dict(COLUMNS)[k] for k in keys]), row(["---"] * (2 + len(keys)))]
        for label, record in scores.items():
            options = ", ".join(f"{k} {v}" for k, v in record["options"].items()) or "defaults"
            lines.append(row([label, options] + [f"{record[k]:.2f}" for k in keys]))
        lines.append("")
    metrics_path = OUT / "metrics.json"
    if metrics_path.exists():
        metrics = json.loads(metrics_path.read_text())
        for benchmark in BENCHMARKS:
            systems = [s for s in metrics if benchmark in metrics[s]]
            if not systems:
                continue
            lines += [f"## {benchmark}", "", row(["system"] + [title for _, title in COLUMNS]),
                      row(["---"] * (1 + len(COLUMNS)))]
            for system in systems:
                found = metrics[system][benchmark]["scores"]
                lines.append(row([system] + [f"{found[key]:.2f}" for key, _ in COLUMNS]))
            for group, title in (("seed", "selected checkpoint"), ("last-seed", "last checkpoint"),
                                 ("average-seed", "mean of the last k"), ("coverage-seed", "coverage penalty")):
                members = [metrics[f"{group}{s}"][benchmark]["scores"] for s in (1, 2, 3)
                           if benchmark in metrics.get(f"{group}{s}", {})]
                if len(members) == 3:
                    lines.append(row([f"**{title}, 3 seeds**"] + [
                        f"{statistics.mean(m[key] for m in members):.2f} ± {statistics.stdev(m[key] for m in members):.2f}"
                        for key, _ in COLUMNS]))
            lines.append("")
    distinct = OUT / "distinct.json"
    if distinct.exists():
        record = json.loads(distinct.read_text())
        columns = (("distinct_1", "distinct-1 %"), ("distinct_2", "distinct-2 %"),
                   ("distinct_outputs", "distinct outputs of 5"), ("unchanged", "unchanged %"),
                   ("first_sari", "SARI of the 1st"), ("first_bleu", "BLEU of the 1st"))
        lines += ["## 5-best lists of the shipped simplifier on TurkCorpus test", "",
                  row(["strategy", "options"] + [title for _, title in columns]), row(["---"] * (2 + len(columns)))]
        for system, values in record.items():
            options = ", ".join(f"{k} {v}" for k, v in values["options"].items() if k != "nbest")
            lines.append(row([system, options] + [f"{values[key]:.2f}" for key, _ in columns]))
        lines.append("")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
