"""Flesch-Kincaid grade level of a corpus, as EASSE computes it.

FKGL = 0.39 * words / sentences + 11.8 * syllables / words - 15.59, clipped at 0, with all counts
summed over the corpus. Every line is lowercased and 13a-tokenized, then split into sentences
with NLTK's Punkt algorithm. EASSE loads Punkt's trained English model, which cannot be
downloaded here; an untrained ``PunktSentenceTokenizer`` gives the same split on this lowercased,
tokenized text (``tests/shared/test_fkgl.py`` pins it to values computed with EASSE).
Words are whitespace tokens, punctuation included; syllables come from the vowel-group heuristic
below.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.metadata import version
from typing import Sequence

from nltk.tokenize.punkt import PunktSentenceTokenizer

from wean.evaluation.normalize import tokenize

_sentence_splitter = PunktSentenceTokenizer()

# The syllable heuristic EASSE uses (it descends from Greg Fast's Perl Lingua::EN::Syllable via
# nltk_contrib's syllables_en.py): count vowel groups after dropping trailing "e"s, then correct
# with the patterns and exceptions below. Kept rule for rule, quirks included, because FKGL values
# are only comparable with the same counter.
_SYLLABLE_EXCEPTIONS = {
    "the": 1, "tottered": 2, "chummed": 1, "peeped": 1, "moustaches": 2, "shamefully": 3,
    "messieurs": 2, "satiated": 4, "sailmaker": 4, "sheered": 1, "disinterred": 3,
    "propitiatory": 6, "bepatched": 2, "particularized": 5, "caressed": 2, "trespassed": 2,
    "sepulchre": 3, "flapped": 1, "hemispheres": 3, "pencilled": 2, "motioned": 2, "poleman": 2,
    "slandered": 2, "sombre": 2, "etc": 4, "sidespring": 2, "mimes": 1, "effaces": 2, "mr": 2,
    "mrs": 2, "ms": 1, "dr": 2, "st": 1, "sr": 2, "jr": 2, "truckle": 2, "foamed": 1,
    "fringed": 2, "clattered": 2, "capered": 2, "mangroves": 2, "suavely": 2, "reclined": 2,
    "brutes": 1, "effaced": 2, "quivered": 2, "h'm": 1, "veriest": 3, "sententiously": 4,
    "deafened": 2, "manoeuvred": 3, "unstained": 2, "gaped": 1, "stammered": 2, "shivered": 2,
    "discoloured": 3, "gravesend": 2, "60": 2, "lb": 1, "unexpressed": 3, "greyish": 2,
    "unostentatious": 5,
}
_ONE_MORE = [re.compile(p) for p in (
    "ia", "riet", "dien", "iu", "io", "ii", "[aeiouy]bl$", "mbl$", "[aeiou]{3}", "^mc", "ism$",
    r"(.)(?!\1)([aeiouy])\2l$", "[^l]llien", "^coad.", "^coag.", "^coal.", "^coax.",
    r"(.)(?!\1)[gq]ua(.)(?!\2)[aeiou]", "dnt$",
)]
_ONE_LESS = [re.compile(p) for p in ("cial", "tia", "cius", "cious", "gui", "ion", "iou", "sia$", ".ely$")]
_VOWEL_GROUP = re.compile("[aeiouy]+")


@lru_cache(maxsize=2**17)
def count_syllables(word: str) -> int:
    """Syllables of one word by the heuristic above (punctuation tokens count 0)."""
    word = word.lower().strip()
    if word in _SYLLABLE_EXCEPTIONS:
        return _SYLLABLE_EXCEPTIONS[word]
    word = word.rstrip("e")
    count = len(_VOWEL_GROUP.findall(word))
    count += sum(1 for pattern in _ONE_MORE if pattern.search(word))
    count -= sum(1 for pattern in _ONE_LESS if pattern.search(word))
    return count


def corpus_fkgl(outputs: Sequence[str]) -> float:
    words = syllables = sentences = 0
    for line in outputs:
        text = " ".join(tokenize(line, True, "13a"))
        for sentence in _sentence_splitter.tokenize(text):
            tokens = sentence.split()
            words += len(tokens)
            syllables += sum(count_syllables(token) for token in tokens)
            sentences += 1
    if sentences == 0 or words == 0:
        return 0.0
    return max(0.0, 0.39 * words / sentences + 11.8 * syllables / words - 15.59)


def signature() -> dict:
    return {
        "lowercase": True,
        "tokenizer": "13a",
        "sentences": "punkt-untrained",
        "syllables": "easse-heuristic",
        "level": "corpus",
        "library": f"wean=={version('wean')},nltk=={version('nltk')}",
    }
