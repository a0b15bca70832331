"""Where a model looks: the attention of each output token over the source tokens, with the
word attention, contextual gates and SPM's source predictions of the models that have them
(drawn by :func:`wean.plotting.plot_attention_maps`, ``wean attention``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import torch

from wean.data.copy_vocabulary import encode_source, encode_target
from wean.data.vocabulary import BOS_ID, EOS
from wean.errors import WeanError
from wean.inference.loading import LoadedModel
from wean.models.device import model_device


@dataclass
class AttentionMaps:
    """What the decoder attended to while producing ``target_tokens`` (the last is <eos>)."""

    source_tokens: list[str]
    target_tokens: list[str]
    hidden: torch.Tensor  # (target, source): attention over encoder states
    word: torch.Tensor | None  # (target, source): word attention over source embeddings
    gates: torch.Tensor | None  # (target,): the mean contextual gate o_i
    source_prediction: torch.Tensor | None = None  # (target, source): SPM's q_j of each source token

    @property
    def gated(self) -> torch.Tensor | None:
        """o_i a_ij + (1 - o_i) b_ij: the paper's Figure 2."""
        if self.gates is None or self.word is None:
            return None
        o = self.gates.unsqueeze(1)
        return o * self.hidden + (1 - o) * self.word


@torch.no_grad()
def attention_maps(
    loaded: LoadedModel, source: str, target: str, control: Mapping[str, float] | None = None
) -> AttentionMaps:
    """Attention while the model reads ``source`` and writes ``target`` (teacher-forced)."""
    source_tokens = loaded.tokenizer.encode(source)
    if not source_tokens:
        raise WeanError("attention maps need a non-empty source")
    source_tokens = loaded.control_prefix(control) + source_tokens
    target_tokens = loaded.tokenizer.encode(target)
    device = model_device(loaded.model)
    ids, copied = encode_source(source_tokens, loaded.assets.source_vocabulary, loaded.model.copies_source)
    source_ids = torch.tensor([ids], device=device)
    target_ids = encode_target(target_tokens, loaded.assets.target_vocabulary, copied, add_eos=True)
    previous = torch.tensor([[BOS_ID] + target_ids[:-1]], device=device)
    output = loaded.model(source_ids, torch.tensor([len(source_tokens)], device=device), previous, extras=True)
    word, gates, spm = (
        output.extras[name][0].cpu() if name in output.extras else None
        for name in ("word_attention", "gate", "source_prediction")
    )
    return AttentionMaps(source_tokens, target_tokens + [EOS], output.attention[0].cpu(), word, gates, spm)
