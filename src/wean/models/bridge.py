"""How the decoder's first state comes from the encoder.

copy    the encoder's final (h, c) of every layer, as the WEAN code does (same layers and sizes)
linear  h = tanh(W_h h_top), c = W_c c_top from the encoder's top layer, for every decoder layer
zero    a zero state (for encoders without a recurrent final state)
"""

from __future__ import annotations

import torch
from torch import nn

from wean.errors import WeanError
from wean.models.interfaces import EncoderOutput
from wean.registry import ENCODERS


def check_bridge(config) -> None:
    """A decoder that starts from a Bridge calls this from its ``check_config``: copy needs the
    encoder's layers and state size."""
    encoder, decoder = config.model.encoder, config.model.decoder
    memory_size = ENCODERS.get(encoder.type, "model.encoder.type").state_size(config.model)
    if decoder.bridge == "copy" and (encoder.layers != decoder.layers or memory_size not in (None, decoder.hidden_size)):
        raise WeanError("config: bridge copy needs as many encoder as decoder layers and equal state sizes; "
                        "use bridge: linear")


class Bridge(nn.Module):
    def __init__(self, kind: str, encoder_size: int, decoder_size: int, decoder_layers: int):
        super().__init__()
        self.kind = kind
        self.decoder_size = decoder_size
        self.decoder_layers = decoder_layers
        if kind == "linear":
            self.hidden = nn.Linear(encoder_size, decoder_size)
            self.cell = nn.Linear(encoder_size, decoder_size)

    def forward(self, encoded: EncoderOutput) -> tuple[torch.Tensor, torch.Tensor]:
        if self.kind == "zero":
            states = encoded.states
            zeros = states.new_zeros(self.decoder_layers, states.size(0), self.decoder_size)
            return zeros, zeros.clone()
        if encoded.final is None:
            raise ValueError(f"bridge {self.kind!r} needs an encoder with a final state; use zero")
        h, c = encoded.final
        if self.kind == "copy":
            return h.contiguous(), c.contiguous()
        layers = self.decoder_layers
        return (
            torch.tanh(self.hidden(h[-1])).unsqueeze(0).repeat(layers, 1, 1),
            self.cell(c[-1]).unsqueeze(0).repeat(layers, 1, 1),
        )
