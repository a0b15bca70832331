"""Several trained models searched as one: at every step the next-word log-probabilities of the
models are averaged (OpenNMT-py's ``-model A B``; fairseq averages probabilities instead), and
the attention shown is the first model's. The ensemble is an :class:`EncoderDecoder` to every
search strategy: it encodes with each model and carries each model's decoder state, so any mix
of encoders, decoders and output layers works, as long as the models read and write the same
vocabularies with the same tokenizer (:func:`wean.model_dir.check_same_vocabularies`). A model
directory may carry its ensemble: ``generation.ensemble`` names its other members
(:func:`wean.model_dir.ensemble_members`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from wean.errors import WeanError
from wean.models.interfaces import StepOutput

NEG_INF = float("-inf")


@dataclass
class EnsembleEncoding:
    """Each model's encoder output, selected and repeated together."""

    parts: list

    def select(self, index: torch.Tensor) -> "EnsembleEncoding":
        return EnsembleEncoding([part.select(index) for part in self.parts])

    def repeat(self, times: int) -> "EnsembleEncoding":
        return EnsembleEncoding([part.repeat(times) for part in self.parts])


@dataclass
class EnsembleState:
    """Each model's decoder state."""

    parts: list

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "EnsembleState":
        return EnsembleState([part.select(index, same_sources=same_sources) for part in self.parts])


class Ensemble(nn.Module):
    def __init__(self, models: list[nn.Module]):
        super().__init__()
        if not models:
            raise WeanError("an ensemble needs at least one model")
        self.models = nn.ModuleList(models)

    @property
    def max_source_length(self) -> int | None:
        limits = [model.max_source_length for model in self.models if model.max_source_length]
        return min(limits) if limits else None

    @property
    def copies_source(self) -> bool:
        """Whether a model copies: then every model is given the source's extended ids (and reads them as <unk>)."""
        return any(model.copies_source for model in self.models)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> EnsembleEncoding:
        return EnsembleEncoding([model.encode(source, lengths) for model in self.models])

    def init_state(self, encoded: EnsembleEncoding) -> EnsembleState:
        return EnsembleState([model.init_state(part) for model, part in zip(self.models, encoded.parts)])

    def decode_step(self, previous: torch.Tensor, encoded: EnsembleEncoding, state: EnsembleState) -> StepOutput:
        steps = [model.decode_step(previous, part, part_state)
                 for model, part, part_state in zip(self.models, encoded.parts, state.parts)]
        # a model that does not copy gives the extended ids of a copying one's source words no
        # probability, and so vetoes them
        width = max(step.log_probs.size(1) for step in steps)
        log_probs = torch.stack([nn.functional.pad(step.log_probs, (0, width - step.log_probs.size(1)), value=NEG_INF)
                                 for step in steps]).mean(0)
        return StepOutput(log_probs, EnsembleState([step.state for step in steps]), steps[0].attention)

    def forward(self, *args, **kwargs):
        """The first model's forward pass (teacher-forced attention maps are the first model's)."""
        return self.models[0](*args, **kwargs)
