"""What the search strategies share: the hypothesis they return, one decoder step with the
constraints every output obeys, n-gram blocking, the length and coverage penalties, gathering
beams, and the word-by-word loop of greedy search and sampling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Sequence

import torch

from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from wean.models.interfaces import DecoderState, EncoderOutput
from wean.models.model import EncoderDecoder
from wean.search_options import SearchOptions

NEG_INF = float("-inf")

Abandoned = Callable[[list[int]], Collection[int]]  # of the input rows still searched, those no longer wanted


@dataclass
class Hypothesis:
    tokens: list[int]  # without <eos>
    score: float  # ranking score (length-normalized when alpha > 0, plus any coverage penalty)
    log_prob: float  # sum of log-probabilities, <eos> included
    attention: torch.Tensor  # (len(tokens) + 1, source length): the <eos> step is the last row


@dataclass
class Written:
    """What :func:`word_by_word` wrote: rows of ``copies`` per input row, row r of input r // copies."""

    tokens: torch.Tensor  # (rows, max_length), <eos> then <pad> after each output
    scores: torch.Tensor  # (rows,) sums of log-probabilities, <eos> included
    attention: torch.Tensor  # (rows, max_length, source)
    dropped: set[int]  # input rows abandoned mid-search

    def hypothesis(self, row: int, source_length: int, options: SearchOptions) -> Hypothesis:
        """Row ``row`` as a hypothesis, ranked by its log-probability over lp(length)."""
        written = self.tokens[row].tolist()
        length = written.index(EOS_ID) if EOS_ID in written else len(written)
        rank = float(length_normalized(self.scores[row], length + 1, options))
        attention = self.attention[row, : length + 1, :source_length]
        return Hypothesis(written[:length], rank, float(self.scores[row]), attention)


@torch.no_grad()
def word_by_word(
    model: EncoderDecoder, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int], abandoned: Abandoned | None,
    choose: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], copies: int = 1,
) -> Written:
    """One output per row, ``copies`` rows per input row, each word ``choose(log_probs, rows)``
    for the rows still writing (a row that has written <eos> leaves the batch): greedy search
    and sampling; ``options.block_ngram_repeat`` holds."""
    banned = banned_tensor(banned_ids, source.device)
    batch, device, max_length = source.size(0), source.device, options.max_length
    encoded = model.encode(source, lengths)
    if copies > 1:
        encoded = encoded.repeat(copies)
    state = model.init_state(encoded)
    row = torch.arange(batch * copies, device=device)  # the row of each output still writing
    previous = torch.full((batch * copies,), BOS_ID, dtype=torch.long, device=device)
    written = Written(torch.full((batch * copies, max_length), PAD_ID, dtype=torch.long, device=device),
                      torch.zeros(batch * copies, device=device),
                      torch.zeros(batch * copies, max_length, source.size(1), device=device), set())
    for step in range(max_length):
        log_probs, state, weights = decoder_step(model, previous, encoded, state, banned)
        constrain(log_probs, step, options.min_length, max_length)
        if options.block_ngram_repeat:
            block_repeated_ngrams(log_probs, written.tokens[row, :step], options.block_ngram_repeat)
        chosen = choose(log_probs, row)
        picked = log_probs.gather(1, chosen.unsqueeze(1)).squeeze(1)
        stuck = torch.isinf(picked)  # every token banned (constraints, n-gram blocking): the output ends here
        if bool(stuck.any()):
            chosen, picked = chosen.masked_fill(stuck, EOS_ID), picked.masked_fill(stuck, 0.0)
        written.scores[row] += picked
        written.tokens[row, step] = chosen
        written.attention[row, step] = weights
        writing = chosen != EOS_ID
        gone = gone_rows(abandoned, torch.div(row, copies, rounding_mode="floor"), batch)
        if gone is not None:
            written.dropped.update((row[gone & writing] // copies).tolist())
            writing &= ~gone
        if not bool(writing.any()):
            break
        if not bool(writing.all()):  # an output that has ended leaves the batch
            keep = writing.nonzero().squeeze(1)
            encoded, state, chosen, row = encoded.select(keep), state.select(keep), chosen[keep], row[keep]
        previous = chosen
    return written


def decoder_step(
    model: EncoderDecoder, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState,
    banned_ids: torch.Tensor,
) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
    """(log-probabilities with the banned ids at -inf, the next state, attention) of one step."""
    step = model.decode_step(previous, encoded, state)
    step.log_probs[:, banned_ids] = NEG_INF
    return step.log_probs, step.state, step.attention


def banned_tensor(banned_ids: Sequence[int], device: torch.device) -> torch.Tensor:
    """The ids never written, as one index built once per search rather than at every step."""
    return torch.tensor([PAD_ID, BOS_ID, *banned_ids], dtype=torch.long, device=device)


def gone_rows(abandoned: Abandoned | None, sentence: torch.Tensor, batch: int) -> torch.Tensor | None:
    """(live,) True for the rows still searched (input rows ``sentence``) that ``abandoned``
    names; None when it names none, the usual case, which then costs no tensor work."""
    rows = abandoned(sentence.tolist()) if abandoned is not None else ()
    if not rows:
        return None
    named = torch.zeros(batch, dtype=torch.bool)
    named[list(rows)] = True
    return named.to(sentence.device)[sentence]


def constrain(log_probs: torch.Tensor, step: int, min_length: int, max_length: int) -> None:
    """No <eos> before ``min_length``; only <eos> at the last step."""
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


def length_normalized(scores: torch.Tensor, length: int, options: SearchOptions) -> torch.Tensor:
    """``scores`` / lp(``length``), where length counts the output's tokens with its <eos>:
    length**alpha (power), or GNMT's ((5 + length) / 6)**alpha (wu; Wu et al. 2016, eq. 14)."""
    alpha = options.length_penalty
    if options.length_penalty_form == "wu":
        return scores / ((5.0 + length) / 6.0) ** alpha
    return scores / float(length) ** alpha


def take_beams(tensor: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """The beams ``index`` (batch, n) of ``tensor`` (batch, beams, ...), per sentence."""
    return tensor.gather(1, gather_index(index, tensor))


def gather_index(index: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A (batch, n) index of beams broadcast over the trailing dimensions of ``like`` (batch,
    beams, ...), for ``like.gather(1, ...)``."""
    return index.view(*index.shape, *([1] * (like.dim() - 2))).expand(-1, -1, *like.shape[2:])


def coverage_penalty(coverage: torch.Tensor, source_mask: torch.Tensor, options: SearchOptions) -> torch.Tensor:
    """(rows,) the coverage penalty, never positive, of hypotheses whose attention so far sums to
    ``coverage`` (rows, source) over the real source tokens ``source_mask`` marks:

    - wu (Wu et al. 2016, eq. 14): beta * sum_j log min(coverage_j, 1): a source token the output
      has not attended to costs, so outputs that leave part of the source out rank lower;
    - summary (OpenNMT-py's): -beta * sum_j (max(coverage_j, 1) - 1): attention a source token
      receives past 1 costs, so outputs that attend to (and so write) a source word twice rank lower.
    """
    beta = options.coverage_weight
    if options.coverage_penalty == "wu":
        covered = coverage.clamp(min=1e-10, max=1.0).masked_fill(~source_mask, 1.0)  # never log 0
        return beta * covered.log().sum(-1)
    excess = (coverage.clamp(min=1.0) - 1.0).masked_fill(~source_mask, 0.0)
    return -beta * excess.sum(-1)
