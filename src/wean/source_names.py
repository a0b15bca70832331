"""Numbers and names only from the source (``names_and_numbers: from_source``): a constraint on
decoding against the simplifier's most harmful error, a fluent sentence that states a number or a
name its source never mentions.

Each output token is classed once per vocabulary, from its text (a sentencepiece piece's ``▁``
marks a word's first piece; every token of a word tokenizer starts a word):

- a *number*: a token holding a digit;
- a *name*: a word's first piece whose first letter is a capital;
- a *common word*, among names: one whose lowercase form is also a word of the vocabulary ("The",
  "He").

While searching, a number or a name is written only if the source holds that very token; the
one exception is a common word capitalised at the start of a sentence (the first step, or after a
token that ends a sentence: ``.``, ``!``, ``?``), so "The" may open an output whose source has
"the" only. Copied words outside the vocabulary (extended ids) are source words and always
allowed. The check is per token, not per word: a number spelled in several pieces may recombine
its source's pieces ("19" "62" and "19" "26" from a source holding both), and a name's later
pieces are not checked.

:class:`SourceNamesOnly` wraps a model (or an ensemble) so that every search strategy obeys the
constraint without knowing of it: the encoding carries each row's banned tokens, and each step's
log-probabilities lose them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from wean.data.vocabulary import BOS_ID, SPECIALS, Vocabulary

NEG_INF = float("-inf")
WORD_START = "▁"  # sentencepiece's mark of a word's first piece
SENTENCE_END = {".", "!", "?", "...", '."', '?"', '!"', ".'", "?'"}


@dataclass
class TokenClasses:
    """Per vocabulary id (V,): what the constraint needs to know of each token."""

    numbers: torch.Tensor
    names: torch.Tensor
    common: torch.Tensor  # names whose lowercase form is a vocabulary word: allowed opening a sentence
    sentence_ends: torch.Tensor

    @classmethod
    def of(cls, vocabulary: Vocabulary) -> "TokenClasses":
        pieces = any(token.startswith(WORD_START) for token in vocabulary.itos)
        words = set(vocabulary.itos)
        numbers, names, common, ends = [], [], [], []
        for token in vocabulary.itos:
            special = token in SPECIALS
            text = token[len(WORD_START):] if token.startswith(WORD_START) else token
            starts_word = not pieces or token.startswith(WORD_START)
            letters = [c for c in text if c.isalpha()]
            name = not special and starts_word and bool(letters) and text[0].isupper()
            numbers.append(not special and any(c.isdigit() for c in text))
            names.append(name)
            common.append(name and token.lower() in words)
            ends.append(not special and text in SENTENCE_END)
        return cls(*(torch.tensor(values, dtype=torch.bool) for values in (numbers, names, common, ends)))


@dataclass
class ConstrainedEncoding:
    """The wrapped model's encoding, and each row's banned tokens, selected and repeated together."""

    inner: Any
    banned: torch.Tensor  # (rows, V): numbers and names the source lacks
    banned_opening: torch.Tensor  # (rows, V): the same without the common words, at a sentence's start

    def select(self, index: torch.Tensor) -> "ConstrainedEncoding":
        return ConstrainedEncoding(self.inner.select(index), self.banned[index], self.banned_opening[index])

    def repeat(self, times: int) -> "ConstrainedEncoding":
        return ConstrainedEncoding(self.inner.repeat(times), self.banned.repeat_interleave(times, 0),
                                   self.banned_opening.repeat_interleave(times, 0))


class SourceNamesOnly(nn.Module):
    def __init__(self, model: nn.Module, classes: TokenClasses):
        super().__init__()
        self.model = model
        self.classes = classes

    @property
    def max_source_length(self) -> int | None:
        return self.model.max_source_length

    @property
    def copies_source(self) -> bool:
        return self.model.copies_source

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> ConstrainedEncoding:
        classes = self.classes
        vocabulary = classes.numbers.size(0)
        in_source = torch.zeros(source.size(0), vocabulary + 1, dtype=torch.bool, device=source.device)
        in_source.scatter_(1, source.clamp(max=vocabulary), True)  # extended ids: the spare column
        in_source = in_source[:, :vocabulary]
        checked = (classes.numbers | classes.names).to(source.device)
        banned = checked & ~in_source
        opening = banned & ~classes.common.to(source.device)
        return ConstrainedEncoding(self.model.encode(source, lengths), banned, opening)

    def init_state(self, encoded: ConstrainedEncoding):
        return self.model.init_state(encoded.inner)

    def decode_step(self, previous: torch.Tensor, encoded: ConstrainedEncoding, state):
        step = self.model.decode_step(previous, encoded.inner, state)
        ends = self.classes.sentence_ends.to(previous.device)
        vocabulary = ends.size(0)
        opening = (previous == BOS_ID) | ((previous < vocabulary) & ends[previous.clamp(max=vocabulary - 1)])
        banned = torch.where(opening.unsqueeze(1), encoded.banned_opening, encoded.banned)
        step.log_probs[:, :vocabulary].masked_fill_(banned, NEG_INF)
        return step

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)
