"""Output layers: from the decoder's attentional state to scores over the target vocabulary.

Every output layer maps (batch, steps, hidden) to logits (batch, steps, vocabulary); the loss
and the search apply the (log-)softmax. ``model.output_layer.type`` picks one.
"""

from __future__ import annotations

import torch
from torch import nn


class LinearOutput(nn.Module):
    """The usual softmax layer: logits = W q + b, with its own |V| x H matrix."""

    def __init__(self, hidden_size: int, vocabulary_size: int):
        super().__init__()
        self.projection = nn.Linear(hidden_size, vocabulary_size)

    def forward(self, query: torch.Tensor) -> torch.Tensor:
        return self.projection(query)
