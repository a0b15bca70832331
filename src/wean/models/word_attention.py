"""Word attention with contextual gates (Wu, Tian, Zhao, Lai and Liu, AAAI 2018), on an LSTM
decoder of the RNNsearch kind: attention reads the previous state s_{i-1}, and the contexts
enter both the recurrent update and the output.

``model.decoder.type: bahdanau`` selects this decoder; ``model.decoder.word_attention`` picks the
variant (``none`` is the RNNsearch baseline, so that the three differ only in the word context):

none        m_i = C^a c^a_i
attention   m_i = C^a c^a_i + C^b c^b_i                       (equation 10: the contexts summed)
gates       m_i = o_i * C^a c^a_i + (1 - o_i) * C^b c^b_i     (equation 12)

How each equation maps onto the LSTM (H decoder size, E embedding size, M encoder state size):

(1)-(4)  hidden attention: a_ij = softmax_j score(s_{i-1}, h_j), c^a_i = sum_j a_ij h_j, with the
         score of ``model.decoder.attention`` (``concat`` is equation (3)), padding masked.
(5)-(7)  word attention over the source word embeddings x_j (the encoder's embedding output, with
         the model's dropout in training): b_ij = softmax_j v_b^T tanh(W_b s_{i-1} + U_b x_j),
         c^b_i = sum_j b_ij x_j; the same attention module as (1)-(4) with the ``concat`` score
         and the same mask.
(11)     o_i = sigmoid(W_o y_{i-1} + U_o s_{i-1} + C^a_o c^a_i + C^b_o c^b_i): one linear layer on
         the concatenation [E y_{i-1}; s_{i-1}; c^a_i; c^b_i], o_i in (0, 1)^H.
(8), (12) s_i = LSTM([E y_{i-1}; m_i], s_{i-1}). The paper's GRU has a context matrix per gate
         (C, C_z, C_r) and gates each projected context; here the contexts are projected once
         to H (C^a: H x M, C^b: H x E), gated once, and the LSTM's input weights give every LSTM
         gate its own map of m_i. With o_i = 1 (or 0) this is exactly the paper's form with only
         the hidden (or only the word) context.
(9)      the output layer's query q_i = tanh(W_q [E y_{i-1}; s_i; m_i]) (the paper's
         g(W_y y_{i-1} + W s_i + W^a c^a_i + W^b c^b_i) before the softmax, with the gated
         contexts where the paper gates them); any output layer, WEAN's included, reads q_i.

s_{i-1} is the top layer's output. Every step depends on the previous one, so training runs step
by step (the LSTM written out: :class:`wean.models.recurrent_decoder.UnrolledLSTM`). For the
figures, asked for ``extras``, the decoder returns b (``word_attention``) and the mean gate
(``gate``) of every step (the paper's Figure 2 plots o a + (1 - o) b with o the mean of o_i,
Figure 3 1 - o).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from wean.models.attention import LuongAttention
from wean.models.bridge import Bridge
from wean.models.interfaces import DecoderState, EncoderOutput
from wean.models.recurrent_decoder import AttentionalDecoderConfig, RecurrentDecoder, lstm
from wean.registry import DECODERS


@dataclass
class BahdanauDecoderConfig(AttentionalDecoderConfig):
    word_attention: str = "none"  # none | attention | gates (Wu et al. 2018)


VARIANTS = ("none", "attention", "gates")


@DECODERS.register("bahdanau", config=BahdanauDecoderConfig)
class WordAttentionDecoder(RecurrentDecoder):
    def __init__(self, embedding: nn.Embedding, config: BahdanauDecoderConfig, memory_size: int, dropout: float = 0.0):
        super().__init__()
        if config.word_attention not in VARIANTS:
            raise ValueError(f"unknown word attention variant {config.word_attention!r}")
        self.variant = config.word_attention
        self.embedding = embedding
        self.hidden_size = hidden = config.hidden_size
        embedding_size = embedding.embedding_dim
        self.bridge = Bridge(config.bridge, memory_size, hidden, config.layers)
        self.attention = LuongAttention(hidden, memory_size, config.attention)
        self.hidden_context = nn.Linear(memory_size, hidden, bias=False)  # C^a
        if self.variant != "none":
            self.word_attention = LuongAttention(hidden, embedding_size, "concat")
            self.word_context = nn.Linear(embedding_size, hidden, bias=False)  # C^b
        if self.variant == "gates":
            self.gate = nn.Linear(embedding_size + hidden + memory_size + embedding_size, hidden)
        self.rnn = lstm(embedding_size + hidden, config)
        self.readout = nn.Linear(embedding_size + 2 * hidden, hidden)
        self.dropout = nn.Dropout(dropout)

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        state = super().init_state(encoded)
        if self.variant != "none":
            state.source_side["word_keys"] = self.word_attention.project_keys(self.dropout(encoded.embedded))
        return state

    def source_values(self, encoded: EncoderOutput):
        return self.dropout(encoded.embedded) if self.variant != "none" else None

    def step(self, embedded, encoded, state, values, recur):
        """embedded: E y_{i-1} (batch, 1, E); values: the source embeddings x_j, attended by word
        attention (the paper's names below)."""
        y, words = embedded, values
        s = state.hidden[0][-1].unsqueeze(1)  # s_{i-1}, top layer: (batch, 1, H)
        c_a, a = self.attention(s, state.projected_keys, encoded.states, encoded.mask)
        mixed = self.hidden_context(c_a)
        extras = {}
        if self.variant != "none":
            c_b, b = self.word_attention(s, state.source_side["word_keys"], words, encoded.mask)
            extras["word_attention"] = b
            word_part = self.word_context(c_b)
            if self.variant == "gates":
                o = torch.sigmoid(self.gate(torch.cat([y, s, c_a, c_b], dim=-1)))
                mixed = o * mixed + (1 - o) * word_part
                extras["gate"] = o.mean(-1)
            else:
                mixed = mixed + word_part
        output, hidden = recur(mixed, state.hidden)  # the LSTM on [E y_{i-1}; m_i]
        query = self.dropout(torch.tanh(self.readout(torch.cat([y, output, mixed], dim=-1))))
        return query, DecoderState(hidden, None, state.projected_keys, state.source_side), a, extras
