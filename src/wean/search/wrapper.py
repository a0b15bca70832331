"""A model seen through a change that search need not know of (the names-and-numbers constraint,
the vocabulary shortlist): it answers the model contract's calls, passing on what it does not
change, so that every strategy obeys it unaware."""

from __future__ import annotations

from torch import nn


class SearchWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    @property
    def max_source_length(self) -> int | None:
        return self.model.max_source_length

    @property
    def copies_source(self) -> bool:
        return self.model.copies_source

    def encode(self, source, lengths):
        return self.model.encode(source, lengths)

    def init_state(self, encoded):
        return self.model.init_state(encoded)

    def decode_step(self, previous, encoded, state):
        return self.model.decode_step(previous, encoded, state)
