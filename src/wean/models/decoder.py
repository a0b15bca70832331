"""The LSTM decoder with Luong attention, usable one step at a time (search) or over a whole
target at once (training).

Per step t, with y_{t-1} the previous word and s_t the top LSTM layer's output:
    s_t   = LSTM([E y_{t-1}; h~_{t-1} if input feeding], state_{t-1})
    c_t   = sum_j a_tj h_j,   a_t = softmax_j score(s_t, h_j) over real source tokens
    h~_t  = tanh(W_c [c_t; s_t] + b_c)      the attentional state, the output layer's query
Without input feeding (and without coverage, ``coverage``: the attention of the steps before
enters each step's scores) no step depends on the previous h~, so training runs the LSTM over the
whole target in one call and attends for all steps in one batched product. With it, training
takes RecurrentDecoder's loop, step by step, with the LSTM written out
(:class:`wean.models.recurrent_decoder.UnrolledLSTM`): the same function as the step path that
search takes, with fewer, larger matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from wean.models.attention import LuongAttention
from wean.models.bridge import Bridge
from wean.models.interfaces import DecoderOutput, DecoderState, EncoderOutput
from wean.models.recurrent_decoder import AttentionalDecoderConfig, RecurrentDecoder, lstm
from wean.registry import DECODERS


@dataclass
class LuongDecoderConfig(AttentionalDecoderConfig):
    input_feeding: bool = False
    # See et al.'s coverage vector (the attention summed over the steps before) enters the
    # attention's scores (wean/models/attention.py)
    coverage: bool = False


@DECODERS.register("luong", config=LuongDecoderConfig)
class LSTMDecoder(RecurrentDecoder):
    def __init__(self, embedding: nn.Embedding, config: LuongDecoderConfig, memory_size: int, dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        self.input_feeding = config.input_feeding
        self.hidden_size = config.hidden_size
        self.rnn = lstm(embedding.embedding_dim + (config.hidden_size if config.input_feeding else 0), config)
        self.bridge = Bridge(config.bridge, memory_size, config.hidden_size, config.layers)
        self.attention = LuongAttention(config.hidden_size, memory_size, config.attention, config.coverage)
        self.coverage = config.coverage
        self.combine = nn.Linear(memory_size + config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(dropout)

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        state = super().init_state(encoded)
        if self.input_feeding:
            state.input_feed = encoded.states.new_zeros(encoded.states.size(0), self.hidden_size)
        if self.coverage:
            state.coverage = encoded.states.new_zeros(encoded.mask.shape)
        return state

    def forward(
        self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState, extras: bool = False
    ) -> DecoderOutput:
        if self.input_feeding or self.coverage:  # step by step (RecurrentDecoder's loop, the LSTM unrolled)
            return super().forward(previous, encoded, state, extras)
        # no step depends on the previous attentional state: the LSTM runs over all steps at once
        outputs, hidden = self.rnn(self.dropout(self.embedding(previous)), state.hidden)
        attentional, weights = self._attend(outputs, encoded, state.projected_keys)
        return DecoderOutput(attentional, DecoderState(hidden, None, state.projected_keys), weights)

    def step(self, embedded, encoded, state, values, recur):
        fed = state.input_feed.unsqueeze(1) if self.input_feeding else embedded.new_zeros(embedded.size(0), 1, 0)
        output, hidden = recur(fed, state.hidden)
        attentional, weights = self._attend(output, encoded, state.projected_keys, state.coverage)
        coverage = None if state.coverage is None else state.coverage + weights.squeeze(1)
        input_feed = attentional.squeeze(1) if self.input_feeding else None
        return attentional, DecoderState(hidden, input_feed, state.projected_keys, coverage=coverage), weights, {}

    def _attend(self, outputs, encoded: EncoderOutput, projected_keys, coverage=None):
        context, weights = self.attention(outputs, projected_keys, encoded.states, encoded.mask, coverage)
        attentional = torch.tanh(self.combine(torch.cat([context, outputs], dim=-1)))
        return self.dropout(attentional), weights
