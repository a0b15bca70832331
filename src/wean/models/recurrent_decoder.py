"""What wean's three LSTM decoders share: the first state from the encoder (the bridge), the
attention keys projected once per batch, and the loop over target steps. A decoder says what
one step does (:meth:`RecurrentDecoder.step`); the loop, the state and the extras are here.

Subclasses create their modules (``bridge``, ``attention``, ``rnn``, ...) themselves, in their
own order: the order decides how ``model.init_range`` draws the initial weights.
"""

from __future__ import annotations

import torch
from torch import nn

from wean.config import DecoderConfig
from wean.models.interfaces import Decoder, DecoderOutput, DecoderState, EncoderOutput


def lstm(input_size: int, config: DecoderConfig) -> nn.LSTM:
    return nn.LSTM(
        input_size,
        config.hidden_size,
        num_layers=config.layers,
        dropout=config.dropout if config.layers > 1 else 0.0,
        batch_first=True,
    )


class RecurrentDecoder(Decoder):
    bridge: nn.Module
    attention: nn.Module
    dropout: nn.Dropout
    embedding: nn.Embedding

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        return DecoderState(self.bridge(encoded), None, self.attention.project_keys(encoded.attention_keys))

    def source_values(self, encoded: EncoderOutput):
        """What every step reads from the source besides the encoder output, computed once per
        call (word attention: the source embeddings after dropout)."""
        return None

    def step(
        self, embedded: torch.Tensor, encoded: EncoderOutput, state: DecoderState, values
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor, dict[str, torch.Tensor]]:
        """One target step: the previous word's embedding (batch, 1, E) → the query (batch, 1, H),
        the next state, the attention (batch, 1, source) and this step's extras."""
        raise NotImplementedError

    def forward(
        self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState, extras: bool = False
    ) -> DecoderOutput:
        embedded = self.dropout(self.embedding(previous))
        values = self.source_values(encoded)
        queries, attention, kept = [], [], {}
        # split, not [:, t]: the gradient of a slice is a zero tensor of the whole per step
        for embedded_t in embedded.split(1, dim=1):
            query, state, weights, step_extras = self.step(embedded_t, encoded, state, values)
            queries.append(query)
            attention.append(weights)
            if extras:
                for name, tensor in step_extras.items():
                    kept.setdefault(name, []).append(tensor)
        return DecoderOutput(
            torch.cat(queries, 1), state, torch.cat(attention, 1),
            {name: torch.cat(tensors, 1) for name, tensors in kept.items()},
        )
