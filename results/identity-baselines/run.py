"""Scores of two systems that need no model, on TurkCorpus test and WikiSmall test:

* identity: the source sentence copied as the output;
* human: one TurkCorpus reference scored against the other seven (leave-one-out), for each of the
  eight references in turn.

Run from the repository root: ``python results/identity-baselines/run.py``.
Writes ``metrics.json`` beside this file and prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from wean.evaluation import BENCHMARKS, EvaluationSettings, data_root, evaluate
from wean.textio import read_lines

HERE = Path(__file__).parent
ROOT = data_root()


def load(name: str):
    benchmark = BENCHMARKS[name]
    source, references = benchmark.paths(ROOT)
    return benchmark, read_lines(source), [read_lines(p) for p in references]


def score(benchmark, outputs, sources, references, metrics=None) -> dict:
    settings = EvaluationSettings(
        metrics=metrics or tuple(m for m in benchmark.metrics if m != "stats") + ("stats",),
        lowercase=benchmark.lowercase,
        tokenizer=benchmark.tokenizer,
    )
    evaluation = evaluate(outputs, sources, references, settings)
    keep = ("sari", "sari_add", "sari_keep", "sari_del", "bleu", "multi_bleu", "fkgl",
            "compression_ratio", "identical_to_source")
    return {
        "references": evaluation.references,
        "scores": {k: v for k, v in evaluation.scores.items() if k in keep},
        "signatures": {r.metric: r.signature_string() for r in evaluation.results if r.metric != "stats"},
    }


def leave_one_out(benchmark, sources, references) -> dict:
    """Reference k against the other references, for every k: mean, min and max of each score."""
    runs = [
        score(benchmark, references[k], sources, references[:k] + references[k + 1 :])
        for k in range(len(references))
    ]
    names = runs[0]["scores"]
    return {
        "references": runs[0]["references"],
        "scores": {n: statistics.mean(r["scores"][n] for r in runs) for n in names},
        "min": {n: min(r["scores"][n] for r in runs) for n in names},
        "max": {n: max(r["scores"][n] for r in runs) for n in names},
        "signatures": runs[0]["signatures"],
    }


def main() -> None:
    rows = {}
    for name in ("turkcorpus-test", "turkcorpus-test-lower"):
        benchmark, sources, references = load(name)
        rows[f"identity / {name} / 8 refs"] = score(benchmark, sources, sources, references)
        rows[f"identity / {name} / refs 1-7"] = score(benchmark, sources, sources, references[1:])
        rows[f"human (leave-one-out mean) / {name} / 7 refs"] = leave_one_out(benchmark, sources, references)
    benchmark, sources, references = load("wikismall-test")
    rows["identity / wikismall-test / 1 ref"] = score(benchmark, sources, sources, references)

    (HERE / "metrics.json").write_text(json.dumps(rows, indent=2) + "\n")
    columns = ("sari", "sari_add", "sari_keep", "sari_del", "bleu", "multi_bleu", "fkgl", "compression_ratio")
    print("| system / benchmark / references | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for label, row in rows.items():
        cells = [f"{row['scores'][c]:.2f}" if c in row["scores"] else "" for c in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
