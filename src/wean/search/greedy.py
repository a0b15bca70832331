"""Greedy search: the most probable next word at every step, for a whole batch at once."""

from __future__ import annotations

from typing import Sequence

import torch

from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import Abandoned, Hypothesis, banned_tensor, constrain, decoder_step, gone_rows
from wean.search_options import SearchOptions


@STRATEGIES.register("greedy")
@torch.no_grad()
def greedy(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """One hypothesis per sentence (a sentence that has written <eos> leaves the batch); its
    score is its log-probability. ``banned_ids`` are never written (nor are <pad> and <bos>);
    rows ``abandoned`` names leave the batch and come back None. Reads ``min_length`` and
    ``max_length`` of the options."""
    banned = banned_tensor(banned_ids, source.device)
    max_length = options.max_length
    encoded = model.encode(source, lengths)
    state = model.init_state(encoded)
    batch, device = source.size(0), source.device
    sentence = torch.arange(batch, device=device)  # the input row of each sentence still writing
    previous = torch.full((batch,), BOS_ID, dtype=torch.long, device=device)
    scores = torch.zeros(batch, device=device)
    tokens = torch.full((batch, max_length), PAD_ID, dtype=torch.long, device=device)
    attention = torch.zeros(batch, max_length, source.size(1), device=device)
    dropped: set[int] = set()
    for step in range(max_length):
        log_probs, state, weights = decoder_step(model, previous, encoded, state, banned)
        constrain(log_probs, step, options.min_length, max_length)
        best_scores, best = log_probs.max(dim=-1)
        scores[sentence] += best_scores
        tokens[sentence, step] = best
        attention[sentence, step] = weights
        writing = best != EOS_ID
        gone = gone_rows(abandoned, sentence, batch)
        if gone is not None:
            dropped.update(sentence[gone & writing].tolist())
            writing &= ~gone
        if not bool(writing.any()):
            break
        if not bool(writing.all()):  # a sentence that wrote <eos> leaves the batch
            keep = writing.nonzero().squeeze(1)
            encoded, state, best, sentence = encoded.select(keep), state.select(keep), best[keep], sentence[keep]
        previous = best
    results: list[list[Hypothesis] | None] = []
    for i in range(batch):
        if i in dropped:
            results.append(None)
            continue
        row = tokens[i].tolist()
        length = row.index(EOS_ID) if EOS_ID in row else len(row)
        score = float(scores[i])
        results.append([Hypothesis(row[:length], score, score, attention[i, : length + 1, : int(lengths[i])])])
    return results
