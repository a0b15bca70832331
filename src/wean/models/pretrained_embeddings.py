"""Word vectors from a file (word2vec's or GloVe's text format) as a model's starting embeddings.

The file has one word per line followed by its numbers, separated by spaces; word2vec's files
start with a header line "count dimension", GloVe's do not; either may be gzipped (``.gz``). A
vocabulary entry takes the vector of the same word; of a sentencepiece vocabulary, a piece that
starts a word (``▁word``) takes the vector of ``word`` (the pieces inside words keep their random
start); a word the file lacks keeps its random start too, and so do the special and control
tokens. Loaded once, when a new run starts (``model.embeddings.pretrained``); the weights then
live in the run's checkpoints like any others, and ``model.embeddings.freeze`` keeps them from
training.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from wean.errors import WeanError

WORD_START = "\u2581"  # sentencepiece's mark of a piece that starts a word


@dataclass
class Matched:
    matched: int  # vocabulary entries that took a vector
    missing: int  # entries the file has no vector for (specials excluded)
    examples_missing: list[str]  # a few of them, for the log


def _words(tokens: list[str], specials: int, pieces: bool) -> dict[int, str]:
    """The word each vocabulary entry takes the vector of: every entry after the ``specials``
    but control tokens (``<levenshtein_0.60>``); of sentencepiece ``pieces``, only those that
    start a word, without their mark (a piece inside a word is no word)."""
    words = {}
    for index, token in enumerate(tokens):
        if index < specials or (token.startswith("<") and token.endswith(">")):
            continue
        if not pieces:
            words[index] = token
        elif token.startswith(WORD_START) and len(token) > 1:
            words[index] = token[1:]
    return words


def read_vectors(path: Path, wanted: set[str], dimension: int) -> dict[str, torch.Tensor]:
    """The vectors of the ``wanted`` words in ``path``; a line of another dimension, or with a
    number that is not one, is one error naming the file and line."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    found: dict[str, torch.Tensor] = {}
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                fields = line.rstrip("\n").rstrip(" ").split(" ")
                if number == 1 and len(fields) == 2 and all(field.isdigit() for field in fields):
                    if int(fields[1]) != dimension:
                        raise WeanError(f"{path}:1: vectors of {fields[1]} numbers; model.embedding_size is "
                                        f"{dimension}")
                    continue  # word2vec's header
                if len(fields) < 2:
                    continue  # a blank line
                if len(fields) - 1 != dimension:
                    raise WeanError(f"{path}:{number}: {len(fields) - 1} numbers after the word; "
                                    f"model.embedding_size is {dimension}")
                if fields[0] in wanted and fields[0] not in found:
                    try:
                        found[fields[0]] = torch.tensor([float(value) for value in fields[1:]])
                    except ValueError:
                        raise WeanError(f"{path}:{number}: not a number after the word {fields[0]!r}") from None
    except UnicodeDecodeError as error:
        raise WeanError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except (OSError, EOFError) as error:
        raise WeanError(f"{path}: cannot be read ({error})") from None
    return found


@torch.no_grad()
def load_pretrained(embedding: nn.Embedding, tokens: list[str], path: Path, specials: int, pieces: bool = False
                    ) -> Matched:
    """Copy into ``embedding``'s rows the vectors found in ``path`` for ``tokens``, the
    vocabulary (sentencepiece ``pieces`` or words; see :func:`_words`)."""
    words = _words(tokens, specials, pieces)
    vectors = read_vectors(path, set(words.values()), embedding.embedding_dim)
    missing = []
    for index, word in words.items():
        if word in vectors:
            embedding.weight[index] = vectors[word].to(embedding.weight.dtype)
        else:
            missing.append(tokens[index])
    return Matched(len(words) - len(missing), len(missing), missing[:5])
