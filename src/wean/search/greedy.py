"""Greedy search: the most probable next word at every step, for a whole batch at once."""

from __future__ import annotations

from typing import Sequence

import torch

from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import Abandoned, Hypothesis, word_by_word
from wean.search_options import Capabilities, SearchOptions


@STRATEGIES.register("greedy", capabilities=Capabilities(outputs="one", compact=True))
def greedy(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """One hypothesis per sentence, ranked by its log-probability over lp(length) as beam
    search ranks. Reads ``min_length``, ``max_length``, ``block_ngram_repeat`` and the length
    penalty of the options (a coverage penalty changes no greedy choice: every word of a step
    has the same attention)."""
    written = word_by_word(model, source, lengths, options, banned_ids, abandoned,
                           lambda log_probs, rows: log_probs.argmax(dim=-1))
    return [None if i in written.dropped else [written.hypothesis(i, int(lengths[i]), options)]
            for i in range(source.size(0))]
