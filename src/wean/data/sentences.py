"""Plain text split into sentences, so that a paragraph is simplified sentence by sentence.

NLTK's Punkt sentence tokenizer, given the abbreviations English Wikipedia text uses instead of
parameters learnt from a corpus (which NLTK would have to download): a period after one of them
("Mr.", "approx.", "U.S.") does not end a sentence.
"""

from __future__ import annotations

from functools import lru_cache

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

from wean.data.ptb import ABBREVIATIONS

MORE_ABBREVIATIONS = {"u.s", "u.k", "e.g", "i.e", "etc", "approx", "ca", "c", "cf", "al", "est", "b", "d", "fig"}


@lru_cache(maxsize=1)
def _punkt():
    parameters = PunktParameters()
    parameters.abbrev_types = set(ABBREVIATIONS) | MORE_ABBREVIATIONS
    return PunktSentenceTokenizer(parameters)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each stripped; one sentence, or none for blank text, when there
    is nothing to split."""
    return [sentence.strip() for sentence in _punkt().tokenize(text) if sentence.strip()]
