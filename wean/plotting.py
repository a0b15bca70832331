"""Figures: validation curves of one or more training runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from wean.errors import WeanError

CURVE_METRICS = ("bleu", "sari", "loss", "perplexity")


def read_validations(model_dir: Path) -> list[dict]:
    path = Path(model_dir) / "validations.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WeanError(f"{path}: not found; has this run been validated yet?") from None
    except json.JSONDecodeError as error:
        raise WeanError(f"{path}: corrupt ({error})") from None


def plot_curves(model_dirs: Sequence[Path], metric: str, out: Path, labels: Sequence[str] | None = None) -> None:
    """One line per run: ``metric`` on the validation split against training epochs."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    if metric not in CURVE_METRICS:
        raise WeanError(f"unknown metric {metric!r}; choose from {', '.join(CURVE_METRICS)}")
    figure, axes = plt.subplots(figsize=(6, 4))
    for index, directory in enumerate(model_dirs):
        records = read_validations(directory)
        label = labels[index] if labels else Path(directory).name
        axes.plot([r["epochs"] for r in records], [r[metric] for r in records], marker="o", markersize=3, label=label)
    axes.set_xlabel("epoch")
    axes.set_ylabel(f"validation {metric.upper() if metric != 'perplexity' else metric}")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)
