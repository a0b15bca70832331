"""The metric ``reverse``: how much of the source an output still lets a model recover, as
log P(source | output) per source token under a model trained from simple to complex (the channel
model of noisy-channel reranking, :mod:`wean.inference.model_scores`). It is a metric of
``wean evaluate`` and ``wean compare`` (``--reverse-model DIR``) that needs a model, so it lives
with inference and registers itself here."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from wean.evaluation.evaluate import EvaluationSettings, MetricInputs, MetricResult, metric, wean_library


_reverse_models: dict = {}  # model directory -> the model loaded, once


def _reverse_statistics(outputs: Sequence[str], inputs: MetricInputs):
    """Per sentence: 1, log P(source | output) under the reverse model, the source's tokens."""
    from wean.inference.forced_scores import forced_log_probs  # torch, only when this metric is asked for

    scores = forced_log_probs(_reverse_model(inputs.settings), outputs, inputs.sources,
                              plain_text=_reverse_reads_plain_text(inputs.settings))
    return np.asarray([[1.0, total, count] for total, count in scores]).reshape(-1, 3)


def _reverse_model(settings: EvaluationSettings):
    from wean.inference.loading import LoadedModel  # torch, only when this metric is asked for

    path = settings.reverse_model
    if path not in _reverse_models:
        _reverse_models[path] = LoadedModel.from_directory(path)
    return _reverse_models[path]


def _reverse_reads_plain_text(settings: EvaluationSettings) -> bool:
    if settings.plain_text is not None:
        return settings.plain_text
    return _reverse_model(settings).config.generation.plain_text


def _reverse_from_statistics(summed) -> dict[str, float]:
    return {"reverse_log_prob": float(summed[1]) / max(1.0, float(summed[2]))}


@metric("reverse", {"reverse_log_prob": "higher"}, needs_source=True, yardstick=True, needs_reverse_model=True,
        statistics=_reverse_statistics, from_statistics=_reverse_from_statistics)
def _reverse(inputs: MetricInputs) -> MetricResult:
    """log P(source | output) per source token under a model trained simple -> complex: how much of
    the source the output still lets one recover (the channel model of noisy-channel reranking)."""
    scores = _reverse_from_statistics(_reverse_statistics(inputs.outputs, inputs).sum(0))
    text = "plain" if _reverse_reads_plain_text(inputs.settings) else "tokenized"
    signature = {"model": inputs.settings.reverse_model, "text": text, "level": "corpus, per source token",
                 "library": wean_library()}
    return MetricResult("reverse", scores, signature)
