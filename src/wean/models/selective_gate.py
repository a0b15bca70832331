"""SEASS's selective gate (Zhou, Yang, Wei and Zhou, ACL 2017) as a transform of the encoder's
output: every encoder state is filtered by a gate computed from itself and the whole sentence,

    h'_i = h_i * sigmoid(W_s h_i + U_s s + b),

with s the sentence vector: the top layer's final states, [last forward; last backward] for a
bidirectional LSTM (as magic282/SEASS's ``Encoder``: the backward final state is the one at the
first word). The conv encoder has no final state; there s is the mean of the states over the
real tokens. One linear layer on [h_i; s] is W_s h_i + U_s s + b. Attention keys that are
separate from the states (the conv encoder's CNN-a output) pass through the same gate.
Padding stays zero, and the decoder's initial state (the bridge) is not gated, as in SEASS.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from wean.models.interfaces import EncoderOutput
from wean.registry import ENCODER_TRANSFORMS


@ENCODER_TRANSFORMS.register("selective_gate")
class SelectiveGate(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.gate = nn.Linear(2 * size, size)

    @classmethod
    def build(cls, config, size: int) -> "SelectiveGate | None":
        """``config``: the ModelConfig (``encoder.selective_gate``); ``size``: the encoder's state size."""
        return cls(size) if config.encoder.selective_gate else None

    def sentence_vector(self, encoded: EncoderOutput) -> torch.Tensor:
        if encoded.final is not None:
            return encoded.final[0][-1]  # (batch, size)
        mask = encoded.mask.unsqueeze(-1).to(encoded.states.dtype)
        return (encoded.states * mask).sum(1) / mask.sum(1)

    def forward(self, encoded: EncoderOutput) -> EncoderOutput:
        sentence = self.sentence_vector(encoded).unsqueeze(1).expand_as(encoded.states)
        gate = torch.sigmoid(self.gate(torch.cat([encoded.states, sentence], dim=-1)))
        gate = gate * encoded.mask.unsqueeze(-1)  # padding stays zero
        keys = None if encoded.keys is None else encoded.keys * gate
        return replace(encoded, states=encoded.states * gate, keys=keys)
