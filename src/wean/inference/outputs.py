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
    # (len(tokens) + 1, len(source_tokens)); the last row is <eos>. For a text of several sentences
    # a sparse tensor (``.to_dense()``): block-diagonal, each sentence attending to itself
    attention: torch.Tensor
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
    added up, attention block-diagonal (each sentence attends only to itself), one <eos> row. The
    attention is a sparse tensor (``.to_dense()`` for the matrix): dense, a paragraph of n words
    would hold n^2 weights, gigabytes for a long one, nearly all of them zero."""
    if not parts:
        return Generation(text, "", [], [], 0.0, 0.0, torch.zeros(1, 0))
    rows, columns, values = [], [], []
    row = column = 0
    for number, part in enumerate(parts):
        # every part's rows but its <eos>; the text's <eos> row is the last part's
        block = part.attention if number == len(parts) - 1 else part.attention[:-1]
        found = block.nonzero(as_tuple=True)
        rows.append(found[0] + row)
        columns.append(found[1] + column)
        values.append(block[found])
        row, column = row + block.size(0), column + block.size(1)
    # the indices are built above, in bounds: PyTorch's invariant check is declined, which also
    # keeps its warning about an unstated choice off the user's screen
    attention = torch.sparse_coo_tensor(torch.stack([torch.cat(rows), torch.cat(columns)]), torch.cat(values),
                                        (row, column), check_invariants=False).coalesce()
    warnings = [f"sentence {number}: {part.warning}" for number, part in enumerate(parts, start=1) if part.warning]
    return Generation(
        text, " ".join(part.text for part in parts if part.text), [t for part in parts for t in part.tokens],
        [t for part in parts for t in part.source_tokens], sum(part.score for part in parts),
        sum(part.log_prob for part in parts), attention, "\n".join(warnings) or None,
        fell_back=any(part.fell_back for part in parts),
    )
