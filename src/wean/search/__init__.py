"""Decoding: search strategies as plain functions over a model, chosen by name.

:func:`decode` runs the strategy ``options.strategy`` names and returns, per input row, its
n-best list (best first), or None for a row abandoned mid-search. A strategy is a function

    strategy(model, source, lengths, options, banned_ids, abandoned) -> list[list[Hypothesis] | None]

registered in :data:`wean.registry.STRATEGIES`; wean's own are greedy (``greedy.py``), beam
(``beam.py``), sampling (``sampling.py``) and diverse_beam (``diverse_beam.py``). A user's own is
one function in a plug-in file (``plugins:`` in a config, ``--plugins`` on the command line)::

    from wean.registry import STRATEGIES
    from wean.search_options import Capabilities

    @STRATEGIES.register("my_search", capabilities=Capabilities(outputs="beam"))
    def my_search(model, source, lengths, options, banned_ids=(), abandoned=None): ...

and ``generation.strategy: my_search`` / ``--strategy my_search`` selects it. ``capabilities``
says what it can do (:class:`~wean.search_options.Capabilities`: n-best lists of at most the beam
width here); one that declares nothing finds one output.

Every strategy obeys the same contract (:mod:`wean.search.common`): ``banned_ids`` (and <pad>,
<bos>) are never written; ``min_length`` and ``max_length`` hold; ``abandoned``, asked once per
step with the input rows still searched, names those whose output nobody wants any more (a
server's client hung up): they leave the search and come back None.
"""

from __future__ import annotations

from typing import Sequence

import torch

from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
# registered in this order: the order error messages list them in
from wean.search import greedy as _greedy  # noqa: F401,I001
from wean.search import beam as _beam  # noqa: F401,I001
from wean.search import sampling as _sampling  # noqa: F401,I001
from wean.search import diverse_beam as _diverse_beam  # noqa: F401,I001
from wean.search.common import Abandoned, Hypothesis, block_repeated_ngrams
from wean.search_options import SearchOptions

__all__ = ["Hypothesis", "STRATEGIES", "beam_search", "block_repeated_ngrams", "decode", "greedy_search"]


def decode(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """The n-best list of each row of ``source`` (batch, length) by the strategy ``options`` names."""
    return STRATEGIES.get(options.strategy, "strategy")(model, source, lengths, options, banned_ids, abandoned)


def greedy_search(model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, max_length: int = 100,
                  min_length: int = 1, banned_ids: Sequence[int] = (),
                  abandoned: Abandoned | None = None) -> list[Hypothesis | None]:
    """The one output of greedy search per row (a shorthand of :func:`decode`)."""
    options = SearchOptions(strategy="greedy", max_length=max_length, min_length=min_length)
    return _best(_greedy.greedy(model, source, lengths, options, banned_ids, abandoned))


def beam_search(model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, beam_size: int = 5,
                max_length: int = 100, min_length: int = 1, length_penalty: float = 0.0,
                block_ngram_repeat: int = 0, banned_ids: Sequence[int] = (),
                abandoned: Abandoned | None = None) -> list[Hypothesis | None]:
    """The best output of beam search per row, at any width (1 included: the beam code itself,
    which then finds what greedy search finds); a shorthand of :func:`decode`."""
    options = SearchOptions(beam=beam_size, max_length=max_length, min_length=min_length,
                            length_penalty=length_penalty, block_ngram_repeat=block_ngram_repeat)
    return _best(_beam.beam_search_nbest(model, source, lengths, options, banned_ids, abandoned))


def _best(results: list[list[Hypothesis] | None]) -> list[Hypothesis | None]:
    return [hypotheses[0] if hypotheses else None for hypotheses in results]
