"""Reranking scorers that ask another wean model: the two extra terms of noisy-channel reranking
(Yee et al. 2019), which reorders an n-best list by

    log P(y | x) + lambda_1 log P(x | y) + lambda_2 log P(y) + lambda_3 |y|

``channel:DIR`` is log P(x | y): how well the model in DIR, trained in the other direction
(``data.direction: reverse``; simple → complex for a simplifier), recovers the source from the
output; an output that drops or changes what the source says scores low. ``lm:DIR`` is log P(y)
under a language model of the target side, which wean trains as a model whose every source is the
one word ``<lm>`` (``data.direction: lm``, so that the decoder alone learns the target text); an
output that is not fluent text scores low. Both are summed over the scored text's tokens, </s>
included, as ``wean.inference.forced_scores`` computes them; ``length`` is lambda_3's term. On the command
line: ``--rerank channel:runs/reverse=0.5,lm:runs/lm=0.3,length=0.1``.

Each model is loaded once per process and device, when it is first needed, on the device of the
model whose outputs it scores (``generate`` places it there).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import torch

from wean.data.corpus import LM_SOURCE
from wean.errors import WeanError
from wean.inference.forced_scores import forced_log_probs
from wean.inference.loading import LoadedModel
from wean.registry import RERANKERS

if TYPE_CHECKING:
    from wean.inference.outputs import Generation

_loaded: dict[tuple[Path, str, str], LoadedModel] = {}


class ModelScore:
    """A scorer that needs a model directory: ``NAME:DIR`` in a rerank list."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.device: torch.device | None = None  # None: wean's default (the GPU if there is one)
        self.kernels = "auto"  # what its model's products run with (wean.models.kernels); generate sets its own
        # whether the texts it scores are plain text (generate sets it to its own reading, so that
        # both models tokenize alike); None: as its model's generation.plain_text says
        self.plain_text: bool | None = None
        if not (self.directory / "config.yaml").is_file():
            raise WeanError(f"rerank: {directory}: not a model directory (no config.yaml)")

    def model(self) -> LoadedModel:
        device = "auto" if self.device is None else self.device.type
        key = (self.directory.resolve(), device, self.kernels)
        if key not in _loaded:
            _loaded[key] = LoadedModel.from_directory(self.directory, device=device, kernels=self.kernels)
        return _loaded[key]

    def log_probs(self, sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        return [total for total, _ in forced_log_probs(self.model(), sources, targets, self.plain_text)]

    def log_probs_per_token(self, sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        return [total / count for total, count in forced_log_probs(self.model(), sources, targets, self.plain_text)]


@RERANKERS.register("channel")
class ChannelScore(ModelScore):
    """log P(source | output) under a model trained from outputs to sources."""

    def __call__(self, sources: Sequence[str], outputs: Sequence["Generation"]) -> list[float]:
        return self.log_probs([output.text for output in outputs], sources)


@RERANKERS.register("lm")
class LanguageModelScore(ModelScore):
    """log P(output) under a model trained to write the target side from the source ``<lm>``."""

    def __call__(self, sources: Sequence[str], outputs: Sequence["Generation"]) -> list[float]:
        return self.log_probs([LM_SOURCE] * len(outputs), [output.text for output in outputs])
