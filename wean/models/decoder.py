"""The LSTM decoder with Luong attention, usable one step at a time (search) or over a whole
target at once (training).

Per step t, with y_{t-1} the previous word and s_t the top LSTM layer's output:
    s_t   = LSTM([E y_{t-1}; h~_{t-1} if input feeding], state_{t-1})
    c_t   = sum_j a_tj h_j,   a_t = softmax_j score(s_t, h_j) over real source tokens
    h~_t  = tanh(W_c [c_t; s_t] + b_c)      the attentional state, the output layer's query
Without input feeding no step depends on the previous h~, so training runs the LSTM over the
whole target in one call and attends for all steps in one batched product.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from wean.config import DecoderConfig
from wean.models.attention import LuongAttention
from wean.models.bridge import Bridge
from wean.models.encoder import EncoderOutput


@dataclass
class DecoderState:
    hidden: tuple[torch.Tensor, torch.Tensor]  # (h, c), each (layers, batch, hidden)
    input_feed: torch.Tensor | None  # (batch, hidden): the previous attentional state
    projected_keys: torch.Tensor  # (batch, source, hidden): computed once per batch
    projected_word_keys: torch.Tensor | None = None  # the same for word attention over embeddings

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "DecoderState":
        """Keep (and reorder) the batch rows in ``index``: how beam search follows its beams.
        With ``same_sources`` every row keeps its source (beams of one sentence), so the
        source-side tensors need no copy."""
        def source_side(tensor):
            return tensor if same_sources or tensor is None else tensor.index_select(0, index)

        return DecoderState(
            (self.hidden[0].index_select(1, index), self.hidden[1].index_select(1, index)),
            None if self.input_feed is None else self.input_feed.index_select(0, index),
            source_side(self.projected_keys),
            source_side(self.projected_word_keys),
        )


class LSTMDecoder(nn.Module):
    def __init__(self, embedding: nn.Embedding, config: DecoderConfig, memory_size: int, dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        self.input_feeding = config.input_feeding
        self.hidden_size = config.hidden_size
        input_size = embedding.embedding_dim + (config.hidden_size if config.input_feeding else 0)
        self.rnn = nn.LSTM(
            input_size,
            config.hidden_size,
            num_layers=config.layers,
            dropout=config.dropout if config.layers > 1 else 0.0,
            batch_first=True,
        )
        self.bridge = Bridge(config.bridge, memory_size, config.hidden_size, config.layers)
        self.attention = LuongAttention(config.hidden_size, memory_size, config.attention)
        self.combine = nn.Linear(memory_size + config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(dropout)

    def init_state(self, encoder_output: EncoderOutput) -> DecoderState:
        hidden = self.bridge(encoder_output.final)
        feed = None
        if self.input_feeding:
            feed = encoder_output.states.new_zeros(encoder_output.states.size(0), self.hidden_size)
        return DecoderState(hidden, feed, self.attention.project_keys(encoder_output.attention_keys))

    def forward(
        self, previous: torch.Tensor, encoder_output: EncoderOutput, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        """previous (batch, steps) target ids starting with <bos>. Returns the attentional states
        (batch, steps, hidden), the state after the last step and the attention weights (batch,
        steps, source)."""
        embedded = self.dropout(self.embedding(previous))
        if not self.input_feeding:
            outputs, hidden = self.rnn(embedded, state.hidden)
            attentional, weights = self._attend(outputs, encoder_output, state.projected_keys)
            return attentional, DecoderState(hidden, None, state.projected_keys), weights
        hidden, feed = state.hidden, state.input_feed
        steps, attention = [], []
        for t in range(previous.size(1)):
            step_input = torch.cat([embedded[:, t : t + 1], feed.unsqueeze(1)], dim=-1)
            output, hidden = self.rnn(step_input, hidden)
            attentional, weights = self._attend(output, encoder_output, state.projected_keys)
            feed = attentional.squeeze(1)
            steps.append(attentional)
            attention.append(weights)
        return torch.cat(steps, 1), DecoderState(hidden, feed, state.projected_keys), torch.cat(attention, 1)

    def _attend(self, outputs, encoder_output: EncoderOutput, projected_keys):
        context, weights = self.attention(outputs, projected_keys, encoder_output.states, encoder_output.mask)
        attentional = torch.tanh(self.combine(torch.cat([context, outputs], dim=-1)))
        return self.dropout(attentional), weights
