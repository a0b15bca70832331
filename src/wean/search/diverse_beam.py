"""Diverse beam search (Vijayakumar et al. 2018, "Diverse Beam Search for Improved Description of
Complex Scenes"): the beam is split into ``diverse_groups`` groups of equal width (0: one group
per beam), each a beam search of its own; at every step the groups choose in turn, and a group's
candidate words are penalised by ``diverse_strength`` for each beam of an earlier group that has
just continued with the same word (Hamming diversity; fairseq's ``--diverse-beam-strength``
counts every candidate an earlier group considered, the ending and the dropped ones too, so the
same strength penalises more there). The penalty steers the selection only: scores stay the
model's log-probabilities (fairseq's include it). The n-best list is the best distinct
hypotheses of all groups.

Every sentence of the batch stays in it until all its groups are done (clarity over the last
percent of speed: this strategy is asked for alternatives, not throughput).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import torch

from wean.data.vocabulary import BOS_ID, EOS_ID
from wean.errors import WeanError
from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import (
    NEG_INF, Abandoned, Hypothesis, banned_tensor, block_repeated_ngrams, constrain, decoder_step, gone_rows,
    length_normalized, take_beams,
)
from wean.search_options import Capabilities, SearchOptions


def check_groups(options: Mapping[str, Any], spelling: Callable[[str], str]) -> None:
    """Each group is an equal share of the beam."""
    beam, groups = options.get("beam"), options.get("diverse_groups")
    if beam is not None and groups and beam % groups:
        raise WeanError(f"{spelling('beam')} is {beam}, not a multiple of {spelling('diverse_groups')} ({groups}): "
                        "each group is an equal share of the beam")


@STRATEGIES.register("diverse_beam", capabilities=Capabilities(outputs="beam", compact=True, check=check_groups))
@torch.no_grad()
def diverse_beam(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    banned = banned_tensor(banned_ids, source.device)
    k, device = options.beam, source.device
    groups = options.diverse_groups or k
    width = k // groups  # each group's beam
    batch, source_length, max_length = source.size(0), source.size(1), options.max_length
    encoded = model.encode(source, lengths).repeat(k)  # sentence i, group g, slot s: row i*k + g*width + s
    state = model.init_state(encoded)
    raw = torch.full((batch, groups, width), NEG_INF, device=device)  # log-probabilities so far
    raw[:, :, 0] = 0.0  # each group starts from one beam
    selecting = raw.clone()  # the same with the diversity penalties: what each group's beam ranks by
    tokens = torch.zeros(batch, groups, width, 0, dtype=torch.long, device=device)
    attention = torch.zeros(batch, groups, width, 0, source_length, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    finished_in_group = torch.zeros(batch, groups, dtype=torch.long)
    dropped: set[int] = set()
    sentences = torch.arange(batch, device=device)
    previous = torch.full((batch * k,), BOS_ID, dtype=torch.long, device=device)
    for step in range(max_length):
        log_probs, state, weights = decoder_step(model, previous, encoded, state, banned)
        constrain(log_probs, step, options.min_length, max_length)
        if options.block_ngram_repeat:
            block_repeated_ngrams(log_probs, tokens.view(batch * k, -1), options.block_ngram_repeat)
        # a sentence whose every beam has every next token banned (constraints, n-gram blocking)
        # ends here, as greedy search ends such an output, rather than dies unwritten
        banned_everywhere = ~torch.isfinite(log_probs).any(1).view(batch, k)
        ending = (banned_everywhere & banned_everywhere.all(1, keepdim=True)).view(-1)
        log_probs[:, EOS_ID] = torch.where(ending, torch.zeros_like(log_probs[:, EOS_ID]), log_probs[:, EOS_ID])
        vocabulary = log_probs.size(1)
        log_probs = log_probs.view(batch, groups, width, vocabulary)
        weights = weights.view(batch, groups, width, 1, source_length)
        chosen_by_earlier = torch.zeros(batch, vocabulary, device=device)  # earlier groups' beams on each word
        next_rows, next_words = [], []
        next_raw, next_selecting = torch.empty_like(raw), torch.empty_like(selecting)
        next_tokens = torch.empty(batch, groups, width, step + 1, dtype=torch.long, device=device)
        next_attention = torch.empty(batch, groups, width, step + 1, source_length, device=device)
        for group in range(groups):
            penalised = log_probs[:, group] - options.diverse_strength * chosen_by_earlier.unsqueeze(1)
            ranking = (selecting[:, group].unsqueeze(2) + penalised).view(batch, width * vocabulary)
            top_ranking, top_ids = ranking.topk(min(2 * width, width * vocabulary), dim=1)
            top_raw = (raw[:, group].unsqueeze(2) + log_probs[:, group]).view(batch, -1).gather(1, top_ids)
            parents, words = top_ids // vocabulary, top_ids % vocabulary
            history = torch.cat([take_beams(tokens[:, group], parents), words.unsqueeze(-1)], -1)
            seen = torch.cat([take_beams(attention[:, group], parents), take_beams(weights[:, group], parents)], -2)

            first = torch.arange(top_ids.size(1), device=device).unsqueeze(0) < width
            ending = (words == EOS_ID) & first & torch.isfinite(top_ranking)
            for i, c in ending.nonzero().tolist():
                if finished_in_group[i, group] < width:
                    finished_in_group[i, group] += 1
                    finished[i].append(Hypothesis(
                        history[i, c, :-1].tolist(), float(length_normalized(top_raw[i, c], step + 1, options)),
                        float(top_raw[i, c]), seen[i, c, :, : int(lengths[i])],
                    ))

            continuing, chosen = torch.where(words == EOS_ID, NEG_INF, top_ranking).topk(width, dim=1)
            chosen_words = words.gather(1, chosen)
            chosen_by_earlier.scatter_add_(1, chosen_words, torch.isfinite(continuing).float())
            next_selecting[:, group] = continuing
            next_raw[:, group] = torch.where(torch.isfinite(continuing), top_raw.gather(1, chosen), NEG_INF)
            next_tokens[:, group] = take_beams(history, chosen)
            next_attention[:, group] = take_beams(seen, chosen)
            next_rows.append(group * width + parents.gather(1, chosen))
            next_words.append(chosen_words)
        raw, selecting, tokens, attention = next_raw, next_selecting, next_tokens, next_attention
        rows = (sentences.unsqueeze(1) * k + torch.cat(next_rows, 1)).view(-1)
        state = state.select(rows, same_sources=True)
        previous = torch.cat(next_words, 1).view(-1)

        gone = gone_rows(abandoned, sentences, batch)
        if gone is not None:
            for i in sentences[gone].tolist():
                dropped.add(i)
                finished_in_group[i] = width  # nothing more is collected for it
        if bool((finished_in_group >= width).all()):
            break
    results: list[list[Hypothesis] | None] = []
    for i in range(batch):
        if i in dropped:
            results.append(None)
            continue
        distinct: dict[tuple[int, ...], Hypothesis] = {}
        for hypothesis in sorted(finished[i], key=lambda h: -h.score):
            distinct.setdefault(tuple(hypothesis.tokens), hypothesis)
        results.append(list(distinct.values())[: options.nbest])
    return results
