"""Sampling: ``nbest`` outputs per input, each drawn word by word from the model's distribution,
sharpened or flattened by ``temperature`` and cut to its ``sampling_topk`` most probable tokens
(Fan et al. 2018) and to the smallest set whose probability reaches ``sampling_topp`` (nucleus
sampling, Holtzman et al. 2020).

Each sample draws from its own random generator, seeded from ``seed``, the sample's number and the
input's token ids: the same seed and input give the same samples whether the input is searched
alone, in a batch, or in a server's batch with other requests' inputs.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import torch

from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import NEG_INF, Abandoned, Hypothesis, word_by_word
from wean.search_options import Capabilities, SearchOptions


@STRATEGIES.register("sampling", capabilities=Capabilities(outputs="samples"))
def sampling(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """``options.nbest`` samples of each sentence, the most probable first (by ranking score:
    log-probability under the model, not the tempered one, over lp(length)). Samples may repeat."""
    batch, n = source.size(0), options.nbest
    generators = [torch.Generator().manual_seed(sample_seed(options.seed, source[i, : int(lengths[i])], j))
                  for i in range(batch) for j in range(n)]  # sentence i's samples are rows i * n ... i * n + n - 1
    written = word_by_word(model, source, lengths, options, banned_ids, abandoned,
                           lambda log_probs, rows: draw(log_probs, options, [generators[r] for r in rows.tolist()]),
                           copies=n)
    results: list[list[Hypothesis] | None] = []
    for i in range(batch):
        samples = [written.hypothesis(r, int(lengths[i]), options) for r in range(i * n, i * n + n)]
        results.append(None if i in written.dropped else sorted(samples, key=lambda h: -h.score))
    return results


def draw(log_probs: torch.Tensor, options: SearchOptions, generators: list[torch.Generator]) -> torch.Tensor:
    """(rows,) one token per row from softmax(log_probs / temperature), cut to the top k and the
    top p, each row drawn with its own generator (Gumbel-max: the argmax of the scores plus
    Gumbel noise is a draw from their softmax)."""
    scores = log_probs / options.temperature
    vocabulary = scores.size(1)
    if 0 < options.sampling_topk < vocabulary:
        kth = scores.topk(options.sampling_topk, dim=1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, NEG_INF)
    if options.sampling_topp < 1:
        ordered, order = scores.sort(dim=1, descending=True)
        probabilities = ordered.softmax(dim=1)
        before = probabilities.cumsum(dim=1) - probabilities  # the mass of the more probable tokens
        ordered = ordered.masked_fill(before >= options.sampling_topp, NEG_INF)  # the first is always kept
        scores = torch.full_like(scores, NEG_INF).scatter(1, order, ordered)
    uniform = torch.stack([torch.rand(vocabulary, generator=generator) for generator in generators])
    gumbel = -(-uniform.clamp(min=1e-20).log()).log()
    return (scores + gumbel.to(scores.device)).argmax(dim=1)


def sample_seed(seed: int, source_ids: torch.Tensor, sample: int) -> int:
    """The seed of one sample's generator: a hash of the user's seed, the sample's number and the
    input, so that it does not depend on where in a batch the input is."""
    text = f"{seed}:{sample}:{','.join(map(str, source_ids.tolist()))}"
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1
