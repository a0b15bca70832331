"""The decoder of Gehring et al.'s convolutional encoder model: an LSTM whose input at every step
is the previous word's embedding g_i and a context computed from the previous state.

    d_i = W_d h_{i-1} + b_d + g_i            (h_{i-1}: the first layer's previous output)
    a_i = softmax_j d_i^T z_j                (z: the encoder's attention keys, CNN-a)
    c_i = sum_j a_ij z'_j                    (z': the encoder's values, CNN-c)
    h_i = LSTM([g_i; c_i], state_{i-1})      (the query of the output layer: top layer's h_i)

Where the keys are not embedding-sized (an LSTM encoder), the dot product becomes d_i^T W z_j.
The state starts from zeros with the convolutional encoder (``bridge: zero``).
"""

from __future__ import annotations

from torch import nn

from wean.config import DecoderConfig
from wean.models.attention import LuongAttention
from wean.models.bridge import Bridge
from wean.models.interfaces import DecoderState
from wean.models.recurrent_decoder import RecurrentDecoder, lstm
from wean.registry import DECODERS


@DECODERS.register("conditional")
class ConditionalLSTMDecoder(RecurrentDecoder):
    def __init__(self, embedding: nn.Embedding, config: DecoderConfig, memory_size: int, dropout: float = 0.0):
        super().__init__()
        embedding_size = embedding.embedding_dim
        self.embedding = embedding
        self.hidden_size = config.hidden_size
        self.bridge = Bridge(config.bridge, memory_size, config.hidden_size, config.layers)
        self.state_to_query = nn.Linear(config.hidden_size, embedding_size)  # W_d, b_d
        self.attention = LuongAttention(embedding_size, memory_size, "dot" if memory_size == embedding_size else "general")
        self.rnn = lstm(embedding_size + memory_size, config)
        self.dropout = nn.Dropout(dropout)

    def step(self, embedded, encoded, state, values, recur):
        d = self.state_to_query(state.hidden[0][0].unsqueeze(1)) + embedded  # + g_i, the previous word's embedding
        context, weights = self.attention(d, state.projected_keys, encoded.states, encoded.mask)
        output, hidden = recur(context, state.hidden)  # the LSTM on [g_i; c_i]
        return self.dropout(output), DecoderState(hidden, None, state.projected_keys), weights, {}
