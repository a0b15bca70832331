"""Fidelity statistics: what an output says that its source does not, and what it loses.

SARI and BLEU reward an output for the n-grams it shares with the references; neither notices a
fluent sentence that states a date or a place its source never mentioned. These statistics need
no reference: each compares one output with its own source, on the raw text (cased, untokenized
by wean: names need their capitals). Every one is a share of outputs in %, except
``non_ascii_kept``, a share of characters. Human references add words too, so ``wean evaluate``
also scores each reference stream as if it were a system's output: the references' rate is the
yardstick, not zero.

invented_numbers
    outputs that state a number absent from the source. A number is a run of digits, with ``.``
    or ``,`` between digit groups (``1,000`` and ``1000`` are the same number; ``1990s`` holds
    ``1990``); spelled-out numbers are not counted.
invented_names
    outputs that state a name absent from the source. A name is a word (letters, with ``'`` or
    ``’`` inside) whose first letter is upper case and that does not start a sentence: it is not
    the text's first word, nor the first after ``.``, ``!``, ``?`` or ``…`` (opening quotes and
    brackets between are skipped; in PTB-tokenized text ``-LRB-`` and its kind are brackets and
    a backquote opens a quote). The pronoun "I" is no name. It is absent if no word of the
    source is the same word, compared case-insensitively. A mojibake word ("MÃrich") counts.
    Words after an abbreviation's full stop ("U.S. Army") count as sentence starts, so this
    undercounts a little; on lowercased text it is 0 by construction.
repeated_ngrams
    outputs that repeat a content n-gram more often than their source: some n-gram of 1 to 4
    lowercased word tokens (runs of letters or digits) that starts and ends with a content word
    occurs at least twice in the output and more often than in the source. A content word holds
    a digit or is rarer than Zipf frequency 6 in English (wordfreq): "the", "was", "which",
    "one" are not content words; "year", "film", "paris", "1962" are. (An n-gram that starts or
    ends with a function word is left out: "a datum ... a datum" for the source's "a datum ...
    the datum" repeats nothing.)
copied
    outputs identical to their source once runs of whitespace are one space (on the raw text; the
    stats metric's ``identical_to_source`` compares the scoring tokens, lowercased by default, so
    it also counts an output that differs from its source only in case or spacing of punctuation).
non_ascii_kept
    of the source's non-ASCII characters (counted with repeats, after NFC normalisation), the
    share the output holds too: per sentence, the sum over characters c of min(count in source,
    count in output), summed over the corpus and divided by the source's total. 100 when no
    source holds one.
non_ascii_invented
    outputs that write a non-ASCII character their source does not hold (mojibake such as
    ``Ã``, or a character of another word).

:func:`faults` can also check for unknown words, a fault the fallback may be asked to avoid but
not a statistic here (the references' own typos would set its yardstick): a word of the output,
absent from its source, that English's frequency list (wordfreq) does not hold at all, which is
what word pieces joined wrongly write ("strengthenisted", "Pas-de airCalais").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Sequence

import numpy as np

CONTENT_WORD_ZIPF = 6.0  # wordfreq's Zipf scale: 6 is once per thousand words
MAX_ORDER = 4

# higher is better for none of them but non_ascii_kept; copying is neither good nor bad
DIRECTIONS = {
    "invented_numbers": "lower",
    "invented_names": "lower",
    "repeated_ngrams": "lower",
    "copied": None,
    "non_ascii_kept": "higher",
    "non_ascii_invented": "lower",
}
# the per-sentence statistics, as the columns of :func:`sentence_statistics`
COLUMNS = ("sentences", "invented_numbers", "invented_names", "repeated_ngrams", "copied",
           "non_ascii_kept_chars", "non_ascii_source_chars", "non_ascii_invented")

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PTB_BRACKETS = re.compile(r"-[LR][RSC]B-")  # -LRB- -RRB- -LSB- ...: punctuation in PTB text, not words
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_TOKEN = re.compile(r"[^\W_]+")
_OPENERS = "\"'“‘«([{`"
_SENTENCE_END = ".!?…"


def numbers(text: str) -> set[str]:
    return {match.replace(",", "") for match in _NUMBER.findall(text)}


def names(text: str) -> list[str]:
    """The capitalised words of ``text`` that do not start a sentence, in order."""
    text = _PTB_BRACKETS.sub(" ", text)
    found = []
    for match in _WORD.finditer(text):
        word = match.group()
        if not word[0].isupper() or word == "I" or word.startswith(("I'", "I’")):
            continue
        before = text[: match.start()].rstrip().rstrip(_OPENERS).rstrip()
        if before and before[-1] not in _SENTENCE_END:
            found.append(word)
    return found


def _words(text: str) -> list[str]:
    """The words of ``text`` (PTB bracket tokens are punctuation, not words)."""
    return _WORD.findall(_PTB_BRACKETS.sub(" ", text))


def invented_numbers(source: str, output: str) -> set[str]:
    return numbers(output) - numbers(source)


def invented_names(source: str, output: str) -> list[str]:
    source_words = {word.lower() for word in _words(source)}
    return [name for name in names(output) if name.lower() not in source_words]


def unknown_words(source: str, output: str) -> list[str]:
    """The words of ``output``, in order, that its source lacks (compared case-insensitively) and
    that wordfreq's English list does not hold; a word with an apostrophe is unknown only where
    one of its parts is ("tolerance's" is known wherever "tolerance" is)."""
    from wordfreq import zipf_frequency  # deferred: 0.15 s to import, and only these two checks need it

    def parts(word: str) -> list[str]:
        return [part for part in word.lower().replace("’", "'").split("'") if part]

    source_parts = {part for word in _words(source) for part in parts(word)}
    return [word for word in _words(output)
            if any(part not in source_parts and zipf_frequency(part, "en") == 0 for part in parts(word))]


@lru_cache(maxsize=65536)
def is_content_word(token: str) -> bool:
    from wordfreq import zipf_frequency  # deferred: 0.15 s to import, and only these two checks need it

    return any(ch.isdigit() for ch in token) or zipf_frequency(token, "en") < CONTENT_WORD_ZIPF


def _content_ngrams(tokens: list[str]) -> Counter:
    counts = Counter()
    for n in range(1, MAX_ORDER + 1):
        for i in range(len(tokens) - n + 1):
            gram = tuple(tokens[i:i + n])
            if is_content_word(gram[0]) and is_content_word(gram[-1]):
                counts[gram] += 1
    return counts


def repeated_ngrams(source: str, output: str) -> list[tuple[str, ...]]:
    """The content n-grams that ``output`` repeats more often than ``source`` holds them."""
    source_counts = _content_ngrams(_TOKEN.findall(source.lower()))
    return [gram for gram, count in _content_ngrams(_TOKEN.findall(output.lower())).items()
            if count > 1 and count > source_counts[gram]]


def _non_ascii(text: str) -> Counter:
    return Counter(ch for ch in unicodedata.normalize("NFC", text) if ord(ch) > 127)


def faults(source: str, output: str, words: bool = False) -> dict[str, list[str]]:
    """What ``output`` says that ``source`` does not, and the characters it loses: for each way an
    output can fail (invented numbers and names, repeated n-grams, non-ASCII characters invented,
    and the source's non-ASCII characters lost, which mangles a word as often as it drops one), the
    words or characters that fail it (and ``empty`` for an output with no word where its source
    has some); empty for an output true to its source by these checks. With ``words``, its
    unknown words too (:func:`unknown_words`)."""
    source_chars, output_chars = _non_ascii(source), _non_ascii(output)
    found = {
        "invented_numbers": sorted(invented_numbers(source, output)),
        "invented_names": invented_names(source, output),
        "repeated_ngrams": [" ".join(gram) for gram in repeated_ngrams(source, output)],
        "non_ascii_invented": sorted(set(output_chars) - set(source_chars)),
        "non_ascii_lost": sorted(ch for ch, count in source_chars.items() if output_chars[ch] < count),
        # an output with no word left says nothing of what its source said
        "empty": ["no word left"] if _TOKEN.search(source) and not _TOKEN.search(output) else [],
        "unknown_words": unknown_words(source, output) if words else [],
    }
    return {statistic: words for statistic, words in found.items() if words}


def sentence_statistics(sources: Sequence[str], outputs: Sequence[str]) -> np.ndarray:
    """One row per sentence, the columns of ``COLUMNS``: summed over any set of sentences, they
    give that set's statistics (:func:`from_statistics`), so a paired bootstrap resamples rows."""
    rows = []
    for source, output in zip(sources, outputs, strict=True):
        source_chars, output_chars = _non_ascii(source), _non_ascii(output)
        rows.append([
            1,
            bool(invented_numbers(source, output)),
            bool(invented_names(source, output)),
            bool(repeated_ngrams(source, output)),
            " ".join(source.split()) == " ".join(output.split()),
            sum(min(count, output_chars[ch]) for ch, count in source_chars.items()),
            sum(source_chars.values()),
            any(ch not in source_chars for ch in output_chars),
        ])
    return np.asarray(rows, dtype=np.int64).reshape(-1, len(COLUMNS))


def from_statistics(summed: Sequence[int]) -> dict[str, float]:
    """The statistics of the sentences whose rows sum to ``summed``."""
    column = dict(zip(COLUMNS, (int(v) for v in summed)))
    count = column["sentences"] or 1  # no sentence: every share 0
    shares = {key: 100.0 * column[key] / count
              for key in ("invented_numbers", "invented_names", "repeated_ngrams", "copied")}
    kept, total = column["non_ascii_kept_chars"], column["non_ascii_source_chars"]
    shares["non_ascii_kept"] = 100.0 * kept / total if total else 100.0
    shares["non_ascii_invented"] = 100.0 * column["non_ascii_invented"] / count
    return shares


def fidelity(sources: Sequence[str], outputs: Sequence[str]) -> dict[str, float]:
    return from_statistics(sentence_statistics(sources, outputs).sum(0))
