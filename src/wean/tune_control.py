"""Choose a controllable model's default control values on validation data (``wean tune-control``).

ACCESS chose its values by the SARI of the validation set; so does this, by coordinate ascent:
each attribute in turn is swept over a grid with the others held, and the best value is kept,
for a few rounds. SARI alone rewards outputs that drop most of their source, so a setting counts
only if its BLEU against the references is at least ``min_bleu``. The sentences are a seeded
sample of a validation benchmark (TurkCorpus tune) after the first ``skip`` (those that selected
the checkpoint). The chosen values become ``generation.control`` in the model directory's
config; the whole search is kept in ``control-tuning.json`` beside it.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Callable

from wean.checkpoint import atomic_write_json
from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, data_root, evaluate, get_benchmark
from wean.generator import Generator
from wean.model_dir import read_control_counts, save_assets
from wean.textio import read_lines

# steps of 0.1: each setting decodes every tuning sentence, and the outputs change little
# between neighbouring buckets of 0.05
DEFAULT_GRIDS = {
    "chars_ratio": [round(0.5 + 0.1 * i, 2) for i in range(7)],  # 0.5 .. 1.1
    "levenshtein": [round(0.4 + 0.1 * i, 2) for i in range(7)],  # 0.4 .. 1.0
    "word_rank": [round(0.5 + 0.1 * i, 2) for i in range(7)],  # 0.5 .. 1.1
}


@dataclasses.dataclass
class Trial:
    control: dict[str, float]
    sari: float
    bleu: float
    identical: float = 0.0  # % of outputs identical to their source

    def feasible(self, min_bleu: float) -> bool:
        return self.bleu >= min_bleu


def sample_sentences(count: int, total: int, skip: int, seed: int) -> list[int]:
    """``count`` line indices of ``total``, drawn with ``seed`` from those after the first ``skip``."""
    pool = list(range(skip, total))
    if not pool:
        raise WeanError(f"--skip {skip} leaves none of the {total} sentences")
    if count >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, count))


def tuning_set(
    benchmark_name: str, lines: list[int], root: Path | None = None
) -> tuple[list[str], list[list[str]], EvaluationSettings]:
    """The sources and reference streams of a benchmark's ``lines`` (0-based), and how to score them."""
    benchmark = get_benchmark(benchmark_name)
    source_path, reference_paths = benchmark.paths(data_root(root))
    all_sources = read_lines(source_path)
    sources = [all_sources[i] for i in lines]
    references = [[stream[i] for i in lines] for stream in (read_lines(p) for p in reference_paths)]
    settings = EvaluationSettings(("sari", "bleu", "stats"), "default", benchmark.lowercase, benchmark.tokenizer)
    return sources, references, settings


def coordinate_ascent(
    score: Callable[[dict[str, float]], Trial], start: dict[str, float], grids: dict[str, list[float]],
    min_bleu: float, rounds: int = 2,
) -> tuple[dict[str, float], list[Trial]]:
    """The best feasible values found from ``start``, and every trial in the order run."""
    trials: dict[tuple, Trial] = {}

    def run(values: dict[str, float]) -> Trial:
        key = tuple(sorted(values.items()))
        if key not in trials:
            trials[key] = score(dict(values))
        return trials[key]

    def better(a: Trial, b: Trial | None) -> bool:
        if b is None:
            return True
        if a.feasible(min_bleu) != b.feasible(min_bleu):
            return a.feasible(min_bleu)
        return a.sari > b.sari if a.feasible(min_bleu) else a.bleu > b.bleu

    current = dict(start)
    best = run(current)
    for _ in range(rounds):
        changed = False
        for name, grid in grids.items():
            for value in grid:
                trial = run({**current, name: value})
                if better(trial, best):
                    best, current, changed = trial, {**current, name: value}, True
        if not changed:
            break
    return current, list(trials.values())


def tune_control(
    generator: Generator, model_dir: Path, benchmark_name: str = "turkcorpus-tune", sentences: int = 300,
    skip: int = 500, seed: int = 1, min_bleu: float = 60.0, rounds: int = 2, plain_text: bool | None = None,
    root: Path | None = None, log: Callable[[str], None] = print, **search,
) -> dict[str, float]:
    """Search, write the chosen values into ``model_dir`` and return them."""
    control = generator.control
    if not control:
        raise WeanError(f"{model_dir}: this model was trained without control tokens; nothing to tune")
    source_path, _ = get_benchmark(benchmark_name).paths(data_root(root))
    chosen_lines = sample_sentences(sentences, len(read_lines(source_path)), skip, seed)
    sources, references, settings = tuning_set(benchmark_name, chosen_lines, root)

    def score(values: dict[str, float]) -> Trial:
        outputs = [g.text for g in generator.generate(
            sources, plain_text=plain_text, control=values, split_sentences=False, **search
        )]
        scores = evaluate(outputs, sources, references, settings).scores
        trial = Trial(values, scores["sari"], scores["bleu"], scores["identical_to_source"])
        log("  ".join(f"{k} {v:.2f}" for k, v in values.items())
            + f"  ->  SARI {trial.sari:.2f} BLEU {trial.bleu:.2f} unchanged {trial.identical:.1f} %")
        return trial

    grids = {name: DEFAULT_GRIDS[name] for name in control.attributes}
    seen = read_control_counts(model_dir)
    if seen is not None:  # a value never seen in training has an untrained token: its outputs mean nothing
        for name, grid in grids.items():
            unseen = [value for value in grid if not seen.get(control.token(name, value))]
            if unseen:
                log(f"{name}: {', '.join(f'{v:.2f}' for v in unseen)} never occurred in training; not tried")
                grids[name] = [value for value in grid if value not in unseen]
    values, trials = coordinate_ascent(score, dict(control.defaults), grids, min_bleu, rounds)
    best = next(t for t in trials if t.control == values)
    if not best.feasible(min_bleu):
        raise WeanError(
            f"no control values reach BLEU {min_bleu:g} on {benchmark_name} (best {best.bleu:.2f}); "
            "the model's defaults are left as they were"
        )
    assets = generator.assets
    config = dataclasses.replace(assets.config, generation=dataclasses.replace(assets.config.generation, control=values))
    save_assets(model_dir, dataclasses.replace(assets, config=config))
    atomic_write_json(model_dir / "control-tuning.json", {
        "benchmark": benchmark_name, "lines": [i + 1 for i in chosen_lines], "skip": skip, "seed": seed,
        "min_bleu": min_bleu, "search": {k: v for k, v in search.items() if v is not None},
        "chosen": {"control": values, "sari": best.sari, "bleu": best.bleu},
        "trials": [dataclasses.asdict(t) for t in trials],
    })
    return values
