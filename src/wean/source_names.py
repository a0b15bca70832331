"""Numbers and names only from the source (``names_and_numbers: from_source``): a constraint on
decoding against the simplifier's most harmful error, a fluent sentence that states a number or a
name its source never mentions.

Each output token is classed once per vocabulary, from its text (a sentencepiece piece's ``▁``
marks a word's first piece; every token of a word tokenizer starts a word): a *number* holds a
digit; a *name* is a word's first piece whose first letter is a capital; a *continuation* is a
later piece of a word that holds a letter or a digit. While searching:

- a number or a name is written only if the source holds that very token, and the word it starts
  goes on only as one of the source's words that start with the same pieces goes on: "▁Z" "ür"
  "ich" from a source with "Zürich", never "▁Z" "ür" "ch";
- a capitalised word opening a sentence (the first step, or after ``.``, ``!``, ``?``) is also
  allowed if it is a function word ("The", "He", "In": :data:`FUNCTION_WORDS`) or the source holds
  its lowercase form, and then it must end there;
- a number piece inside a word is written only if the source holds it.

Tokens in angle brackets (control tokens, sentencepiece's byte pieces ``<0xC3>``) are no words.
The source ids are read as target ids: the model needs one vocabulary for both
(``data.tokenizer.shared_vocab``).

Copied words outside the vocabulary (extended ids) are source words and always allowed.

:class:`SourceNamesOnly` wraps a model (or an ensemble) so that every search strategy obeys the
constraint without knowing of it: the encoding carries each row's source words, the decoder state
the word each row is writing, and each step's log-probabilities lose what the rules forbid.
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
# closed-class words that may open a sentence capitalised whatever the source says
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its he him his she her they them their we our i you your
in on at by for from with without as of to into onto after before during when while where if but and or
nor so yet however although though because since until unless once both each every many most some
all any no not one such other another many much more also then thus
""".split())


@dataclass
class TokenClasses:
    """Per vocabulary id (V,): what the constraint needs to know of each token."""

    word_start: torch.Tensor  # starts a word (never a special token)
    numbers: torch.Tensor
    names: torch.Tensor
    function_words: torch.Tensor  # names that are capitalised function words
    continuation: torch.Tensor  # a later piece of a word, with a letter or a digit
    sentence_ends: torch.Tensor
    lowercase: torch.Tensor  # the id of the token's lowercase form; -1: none in the vocabulary

    @classmethod
    def of(cls, vocabulary: Vocabulary) -> "TokenClasses":
        pieces = any(token.startswith(WORD_START) for token in vocabulary.itos)
        columns: dict[str, list] = {name: [] for name in ("word_start", "numbers", "names", "function_words",
                                                           "continuation", "sentence_ends", "lowercase")}
        for token in vocabulary.itos:
            # specials, control tokens and byte pieces (<0xC3>) are no words
            special = token in SPECIALS or (token.startswith("<") and token.endswith(">"))
            text = token[len(WORD_START):] if token.startswith(WORD_START) else token
            starts = not special and (not pieces or token.startswith(WORD_START))
            alphanumeric = any(c.isalnum() for c in text)
            name = starts and bool(text) and text[0].isupper()
            columns["word_start"].append(starts)
            columns["numbers"].append(not special and any(c.isdigit() for c in text))
            columns["names"].append(name)
            columns["function_words"].append(name and text.lower() in FUNCTION_WORDS)
            columns["continuation"].append(not special and not starts and alphanumeric)
            columns["sentence_ends"].append(not special and text in SENTENCE_END)
            columns["lowercase"].append(vocabulary.stoi.get(token.lower(), -1) if name else -1)
        return cls(**{name: torch.tensor(values, dtype=torch.long if name == "lowercase" else torch.bool)
                      for name, values in columns.items()})


def source_words(ids: list[int], classes: TokenClasses) -> dict[tuple[int, ...], set[int]]:
    """For a source's ids: each proper prefix (pieces) of each of its words → the pieces that
    continue it in the source."""
    words, current = [], []
    for index in ids:
        if 0 <= index < classes.word_start.size(0) and bool(classes.continuation[index]) and current:
            current.append(index)
        else:
            if current:
                words.append(current)
            current = [index]
    if current:
        words.append(current)
    following: dict[tuple[int, ...], set[int]] = {}
    for word in words:
        for end in range(1, len(word)):
            following.setdefault(tuple(word[:end]), set()).add(word[end])
    return following


@dataclass
class ConstrainedEncoding:
    """The wrapped model's encoding and each row's constraints, selected and repeated together."""

    inner: Any
    banned: torch.Tensor  # (rows, V): numbers and names the source lacks
    banned_opening: torch.Tensor  # (rows, V): those still banned at a sentence's start
    in_source: torch.Tensor  # (rows, V)
    following: list[dict[tuple[int, ...], set[int]]]  # per row: source_words

    def select(self, index: torch.Tensor) -> "ConstrainedEncoding":
        rows = index.tolist()
        return ConstrainedEncoding(self.inner.select(index), self.banned[index], self.banned_opening[index],
                                   self.in_source[index], [self.following[row] for row in rows])

    def repeat(self, times: int) -> "ConstrainedEncoding":
        return ConstrainedEncoding(
            self.inner.repeat(times), self.banned.repeat_interleave(times, 0),
            self.banned_opening.repeat_interleave(times, 0), self.in_source.repeat_interleave(times, 0),
            [following for following in self.following for _ in range(times)],
        )


@dataclass
class ConstrainedState:
    """The wrapped model's state, and the checked word each row is writing: its pieces, () for a
    word that must end (a capitalised opening word), None for a word not checked."""

    inner: Any
    words: list[tuple[int, ...] | None]

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "ConstrainedState":
        return ConstrainedState(self.inner.select(index, same_sources=same_sources),
                                [self.words[row] for row in index.tolist()])


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
        classes, device = self.classes, source.device
        vocabulary = classes.numbers.size(0)
        in_source = torch.zeros(source.size(0), vocabulary + 1, dtype=torch.bool, device=device)
        in_source.scatter_(1, source.clamp(max=vocabulary), True)  # extended ids: the spare column
        in_source = in_source[:, :vocabulary]
        banned = (classes.numbers | classes.names).to(device) & ~in_source
        lowercase = classes.lowercase.to(device)
        lowercase_in_source = (lowercase >= 0) & in_source.gather(1, lowercase.clamp(min=0).expand_as(in_source))
        opening = banned & ~classes.function_words.to(device) & ~lowercase_in_source
        following = [source_words(source[row, : int(lengths[row])].tolist(), classes) for row in range(source.size(0))]
        return ConstrainedEncoding(self.model.encode(source, lengths), banned, opening, in_source, following)

    def init_state(self, encoded: ConstrainedEncoding) -> ConstrainedState:
        return ConstrainedState(self.model.init_state(encoded.inner), [None] * len(encoded.following))

    def decode_step(self, previous: torch.Tensor, encoded: ConstrainedEncoding, state: ConstrainedState):
        classes = self.classes
        vocabulary = classes.numbers.size(0)
        words = self._words(previous.tolist(), encoded, state.words)
        step = self.model.decode_step(previous, encoded.inner, state.inner)
        device = step.log_probs.device
        opening = self._opening(previous)
        banned = torch.where(opening.unsqueeze(1), encoded.banned_opening, encoded.banned).clone()
        checked = [row for row, word in enumerate(words) if word is not None]
        if checked:  # a checked word goes on only as a source word does
            extra = classes.continuation.to(device).expand(len(checked), vocabulary).clone()
            for i, row in enumerate(checked):
                allowed = encoded.following[row].get(words[row], ()) if words[row] else ()
                if allowed:
                    extra[i, list(allowed)] = False
            banned[checked] |= extra
        step.log_probs[:, :vocabulary].masked_fill_(banned, NEG_INF)
        step.state = ConstrainedState(step.state, words)
        return step

    def _opening(self, previous: torch.Tensor) -> torch.Tensor:
        """(rows,) whether the next token opens a sentence: the first step, or after one that ends one."""
        ends = self.classes.sentence_ends.to(previous.device)
        vocabulary = ends.size(0)
        return (previous == BOS_ID) | ((previous < vocabulary) & ends[previous.clamp(max=vocabulary - 1)])

    def _words(self, previous: list[int], encoded: ConstrainedEncoding, words: list) -> list:
        """Each row's checked word after ``previous`` was written."""
        classes = self.classes
        vocabulary = classes.numbers.size(0)
        updated = []
        for row, token in enumerate(previous):
            word = words[row]
            if token >= vocabulary:  # a copied word outside the vocabulary: a source word
                updated.append(None)
            elif bool(classes.continuation[token]):
                updated.append(None if word is None else (word + (token,) if word else ()))
            elif bool(classes.numbers[token] | classes.names[token]):
                updated.append((token,) if bool(encoded.in_source[row, token]) else ())
            else:
                updated.append(None)
        return updated

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)
