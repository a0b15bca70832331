"""Scoring a system's outputs with several metrics at once, each result with its signature.

:func:`evaluate` works on lists of strings; :func:`evaluate_files` reads and checks files first
(and is what ``wean evaluate`` calls). Every metric reports the settings it ran under, so that a
number never travels without the variant, casing, tokenizer and library versions that produced it.
"""

from __future__ import annotations

import hashlib
import math
import sys
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Callable, Sequence

import sacrebleu

from wean.data.root import portable_path
from wean.errors import WeanError
from wean.evaluation import bleu, fidelity, fkgl, rouge
from wean.evaluation.benchmarks import Benchmark
from wean.evaluation.normalize import TOKENIZERS, tokenize
from wean.evaluation.sari import VARIANTS, corpus_sari, effective_lowercase
from wean.evaluation.stats import copy_statistics, odd_generation
from wean.registry import METRICS, validation_directions
from wean.textio import check_same_length, empty_line_numbers, read_lines

_SHORT_KEYS = {"lowercase": "case", "tokenizer": "tok", "references": "nrefs"}


def _wean_version() -> str:
    return version("wean")


@dataclass(frozen=True)
class EvaluationSettings:
    """What to compute and how. ``tokenizer`` is 13a, none or char; with char, ROUGE is
    character-level, otherwise ROUGE uses its own ROUGE-1.5.5 tokenization."""

    metrics: tuple[str, ...] = ("sari", "bleu", "fkgl", "stats", "fidelity")
    sari_variant: str = "default"
    lowercase: bool = True
    tokenizer: str = "13a"
    reverse_model: str | None = None  # a model directory trained simple -> complex, for metric "reverse"
    # how the reverse model reads the scored text: True plain, False tokenized as its corpus was;
    # None its own generation.plain_text (a benchmark says which its text is)
    plain_text: bool | None = None

    def __post_init__(self):
        for name in self.metrics:
            if METRICS.get(name).needs_reverse_model and self.reverse_model is None:  # unknown names: one line
                raise WeanError(f"metric {name!r} needs a model trained from simple to complex "
                                "(wean evaluate or compare --reverse-model DIR)")
        if self.sari_variant not in VARIANTS:
            raise WeanError(f"unknown SARI variant {self.sari_variant!r}; choose from {', '.join(VARIANTS)}")
        if self.tokenizer not in TOKENIZERS:
            raise WeanError(f"unknown tokenizer {self.tokenizer!r}; choose from {', '.join(TOKENIZERS)}")


@dataclass(frozen=True)
class MetricResult:
    metric: str
    scores: dict[str, float]
    signature: dict

    def signature_string(self) -> str:
        """sacrebleu-style one-line signature, e.g. ``variant:default|case:lc|tok:13a|nrefs:8|...``."""
        parts = []
        for key, value in self.signature.items():
            if key == "lowercase":
                value = "lc" if value else "mixed"
            parts.append(f"{_SHORT_KEYS.get(key, key)}:{value}")
        return "|".join(parts)


@dataclass
class Evaluation:
    segments: int
    references: int
    results: list[MetricResult] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    # the yardstick metrics' scores of the references themselves, each stream scored as outputs
    # against the source, then averaged over streams
    reference_scores: dict[str, float] = field(default_factory=dict)

    @property
    def scores(self) -> dict[str, float]:
        """All scores in one flat mapping (``sari``, ``sari_add``, ``bleu``, ``rouge1``, ...)."""
        return {name: value for result in self.results for name, value in result.scores.items()}

    def to_dict(self) -> dict:
        return {
            "wean": _wean_version(),
            "inputs": self.inputs,
            "segments": self.segments,
            "references": self.references,
            "scores": self.scores,
            "signatures": {r.metric: {**r.signature, "string": r.signature_string()} for r in self.results},
            **({"reference_scores": self.reference_scores} if self.reference_scores else {}),
        }

    def table(self) -> str:
        width = max([len(name) for name in self.scores] + [6])
        yardstick = bool(self.reference_scores)  # a column of the references' own rates
        lines = [f"{'metric':<{width}}  {'score':>8}  {'refs':>8}  signature" if yardstick
                 else f"{'metric':<{width}}  {'score':>8}  signature"]
        for result in self.results:
            for i, (name, value) in enumerate(result.scores.items()):
                number = f"{value:8.2f}" if isinstance(value, float) else f"{value:8d}"
                if yardstick:
                    reference = self.reference_scores.get(name)
                    number += f"  {reference:8.2f}" if reference is not None else " " * 10
                lines.append(f"{name:<{width}}  {number}  {result.signature_string() if i == 0 else ''}".rstrip())
        return "\n".join(lines)


def evaluate(
    outputs: Sequence[str],
    sources: Sequence[str] | None = None,
    reference_streams: Sequence[Sequence[str]] | None = None,
    settings: EvaluationSettings | None = None,
    yardstick: bool = True,
) -> Evaluation:
    """Score ``outputs``; ``reference_streams[k][i]`` is reference k of output i. ``yardstick``:
    also score each reference stream with the reference-free metrics (``reference_scores``)."""
    settings = settings or EvaluationSettings()
    reference_streams = list(reference_streams or [])
    metrics = {name: METRICS.get(name) for name in settings.metrics}
    # a missing source is named before missing references, whatever the order of the metrics
    missing = [(name, "a source file") for name, m in metrics.items() if m.needs_source and sources is None]
    missing += [(name, "references") for name, m in metrics.items() if m.needs_references and not reference_streams]
    missing += [(name, "a source file or references") for name, m in metrics.items()
                if m.needs_source_or_references and sources is None and not reference_streams]
    if missing:
        raise WeanError(f"metric {missing[0][0]!r} needs {missing[0][1]}")
    if not outputs:
        raise WeanError("nothing to evaluate: there are no outputs")
    # sources and references come first, so that a mismatch blames the outputs
    streams = [("sources", sources)] if sources is not None else []
    streams += [(f"references {k}", stream) for k, stream in enumerate(reference_streams)]
    check_same_length(streams + [("outputs", outputs)])

    nrefs = len(reference_streams)
    evaluation = Evaluation(segments=len(outputs), references=nrefs)
    inputs = MetricInputs(outputs, sources, reference_streams, settings)
    for m in metrics.values():
        evaluation.results.append(m.score(inputs))
    for m in metrics.values():
        if yardstick and m.yardstick and reference_streams and sources is not None:
            per_stream = [m.score(MetricInputs(stream, sources, [], settings)).scores for stream in reference_streams]
            for key in per_stream[0]:
                evaluation.reference_scores[key] = sum(scores[key] for scores in per_stream) / len(per_stream)
    return evaluation


@dataclass(frozen=True)
class MetricInputs:
    """What a metric scores, and how (casing, tokenizer, SARI variant)."""

    outputs: Sequence[str]
    sources: Sequence[str] | None
    reference_streams: list
    settings: EvaluationSettings

    @property
    def common_signature(self) -> dict:
        settings = self.settings
        return {"lowercase": settings.lowercase, "tokenizer": settings.tokenizer,
                "references": len(self.reference_streams)}


@dataclass(frozen=True)
class Metric:
    """A registered metric. ``keys``: every score key it may report, each with its direction,
    "higher" or "lower" is better, or None for a description (a length, the share copied) that no
    selection may optimise. ``yardstick``: a reference-free metric that ``evaluate`` also applies
    to each reference stream, so that a system's rate is read beside the human one.
    ``statistics(outputs, inputs)`` (optional): one row of numbers per sentence whose column sums,
    given to ``from_statistics``, reproduce the scores, so that ``wean compare`` resamples rows."""

    score: Callable[[MetricInputs], MetricResult] = field(compare=False)  # a wrapper of ``origin``
    keys: dict[str, str | None] = field(default_factory=dict)
    needs_source: bool = False
    needs_references: bool = False
    needs_source_or_references: bool = False
    yardstick: bool = False
    needs_reverse_model: bool = False  # EvaluationSettings.reverse_model, which training never has
    statistics: Callable | None = None
    from_statistics: Callable | None = None
    # the function registered: the same one again is an equal Metric, no conflict; messages name it
    origin: Callable | None = None


def metric(name: str, keys: dict[str, str | None] | None = None, **options):
    """Register ``function(inputs) -> MetricResult | dict`` as the metric ``name`` (wean/registry.py).
    ``keys`` maps each score key to "higher", "lower" or None (default: ``{name: "higher"}``);
    ``options``: the other :class:`Metric` fields. A function may return its scores as a plain
    dict of declared keys and finite numbers: its signature then records the settings and the
    module it came from. Registering the same function again under its name does nothing."""
    keys = dict(keys or {name: "higher"})
    for key, direction in keys.items():
        if direction not in ("higher", "lower", None):
            raise WeanError(f"metric {name!r}: key {key!r} has direction {direction!r}; choose higher, lower or None")
    if options.get("yardstick") and options.get("needs_references"):
        raise WeanError(f"metric {name!r}: a yardstick scores the references themselves, so it cannot need them")
    if (options.get("statistics") is None) != (options.get("from_statistics") is None):
        raise WeanError(f"metric {name!r}: statistics and from_statistics come together")

    def decorate(function):
        taken = [key for key in keys if key in validation_directions()]
        taken += [key for other in METRICS.names() if other != name for key in keys if key in METRICS.get(other).keys]
        if taken:
            raise WeanError(f"metric {name!r}: score key {taken[0]!r} is another's already")

        def score(inputs: MetricInputs) -> MetricResult:
            result = function(inputs)
            if isinstance(result, MetricResult):
                return result
            return MetricResult(name, _checked_scores(name, keys, result), {
                **inputs.common_signature, "library": function.__module__})

        METRICS.register(name)(Metric(score, keys, **options, origin=function))
        return function

    return decorate


def _checked_scores(name: str, keys: dict, result) -> dict[str, float]:
    """A plug-in's scores as numbers: declared keys only, each a finite number."""
    if not isinstance(result, dict):
        raise WeanError(f"metric {name!r} returned {type(result).__name__}, not a dict of scores")
    scores = {}
    for key, value in result.items():
        if key not in keys:
            raise WeanError(f"metric {name!r} reported {key!r}, which it does not declare ({', '.join(keys)})")
        try:
            scores[key] = float(value)
        except (TypeError, ValueError):
            raise WeanError(f"metric {name!r}: {key} is {value!r}, not a number") from None
        if not math.isfinite(scores[key]):
            raise WeanError(f"metric {name!r}: {key} is {scores[key]}, not a finite number")
    return scores


def metric_list(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """The metrics a ``--metrics`` value names; one starting with ``+`` adds to ``default``."""
    if not text:
        return default
    listed = tuple(m.strip() for m in text.removeprefix("+").split(",") if m.strip())
    return default + tuple(m for m in listed if m not in default) if text.startswith("+") else listed


def wean_library() -> str:
    # SARI and the statistics are wean's own code on sacrebleu's 13a tokenizer
    return f"wean=={_wean_version()},sacrebleu=={sacrebleu.__version__}"


@metric("sari", {"sari": "higher", "sari_add": "higher", "sari_keep": "higher", "sari_del": "higher"},
        needs_source=True, needs_references=True)
def _sari(inputs: MetricInputs) -> MetricResult:
    settings, variant = inputs.settings, inputs.settings.sari_variant
    scores = corpus_sari(inputs.sources, inputs.outputs, inputs.reference_streams, variant, settings.lowercase,
                         settings.tokenizer)
    signature = {
        "variant": variant,
        **inputs.common_signature,
        "lowercase": effective_lowercase(variant, settings.lowercase),
        "level": "sentence mean" if variant == "xu2016" else "corpus",
        "library": wean_library(),
    }
    return MetricResult("sari", scores.as_dict(), signature)


def _bleu(inputs: MetricInputs, style: str) -> MetricResult:
    bleu_settings = bleu.BleuSettings(style, inputs.settings.lowercase, inputs.settings.tokenizer)
    score = bleu.corpus_bleu(inputs.outputs, inputs.reference_streams, bleu_settings)
    key = "multi_bleu" if style == "multi-bleu" else "bleu"
    return MetricResult(key, {key: score}, bleu.signature(bleu_settings, len(inputs.reference_streams)))


metric("bleu", needs_references=True)(lambda inputs: _bleu(inputs, "sacrebleu"))
metric("multi-bleu", {"multi_bleu": "higher"}, needs_references=True)(lambda inputs: _bleu(inputs, "multi-bleu"))


@metric("fkgl", {"fkgl": "lower"})  # a lower grade level reads more easily
def _fkgl(inputs: MetricInputs) -> MetricResult:
    return MetricResult("fkgl", {"fkgl": fkgl.corpus_fkgl(inputs.outputs)}, fkgl.signature())


@metric("rouge", {"rouge1": "higher", "rouge2": "higher", "rougeL": "higher"}, needs_references=True)
def _rouge(inputs: MetricInputs) -> MetricResult:
    settings = inputs.settings
    tokenization = "char" if settings.tokenizer == "char" else "words"
    scores = rouge.corpus_rouge(inputs.outputs, inputs.reference_streams, tokenization, settings.lowercase)
    return MetricResult("rouge", scores, rouge.signature(tokenization, settings.lowercase, len(inputs.reference_streams)))


_STATS_KEYS = {
    "compression_ratio": None, "identical_to_source": None, "output_tokens": None, "source_tokens": None,
    "repeated_tokens": "lower", "outputs_with_repeats": "lower", "length_shortfall": "lower",
    "outputs_shorter_than_reference": "lower", "mean_repeated_tokens": "lower", "mean_length_shortfall": "lower",
}


@metric("stats", _STATS_KEYS, needs_source_or_references=True)
def _stats(inputs: MetricInputs) -> MetricResult:
    lowercase, tokenizer = inputs.settings.lowercase, inputs.settings.tokenizer
    output_tokens = [tokenize(line, lowercase, tokenizer) for line in inputs.outputs]
    scores = {}
    if inputs.sources is not None:
        source_tokens = [tokenize(line, lowercase, tokenizer) for line in inputs.sources]
        scores.update(copy_statistics(source_tokens, output_tokens))
    if inputs.reference_streams:
        per_output = [
            [tokenize(stream[i], lowercase, tokenizer) for stream in inputs.reference_streams]
            for i in range(len(inputs.outputs))
        ]
        scores.update(odd_generation(output_tokens, per_output).summary())
    return MetricResult("stats", scores, {**inputs.common_signature, "library": wean_library()})


def _fidelity_statistics(outputs: Sequence[str], inputs: MetricInputs):
    return fidelity.sentence_statistics(inputs.sources, outputs)


@metric("fidelity", fidelity.DIRECTIONS, needs_source=True, yardstick=True,
        statistics=_fidelity_statistics, from_statistics=fidelity.from_statistics)
def _fidelity(inputs: MetricInputs) -> MetricResult:
    scores = fidelity.from_statistics(_fidelity_statistics(inputs.outputs, inputs).sum(0))
    signature = {"case": "mixed", "text": "raw", "lang": "en", "content_zipf": fidelity.CONTENT_WORD_ZIPF,
                 "library": f"wean=={_wean_version()},wordfreq=={version('wordfreq')}"}
    return MetricResult("fidelity", scores, signature)


def _file_record(path: Path, lines: int, root: str | Path | None) -> dict:
    return {"path": portable_path(path, root), "lines": lines, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _warn_empty(path: Path, lines: Sequence[str], what: str) -> None:
    empty = empty_line_numbers(lines)
    if empty:
        print(
            f"warning: {path}: {len(empty)} empty line(s), first at line {empty[0]}; scored as empty {what}",
            file=sys.stderr,
        )


def evaluate_files(
    hypothesis: str | Path,
    source: str | Path | None,
    references: Sequence[str | Path],
    settings: EvaluationSettings,
    benchmark: Benchmark | None = None,
    root: str | Path | None = None,
) -> Evaluation:
    """Read, check and score files. Problems with a file raise :class:`WeanError` naming it.
    ``root``: the data root the records name files under (default ``$WEAN_DATA_ROOT``)."""
    hypothesis = Path(hypothesis)
    outputs = read_lines(hypothesis)
    if not outputs:
        raise WeanError(f"{hypothesis}: empty file, no outputs to evaluate")
    _warn_empty(hypothesis, outputs, "outputs")
    named = []
    sources = None
    if source is not None:
        sources = read_lines(source)
        named.append((Path(source), sources))
    reference_streams = []
    for path in references:
        stream = read_lines(path)
        _warn_empty(Path(path), stream, "references")
        reference_streams.append(stream)
        named.append((Path(path), stream))
    check_same_length(named + [(hypothesis, outputs)])
    evaluation = evaluate(outputs, sources, reference_streams, settings)
    evaluation.inputs = {
        "benchmark": benchmark.name if benchmark else None,
        "hypothesis": _file_record(hypothesis, len(outputs), root),
        "source": _file_record(Path(source), len(sources), root) if source is not None else None,
        "references": [_file_record(Path(p), len(s), root) for p, s in zip(references, reference_streams)],
    }
    return evaluation
