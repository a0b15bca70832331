"""Turning a line of text into the tokens a metric counts.

One function, :func:`tokenize`, so that SARI, FKGL and the statistics see exactly the same tokens
for the same options. ``13a`` is sacrebleu's Tokenizer13a (the mteval-v13a rules that EASSE also
uses); ``none`` splits on whitespace, for text that is already tokenized (the ``multi-bleu.perl``
convention); ``char`` makes every non-space character a token, for Chinese.
"""

from __future__ import annotations

from functools import lru_cache

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

TOKENIZERS = ("13a", "none", "char")

_tokenizer_13a = Tokenizer13a()


@lru_cache(maxsize=2**16)
def tokenize(text: str, lowercase: bool, tokenizer: str) -> tuple[str, ...]:
    """Tokens of ``text`` after optional lowercasing (applied first, as in sacrebleu and EASSE)."""
    if lowercase:
        text = text.lower()
    if tokenizer == "13a":
        return tuple(_tokenizer_13a(text).split())
    if tokenizer == "none":
        return tuple(text.split())
    if tokenizer == "char":
        return tuple(char for char in text if not char.isspace())
    raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")
