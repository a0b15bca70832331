"""Scoring a system's outputs with several metrics at once, each result with its signature.

:func:`evaluate` works on lists of strings; :func:`evaluate_files` reads and checks files first
(and is what ``wean evaluate`` calls). Every metric reports the settings it ran under, so that a
number never travels without the variant, casing, tokenizer and library versions that produced it.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Sequence

import sacrebleu

from wean.errors import WeanError
from wean.evaluation import bleu, fkgl, rouge
from wean.evaluation.benchmarks import Benchmark
from wean.evaluation.normalize import TOKENIZERS, tokenize
from wean.evaluation.sari import VARIANTS, corpus_sari, effective_lowercase
from wean.evaluation.stats import copy_statistics, odd_generation
from wean.textio import check_same_length, empty_line_numbers, read_lines

METRICS = ("sari", "bleu", "multi-bleu", "fkgl", "rouge", "stats")
_NEEDS_SOURCE = {"sari"}
_NEEDS_REFERENCES = {"sari", "bleu", "multi-bleu", "rouge"}
_SHORT_KEYS = {"lowercase": "case", "tokenizer": "tok", "references": "nrefs"}


def _wean_version() -> str:
    return version("wean")


@dataclass(frozen=True)
class EvaluationSettings:
    """What to compute and how. ``tokenizer`` is 13a, none or char; with char, ROUGE is
    character-level, otherwise ROUGE uses its own ROUGE-1.5.5 tokenization."""

    metrics: tuple[str, ...] = ("sari", "bleu", "fkgl", "stats")
    sari_variant: str = "default"
    lowercase: bool = True
    tokenizer: str = "13a"

    def __post_init__(self):
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            raise WeanError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}")
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
        }

    def table(self) -> str:
        width = max([len(name) for name in self.scores] + [6])
        lines = [f"{'metric':<{width}}  {'score':>8}  signature"]
        for result in self.results:
            for i, (name, value) in enumerate(result.scores.items()):
                number = f"{value:8.2f}" if isinstance(value, float) else f"{value:8d}"
                lines.append(f"{name:<{width}}  {number}  {result.signature_string() if i == 0 else ''}".rstrip())
        return "\n".join(lines)


def evaluate(
    outputs: Sequence[str],
    sources: Sequence[str] | None = None,
    reference_streams: Sequence[Sequence[str]] | None = None,
    settings: EvaluationSettings = EvaluationSettings(),
) -> Evaluation:
    """Score ``outputs``; ``reference_streams[k][i]`` is reference k of output i."""
    reference_streams = list(reference_streams or [])
    missing = [m for m in settings.metrics if m in _NEEDS_SOURCE and sources is None]
    missing += [m for m in settings.metrics if m in _NEEDS_REFERENCES and not reference_streams]
    if "stats" in settings.metrics and sources is None and not reference_streams:
        missing.append("stats")
    if missing:
        needs = {"stats": "a source file or references"}.get(missing[0])
        needs = needs or ("a source file" if missing[0] in _NEEDS_SOURCE and sources is None else "references")
        raise WeanError(f"metric {missing[0]!r} needs {needs}")
    if not outputs:
        raise WeanError("nothing to evaluate: there are no outputs")
    # sources and references come first, so that a mismatch blames the outputs
    streams = [("sources", sources)] if sources is not None else []
    streams += [(f"references {k}", stream) for k, stream in enumerate(reference_streams)]
    check_same_length(streams + [("outputs", outputs)])

    lowercase, tokenizer = settings.lowercase, settings.tokenizer
    nrefs = len(reference_streams)
    evaluation = Evaluation(segments=len(outputs), references=nrefs)
    common = {"lowercase": lowercase, "tokenizer": tokenizer, "references": nrefs}
    # SARI and the statistics are wean's own code on sacrebleu's 13a tokenizer
    ours = f"wean=={_wean_version()},sacrebleu=={sacrebleu.__version__}"
    for metric in settings.metrics:
        if metric == "sari":
            variant = settings.sari_variant
            scores = corpus_sari(sources, outputs, reference_streams, variant, lowercase, tokenizer)
            signature = {
                "variant": variant,
                **common,
                "lowercase": effective_lowercase(variant, lowercase),
                "level": "sentence mean" if variant == "xu2016" else "corpus",
                "library": ours,
            }
            evaluation.results.append(MetricResult("sari", scores.as_dict(), signature))
        elif metric in ("bleu", "multi-bleu"):
            style = "multi-bleu" if metric == "multi-bleu" else "sacrebleu"
            bleu_settings = bleu.BleuSettings(style, lowercase, tokenizer)
            score = bleu.corpus_bleu(outputs, reference_streams, bleu_settings)
            key = metric.replace("-", "_")
            evaluation.results.append(MetricResult(key, {key: score}, bleu.signature(bleu_settings, nrefs)))
        elif metric == "fkgl":
            evaluation.results.append(
                MetricResult("fkgl", {"fkgl": fkgl.corpus_fkgl(outputs)}, fkgl.signature())
            )
        elif metric == "rouge":
            tokenization = "char" if tokenizer == "char" else "words"
            scores = rouge.corpus_rouge(outputs, reference_streams, tokenization, lowercase)
            evaluation.results.append(MetricResult("rouge", scores, rouge.signature(tokenization, lowercase, nrefs)))
        elif metric == "stats":
            output_tokens = [tokenize(line, lowercase, tokenizer) for line in outputs]
            scores = {}
            if sources is not None:
                source_tokens = [tokenize(line, lowercase, tokenizer) for line in sources]
                scores.update(copy_statistics(source_tokens, output_tokens))
            if reference_streams:
                per_output = [
                    [tokenize(stream[i], lowercase, tokenizer) for stream in reference_streams]
                    for i in range(len(outputs))
                ]
                scores.update(odd_generation(output_tokens, per_output).summary())
            evaluation.results.append(MetricResult("stats", scores, {**common, "library": ours}))
    return evaluation


def _file_record(path: Path, lines: int) -> dict:
    return {"path": str(path), "lines": lines, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


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
) -> Evaluation:
    """Read, check and score files. Problems with a file raise :class:`WeanError` naming it."""
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
        "hypothesis": _file_record(hypothesis, len(outputs)),
        "source": _file_record(Path(source), len(sources)) if source is not None else None,
        "references": [_file_record(Path(p), len(s)) for p, s in zip(references, reference_streams)],
    }
    return evaluation
