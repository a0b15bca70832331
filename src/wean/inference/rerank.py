"""Reranking an n-best list with more evidence than the search had.

Each output of an n-best list gets the score

    search score + sum over scorers of weight * scorer(source, output)

and the list is reordered by it (noisy-channel reranking, Yee et al. 2019, is this with a reverse
model's and a language model's log-probabilities as scorers). A scorer takes the sources and the
outputs of one batch, aligned, and returns one number per output::

    from wean.registry import RERANKERS

    @RERANKERS.register("my_scorer")
    def my_scorer(sources: list[str], outputs: list[Generation]) -> list[float]: ...

so that ``--rerank my_scorer=0.5`` (with ``--plugins FILE``) or
``generate(..., rerank=[("my_scorer", 0.5)])`` uses it; ``generate`` also takes the function
itself in place of a name. A registered class is a scorer that needs an argument, named as
``NAME:ARGUMENT``: ``channel:DIR`` and ``lm:DIR`` ask other models (:mod:`wean.inference.model_scores`).
Each output's ``rerank_scores`` keeps what each scorer said.
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from wean.errors import WeanError
from wean.registry import RERANKERS
from wean.search_options import parse_rerank

if TYPE_CHECKING:
    from wean.inference.outputs import Generation

Scorer = Callable[[Sequence[str], Sequence["Generation"]], Sequence[float]]


@RERANKERS.register("length")
def length(sources: Sequence[str], outputs: Sequence["Generation"]) -> list[float]:
    """The output's tokens: a positive weight rewards longer outputs, a negative one shorter."""
    return [float(len(output.tokens)) for output in outputs]


@RERANKERS.register("log_prob")
def log_prob(sources: Sequence[str], outputs: Sequence["Generation"]) -> list[float]:
    """The output's raw log-probability (with weight 1 and a length-normalized search score, a mix)."""
    return [output.log_prob for output in outputs]


@RERANKERS.register("unchanged")
def unchanged(sources: Sequence[str], outputs: Sequence["Generation"]) -> list[float]:
    """1 for an output identical to its source (after spacing), else 0: a negative weight prefers
    outputs that change something, where a simplifier copies too often."""
    return [float(" ".join(output.text.split()) == " ".join(source.split()))
            for source, output in zip(sources, outputs)]


def resolve(rerank: str | Sequence[tuple[str | Scorer, float]]) -> list[tuple[str, Scorer, float]]:
    """(name, function, weight) of each (name or function, weight) asked for, or of each
    ``NAME=WEIGHT`` of a string."""
    if isinstance(rerank, str):
        rerank = parse_rerank(rerank)
    chosen = []
    for item in rerank:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise WeanError(f"rerank: {item!r} is not a (scorer, weight) pair")
        scorer, weight = item
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise WeanError(f"rerank: the weight of {scorer!r} is {weight!r}; it must be a finite number")
        if isinstance(scorer, str):
            chosen.append((scorer, _registered(scorer), float(weight)))
        elif callable(scorer):
            chosen.append((getattr(scorer, "__name__", "scorer"), scorer, float(weight)))
        else:
            raise WeanError(f"rerank: {scorer!r} is neither a scorer's name nor a function")
    return chosen


def _registered(name: str) -> Scorer:
    """The scorer a name asks for: a registered function, or a registered class given the
    argument after ``:``."""
    name, colon, argument = name.partition(":")
    scorer = RERANKERS.get(name.strip(), "rerank")
    if isinstance(scorer, type):
        if not argument.strip():
            raise WeanError(f"rerank: {name} needs an argument: {name}:DIR=WEIGHT")
        return scorer(argument.strip())
    if colon:
        raise WeanError(f"rerank: {name} takes no argument (given {argument!r})")
    return scorer


def read_in_directory(rerank: list[tuple[str, float]], directory: Path) -> list[tuple[str, float]]:
    """``rerank`` with each relative ``NAME:DIR`` argument read inside ``directory`` (a model
    directory's own reranking models)."""
    placed = []
    for name, weight in rerank:
        scorer, colon, argument = name.partition(":")
        if colon and argument.strip() and not Path(argument.strip()).is_absolute():
            name = f"{scorer}:{directory / argument.strip()}"
        placed.append((name, weight))
    return placed


def rerank(sources: Sequence[str], nbest_lists: Sequence[list["Generation"]],
           scorers: Sequence[tuple[str, Scorer, float]]) -> list[list["Generation"]]:
    """Each list reordered by its reranked score (stable: ties keep the search's order), which
    becomes each output's ``score``; ``rerank_scores`` keeps the search's score and each scorer's value."""
    flat_sources = [source for source, outputs in zip(sources, nbest_lists) for _ in outputs]
    flat = [output for outputs in nbest_lists for output in outputs]
    for output in flat:
        output.rerank_scores = {"search": output.score}
    for name, scorer, weight in scorers:
        values = list(scorer(flat_sources, flat))
        if len(values) != len(flat):
            raise WeanError(f"rerank: scorer {name} gave {len(values)} scores for {len(flat)} outputs")
        for output, value in zip(flat, values):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise WeanError(f"rerank: scorer {name} gave {value!r} for {output.text!r}; scores must be finite "
                                "numbers")
            output.rerank_scores[name] = float(value)
            output.score += weight * value
    return [sorted(outputs, key=lambda output: -output.score) for outputs in nbest_lists]

