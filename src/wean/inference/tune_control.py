"""Choose a controllable model's default control values on validation data (``wean tune-control``).

ACCESS chose its values by the SARI of the validation set; so does this by default, by coordinate
ascent: each attribute in turn is swept over a grid with the others held, and the best value is
kept, for a few rounds. The objective may be any score key of a registered metric, in its own
direction. SARI alone rewards outputs that drop most of their source, so a setting counts only if
it meets every requirement: ``bleu>=60`` by default, and any other key bounded by a number or by
the references' own rate (``invented_names<=references``: the yardstick of a reference-free
metric, each reference stream scored as outputs). Among settings that meet none, the one closest
to meeting them is kept. The sentences are a seeded sample of a validation benchmark (TurkCorpus
tune) after the first ``skip`` (those that selected the checkpoint). The chosen values become
``generation.control`` in the model directory's config; the whole search is kept in
``control-tuning.json`` beside it.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path
from typing import Callable, Sequence

from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, data_root, evaluate, get_benchmark
from wean.inference.generator import Generator
from wean.model_dir import read_control_counts, save_assets
from wean.registry import METRICS, score_key, selectable_key
from wean.textio import atomic_write_json, read_lines

# steps of 0.1: each setting decodes every tuning sentence, and the outputs change little
# between neighbouring buckets of 0.05
DEFAULT_GRIDS = {
    "chars_ratio": [round(0.5 + 0.1 * i, 2) for i in range(7)],  # 0.5 .. 1.1
    "levenshtein": [round(0.4 + 0.1 * i, 2) for i in range(7)],  # 0.4 .. 1.0
    "word_rank": [round(0.5 + 0.1 * i, 2) for i in range(7)],  # 0.5 .. 1.1
}


@dataclasses.dataclass(frozen=True)
class Requirement:
    """``key op bound``: ``bleu>=60``, ``invented_names<=references`` (the references' own rate)."""

    key: str
    op: str  # ">=" or "<="
    bound: float | None  # None: the references' rate
    text: str

    @classmethod
    def parse(cls, text: str) -> "Requirement":
        match = re.fullmatch(r"\s*([\w-]+)\s*(>=|<=)\s*(\S+)\s*", text)
        if not match:
            raise WeanError(f"--require {text!r}: write KEY>=NUMBER, KEY<=NUMBER or KEY<=references")
        key, op, bound = match.groups()
        owner = tunable_key(key, f"--require {text!r}")[0]
        if bound == "references":
            if owner is None or not METRICS.get(owner).yardstick:
                raise WeanError(f"--require {text!r}: only a reference-free metric's key has a references' rate")
            return cls(key, op, None, text.strip())
        try:
            value = float(bound)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise WeanError(f"--require {text!r}: {bound!r} is neither a finite number nor 'references'")
        return cls(key, op, value, text.strip())

    def shortfall(self, scores: dict[str, float], references: dict[str, float]) -> float:
        """How far ``scores`` are from meeting this; 0 when they meet it, infinite for a score
        that is not a number."""
        bound = references[self.key] if self.bound is None else self.bound
        gap = bound - scores[self.key] if self.op == ">=" else scores[self.key] - bound
        return math.inf if math.isnan(gap) else max(0.0, gap)


def tunable_key(key: str, what: str) -> tuple[str, str | None]:
    """(the metric that reports ``key``, its direction), for a key tuning can score on its
    sentences: not the training loss, not a metric that needs a reverse model."""
    owner, direction = score_key(key)
    if owner is None:
        raise WeanError(f"{what}: {key!r} exists during training only; choose a metric's score key")
    if METRICS.get(owner).needs_reverse_model:
        raise WeanError(f"{what}: {key!r} needs a reverse model, which tune-control does not take")
    return owner, direction


@dataclasses.dataclass
class Trial:
    control: dict[str, float]
    scores: dict[str, float]
    shortfall: float = 0.0  # summed over the requirements; 0: every one met

    @property
    def feasible(self) -> bool:
        return self.shortfall == 0.0


def sample_sentences(count: int, total: int, skip: int, seed: int) -> list[int]:
    """``count`` line indices of ``total``, drawn with ``seed`` from those after the first ``skip``."""
    pool = list(range(skip, total))
    if not pool:
        raise WeanError(f"--skip {skip} leaves none of the {total} sentences")
    if count >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, count))


def tuning_set(
    benchmark_name: str, lines: list[int], root: Path | None = None, keys: tuple[str, ...] = (),
) -> tuple[list[str], list[list[str]], EvaluationSettings]:
    """The sources and reference streams of a benchmark's ``lines`` (0-based), and how to score
    them: SARI, BLEU, the output statistics and the metrics that report ``keys``."""
    benchmark = get_benchmark(benchmark_name)
    source_path, reference_paths = benchmark.paths(data_root(root))
    all_sources = read_lines(source_path)
    sources = [all_sources[i] for i in lines]
    references = [[stream[i] for i in lines] for stream in (read_lines(p) for p in reference_paths)]
    metrics = dict.fromkeys(("sari", "bleu", "stats", *(score_key(key)[0] for key in keys)))
    settings = EvaluationSettings(tuple(m for m in metrics if m), "default", benchmark.lowercase, benchmark.tokenizer)
    return sources, references, settings


def coordinate_ascent(
    score: Callable[[dict[str, float]], Trial], start: dict[str, float], grids: dict[str, list[float]],
    objective: str = "sari", higher_is_better: bool = True, rounds: int = 2,
) -> tuple[dict[str, float], list[Trial]]:
    """The best values found from ``start`` by ``objective`` among trials that meet their
    requirements (the nearest to meeting them if none does), and every trial in the order run."""
    trials: dict[tuple, Trial] = {}

    def run(values: dict[str, float]) -> Trial:
        key = tuple(sorted(values.items()))
        if key not in trials:
            trials[key] = score(dict(values))
        return trials[key]

    def better(a: Trial, b: Trial | None) -> bool:
        if b is None:
            return True
        if a.feasible != b.feasible:
            return a.feasible
        if not a.feasible:
            return a.shortfall < b.shortfall
        return a.scores[objective] > b.scores[objective] if higher_is_better else a.scores[objective] < b.scores[objective]

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
    skip: int = 500, seed: int = 1, requirements: Sequence[str] = ("bleu>=60",), objective: str = "sari",
    rounds: int = 2, plain_text: bool | None = None, root: Path | None = None, log: Callable[[str], None] = print,
    nearest: bool = False, **search,
) -> dict[str, float]:
    """Search, write the chosen values into ``model_dir`` and return them, with the search in
    ``control-tuning.json``. Where no setting meets every requirement, ``nearest`` takes the one
    nearest to meeting them (least summed shortfall; ``"met": false``); otherwise the model and
    its record stay as they were, and the search is written to ``control-tuning-unmet.json``."""
    control = generator.control
    if not control:
        raise WeanError(f"{model_dir}: this model was trained without control tokens; nothing to tune")
    direction = selectable_key(objective, "--objective")[1]
    tunable_key(objective, "--objective")
    required = [Requirement.parse(text) for text in requirements]
    source_path = get_benchmark(benchmark_name).source_path(data_root(root))
    chosen_lines = sample_sentences(sentences, len(read_lines(source_path)), skip, seed)
    shown = tuple(dict.fromkeys(("sari", "bleu", objective, *(r.key for r in required))))
    sources, references, settings = tuning_set(benchmark_name, chosen_lines, root, shown)
    reference_rates: dict[str, float] = {}

    def score(values: dict[str, float]) -> Trial:
        outputs = [g.text for g in generator.generate(
            sources, plain_text=plain_text, control=values, split_sentences=False, **search
        )]
        # the references' own rates do not change between trials: scored once
        evaluation = evaluate(outputs, sources, references, settings, yardstick=not reference_rates)
        reference_rates.update(evaluation.reference_scores)
        scores = evaluation.scores
        trial = Trial(values, scores, sum(r.shortfall(scores, reference_rates) for r in required))
        log("  ".join(f"{k} {v:.2f}" for k, v in values.items()) + "  ->  "
            + " ".join(f"{key} {scores[key]:.2f}" for key in shown)
            + f" unchanged {scores['identical_to_source']:.1f} %" + ("" if trial.feasible else "  (short of a requirement)"))
        return trial

    grids = {name: DEFAULT_GRIDS[name] for name in control.attributes}
    seen = read_control_counts(model_dir)
    if seen is not None:  # a value never seen in training has an untrained token: its outputs mean nothing
        for name, grid in grids.items():
            unseen = [value for value in grid if not seen.get(control.token(name, value))]
            if unseen:
                log(f"{name}: {', '.join(f'{v:.2f}' for v in unseen)} never occurred in training; not tried")
                grids[name] = [value for value in grid if value not in unseen]
    values, trials = coordinate_ascent(score, dict(control.defaults), grids, objective, direction == "higher", rounds)
    best = next(t for t in trials if t.control == values)
    taken = best.feasible or nearest
    atomic_write_json(model_dir / ("control-tuning.json" if taken else "control-tuning-unmet.json"), {
        "benchmark": benchmark_name, "lines": [i + 1 for i in chosen_lines], "skip": skip, "seed": seed,
        "objective": objective, "requirements": [r.text for r in required],
        "reference_rates": {key: reference_rates[key] for key in shown if key in reference_rates},
        "search": {k: v for k, v in search.items() if v is not None},
        "met": best.feasible,
        ("chosen" if taken else "nearest"): {"control": values, **{key: best.scores[key] for key in shown}},
        "trials": [dataclasses.asdict(t) for t in trials],
    })
    if not best.feasible:
        unmet = [r.text for r in required if r.shortfall(best.scores, reference_rates)]
        summary = (f"no control values meet {', '.join(unmet)} on {benchmark_name} (nearest: "
                   + ", ".join(f"{r.key} {best.scores[r.key]:.2f}" for r in required) + ")")
        if not nearest:
            raise WeanError(f"{summary}; the model's defaults are left as they were (the search is in "
                            f"{model_dir / 'control-tuning-unmet.json'}; --nearest takes the nearest)")
        log(f"warning: {summary}; the nearest is taken (--nearest)")
    assets = generator.assets
    config = dataclasses.replace(assets.config, generation=dataclasses.replace(assets.config.generation, control=values))
    save_assets(model_dir, dataclasses.replace(assets, config=config))
    return values
