"""How the decoder's first state comes from the encoder.

copy    the encoder's final (h, c) of every layer, as the WEAN code does (same layers and sizes)
linear  h = tanh(W_h h_top), c = W_c c_top from the encoder's top layer, for every decoder layer
zero    a zero state (for encoders without a recurrent final state)
"""

from __future__ import annotations

import torch
from torch import nn


class Bridge(nn.Module):
    def __init__(self, kind: str, encoder_size: int, decoder_size: int, decoder_layers: int):
        super().__init__()
        self.kind = kind
        self.decoder_size = decoder_size
        self.decoder_layers = decoder_layers
        if kind == "linear":
            self.hidden = nn.Linear(encoder_size, decoder_size)
            self.cell = nn.Linear(encoder_size, decoder_size)

    def forward(self, final: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        h, c = final
        if self.kind == "copy":
            return h.contiguous(), c.contiguous()
        if self.kind == "linear":
            layers = self.decoder_layers
            return (
                torch.tanh(self.hidden(h[-1])).unsqueeze(0).repeat(layers, 1, 1),
                self.cell(c[-1]).unsqueeze(0).repeat(layers, 1, 1),
            )
        zeros = h.new_zeros(self.decoder_layers, h.size(1), self.decoder_size)
        return zeros, zeros.clone()
