"""Decoding: greedy search and batched beam search, as plain functions over a model.

Beam search keeps every sentence of the batch and all its beams in tensors of shape
(batch, beam, ...): each step scores all beam × vocabulary extensions at once and picks, per
sentence, the 2k best. Those ending in ``<eos>`` among the first k become finished hypotheses
(kept in a buffer of the k best by normalized score); the best k others continue. A sentence is
done when it has k finished hypotheses, or, without length normalization, as soon as its best
finished hypothesis outscores every live one (log-probabilities only fall); its best hypothesis
is then written out and the sentence leaves the batch, so the last steps run only for the
sentences still searching. At ``max_length`` every live hypothesis is ended with ``<eos>``.
There is no Python loop over hypotheses; with width 1 this is exactly greedy search.

Both searches take ``abandoned``: asked once per step with the input rows still searched, it
names those whose output nobody wants any more (a server's client hung up); they leave the batch
at once and their result is None, so the rest of the batch stops paying for them.

Scores are sums of token log-probabilities, ``<eos>`` included; the ranking score is
score / length**alpha (alpha = 0: the raw sum, as WEAN's code ranked hypotheses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Sequence

import torch

from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from wean.models.interfaces import DecoderState, EncoderOutput
from wean.models.model import EncoderDecoder

NEG_INF = float("-inf")

Abandoned = Callable[[list[int]], Collection[int]]  # of the input rows still searched, those no longer wanted


@dataclass
class Hypothesis:
    tokens: list[int]  # without <eos>
    score: float  # ranking score (length-normalized when alpha > 0)
    log_prob: float  # sum of log-probabilities, <eos> included
    attention: torch.Tensor  # (len(tokens) + 1, source length): the <eos> step is the last row


def _step(
    model: EncoderDecoder, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState,
    banned_ids: torch.Tensor,
) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
    step = model.decode_step(previous, encoded, state)
    step.log_probs[:, banned_ids] = NEG_INF
    return step.log_probs, step.state, step.attention


def _banned(banned_ids: Sequence[int], device: torch.device) -> torch.Tensor:
    """The ids never written, as one index built once per search rather than at every step."""
    return torch.tensor([PAD_ID, BOS_ID, *banned_ids], dtype=torch.long, device=device)


def _gone(abandoned: Abandoned | None, sentence: torch.Tensor, batch: int) -> torch.Tensor | None:
    """(live,) True for the rows still searched (input rows ``sentence``) that ``abandoned``
    names; None when it names none, the usual case, which then costs no tensor work."""
    rows = abandoned(sentence.tolist()) if abandoned is not None else ()
    if not rows:
        return None
    named = torch.zeros(batch, dtype=torch.bool)
    named[list(rows)] = True
    return named.to(sentence.device)[sentence]


def _constrain(log_probs: torch.Tensor, step: int, min_length: int, max_length: int) -> None:
    if step < min_length:
        log_probs[:, EOS_ID] = NEG_INF
    if step == max_length - 1:  # the last step may only end the hypothesis
        eos = log_probs[:, EOS_ID].clone()
        log_probs.fill_(NEG_INF)
        log_probs[:, EOS_ID] = torch.where(torch.isinf(eos), torch.zeros_like(eos), eos)


def block_repeated_ngrams(log_probs: torch.Tensor, history: torch.Tensor, n: int) -> None:
    """Forbid, in place, every token that would repeat an n-gram already in ``history`` (rows,
    steps). ``history`` holds the generated tokens so far, without <bos>."""
    rows, steps = history.shape
    if n <= 0 or steps < n - 1:
        return
    vocabulary = log_probs.size(1)
    if n == 1:
        banned = history
    else:
        if steps < n:
            return
        grams = history.unfold(1, n, 1)  # (rows, steps - n + 1, n)
        suffix = history[:, steps - n + 1 :]  # the last n - 1 tokens
        match = (grams[:, :, :-1] == suffix.unsqueeze(1)).all(-1)
        banned = grams[:, :, -1].masked_fill(~match, vocabulary)  # unmatched -> a spare column
    extended = torch.cat([log_probs, log_probs.new_zeros(rows, 1)], dim=1)
    extended.scatter_(1, banned, NEG_INF)
    log_probs.copy_(extended[:, :vocabulary])


@torch.no_grad()
def greedy_search(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, max_length: int = 100, min_length: int = 1,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[Hypothesis | None]:
    """The most probable next word at every step, for a whole batch at once (a sentence that has
    written <eos> leaves the batch); ``banned_ids`` are never written (nor are <pad> and <bos>);
    rows ``abandoned`` names leave the batch and come back None."""
    banned = _banned(banned_ids, source.device)
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
        log_probs, state, weights = _step(model, previous, encoded, state, banned)
        _constrain(log_probs, step, min_length, max_length)
        best_scores, best = log_probs.max(dim=-1)
        scores[sentence] += best_scores
        tokens[sentence, step] = best
        attention[sentence, step] = weights
        writing = best != EOS_ID
        gone = _gone(abandoned, sentence, batch)
        if gone is not None:
            dropped.update(sentence[gone & writing].tolist())
            writing &= ~gone
        if not bool(writing.any()):
            break
        if not bool(writing.all()):  # a sentence that wrote <eos> leaves the batch
            keep = writing.nonzero().squeeze(1)
            encoded, state, best, sentence = encoded.select(keep), state.select(keep), best[keep], sentence[keep]
        previous = best
    results: list[Hypothesis | None] = []
    for i in range(batch):
        if i in dropped:
            results.append(None)
            continue
        row = tokens[i].tolist()
        length = row.index(EOS_ID) if EOS_ID in row else len(row)
        score = float(scores[i])
        results.append(Hypothesis(row[:length], score, score, attention[i, : length + 1, : int(lengths[i])]))
    return results


@torch.no_grad()
def beam_search(
    model: EncoderDecoder,
    source: torch.Tensor,
    lengths: torch.Tensor,
    beam_size: int = 5,
    max_length: int = 100,
    min_length: int = 1,
    length_penalty: float = 0.0,
    block_ngram_repeat: int = 0,
    banned_ids: Sequence[int] = (),
    abandoned: Abandoned | None = None,
) -> list[Hypothesis | None]:
    """The best hypothesis of each sentence (see the module docstring)."""
    banned = _banned(banned_ids, source.device)
    batch, k, device = source.size(0), beam_size, source.device
    source_length = source.size(1)
    encoded = model.encode(source, lengths).repeat(k)
    state = model.init_state(encoded)
    results: list[Hypothesis | None] = [None] * batch
    sentence = torch.arange(batch, device=device)  # the input row of each sentence still searched

    alive_scores = torch.full((batch, k), NEG_INF, device=device)
    alive_scores[:, 0] = 0.0  # all beams start identical: expand only the first
    alive_tokens = torch.zeros(batch, k, 0, dtype=torch.long, device=device)
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
        log_probs, state, weights = _step(model, previous, encoded, state, banned)
        _constrain(log_probs, step, min_length, max_length)
        if block_ngram_repeat:
            block_repeated_ngrams(log_probs, alive_tokens.view(live * k, -1), block_ngram_repeat)
        vocabulary = log_probs.size(1)
        candidates = (alive_scores.view(-1, 1) + log_probs).view(live, k * vocabulary)
        top_scores, top_ids = candidates.topk(min(2 * k, k * vocabulary), dim=1)
        parents, words = top_ids // vocabulary, top_ids % vocabulary
        step_weights.append(weights.view(live, k, source_length))

        # Token histories of all 2k candidates: the parent's, then this step's word.
        history = torch.cat([alive_tokens.gather(1, _expand(parents, alive_tokens)), words.unsqueeze(-1)], -1)

        # Candidates ending in <eos> among the best k join the finished buffer.
        rank_in_step = torch.arange(top_scores.size(1), device=device).unsqueeze(0)
        ending = (words == EOS_ID) & (rank_in_step < k) & torch.isfinite(top_scores)
        if ending.any():  # most steps end nothing: skip the buffer update
            new_rank = torch.where(ending, top_scores / float(step + 1) ** length_penalty, NEG_INF)
            finished_rank, keep = torch.cat([finished_rank, new_rank], 1).topk(k, dim=1)
            finished_raw = torch.cat([finished_raw, torch.where(ending, top_scores, NEG_INF)], 1).gather(1, keep)
            padded = torch.full((live, history.size(1), max_length), PAD_ID, dtype=torch.long, device=device)
            padded[:, :, : step + 1] = history
            finished_tokens = torch.cat([finished_tokens, padded], 1).gather(1, _expand(keep, finished_tokens))
            finished_step = torch.cat([finished_step, torch.full_like(parents, step)], 1).gather(1, keep)
            finished_parent = torch.cat([finished_parent, parents], 1).gather(1, keep)

        # The best k candidates that do not end continue.
        alive_scores, chosen = torch.where(words == EOS_ID, NEG_INF, top_scores).topk(k, dim=1)
        alive_tokens = history.gather(1, _expand(chosen, history))
        chosen_parents = parents.gather(1, chosen)
        back_pointers.append(chosen_parents)
        state = state.select((offsets + chosen_parents).view(-1), same_sources=True)
        previous = words.gather(1, chosen).view(-1)

        done = torch.isfinite(finished_rank).sum(1) >= k
        if length_penalty == 0:
            done |= finished_rank[:, 0] >= alive_scores[:, 0]
        if step == max_length - 1:
            done[:] = True  # every hypothesis has just been ended
        gone = _gone(abandoned, sentence, batch)
        leaving = done if gone is None else done | gone
        if not leaving.any():
            continue
        # A finished sentence's best hypothesis is written out, and the sentence leaves the batch
        # (an abandoned one leaves unwritten).
        ended = (done if gone is None else done & ~gone).nonzero().squeeze(1)
        if ended.numel():
            attention = _best_attention([w[ended] for w in step_weights], [b[ended] for b in back_pointers],
                                        finished_step[ended, 0], finished_parent[ended, 0])
        for row, i in enumerate(sentence[ended].tolist()):
            tokens = finished_tokens[ended[row], 0].tolist()
            length = tokens.index(EOS_ID)
            results[i] = Hypothesis(
                tokens[:length], float(finished_rank[ended[row], 0]), float(finished_raw[ended[row], 0]),
                attention[row, : length + 1, : int(lengths[i])],
            )
        if bool(leaving.all()):
            break
        keep = (~leaving).nonzero().squeeze(1)
        beams = (keep.unsqueeze(1) * k + torch.arange(k, device=device)).view(-1)
        encoded, state = encoded.select(beams), state.select(beams)
        previous = previous.index_select(0, beams)
        alive_scores, alive_tokens, sentence = alive_scores[keep], alive_tokens[keep], sentence[keep]
        finished_rank, finished_raw, finished_tokens = finished_rank[keep], finished_raw[keep], finished_tokens[keep]
        finished_step, finished_parent = finished_step[keep], finished_parent[keep]
        step_weights = [w[keep] for w in step_weights]
        back_pointers = [b[keep] for b in back_pointers]
        offsets = offsets[: keep.numel()]
    return results


def _best_attention(
    step_weights: list[torch.Tensor], back_pointers: list[torch.Tensor], last_step: torch.Tensor, slot: torch.Tensor
) -> torch.Tensor:
    """(batch, steps, source): the attention rows of each sentence's hypothesis that wrote its <eos>
    at ``last_step`` from beam ``slot``, found by following the back-pointers from there."""
    batch, source_length = slot.size(0), step_weights[0].size(2)
    rows = step_weights[0].new_zeros(batch, len(step_weights), source_length)
    sentences = torch.arange(batch, device=slot.device)
    for step in range(int(last_step.max()), -1, -1):
        written = last_step >= step  # sentences whose hypothesis has a row at this step
        rows[written, step] = step_weights[step][sentences, slot][written]
        if step > 0:  # the slot this beam was in one step before
            slot = torch.where(written, back_pointers[step - 1][sentences, slot], slot)
    return rows


def _expand(index: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Broadcast a (batch, n) beam index over the trailing dimensions of ``like``."""
    return index.view(*index.shape, *([1] * (like.dim() - 2))).expand(-1, -1, *like.shape[2:])
