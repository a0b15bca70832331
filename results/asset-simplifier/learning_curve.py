"""The learning curve of the recipe (README, "How much the data limits it"): each row's best
validation SARI and lowest validation loss against the fraction of the training data it saw,
from the records in validations/, and the least-squares slope of each over log2 of the fraction
(every run one point: the full data's three seeds are three). Writes learning-curve.json and
learning-curve.png (best validation SARI against the fraction, on a log scale).

    python results/asset-simplifier/learning_curve.py
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from wean.plotting import read_validations

HERE = Path(__file__).parent
FULL_PAIRS = 47_446  # make_data.py's train_pairs for the full data (counts.json)
RUNS = {  # fraction of the training data: the runs that saw it
    1.0: ["pg-seed1", "pg-seed2", "pg-seed3"],
    0.5: ["pg-half-seed1"],
    0.25: ["pg-quarter-seed1"],
}


def plot(runs: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(5, 3.5))
    pairs = [FULL_PAIRS * run["fraction"] for run in runs]
    axes.plot(pairs, [run["best_sari"] for run in runs], "o")
    axes.set_xscale("log", base=2)
    axes.set_xticks([FULL_PAIRS * f for f in RUNS], [f"{f:g}" for f in RUNS])
    axes.set_xlabel(f"fraction of the {FULL_PAIRS:,} training pairs (log scale)")
    axes.set_ylabel("best validation SARI")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out, dpi=120, metadata={"Software": None})
    plt.close(figure)


def main() -> None:
    runs = []
    for fraction, names in RUNS.items():
        for name in names:
            validations = read_validations(HERE / "validations" / f"asset-simplifier-{name}.json")
            best = max(validations, key=lambda v: v["sari"])
            runs.append({"run": name, "fraction": fraction, "epochs": len(validations),
                         "best_sari": round(best["sari"], 2), "best_sari_epoch": round(best["epochs"]),
                         "lowest_loss": round(min(v["loss"] for v in validations), 4)})
    full = [run["best_sari"] for run in runs if run["fraction"] == 1.0]
    doublings = [math.log2(run["fraction"]) for run in runs]
    result = {
        "what": "best validation SARI (greedy, the 500 selection lines) and lowest validation loss against the "
                "fraction of the training data; slopes per doubling of the data (least squares over log2 fraction)",
        "runs": runs,
        "full_data_sari_mean": round(statistics.fmean(full), 2),
        "full_data_sari_std": round(statistics.stdev(full), 2),
        "sari_per_doubling": round(statistics.linear_regression(doublings, [r["best_sari"] for r in runs]).slope, 2),
        "loss_per_doubling": round(statistics.linear_regression(doublings, [r["lowest_loss"] for r in runs]).slope, 4),
    }
    (HERE / "learning-curve.json").write_text(json.dumps(result, indent=1) + "\n")
    plot(runs, HERE / "learning-curve.png")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
