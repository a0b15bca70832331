"""What wean's three LSTM decoders share: the first state from the encoder (the bridge), the
attention keys projected once per batch, and the loop over target steps. A decoder says what
one step does (:meth:`RecurrentDecoder.step`); the loop, the state and the extras are here.

A step's LSTM reads the previous word's embedding and something computed in the step (a context);
over a teacher-forced target the embeddings of every step are known in advance, so the loop runs
the LSTM written out (:class:`UnrolledLSTM`): the words' share of its input is one matrix product
for all steps. A one-step ``nn.LSTM`` call costs more than the products in it on the CPU.

Subclasses create their modules (``bridge``, ``attention``, ``rnn``, ...) themselves, in their
own order: the order decides how ``model.init_range`` draws the initial weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
from torch import nn
from torch.nn import functional as F

from wean.config import DecoderConfig
from wean.errors import WeanError
from wean.models import deferred_gradients, kernels
from wean.models.bridge import check_bridge
from wean.models.interfaces import Decoder, DecoderOutput, DecoderState, EncoderOutput
from wean.registry import ENCODERS


@dataclass
class AttentionalDecoderConfig(DecoderConfig):
    """A decoder whose attention score is chosen (the conditional decoder's is its paper's)."""

    attention: str = "general"  # dot | general | concat


def lstm(input_size: int, config: DecoderConfig) -> nn.LSTM:
    return nn.LSTM(
        input_size,
        config.hidden_size,
        num_layers=config.layers,
        dropout=config.dropout if config.layers > 1 else 0.0,
        batch_first=True,
    )


class UnrolledLSTM:
    """``rnn`` stepped by hand over a target whose first ``known`` inputs are all known in advance
    (batch, steps, K): each step's input is [known_t; rest], rest computed in the step. The known
    share of the first layer's gates is one product for all steps, then one product per layer and
    step. The same function as calling ``rnn`` step by step, up to float rounding
    (tests/test_decoder.py). ``onednn``: the products through oneDNN (:mod:`wean.models.kernels`)."""

    def __init__(self, rnn: nn.LSTM, known: torch.Tensor, training: bool, onednn: bool = False):
        batch, steps, known_size = known.shape
        self.weights: list[torch.Tensor] = []  # per layer: the four gates from [input; h], as a linear layer's weight
        self.biases: list[torch.Tensor | None] = []
        self.deferred: list[deferred_gradients.DeferredWeightGradient | None] = []
        self.onednn = kernels.applies(known, rnn.weight_hh_l0, onednn)
        for layer in range(rnn.num_layers):
            w_ih, w_hh = getattr(rnn, f"weight_ih_l{layer}"), getattr(rnn, f"weight_hh_l{layer}")
            bias = getattr(rnn, f"bias_ih_l{layer}") + getattr(rnn, f"bias_hh_l{layer}")
            if layer == 0:  # its bias and the known columns go into from_known
                self.weights.append(torch.cat([w_ih[:, known_size:], w_hh], 1))
                self.biases.append(None)
                if self.onednn:
                    from_known = kernels.linear(known.reshape(-1, known_size), w_ih[:, :known_size], bias, True)
                else:
                    from_known = torch.addmm(bias, known.reshape(-1, known_size), w_ih[:, :known_size].t())
                # unbind, not [:, t]: the gradient of a slice is a zero tensor of the whole per step
                self.from_known = from_known.view(batch, steps, -1).unbind(1)
            else:
                self.weights.append(torch.cat([w_ih, w_hh], 1))
                self.biases.append(bias)
            self.deferred.append(kernels.deferring(self.onednn, self.weights[-1]))
        self.between_layers = rnn.dropout if training else 0.0  # nn.LSTM's dropout, on all but the top

    def step(self, t: int, rest: torch.Tensor, hidden: tuple[torch.Tensor, torch.Tensor]):
        """Step ``t`` with ``rest`` (batch, 1, R): what ``rnn([known_t; rest], hidden)`` returns."""
        h, c = list(hidden[0].unbind(0)), list(hidden[1].unbind(0))
        for layer, weights in enumerate(self.weights):
            if layer == 0:
                inputs, added = torch.cat([rest.squeeze(1), h[0]], 1), self.from_known[t]
            else:
                below = h[layer - 1]
                if self.between_layers:
                    below = F.dropout(below, self.between_layers, training=True)
                inputs, added = torch.cat([below, h[layer]], 1), self.biases[layer]
            if self.onednn:
                gates = kernels.linear(inputs, weights, None, True, self.deferred[layer]) + added
            else:
                gates = torch.addmm(added, inputs, weights.t())
            i, f, g, o = gates.chunk(4, 1)  # PyTorch's gate order
            c[layer] = torch.sigmoid(f) * c[layer] + torch.sigmoid(i) * torch.tanh(g)
            h[layer] = torch.sigmoid(o) * torch.tanh(c[layer])
        return h[-1].unsqueeze(1), (torch.stack(h), torch.stack(c))


class RecurrentDecoder(Decoder):
    onednn_products = False  # the LSTM written out through oneDNN (wean.models.kernels.use_kernels sets it)
    bridge: nn.Module
    attention: nn.Module
    dropout: nn.Dropout
    embedding: nn.Embedding

    @classmethod
    def check_config(cls, config) -> None:
        """A dot-product attention needs the encoder's states in the decoder's size; so does the
        bridge (:func:`wean.models.bridge.check_bridge`)."""
        decoder = config.model.decoder
        memory_size = ENCODERS.get(config.model.encoder.type, "model.encoder.type").state_size(config.model)
        if getattr(decoder, "attention", None) == "dot" and memory_size not in (None, decoder.hidden_size):
            raise WeanError(
                f"config: dot attention needs encoder states ({memory_size}) as large as "
                f"model.decoder.hidden_size ({decoder.hidden_size}); use general or concat"
            )
        check_bridge(config)

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        return DecoderState(self.bridge(encoded), None, self.attention.project_keys(encoded.attention_keys))

    def source_values(self, encoded: EncoderOutput):
        """What every step reads from the source besides the encoder output, computed once per
        call (word attention: the source embeddings after dropout)."""
        return None

    def step(
        self, embedded: torch.Tensor, encoded: EncoderOutput, state: DecoderState, values, recur
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor, dict[str, torch.Tensor]]:
        """One target step: the previous word's embedding (batch, 1, E) → the query (batch, 1, H),
        the next state, the attention (batch, 1, source) and this step's extras. ``recur(rest,
        hidden)`` is ``self.rnn([embedded; rest], hidden)``, however the loop runs it."""
        raise NotImplementedError

    def _lstm_step(self, embedded: torch.Tensor, rest: torch.Tensor, hidden):
        return self.rnn(torch.cat([embedded, rest], dim=-1), hidden)

    def forward(
        self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState, extras: bool = False
    ) -> DecoderOutput:
        embedded = self.dropout(self.embedding(previous))
        values = self.source_values(encoded)
        # an int8 LSTM (wean.inference.quantize) holds no float weights to write out: it steps itself
        unrolled = UnrolledLSTM(self.rnn, embedded, self.training, self.onednn_products) \
            if previous.size(1) > 1 and isinstance(self.rnn, nn.LSTM) else None
        queries, attention, kept = [], [], {}
        # the attention's keys and values: deferred on the oneDNN path, where it applies
        deferring_memory = unrolled is not None and unrolled.onednn
        try:
            with kernels.deferred_weight_gradients(self), \
                    deferred_gradients.deferred_memory_gradients(self, deferring_memory):
                # split, not [:, t]: the gradient of a slice is a zero tensor of the whole per step
                for t, embedded_t in enumerate(embedded.split(1, dim=1)):
                    recur = partial(unrolled.step, t) if unrolled is not None else partial(self._lstm_step, embedded_t)
                    query, state, weights, step_extras = self.step(embedded_t, encoded, state, values, recur)
                    queries.append(query)
                    attention.append(weights)
                    if extras:
                        for name, tensor in step_extras.items():
                            kept.setdefault(name, []).append(tensor)
        finally:
            if unrolled is not None:
                deferred_gradients.release_anchors(unrolled.deferred)
        return DecoderOutput(
            torch.cat(queries, 1), state, torch.cat(attention, 1),
            {name: torch.cat(tensors, 1) for name, tensors in kept.items()},
        )
