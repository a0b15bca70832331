"""The recurrent encoder: embeddings → (bi)LSTM over the packed source."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from wean.config import EncoderConfig


@dataclass
class EncoderOutput:
    states: torch.Tensor  # (batch, source, memory size): the values attention averages
    mask: torch.Tensor  # (batch, source), True on real tokens
    final: tuple[torch.Tensor, torch.Tensor]  # (h, c), each (layers, batch, memory size)
    embedded: torch.Tensor  # (batch, source, embedding): the source word embeddings
    keys: torch.Tensor | None = None  # what attention compares with, where not the states (CNN-a)

    @property
    def attention_keys(self) -> torch.Tensor:
        return self.states if self.keys is None else self.keys

    def repeat(self, times: int) -> "EncoderOutput":
        """Each sentence ``times`` times in a row (for beam search)."""
        return EncoderOutput(
            self.states.repeat_interleave(times, 0),
            self.mask.repeat_interleave(times, 0),
            tuple(s.repeat_interleave(times, 1) for s in self.final),
            self.embedded.repeat_interleave(times, 0),
            None if self.keys is None else self.keys.repeat_interleave(times, 0),
        )


class LSTMEncoder(nn.Module):
    def __init__(self, embedding: nn.Embedding, config: EncoderConfig, embedding_dropout: float = 0.0):
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

    def forward(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        embedded = self.embedding(source)
        packed = pack_padded_sequence(self.dropout(embedded), lengths.cpu(), batch_first=True, enforce_sorted=False)
        output, (h, c) = self.rnn(packed)
        states, _ = pad_packed_sequence(output, batch_first=True, total_length=source.size(1))
        mask = torch.arange(source.size(1), device=source.device).unsqueeze(0) < lengths.to(source.device).unsqueeze(1)
        return EncoderOutput(states, mask, (self._join(h), self._join(c)), embedded)

    def _join(self, state: torch.Tensor) -> torch.Tensor:
        """(layers * directions, batch, hidden) -> (layers, batch, directions * hidden)."""
        if self.directions == 1:
            return state
        batch = state.size(1)
        return state.view(self.layers, 2, batch, -1).transpose(1, 2).reshape(self.layers, batch, -1)
