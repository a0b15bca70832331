"""Control tokens (Martin et al. 2020, "Controllable Sentence Simplification", ACCESS).

Each training pair is described by a few attributes of how its target relates to its source;
their values, rounded to ``bucket``, are prepended to the source as reserved tokens such as
``<chars_ratio_0.80>``. The model learns what each value means, and at inference the user (or
:mod:`wean.inference.tune_control`, on validation data) asks for the values wanted. The tokens are added
after tokenization, so no tokenizer can split them, and they are reserved in the vocabulary, so
text that happens to spell one is still read as text.

Attributes (target / source, except ``levenshtein``):

``chars_ratio``
    length in characters: ACCESS's NbChars. Below 1 asks for shorter output.
``levenshtein``
    similarity of the two texts, 1 - InDel distance / (len(source) + len(target)), computed by
    rapidfuzz as ACCESS computed it with python-Levenshtein's ``ratio``: 1 is a copy.
``word_rank``
    lexical complexity: the third quartile of the log-ranks of the sentence's words in the
    ``wordfreq`` English frequency list (ACCESS used FastText's vocabulary order, which is a
    Common Crawl frequency ranking too; wordfreq ships its table in the package, so nothing is
    downloaded). Below 1 asks for more frequent, simpler words.

Dependency-tree depth (ACCESS's fourth attribute) is left out: no maintained parser with an
English model installs from the package registries alone.
"""

from __future__ import annotations

import math
import statistics
from functools import lru_cache
from typing import Callable, Mapping

from rapidfuzz.distance import Indel

from wean.errors import WeanError

MAX_VALUE = 2.0  # ratios above this are clipped (ACCESS does the same): they are rare and noisy
RANKED_WORDS = 100_000  # words of the frequency list with a rank; the rest share the next one


def chars_ratio(source: str, target: str) -> float:
    return len(target) / max(len(source), 1)


def levenshtein(source: str, target: str) -> float:
    return Indel.normalized_similarity(source, target)


@lru_cache(maxsize=1)
def _word_ranks() -> dict[str, int]:
    from wordfreq import top_n_list  # deferred: wordfreq takes 0.15 s to import, and only word_rank reads it

    return {word: rank for rank, word in enumerate(top_n_list("en", RANKED_WORDS), start=1)}


def lexical_complexity(text: str) -> float:
    """Third quartile of the words' log-ranks (punctuation and numbers left out); a sentence
    without words gets the rank of an unknown word."""
    ranks = _word_ranks()
    log_ranks = [
        math.log(ranks.get(word, RANKED_WORDS + 1))
        for word in (token.lower() for token in text.split())
        if any(char.isalpha() for char in word)
    ]
    if len(log_ranks) < 2:
        return log_ranks[0] if log_ranks else math.log(RANKED_WORDS + 1)
    return statistics.quantiles(log_ranks, n=4, method="inclusive")[2]  # numpy's default (linear) quantile


def word_rank(source: str, target: str) -> float:
    return lexical_complexity(target) / max(lexical_complexity(source), 1e-9)


ATTRIBUTES: dict[str, Callable[[str, str], float]] = {
    "chars_ratio": chars_ratio,
    "levenshtein": levenshtein,
    "word_rank": word_rank,
}


def max_value(name: str) -> float:
    """The largest value that can be asked for: a pair is never more similar than a copy, so
    levenshtein above 1 was never trained on."""
    return 1.0 if name == "levenshtein" else MAX_VALUE


class Control:
    """The attributes a model was trained with, their bucket width and the values asked for when
    the user asks for none (``defaults``)."""

    def __init__(self, attributes: list[str], bucket: float, defaults: Mapping[str, float] | None = None):
        for name in attributes:
            if name not in ATTRIBUTES:
                raise WeanError(f"unknown control attribute {name!r}; choose from {', '.join(ATTRIBUTES)}")
        if len(set(attributes)) != len(attributes):
            raise WeanError(f"control attributes repeat a name: {', '.join(attributes)}")
        if not 0 < bucket <= MAX_VALUE:
            raise WeanError(f"control bucket {bucket} must be in (0, {MAX_VALUE}]")
        self.attributes = list(attributes)
        self.bucket = bucket
        self.defaults = {name: 1.0 for name in attributes}
        if defaults:
            self.defaults.update(self.check(defaults))

    @classmethod
    def from_config(cls, config) -> "Control":
        """The control of a :class:`wean.config.Config`: data.control with generation.control."""
        return cls(config.data.control.attributes, config.data.control.bucket, config.generation.control)

    def __bool__(self) -> bool:
        return bool(self.attributes)

    def rounded(self, value: float) -> float:
        value = min(max(value, 0.0), MAX_VALUE)
        return round(round(value / self.bucket) * self.bucket, 6)

    def token(self, name: str, value: float) -> str:
        return f"<{name}_{self.rounded(value):.2f}>"

    @staticmethod
    def describe(tokens: list[str]) -> str:
        """Tokens of :meth:`token` as the values they ask for: ``<chars_ratio_0.70>`` -> ``chars_ratio=0.70``."""
        return ", ".join("=".join(token.strip("<>").rsplit("_", 1)) for token in tokens)

    def reserved_tokens(self) -> list[str]:
        """Every token the attributes can produce, so that the vocabulary has all of them."""
        steps = int(round(MAX_VALUE / self.bucket))
        values = sorted({self.rounded(step * self.bucket) for step in range(steps + 1)})
        return [self.token(name, value) for name in self.attributes for value in values]

    def oracle_tokens(self, source: str, target: str) -> list[str]:
        """The tokens describing a training pair."""
        return [self.token(name, ATTRIBUTES[name](source, target)) for name in self.attributes]

    def check(self, values: Mapping[str, float]) -> dict[str, float]:
        """Requested values, checked: known names, finite numbers in [0, max_value(name)]."""
        if not isinstance(values, Mapping):
            raise WeanError(f"control: {values!r} is not a mapping of attributes to values, "
                            "e.g. {'chars_ratio': 0.8}")
        checked = {}
        for name, value in values.items():
            if name not in self.attributes:
                known = ", ".join(self.attributes) or "none"
                raise WeanError(f"control: unknown attribute {name!r}; this model knows {known}")
            limit = max_value(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= limit:
                raise WeanError(f"control: {name} is {value!r}; it must be a number from 0 to {limit:g}")
            checked[name] = float(value)
        return checked

    def tokens(self, values: Mapping[str, float] | None = None) -> list[str]:
        """Tokens asking for ``values``; attributes not given take the model's defaults."""
        chosen = {**self.defaults, **self.check(values or {})}
        return [self.token(name, chosen[name]) for name in self.attributes]


def parse_control(text: str) -> dict[str, float]:
    """``chars_ratio=0.8,levenshtein=0.7`` as a dict; the command line's --control."""
    values = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, raw = item.partition("=")
        if not sep:
            raise WeanError(f"--control {text!r}: expected NAME=VALUE pairs, e.g. chars_ratio=0.8,levenshtein=0.7")
        try:
            value = float(raw)
        except ValueError:
            raise WeanError(f"--control: {name.strip()}={raw!r} is not a number") from None
        if not math.isfinite(value):
            raise WeanError(f"--control: {name.strip()}={raw} is not a finite number")
        values[name.strip()] = value
    return values
