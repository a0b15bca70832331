"""The recurrent encoder: embeddings → (bi)LSTM over the packed source, or in training over each
source length's rows (:meth:`LSTMEncoder._splits_by_length`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from wean.config import EncoderConfig
from wean.models.interfaces import Encoder, EncoderOutput
from wean.models.kernels import autocast_on_cpu
from wean.registry import ENCODERS


@dataclass
class LSTMEncoderConfig(EncoderConfig):
    bidirectional: bool = False
    dropout: float = 0.0  # between layers


@ENCODERS.register("lstm", config=LSTMEncoderConfig)
class LSTMEncoder(Encoder):
    # training splits a batch by source length (:meth:`_splits_by_length`) where the trainer allows
    # it (training.kernels other than blas) and each length holds at least this many of its
    # sources on average
    split_by_length = False
    min_sources_per_length = 8

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
        inputs, lengths_cpu = self.dropout(embedded), lengths.cpu()
        if self._splits_by_length(inputs, lengths_cpu):
            states, (h, c) = self._run_by_length(inputs, lengths_cpu)
        else:
            packed = pack_padded_sequence(inputs, lengths_cpu, batch_first=True, enforce_sorted=False)
            output, (h, c) = self.rnn(packed)
            states, _ = pad_packed_sequence(output, batch_first=True, total_length=source.size(1))
        mask = torch.arange(source.size(1), device=source.device).unsqueeze(0) < lengths.to(source.device).unsqueeze(1)
        return EncoderOutput(states, mask, embedded, (self._join(h), self._join(c)))

    def _splits_by_length(self, inputs: torch.Tensor, lengths: torch.Tensor) -> bool:
        """One ``rnn`` call per source length, in training on the CPU where a batch holds few
        lengths: PyTorch runs a packed batch through oneDNN's fused LSTM only where all its sources
        have one length, and through a step-by-step loop 1.7x slower otherwise
        (results/bench-peers-xeon). The two agree to float rounding (tests/test_encoder.py), so
        ``training.kernels: blas``, the tables' floats, keeps the packed call; so do inference,
        whose outputs stay those of the packed call to the bit, and autocast, where the packed call
        is the arithmetic the bf16 mode's curves measured."""
        return (self.split_by_length and self.training and torch.is_grad_enabled()
                and inputs.device.type == "cpu" and not autocast_on_cpu()
                and lengths.unique().numel() * self.min_sources_per_length <= lengths.numel())

    def _run_by_length(self, inputs: torch.Tensor, lengths: torch.Tensor):
        """``rnn`` over each group of sources of one length, unpadded; outputs, h and c put back
        in the batch's order, outputs padded with zeros as ``pad_packed_sequence`` pads them. On
        the CPU only (:meth:`_splits_by_length`), as are ``lengths``. Under ``torch.compile`` the
        groups' sizes break the graph."""
        order = torch.argsort(lengths, stable=True)
        group_lengths, counts = torch.unique_consecutive(lengths[order], return_counts=True)
        width = inputs.size(1)
        outputs, hs, cs = [], [], []
        for rows, length in zip(order.split(counts.tolist()), group_lengths.tolist()):
            output, (h, c) = self.rnn(inputs[rows, :length])
            outputs.append(F.pad(output, (0, 0, 0, width - length)))
            hs.append(h)
            cs.append(c)
        back = torch.argsort(order)
        return torch.cat(outputs).index_select(0, back), (torch.cat(hs, 1).index_select(1, back),
                                                          torch.cat(cs, 1).index_select(1, back))

    def _join(self, state: torch.Tensor) -> torch.Tensor:
        """(layers * directions, batch, hidden) -> (layers, batch, directions * hidden)."""
        if self.directions == 1:
            return state
        batch = state.size(1)
        return state.view(self.layers, 2, batch, -1).transpose(1, 2).reshape(self.layers, batch, -1)
