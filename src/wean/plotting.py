"""Figures: validation curves of training runs, and attention maps of one sentence pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from wean.errors import WeanError


def read_validations(run: Path) -> list[dict]:
    """A run's validation records: from its model directory, or from a copy of its
    ``validations.json`` kept elsewhere (results/ keeps them: run directories come and go)."""
    path = Path(run)
    if not path.is_file():
        path = path / "validations.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WeanError(f"{path}: not found; has this run been validated yet?") from None
    except json.JSONDecodeError as error:
        raise WeanError(f"{path}: corrupt ({error})") from None


def _pyplot():
    import matplotlib  # deferred: 0.5 s to import with pyplot, and only plots need it

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt  # after use(): pyplot takes its backend when imported

    return plt


def _save(figure, out: Path) -> None:
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    _pyplot().close(figure)


def plot_heatmap(matrix, rows: Sequence[str], columns: Sequence[str], title: str, out: Path) -> None:
    """A (target x source) attention matrix, target words down, source words across."""
    plt = _pyplot()
    width, height = max(4, 0.35 * len(columns) + 2), max(3, 0.35 * len(rows) + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    image = axes.imshow(matrix, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(columns)), columns, rotation=90)
    axes.set_yticks(range(len(rows)), rows)
    axes.set_title(title)
    figure.colorbar(image, ax=axes, fraction=0.04)
    _save(figure, out)


def plot_gate_strip(values, words: Sequence[str], title: str, out: Path) -> None:
    """One cell per target word: how much the decoder relied on the word context (1 - o_i)."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(max(4, 0.45 * len(words) + 1.5), 1.8))
    image = axes.imshow([list(values)], cmap="Blues", vmin=0, vmax=1, aspect="auto")
    axes.set_xticks(range(len(words)), words, rotation=90)
    axes.set_yticks([])
    axes.set_title(title)
    figure.colorbar(image, ax=axes, fraction=0.04)
    _save(figure, out)


def plot_attention_maps(maps, out_dir: Path) -> list[Path]:
    """The attention PNGs a model has: a, and with word attention b, o a + (1 - o) b and 1 - o."""
    written = []
    figures = [("attention.png", maps.hidden, "attention over encoder states (a)")]
    if maps.word is not None:
        figures.append(("word_attention.png", maps.word, "word attention over source embeddings (b)"))
    if maps.gated is not None:
        figures.append(("gated_attention.png", maps.gated, "gated attention o a + (1 - o) b"))
    for name, matrix, title in figures:
        plot_heatmap(matrix.numpy(), maps.target_tokens, maps.source_tokens, title, out_dir / name)
        written.append(out_dir / name)
    if maps.source_prediction is not None:
        plot_heatmap(maps.source_prediction.numpy(), maps.target_tokens, maps.source_tokens,
                     "source-side prediction: q_j of each source token", out_dir / "spm_alignment.png")
        written.append(out_dir / "spm_alignment.png")
    if maps.gates is not None:
        plot_gate_strip((1 - maps.gates).numpy(), maps.target_tokens, "reliance on word context (1 - o)",
                        out_dir / "gates.png")
        written.append(out_dir / "gates.png")
    return written


def plot_odd_generation(summaries: dict[str, dict], out: Path) -> None:
    """Kiyono et al.'s Figure 2: per system, outputs with repeated tokens and outputs shorter
    than the reference (``wean.evaluation.stats.OddGeneration.summary`` of each system)."""
    plt = _pyplot()
    names = list(summaries)
    figure, axes = plt.subplots(1, 2, figsize=(max(6, 1.6 * len(names) + 3), 3.5))
    panels = [("outputs_with_repeats", "(a) outputs with repeated tokens"),
              ("outputs_shorter_than_reference", "(b) outputs shorter than the reference")]
    for ax, (key, title) in zip(axes, panels):
        values = [summaries[name][key] for name in names]
        bars = ax.bar(names, values, color="tab:blue")
        ax.bar_label(bars)
        ax.set_title(title)
        ax.set_ylabel("outputs")
    _save(figure, out)


def convergence(records: list[dict], metric: str, fraction: float = 0.95) -> dict:
    """Where a run's validation ``metric`` (higher is better) peaked, and the first epoch at which
    it reached ``fraction`` of that peak: the WEAN paper's convergence measure (its Figure 2).
    ``still_improving``: the peak is the last validation, so both epochs are only lower bounds."""
    best = max(records, key=lambda r: r[metric])
    reached = next(r for r in records if r[metric] >= fraction * best[metric])
    return {
        "best": best[metric], "best_epoch": best["epochs"],
        f"epochs_to_{round(fraction * 100)}pct": reached["epochs"], "still_improving": best is records[-1],
    }


def run_name(run: Path) -> str:
    """A run's name: its model directory's, or its kept validations file's without ``.json``."""
    run = Path(run)
    return run.stem if run.is_file() else run.name


def plot_curves(runs: Sequence[Path], metric: str, out: Path, labels: Sequence[str] | None = None) -> None:
    """One line per run (a model directory or a kept validations file): ``metric`` (any key its
    validation records hold) on the validation split against training epochs."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    for index, run in enumerate(runs):
        # a key added on --resume (training.validation_metrics) is drawn where it was recorded
        records = [record for record in read_validations(run) if metric in record]
        if not records:
            known = sorted({k for r in read_validations(run) for k in r} - {"updates", "epochs", "seconds", "learning_rate"})
            raise WeanError(f"{run}: no validation recorded {metric!r}; they recorded {', '.join(known)}")
        label = labels[index] if labels else run_name(run)
        axes.plot([r["epochs"] for r in records], [r[metric] for r in records], marker="o", markersize=3, label=label)
    axes.set_xlabel("epoch")
    axes.set_ylabel(f"validation {metric.upper() if metric != 'perplexity' else metric}")
    axes.grid(alpha=0.3)
    axes.legend()
    _save(figure, out)
