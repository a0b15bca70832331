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
- a checked word ends only where a source word ends: "▁Rot" from "Rotten" must go on as "ten";
- a capitalised word opening a sentence (the first step, or after ``.``, ``!``, ``?``) is also
  allowed if it is a function word ("The", "He", "In": :data:`FUNCTION_WORDS`) or the source holds
  its lowercase form, and then it must end there;
- after a piece with neither letter nor digit ("-", "(", a quote), a capitalised piece is a name
  too, even one that continues a word ("Saint-" "Étienne");
- a number piece inside a word, and a byte piece (``<0xC3>``, part of a character), is written
  only if the source holds it.

Other tokens in angle brackets (specials, control tokens) are no words.
The source ids are read as target ids: the model needs one vocabulary for both
(``data.tokenizer.shared_vocab``).

Copied words outside the vocabulary (extended ids) are source words and always allowed.

:class:`SourceNamesOnly` wraps a model (or an ensemble) so that every search strategy obeys the
constraint without knowing of it: the encoding carries each row's source words, the decoder state
the word each row is writing, and each step's log-probabilities lose what the rules forbid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from wean.data.vocabulary import BOS_ID, EOS_ID, SPECIALS, Vocabulary
from wean.search.wrapper import SearchWrapper

NEG_INF = float("-inf")
END = -1  # in source_words: a word may end here
MAY_END = -2  # first in a checked word that may end at any piece: a common word opening a sentence
WORD_START = "▁"  # sentencepiece's mark of a word's first piece
SENTENCE_END = {".", "!", "?", "...", '."', '?"', '!"', ".'", "?'"}
BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")
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

    numbers: torch.Tensor
    names: torch.Tensor
    function_words: torch.Tensor  # names that are capitalised function words
    continuation: torch.Tensor  # a later piece of a word, with a letter or a digit, or a byte piece
    capitalised: torch.Tensor  # any piece whose first letter is a capital
    punctuation: torch.Tensor  # a piece with neither letter nor digit ("-", "(", '"')
    byte_pieces: torch.Tensor  # sentencepiece's byte pieces of non-ASCII characters (<0xC3>)
    sentence_ends: torch.Tensor
    lowercase: torch.Tensor  # the id of the token's lowercase form; -1: none in the vocabulary
    i_ids: frozenset = frozenset()  # the pronoun "I": may stand alone anywhere

    @classmethod
    def of(cls, vocabulary: Vocabulary) -> "TokenClasses":
        pieces = any(token.startswith(WORD_START) for token in vocabulary.itos)
        columns: dict[str, list] = {name: [] for name in (
            "numbers", "names", "function_words", "continuation", "capitalised", "punctuation",
            "byte_pieces", "sentence_ends", "lowercase")}
        for token in vocabulary.itos:
            byte = int(token[3:5], 16) if BYTE_PIECE.fullmatch(token) else None
            if byte is not None and byte < 0x80:  # an ASCII byte piece is the character it encodes
                token, byte = chr(byte), None
            # specials, control tokens and the other byte pieces are no words
            special = token in SPECIALS or (token.startswith("<") and token.endswith(">"))
            text = token[len(WORD_START):] if token.startswith(WORD_START) else token
            starts = not special and (not pieces or token.startswith(WORD_START))
            alphanumeric = any(c.isalnum() for c in text)
            capitalised = not special and bool(text) and text[0].isupper()
            name = starts and capitalised
            columns["numbers"].append(not special and any(c.isdigit() for c in text))
            columns["names"].append(name)
            columns["function_words"].append(name and text.lower() in FUNCTION_WORDS)
            columns["continuation"].append(byte is not None or (not special and not starts and alphanumeric))
            columns["capitalised"].append(capitalised)
            columns["punctuation"].append(not special and not alphanumeric)  # the bare "▁" too
            columns["byte_pieces"].append(byte is not None)
            columns["sentence_ends"].append(not special and text in SENTENCE_END)
            columns["lowercase"].append(vocabulary.stoi.get(token.lower(), -1) if name else -1)
        i_ids = frozenset(index for index, token in enumerate(vocabulary.itos) if token in ("I", WORD_START + "I"))
        return cls(**{name: torch.tensor(values, dtype=torch.long if name == "lowercase" else torch.bool)
                      for name, values in columns.items()}, i_ids=i_ids)


def source_words(ids: list[int], classes: TokenClasses) -> dict[tuple[int, ...], set[int]]:
    """For a source's ids: each proper prefix (pieces) of each of its words → the pieces that
    continue it in the source, and each whole word → {END}."""
    vocabulary = classes.numbers.size(0)
    words, current = [], []
    for index in ids:
        if (0 <= index < vocabulary and bool(classes.continuation[index]) and current
                and not (current[-1] < vocabulary and bool(classes.punctuation[current[-1]]))):
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
        following.setdefault(tuple(word), set()).add(END)
    return following


ORDINARY, OPENING, AFTER_PUNCTUATION = 0, 1, 2  # where a row is: what its next token may not be


@dataclass
class ConstrainedEncoding:
    """The wrapped model's encoding and each row's constraints, selected and repeated together."""

    inner: Any
    # (3, rows, V): the numbers and names the source lacks, after an ordinary token; those still
    # banned at a sentence's start; those and the capitalised pieces the source lacks, after
    # punctuation
    banned: torch.Tensor
    source_ids: list[frozenset[int]]  # per row: the ids its source row holds (padding's too)
    following: list[dict[tuple[int, ...], set[int]]]  # per row: source_words

    def select(self, index: torch.Tensor) -> "ConstrainedEncoding":
        rows = index.tolist()
        return ConstrainedEncoding(self.inner.select(index), self.banned[:, index],
                                   [self.source_ids[row] for row in rows], [self.following[row] for row in rows])

    def repeat(self, times: int) -> "ConstrainedEncoding":
        return ConstrainedEncoding(
            self.inner.repeat(times), self.banned.repeat_interleave(times, 1),
            [ids for ids in self.source_ids for _ in range(times)],
            [following for following in self.following for _ in range(times)],
        )


@dataclass
class ConstrainedState:
    """The wrapped model's state, and the checked word each row is writing: its pieces, () for a
    word that must end (a capitalised opening word), None for a word not checked."""

    inner: Any
    words: list[tuple[int, ...] | None]
    last: list[int]  # the token before the one just written (BOS_ID at first)

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "ConstrainedState":
        rows = index.tolist()
        return ConstrainedState(self.inner.select(index, same_sources=same_sources),
                                [self.words[row] for row in rows], [self.last[row] for row in rows])


class SourceNamesOnly(SearchWrapper):
    def __init__(self, model: nn.Module, classes: TokenClasses):
        super().__init__(model)
        self.classes = classes
        # the classes as lists, for the checks of each row at each step: a tensor indexed per
        # row costs more than the step's other bookkeeping
        self.flags = {name: getattr(classes, name).tolist() for name in (
            "numbers", "names", "function_words", "continuation", "capitalised", "punctuation", "sentence_ends",
            "lowercase")}

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> ConstrainedEncoding:
        classes, device = self.classes, source.device
        vocabulary = classes.numbers.size(0)
        in_source = torch.zeros(source.size(0), vocabulary + 1, dtype=torch.bool, device=device)
        in_source.scatter_(1, source.clamp(max=vocabulary), True)  # extended ids: the spare column
        in_source = in_source[:, :vocabulary]
        banned = (classes.numbers | classes.names | classes.byte_pieces).to(device) & ~in_source
        lowercase = classes.lowercase.to(device)
        lowercase_in_source = (lowercase >= 0) & in_source.gather(1, lowercase.clamp(min=0).expand_as(in_source))
        opening = banned & ~classes.function_words.to(device) & ~lowercase_in_source
        after_punctuation = banned | (classes.capitalised.to(device) & ~in_source)
        source_ids = [frozenset(row) for row in source.tolist()]
        following = [source_words(source[row, : int(lengths[row])].tolist(), classes) for row in range(source.size(0))]
        masks = [None] * 3
        masks[ORDINARY], masks[OPENING], masks[AFTER_PUNCTUATION] = banned, opening, after_punctuation
        return ConstrainedEncoding(self.model.encode(source, lengths), torch.stack(masks), source_ids, following)

    def init_state(self, encoded: ConstrainedEncoding) -> ConstrainedState:
        rows = len(encoded.following)
        return ConstrainedState(self.model.init_state(encoded.inner), [None] * rows, [BOS_ID] * rows)

    def decode_step(self, previous: torch.Tensor, encoded: ConstrainedEncoding, state: ConstrainedState):
        classes = self.classes
        vocabulary = classes.numbers.size(0)
        tokens = previous.tolist()
        words = self._words(tokens, state.last, encoded, state.words)
        step = self.model.decode_step(previous, encoded.inner, state.inner)
        device = step.log_probs.device
        known = previous.clamp(max=vocabulary - 1)
        opening = (previous == BOS_ID) | ((previous < vocabulary) & classes.sentence_ends.to(device)[known])
        # after "-", "(" or a quote a capitalised piece starts a name, even one that continues a word
        after_punctuation = (previous < vocabulary) & classes.punctuation.to(device)[known] & ~opening
        row_kind = torch.full_like(previous, ORDINARY).masked_fill_(opening, OPENING)
        row_kind.masked_fill_(after_punctuation, AFTER_PUNCTUATION)
        banned = encoded.banned[row_kind, torch.arange(len(tokens), device=device)]
        checked = [row for row, word in enumerate(words) if word is not None]
        if checked:  # a checked word goes on only as a source word does, and ends only where one does
            extra = classes.continuation.to(device).expand(len(checked), vocabulary).clone()
            for i, row in enumerate(checked):
                word = words[row]
                may_end = bool(word) and word[0] == MAY_END
                pieces = word[1:] if may_end else word
                following = encoded.following[row].get(pieces, ()) if pieces else ()
                if following and END not in following and not may_end:  # or the output ends (n-gram blocking)
                    extra[i] = True
                    extra[i, EOS_ID] = False
                allowed = [token for token in following if token != END]
                if allowed:
                    extra[i, allowed] = False
            banned[checked] |= extra
        step.log_probs[:, :vocabulary].masked_fill_(banned, NEG_INF)
        step.state = ConstrainedState(step.state, words, tokens)
        return step

    def _words(self, tokens: list[int], last: list[int], encoded: ConstrainedEncoding, words: list) -> list:
        """Each row's checked word after ``tokens`` were written (``last``: the tokens before)."""
        flags = self.flags
        continuation, capitalised, punctuation = flags["continuation"], flags["capitalised"], flags["punctuation"]
        numbers, names, sentence_ends = flags["numbers"], flags["names"], flags["sentence_ends"]
        function_words, lowercase = flags["function_words"], flags["lowercase"]
        vocabulary = len(continuation)
        updated = []
        for row, token in enumerate(tokens):
            word, source_ids = words[row], encoded.source_ids[row]
            if token >= vocabulary:  # a copied word outside the vocabulary: a source word
                updated.append(None)
            elif continuation[token]:
                if word is not None:
                    updated.append(word + (token,) if word else ())  # (MAY_END, ...) words go on as source words
                elif capitalised[token] and last[row] < vocabulary and punctuation[last[row]]:
                    updated.append((token,) if token in source_ids else ())
                else:
                    updated.append(None)
            elif numbers[token] or names[token]:
                opening = last[row] == BOS_ID or (last[row] < vocabulary and sentence_ends[last[row]])
                common = function_words[token] or (lowercase[token] >= 0 and lowercase[token] in source_ids)
                if token not in source_ids:
                    updated.append(())
                elif common and (opening or token in self.classes.i_ids):  # "In" opening a sentence, not only "Inverness"
                    updated.append((MAY_END, token))
                else:
                    updated.append((token,))
            else:
                updated.append(None)
        return updated

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)
