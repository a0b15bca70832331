"""ROUGE-1, ROUGE-2 and ROUGE-L F1 through rouge-score (Google's re-implementation of
ROUGE-1.5.5), averaged over sentences, the best reference counting where there are several.

Two tokenizations:

``words``
    rouge-score's own: lowercase, keep only ``[a-z0-9]`` runs, Porter-stem words longer than three
    letters, which is ``ROUGE-1.5.5.pl -m``. Used for English, whatever ``--tokenize`` says,
    because ROUGE-1.5.5 numbers are only comparable under its own tokenization.
``char``
    every non-space character is a token: the character-level ROUGE of LCSTS. rouge-score's own
    tokenizer deletes every non-ASCII character and scores Chinese as 0 (huggingface/evaluate#256).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Sequence

from rouge_score import rouge_scorer, tokenizers

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
TOKENIZATIONS = ("words", "char")


class CharacterTokenizer(tokenizers.Tokenizer):
    """One token per non-space character, optionally lowercased (for Latin letters in Chinese text)."""

    def __init__(self, lowercase: bool = True):
        self.lowercase = lowercase

    def tokenize(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        return [char for char in text if not char.isspace()]


def _scorer(tokenization: str, lowercase: bool) -> rouge_scorer.RougeScorer:
    if tokenization == "words":
        return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    if tokenization == "char":
        return rouge_scorer.RougeScorer(list(ROUGE_TYPES), tokenizer=CharacterTokenizer(lowercase))
    raise ValueError(f"unknown ROUGE tokenization {tokenization!r}; choose one of {', '.join(TOKENIZATIONS)}")


def sentence_rouge(
    outputs: Sequence[str],
    reference_streams: Sequence[Sequence[str]],
    tokenization: str = "words",
    lowercase: bool = True,
) -> list[dict[str, float]]:
    """F1 (0-100) of each ROUGE type for each output, against its best reference."""
    scorer = _scorer(tokenization, lowercase)
    per_sentence = []
    for i, output in enumerate(outputs):
        scores = scorer.score_multi([stream[i] for stream in reference_streams], output)
        per_sentence.append({rouge_type: 100.0 * scores[rouge_type].fmeasure for rouge_type in ROUGE_TYPES})
    return per_sentence


def corpus_rouge(
    outputs: Sequence[str],
    reference_streams: Sequence[Sequence[str]],
    tokenization: str = "words",
    lowercase: bool = True,
) -> dict[str, float]:
    """Mean F1 (0-100) of each ROUGE type; per sentence the reference with the best F1 counts."""
    if not outputs:
        raise ValueError("ROUGE needs at least one output")
    per_sentence = sentence_rouge(outputs, reference_streams, tokenization, lowercase)
    return {t: sum(scores[t] for scores in per_sentence) / len(outputs) for t in ROUGE_TYPES}


def signature(tokenization: str, lowercase: bool, references: int) -> dict:
    return {
        "tokenization": tokenization,
        "stemming": "porter" if tokenization == "words" else "none",
        "lowercase": True if tokenization == "words" else lowercase,
        "measure": "f1",
        "references": references,
        "library": f"rouge-score=={version('rouge-score')}",
    }
