"""Which kind of edit an output makes of its source, on their word tokens (runs of letters or
digits, lower-cased): case, spacing and punctuation aside, as a reader compares two sentences."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+")


def word_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def only_deletes(source: str, output: str) -> bool:
    """Whether ``output``'s words are its source's with some left out, in their order: a shorter,
    non-empty subsequence of them (splitting a sentence in two deletes nothing but punctuation and
    may drop a conjunction; it counts, while a word changed, added or moved does not)."""
    kept, words = word_tokens(output), word_tokens(source)
    if not kept or len(kept) >= len(words):
        return False
    remaining = iter(words)
    return all(word in remaining for word in kept)  # `in` consumes the iterator up to each match
