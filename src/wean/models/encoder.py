"""The recurrent encoder: embeddings → (bi)LSTM over the packed source."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from wean.config import EncoderConfig
from wean.models.interfaces import Encoder, EncoderOutput
from wean.registry import ENCODERS


@dataclass
class LSTMEncoderConfig(EncoderConfig):
    bidirectional: bool = False
    dropout: float = 0.0  # between layers


@ENCODERS.register("lstm", config=LSTMEncoderConfig)
class LSTMEncoder(Encoder):
    def __init__(self, embedding: nn.Embedding, config: LSTMEncoderConfig, embedding_dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        self.dropout = nn.Dropout(embedding_dropout)
        self.directions = 2 if config.bidirectional else 1
        self.layers = config.layers
        self.rnn = nn.LSTM(
            embedding.embedding_dim,
            config.hidden_size,
            num_layers=config.layers,
            bidirectional=config.bidirectional,
            dropout=config.dropout if config.layers > 1 else 0.0,
            batch_first=True,
        )
        self.output_size = config.hidden_size * self.directions

    @classmethod
    def state_size(cls, model_config) -> int:
        return model_config.encoder.hidden_size * (2 if model_config.encoder.bidirectional else 1)

    def forward(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        embedded = self.embedding(source)
        packed = pack_padded_sequence(self.dropout(embedded), lengths.cpu(), batch_first=True, enforce_sorted=False)
        output, (h, c) = self.rnn(packed)
        states, _ = pad_packed_sequence(output, batch_first=True, total_length=source.size(1))
        mask = torch.arange(source.size(1), device=source.device).unsqueeze(0) < lengths.to(source.device).unsqueeze(1)
        return EncoderOutput(states, mask, embedded, (self._join(h), self._join(c)))

    def _join(self, state: torch.Tensor) -> torch.Tensor:
        """(layers * directions, batch, hidden) -> (layers, batch, directions * hidden)."""
        if self.directions == 1:
            return state
        batch = state.size(1)
        return state.view(self.layers, 2, batch, -1).transpose(1, 2).reshape(self.layers, batch, -1)
