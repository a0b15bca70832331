"""What ``generate`` returns: one output with its tokens, scores, attention and the rest of its
n-best list; and the outputs of a text's sentences joined into the text's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch


@dataclass
class Generation:
    source: str
    text: str  # detokenized output
    tokens: list[str]  # output tokens, <unk> already replaced where asked
    source_tokens: list[str]  # what the model read: control tokens first, if the model has them
    score: float  # ranking score of the search
    log_prob: float  # sum of token log-probabilities, <eos> included
    attention: torch.Tensor  # (len(tokens) + 1, len(source_tokens)); the last row is <eos>
    # something the reader of the output should know (plain text only); for a text of several
    # sentences, a line per sentence concerned, "sentence K: ..."
    warning: str | None = None
    # the source returned unchanged by the fallback: every output found failed a fidelity or meaning
    # check (for a text of several sentences: for one of them at least)
    fell_back: bool = False
    alternatives: list["Generation"] = field(default_factory=list)  # the rest of the n-best list, best first
    rerank_scores: dict[str, float] | None = None  # with rerank: the search's score and each scorer's

    @property
    def returned_source(self) -> bool:
        """Whether the source itself came back: every output found (for a text, for each of its
        sentences) failed a check, and its alternatives are those outputs, rejected."""
        return self.fell_back and not self.tokens

    @property
    def nbest(self) -> list["Generation"]:
        """This output and its alternatives, best first."""
        return [self, *self.alternatives]


def joined(text: str, parts: list[Generation]) -> Generation:
    """The generations of a text's sentences as one (:func:`joined_best`); its j-th alternative
    joins each sentence's j-th (or, where a sentence has fewer, its last)."""
    if len(parts) == 1:
        return dataclasses.replace(parts[0], source=text)
    alternatives = max((len(part.alternatives) for part in parts), default=0)
    whole = joined_best(text, [dataclasses.replace(part, alternatives=[]) for part in parts])
    whole.alternatives = [
        joined_best(text, [part.nbest[min(j, len(part.alternatives))] for part in parts])
        for j in range(1, alternatives + 1)
    ]
    return whole


def joined_best(text: str, parts: list[Generation]) -> Generation:
    """The generations of a text's sentences as one: texts joined by a space, tokens and scores
    added up, attention block-diagonal (each sentence attends only to itself), one <eos> row."""
    if not parts:
        return Generation(text, "", [], [], 0.0, 0.0, torch.zeros(1, 0))
    blocks = [part.attention[:-1] for part in parts]  # each (output tokens, source tokens)
    width = sum(part.attention.size(1) for part in parts)
    attention = torch.zeros(sum(block.size(0) for block in blocks) + 1, width)
    row = column = 0
    for block in blocks:
        attention[row : row + block.size(0), column : column + block.size(1)] = block
        row, column = row + block.size(0), column + block.size(1)
    last = parts[-1].attention
    attention[-1, width - last.size(1) :] = last[-1]
    warnings = [f"sentence {number}: {part.warning}" for number, part in enumerate(parts, start=1) if part.warning]
    return Generation(
        text, " ".join(part.text for part in parts if part.text), [t for part in parts for t in part.tokens],
        [t for part in parts for t in part.source_tokens], sum(part.score for part in parts),
        sum(part.log_prob for part in parts), attention, "\n".join(warnings) or None,
        fell_back=any(part.fell_back for part in parts),
    )
