"""Batched beam search, as a plain function over a model.

It keeps every sentence of the batch and all its beams in tensors of shape (batch, beam, ...):
each step scores every beam's extensions at once and picks, per sentence, the 2k best.
Those ending in ``<eos>`` among the first k become finished hypotheses (kept in a buffer of the k
best by ranking score); the best k others continue. A sentence is done when it has k finished
hypotheses, or, ranked by raw log-probability, as soon as its n-th best finished hypothesis
outscores every live one (log-probabilities only fall); its n best are then written out and the
sentence leaves the batch, so the last steps run only for the sentences still searching. At
``max_length`` every live hypothesis is ended with ``<eos>``. There is no Python loop over
hypotheses; with width 1 this is exactly greedy search.

Scores are sums of token log-probabilities, ``<eos>`` included; the ranking score is the score
over lp(length) (:func:`~wean.search.common.length_normalized`; alpha 0: the raw sum, as WEAN's
code ranked hypotheses), plus the coverage penalty where one is asked for. The penalty also
ranks the live beams at every step, added to their raw log-probabilities (OpenNMT-py does so with
``-stepwise_penalty``; by default it applies it to finished hypotheses only): a beam that has
attended twice to a source word (summary) or left words unattended so far (wu) falls behind
before it can finish.
"""

from __future__ import annotations

from typing import Sequence

import torch

from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from wean.models.model import EncoderDecoder
from wean.registry import STRATEGIES
from wean.search.common import (
    NEG_INF, Abandoned, Hypothesis, banned_tensor, block_repeated_ngrams, constrain, coverage_penalty, decoder_step,
    gather_index, gone_rows, length_normalized,
)
from wean.search.greedy import greedy
from wean.search_options import Capabilities, SearchOptions


@STRATEGIES.register("beam", capabilities=Capabilities(outputs="beam", own_rerank=True, compact=True))
def beam(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """The ``options.nbest`` best hypotheses of each sentence, best first (see the module
    docstring); width 1 is :func:`~wean.search.greedy.greedy`. Rows ``abandoned`` names leave
    the batch and come back None."""
    if options.beam == 1:
        return greedy(model, source, lengths, options, banned_ids, abandoned)
    return beam_search_nbest(model, source, lengths, options, banned_ids, abandoned)


@torch.no_grad()
def beam_search_nbest(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    banned = banned_tensor(banned_ids, source.device)
    batch, k, nbest, device = source.size(0), options.beam, options.nbest, source.device
    max_length, source_length = options.max_length, source.size(1)
    covering = options.coverage_penalty != "none"
    encoded = model.encode(source, lengths).repeat(k)
    state = model.init_state(encoded)
    results: list[list[Hypothesis] | None] = [None] * batch
    sentence = torch.arange(batch, device=device)  # the input row of each sentence still searched

    alive_scores = torch.full((batch, k), NEG_INF, device=device)
    alive_scores[:, 0] = 0.0  # all beams start identical: expand only the first
    alive_tokens = torch.zeros(batch, k, 0, dtype=torch.long, device=device)
    # the attention each live beam has paid to each source token so far (coverage penalties only)
    coverage = torch.zeros(batch, k, source_length, device=device) if covering else None
    source_mask = torch.arange(source_length, device=device) < lengths.unsqueeze(1)  # (batch, source)
    # Attention is not copied along with each beam's history at every step (that costs O(steps)
    # per step): each step's weights are kept per beam slot, with back-pointers to the slot each
    # new beam came from, and a finished sentence's rows are collected once.
    step_weights: list[torch.Tensor] = []  # step t: (sentences, k, source) for the beams alive during it
    back_pointers: list[torch.Tensor] = []  # step t: (sentences, k) the slot each beam alive after it came from
    finished_rank = torch.full((batch, k), NEG_INF, device=device)
    finished_raw = torch.full((batch, k), NEG_INF, device=device)
    finished_tokens = torch.full((batch, k, max_length), PAD_ID, dtype=torch.long, device=device)
    finished_step = torch.zeros(batch, k, dtype=torch.long, device=device)  # the step that wrote its <eos>
    finished_parent = torch.zeros(batch, k, dtype=torch.long, device=device)  # the slot it extended then
    previous = torch.full((batch * k,), BOS_ID, dtype=torch.long, device=device)
    offsets = (torch.arange(batch, device=device) * k).unsqueeze(1)  # each sentence's first beam row

    for step in range(max_length):
        live = sentence.size(0)
        log_probs, state, weights = decoder_step(model, previous, encoded, state, banned)
        constrain(log_probs, step, options.min_length, max_length)
        if options.block_ngram_repeat:
            block_repeated_ngrams(log_probs, alive_tokens.view(live * k, -1), options.block_ngram_repeat)
        vocabulary = log_probs.size(1)
        weights = weights.view(live, k, source_length)
        step_weights.append(weights)
        if covering:  # every extension of a beam has its coverage after this step, and so its penalty
            coverage = coverage + weights
            penalty = coverage_penalty(coverage, source_mask[sentence].unsqueeze(1), options)  # (live, k)

        def best_extensions():
            # A beam's score (and coverage penalty) is one number added to all its extensions, so a
            # sentence's 2k best extensions are among each beam's 2k best words: those are taken
            # first, per beam, and the beam × vocabulary sums are never written out.
            width = min(2 * k, vocabulary)
            word_scores, beam_words = log_probs.topk(width, dim=1)  # (live * k, width)
            candidates = (alive_scores.view(-1, 1) + word_scores).view(live, k * width)
            if covering:
                ranking = (candidates.view(live, k, width) + penalty.unsqueeze(2)).view(live, k * width)
                top_scores, picked = ranking.topk(min(2 * k, k * width), dim=1)
                top_raw = candidates.gather(1, picked)
            else:
                top_scores, picked = candidates.topk(min(2 * k, k * width), dim=1)
                top_raw = top_scores
            return top_scores, picked // width, beam_words.view(live, k * width).gather(1, picked), top_raw

        top_scores, parents, words, top_raw = best_extensions()
        stuck = torch.isinf(top_scores[:, 0])
        if bool(stuck.any()):
            # every extension of a sentence's beams is banned (constraints, n-gram blocking): its
            # beams end here, as greedy search ends such an output, rather than all die unwritten;
            # the other sentences' beams are left as they are
            ending = stuck.repeat_interleave(k) & ~torch.isfinite(log_probs).any(1)
            log_probs[:, EOS_ID] = torch.where(ending, torch.zeros_like(log_probs[:, EOS_ID]), log_probs[:, EOS_ID])
            top_scores, parents, words, top_raw = best_extensions()

        # Token histories of all 2k candidates: the parent's, then this step's word.
        history = torch.cat([alive_tokens.gather(1, gather_index(parents, alive_tokens)), words.unsqueeze(-1)], -1)

        # Candidates ending in <eos> among the best k join the finished buffer.
        rank_in_step = torch.arange(top_scores.size(1), device=device).unsqueeze(0)
        ending = (words == EOS_ID) & (rank_in_step < k) & torch.isfinite(top_scores)
        if ending.any():  # most steps end nothing: skip the buffer update
            ranked = length_normalized(top_raw, step + 1, options)
            if covering:
                ranked = ranked + penalty.gather(1, parents)
            new_rank = torch.where(ending, ranked, NEG_INF)
            finished_rank, keep = torch.cat([finished_rank, new_rank], 1).topk(k, dim=1)
            finished_raw = torch.cat([finished_raw, torch.where(ending, top_raw, NEG_INF)], 1).gather(1, keep)
            padded = torch.full((live, history.size(1), max_length), PAD_ID, dtype=torch.long, device=device)
            padded[:, :, : step + 1] = history
            finished_tokens = torch.cat([finished_tokens, padded], 1).gather(1, gather_index(keep, finished_tokens))
            finished_step = torch.cat([finished_step, torch.full_like(parents, step)], 1).gather(1, keep)
            finished_parent = torch.cat([finished_parent, parents], 1).gather(1, keep)

        # The best k candidates that do not end continue.
        alive_scores, chosen = torch.where(words == EOS_ID, NEG_INF, top_scores).topk(k, dim=1)
        alive_tokens = history.gather(1, gather_index(chosen, history))
        chosen_parents = parents.gather(1, chosen)
        if covering:  # the live beams carry their raw log-probabilities; those that could not continue stay -inf
            alive_scores = torch.where(torch.isfinite(alive_scores), top_raw.gather(1, chosen), NEG_INF)
            coverage = coverage.gather(1, gather_index(chosen_parents, coverage))
        back_pointers.append(chosen_parents)
        state = state.select((offsets + chosen_parents).view(-1), same_sources=True)
        previous = words.gather(1, chosen).view(-1)

        done = torch.isfinite(finished_rank).sum(1) >= k
        if options.length_penalty == 0:
            # log-probabilities only fall and coverage penalties are never positive: no live beam
            # can rank above its raw log-probability now
            best_alive = alive_scores.max(dim=1).values if covering else alive_scores[:, 0]
            done |= finished_rank[:, nbest - 1] >= best_alive
        if step == max_length - 1:
            done[:] = True  # every hypothesis has just been ended
        gone = gone_rows(abandoned, sentence, batch)
        leaving = done if gone is None else done | gone
        if not leaving.any():
            continue
        # A finished sentence's best hypotheses are written out, and the sentence leaves the
        # batch (an abandoned one leaves unwritten).
        ended = (done if gone is None else done & ~gone).nonzero().squeeze(1)
        if ended.numel():
            attention = _best_attention([w[ended] for w in step_weights], [b[ended] for b in back_pointers],
                                        finished_step[ended, :nbest], finished_parent[ended, :nbest])
            found = torch.isfinite(finished_rank[ended, :nbest]).tolist()  # fewer may have ended (a tiny vocabulary)
            for row, i in enumerate(sentence[ended].tolist()):
                results[i] = []
                for rank in range(nbest):
                    if not found[row][rank]:
                        continue
                    tokens = finished_tokens[ended[row], rank].tolist()
                    length = tokens.index(EOS_ID)
                    results[i].append(Hypothesis(
                        tokens[:length], float(finished_rank[ended[row], rank]), float(finished_raw[ended[row], rank]),
                        attention[row, rank, : length + 1, : int(lengths[i])],
                    ))
        if bool(leaving.all()):
            break
        keep = (~leaving).nonzero().squeeze(1)
        beams = (keep.unsqueeze(1) * k + torch.arange(k, device=device)).view(-1)
        encoded, state = encoded.select(beams), state.select(beams)
        previous = previous.index_select(0, beams)
        alive_scores, alive_tokens, sentence = alive_scores[keep], alive_tokens[keep], sentence[keep]
        if covering:
            coverage = coverage[keep]
        finished_rank, finished_raw, finished_tokens = finished_rank[keep], finished_raw[keep], finished_tokens[keep]
        finished_step, finished_parent = finished_step[keep], finished_parent[keep]
        step_weights = [w[keep] for w in step_weights]
        back_pointers = [b[keep] for b in back_pointers]
        offsets = offsets[: keep.numel()]
    return results


def _best_attention(
    step_weights: list[torch.Tensor], back_pointers: list[torch.Tensor], last_step: torch.Tensor, slot: torch.Tensor
) -> torch.Tensor:
    """(batch, ranks, steps, source): the attention rows of each sentence's hypotheses that wrote
    their <eos> at ``last_step`` from beam ``slot`` (both batch x ranks), found by following the
    back-pointers from there, every rank at once."""
    (batch, ranks), source_length = slot.shape, step_weights[0].size(2)
    rows = step_weights[0].new_zeros(batch, ranks, len(step_weights), source_length)
    sentences = torch.arange(batch, device=slot.device).unsqueeze(1)
    for step in range(int(last_step.max()), -1, -1):
        written = last_step >= step  # hypotheses with a row at this step
        rows[:, :, step][written] = step_weights[step][sentences, slot][written]
        if step > 0:  # the slot each beam was in one step before
            slot = torch.where(written, back_pointers[step - 1][sentences, slot], slot)
    return rows
