"""Corpus BLEU through sacrebleu, in two named styles.

``sacrebleu``
    sacrebleu's corpus BLEU with the chosen casing and tokenizer (``13a``, ``none`` or ``char``),
    exponential smoothing and ``force=True``: EASSE's ``corpus_bleu`` with its defaults.
``multi-bleu``
    What Moses' ``multi-bleu.perl -lc`` computes, the setting of the WEAN paper: the text is taken
    as already tokenized (``tokenize='none'``), lowercased, and no smoothing, so a corpus without a
    single matching 4-gram scores 0. It equals ``multi-bleu.perl -lc`` to 1e-6 on the legacy
    TurkCorpus files (tests/test_bleu.py) except for two artefacts of the Perl script that are
    not reproduced: it lowercases bytes, so a capital non-ASCII letter ("Ö") stays capital, and
    its ``chop`` cuts the last character of a reference file that has no final newline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sacrebleu
from sacrebleu.metrics import BLEU

STYLES = ("sacrebleu", "multi-bleu")


@dataclass(frozen=True)
class BleuSettings:
    style: str = "sacrebleu"
    lowercase: bool = True
    tokenizer: str = "13a"

    def resolved(self) -> "BleuSettings":
        """The settings actually used: ``multi-bleu`` fixes casing and tokenization."""
        if self.style == "multi-bleu":
            return BleuSettings("multi-bleu", lowercase=True, tokenizer="none")
        if self.style != "sacrebleu":
            raise ValueError(f"unknown BLEU style {self.style!r}; choose one of {', '.join(STYLES)}")
        return self


def scorer(settings: BleuSettings) -> BLEU:
    """sacreBLEU's BLEU metric configured as ``settings`` say."""
    settings = settings.resolved()
    return BLEU(
        lowercase=settings.lowercase,
        tokenize=settings.tokenizer,
        smooth_method="none" if settings.style == "multi-bleu" else "exp",
        force=True,
    )


def corpus_bleu(
    outputs: Sequence[str], reference_streams: Sequence[Sequence[str]], settings: BleuSettings = BleuSettings()
) -> float:
    """BLEU on the 0-100 scale; ``reference_streams[k][i]`` is reference k of sentence i."""
    return scorer(settings).corpus_score(list(outputs), [list(stream) for stream in reference_streams]).score


def signature(settings: BleuSettings, references: int) -> dict:
    settings = settings.resolved()
    return {
        "style": settings.style,
        "lowercase": settings.lowercase,
        "tokenizer": settings.tokenizer,
        "smooth": "none" if settings.style == "multi-bleu" else "exp",
        "references": references,
        "library": f"sacrebleu=={sacrebleu.__version__}",
    }
