"""SARI (Xu et al., TACL 2016): how well an output adds, keeps and deletes n-grams, against the
source and several references.

Four variants, because papers cite all of them and they differ by up to 14 points on the same
outputs (EASSE, its legacy mode, the original Joshua/Java SARI and Xu et al.'s sentence script):

``default``
    EASSE's corpus SARI (``easse.sari.corpus_sari`` with its defaults). Source, output and
    references are lowercased and 13a-tokenized; n-gram counts (n = 1..4) are summed over the
    whole corpus before precision and recall are taken; F1 per order for add, keep and delete,
    averaged over the orders ("macro", as the Java implementation in Joshua).
``del-precision``
    The same with deletion scored by precision instead of F1 (EASSE ``use_f1_for_deletion=False``;
    the definition in the SARI paper).
``legacy``
    EASSE ``legacy=True``, which reproduces older papers' numbers (DRESS-LS 37.27, ACCESS 41.87):
    nothing is lowercased, the source is only split on whitespace and the output and references
    are tokenized. Meant for the already lowercased, tokenized legacy TurkCorpus files.
``xu2016``
    ``SARIsent`` of the original release (cocoxu/simplification ``SARI.py``) averaged over
    sentences: fractional per-n-gram credit for keep and delete, deletion by precision.

How the counts are taken, per sentence and n-gram order, with S, O, R the n-gram counts of the
source, the output and all references pooled, and r the number of references:

* add: the *sets* O - S (added by the output) and R - S (added by the references); correct are
  the n-grams of O - S that occur in R.
* keep: counts weighted by r so that the output is compared with r references at once:
  kept by the output min(rO, rS), kept by the references min(R, rS), correct the minimum of both.
* delete: deleted by the output max(rS - rO, 0), by the references max(rS - R, 0), correct the
  minimum of both.

Precision or recall with a zero denominator is 0, and so is F1 when both are 0. Scores are on
the 0-100 scale. Written here because no maintained package provides EASSE's SARI; it is pinned by
tests to values computed with EASSE itself (``tests/shared/test_sari.py``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from wean.evaluation.normalize import tokenize

NGRAM_ORDER = 4
VARIANTS = ("default", "legacy", "del-precision", "xu2016")

Tokens = Sequence[str]


@dataclass(frozen=True)
class SariScores:
    """The three operation scores of SARI, each on the 0-100 scale; ``sari`` is their mean."""

    add: float
    keep: float
    delete: float

    @property
    def sari(self) -> float:
        return (self.add + self.keep + self.delete) / 3

    def as_dict(self) -> dict[str, float]:
        return {"sari": self.sari, "sari_add": self.add, "sari_keep": self.keep, "sari_del": self.delete}


@dataclass
class _OperationCounts:
    """Correct, output and reference totals of one operation, one entry per n-gram order."""

    correct: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    output: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    reference: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)

    def record(self, order: int, correct: int, output: int, reference: int) -> None:
        self.correct[order] += correct
        self.output[order] += output
        self.reference[order] += reference


@dataclass
class SariStatistics:
    """n-gram statistics summed over the sentences seen so far."""

    add: _OperationCounts = field(default_factory=_OperationCounts)
    keep: _OperationCounts = field(default_factory=_OperationCounts)
    delete: _OperationCounts = field(default_factory=_OperationCounts)

    def update(self, source: Tokens, output: Tokens, references: Sequence[Tokens]) -> None:
        """Add the counts of one sentence."""
        weight = len(references)
        for order in range(NGRAM_ORDER):
            n = order + 1
            source_counts = ngram_counts(source, n)
            output_counts = ngram_counts(output, n)
            reference_counts = Counter()
            for reference in references:
                reference_counts.update(ngram_counts(reference, n))

            added_by_output = output_counts.keys() - source_counts.keys()
            added_by_references = reference_counts.keys() - source_counts.keys()
            self.add.record(
                order,
                correct=len(added_by_output & reference_counts.keys()),
                output=len(added_by_output),
                reference=len(added_by_references),
            )

            source_weighted = _scaled(source_counts, weight)
            output_weighted = _scaled(output_counts, weight)
            kept_by_output = output_weighted & source_weighted
            kept_by_references = reference_counts & source_weighted
            self.keep.record(
                order,
                correct=_total(kept_by_output & kept_by_references),
                output=_total(kept_by_output),
                reference=_total(kept_by_references),
            )

            deleted_by_output = source_weighted - output_weighted
            deleted_by_references = source_weighted - reference_counts
            self.delete.record(
                order,
                correct=_total(deleted_by_output & deleted_by_references),
                output=_total(deleted_by_output),
                reference=_total(deleted_by_references),
            )

    def as_row(self) -> list[int]:
        """The 36 counts in one row (operation x correct/output/reference x n-gram order): rows of
        sentences sum to the row of their corpus, which is what paired resampling needs."""
        return [value for counts in (self.add, self.keep, self.delete)
                for values in (counts.correct, counts.output, counts.reference) for value in values]

    @classmethod
    def from_row(cls, row: Sequence[int]) -> "SariStatistics":
        row = [int(value) for value in row]
        parts = [row[i : i + NGRAM_ORDER] for i in range(0, len(row), NGRAM_ORDER)]
        return cls(*(_OperationCounts(*parts[i : i + 3]) for i in range(0, len(parts), 3)))

    def scores(self, deletion: str = "f1") -> SariScores:
        """Macro-averaged operation scores; ``deletion`` is ``"f1"`` or ``"precision"``."""
        add = sum(_f1(*_precision_recall(self.add, order)) for order in range(NGRAM_ORDER))
        keep = sum(_f1(*_precision_recall(self.keep, order)) for order in range(NGRAM_ORDER))
        delete = 0.0
        for order in range(NGRAM_ORDER):
            precision, recall = _precision_recall(self.delete, order)
            delete += _f1(precision, recall) if deletion == "f1" else precision
        scale = 100.0 / NGRAM_ORDER
        return SariScores(add=add * scale, keep=keep * scale, delete=delete * scale)


def ngram_counts(tokens: Tokens, n: int) -> Counter:
    return Counter(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _scaled(counts: Counter, factor: int) -> Counter:
    return Counter({key: value * factor for key, value in counts.items()})


def _total(counts: Counter) -> int:
    return sum(counts.values())


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def _precision_recall(counts: _OperationCounts, order: int) -> tuple[float, float]:
    return (
        _ratio(counts.correct[order], counts.output[order]),
        _ratio(counts.correct[order], counts.reference[order]),
    )


def _f1(precision: float, recall: float) -> float:
    return _ratio(2 * precision * recall, precision + recall)


# --- the original sentence-level definition (variant "xu2016") ---------------------------------


def _xu2016_order_scores(
    source: Counter, output: Counter, references: Counter, weight: int
) -> tuple[float, float, float]:
    """(add F1, keep F1, delete precision) of SARIsent for one n-gram order."""
    source_weighted = _scaled(source, weight)
    output_weighted = _scaled(output, weight)

    kept = source_weighted & output_weighted
    kept_correctly = kept & references
    keepable = source_weighted & references
    keep_precision = _ratio(sum(kept_correctly[g] / kept[g] for g in kept_correctly), len(kept))
    keep_recall = _ratio(sum(kept_correctly[g] / keepable[g] for g in kept_correctly), len(keepable))

    deleted = source_weighted - output_weighted
    deleted_correctly = deleted - references
    delete_precision = _ratio(sum(deleted_correctly[g] / deleted[g] for g in deleted_correctly), len(deleted))

    added = output.keys() - source.keys()
    added_correctly = added & references.keys()
    addable = references.keys() - source.keys()
    add_f1 = _f1(_ratio(len(added_correctly), len(added)), _ratio(len(added_correctly), len(addable)))
    return add_f1, _f1(keep_precision, keep_recall), delete_precision


def _xu2016_sentence(source: Tokens, output: Tokens, references: Sequence[Tokens]) -> SariScores:
    add = keep = delete = 0.0
    for n in range(1, NGRAM_ORDER + 1):
        pooled = Counter()
        for reference in references:
            pooled.update(ngram_counts(reference, n))
        order_add, order_keep, order_delete = _xu2016_order_scores(
            ngram_counts(source, n), ngram_counts(output, n), pooled, len(references)
        )
        add, keep, delete = add + order_add, keep + order_keep, delete + order_delete
    scale = 100.0 / NGRAM_ORDER
    return SariScores(add=add * scale, keep=keep * scale, delete=delete * scale)


# --- public functions ----------------------------------------------------------------------------


def effective_lowercase(variant: str, lowercase: bool) -> bool:
    """EASSE's legacy variant never lowercases, whatever it is asked."""
    return False if variant == "legacy" else lowercase


def tokenized(
    sources: Sequence[str],
    outputs: Sequence[str],
    reference_streams: Sequence[Sequence[str]],
    variant: str,
    lowercase: bool,
    tokenizer: str,
) -> tuple[list[Tokens], list[Tokens], list[list[Tokens]]]:
    """Token lists per sentence; references regrouped per sentence."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown SARI variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    lowercase = effective_lowercase(variant, lowercase)
    if variant == "legacy":
        source_tokens = [tuple(source.split()) for source in sources]
    else:
        source_tokens = [tokenize(source, lowercase, tokenizer) for source in sources]
    output_tokens = [tokenize(output, lowercase, tokenizer) for output in outputs]
    references = [
        [tokenize(stream[i], lowercase, tokenizer) for stream in reference_streams] for i in range(len(outputs))
    ]
    return source_tokens, output_tokens, references


def corpus_sari(
    sources: Sequence[str],
    outputs: Sequence[str],
    reference_streams: Sequence[Sequence[str]],
    variant: str = "default",
    lowercase: bool = True,
    tokenizer: str = "13a",
) -> SariScores:
    """Corpus SARI of ``outputs``; ``reference_streams[k][i]`` is reference k of sentence i."""
    if not outputs:
        raise ValueError("SARI needs at least one output")
    if not reference_streams:
        raise ValueError("SARI needs at least one reference")
    source_tokens, output_tokens, references = tokenized(
        sources, outputs, reference_streams, variant, lowercase, tokenizer
    )
    if variant == "xu2016":
        per_sentence = [_xu2016_sentence(*triple) for triple in zip(source_tokens, output_tokens, references)]
        count = len(per_sentence)
        return SariScores(
            add=sum(s.add for s in per_sentence) / count,
            keep=sum(s.keep for s in per_sentence) / count,
            delete=sum(s.delete for s in per_sentence) / count,
        )
    statistics = SariStatistics()
    for triple in zip(source_tokens, output_tokens, references):
        statistics.update(*triple)
    return statistics.scores(deletion="precision" if variant == "del-precision" else "f1")


def sentence_sari(
    source: str,
    output: str,
    references: Sequence[str],
    variant: str = "default",
    lowercase: bool = True,
    tokenizer: str = "13a",
) -> SariScores:
    """SARI of one sentence: the corpus definition applied to a corpus of one sentence.

    For ``default`` this is EASSE's ``corpus_sari`` on one sentence (EASSE has no sentence
    function); ``del-precision`` is EASSE's former ``sentence_sari``; ``xu2016`` is ``SARIsent``.
    """
    return corpus_sari([source], [output], [[reference] for reference in references], variant, lowercase, tokenizer)
