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

from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import (
    NEG_INF, Abandoned, Hypothesis, banned_tensor, block_repeated_ngrams, constrain, decoder_step, gone_rows,
    length_normalized,
)
from wean.search_options import SearchOptions


@STRATEGIES.register("sampling")
@torch.no_grad()
def sampling(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """``options.nbest`` samples of each sentence, the most probable first (by ranking score:
    log-probability under the model, not the tempered one, over lp(length)). Samples may repeat."""
    banned = banned_tensor(banned_ids, source.device)
    batch, n, device, max_length = source.size(0), options.nbest, source.device, options.max_length
    rows = batch * n  # sentence i's samples are rows i * n ... i * n + n - 1
    encoded = model.encode(source, lengths).repeat(n)
    state = model.init_state(encoded)
    generators = [torch.Generator().manual_seed(sample_seed(options.seed, source[i, : int(lengths[i])], j))
                  for i in range(batch) for j in range(n)]
    row = torch.arange(rows, device=device)  # the row of each sample still writing
    previous = torch.full((rows,), BOS_ID, dtype=torch.long, device=device)
    scores = torch.zeros(rows, device=device)
    tokens = torch.full((rows, max_length), PAD_ID, dtype=torch.long, device=device)
    attention = torch.zeros(rows, max_length, source.size(1), device=device)
    dropped: set[int] = set()  # input rows nobody wants any more
    for step in range(max_length):
        log_probs, state, weights = decoder_step(model, previous, encoded, state, banned)
        constrain(log_probs, step, options.min_length, max_length)
        if options.block_ngram_repeat:
            block_repeated_ngrams(log_probs, tokens[row, :step], options.block_ngram_repeat)
        drawn = draw(log_probs, options, [generators[r] for r in row.tolist()])
        scores[row] += log_probs.gather(1, drawn.unsqueeze(1)).squeeze(1)
        tokens[row, step] = drawn
        attention[row, step] = weights
        writing = drawn != EOS_ID
        gone = gone_rows(abandoned, torch.div(row, n, rounding_mode="floor"), batch)
        if gone is not None:
            dropped.update((row[gone] // n).tolist())
            writing &= ~gone
        if not bool(writing.any()):
            break
        if not bool(writing.all()):
            keep = writing.nonzero().squeeze(1)
            encoded, state, drawn, row = encoded.select(keep), state.select(keep), drawn[keep], row[keep]
        previous = drawn
    results: list[list[Hypothesis] | None] = []
    for i in range(batch):
        if i in dropped:
            results.append(None)
            continue
        samples = []
        for r in range(i * n, i * n + n):
            written = tokens[r].tolist()
            length = written.index(EOS_ID) if EOS_ID in written else len(written)
            log_prob = float(scores[r])
            rank = float(length_normalized(scores[r], length + 1, options))
            samples.append(Hypothesis(written[:length], rank, log_prob, attention[r, : length + 1, : int(lengths[i])]))
        results.append(sorted(samples, key=lambda h: -h.score))
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
