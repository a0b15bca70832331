"""Paired bootstrap resampling (Koehn, EMNLP 2004): is the score difference between two systems
on one test set larger than resampling its sentences would produce?

Corpus BLEU and corpus SARI are functions of per-sentence counts summed over the corpus, and
ROUGE F1 is a mean of sentence scores, so one resample is a row selection and a sum, and the
corpus score is recomputed from the sum: the same test as sacreBLEU's ``--paired-bs`` (and Moses'
``bootstrap-hypothesis-difference-significance.pl``), extended to SARI and ROUGE. BLEU's counts
come from sacreBLEU itself, SARI's from :class:`~wean.evaluation.sari.SariStatistics`, ROUGE's
from rouge-score. The output statistics of :mod:`wean.evaluation.stats` that claims rest on
(Kiyono et al.'s odd-generation counts, the share of outputs left unchanged) are sums over
sentences too, and are tested the same way. Tests pin each: the rows of the whole test set give
exactly the corpus score.

This measures test-set sampling noise only; a second training seed measures another noise
source, which this does not replace.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np

from wean.errors import WeanError
from wean.evaluation import bleu, rouge
from wean.evaluation.evaluate import EvaluationSettings, MetricInputs
from wean.evaluation.normalize import tokenize
from wean.evaluation.sari import SariStatistics, tokenized
from wean.evaluation.stats import odd_generation
from wean.registry import METRICS
from wean.textio import check_same_length

# the output statistics that have a paired test: each a sum (or share) of per-sentence values
OUTPUT_STATISTICS = ("repeated_tokens", "length_shortfall", "identical_to_source")
PAIRED_METRICS = ("sari", "bleu", "multi-bleu", "rouge") + OUTPUT_STATISTICS


def _row_metrics() -> dict[str, object]:
    """The registered metrics that give per-sentence rows (fidelity, a user's own), by name."""
    return {name: METRICS.get(name) for name in METRICS.names() if METRICS.get(name).statistics is not None}


def paired_metrics() -> tuple[str, ...]:
    """What ``wean compare --metrics`` may name: the metrics above, and each registered metric
    with per-sentence rows, by its name (all its keys) or by one of its keys."""
    rows = _row_metrics()
    return PAIRED_METRICS + tuple(rows) + tuple(key for m in rows.values() for key in m.keys if key not in rows)


@dataclass(frozen=True)
class PairedComparison:
    """System A against system B on one metric: ``difference`` is A - B on the whole test set,
    [``low``, ``high``] the central 95 % of the resampled differences, ``p_value`` the share of
    resamples whose difference, centred on their mean, is at least as far from 0 as the observed one."""

    metric: str
    score_a: float
    score_b: float
    difference: float
    low: float
    high: float
    p_value: float
    samples: int

    def as_dict(self) -> dict:
        return asdict(self)


def _sari_statistics(sources, outputs, reference_streams, variant, lowercase, tokenizer) -> np.ndarray:
    rows = []
    for source, output, references in zip(*tokenized(sources, outputs, reference_streams, variant, lowercase, tokenizer)):
        statistics = SariStatistics()
        statistics.update(source, output, references)
        rows.append(statistics.as_row())
    return np.asarray(rows, dtype=np.int64)


def _scorer(metric: str, sources, reference_streams, sari_variant: str, lowercase: bool, tokenizer: str,
            reverse_model: str | None = None, plain_text: bool | None = None):
    """(per-sentence counts of some outputs, corpus score from summed counts) for ``metric``."""
    if metric == "sari":
        if sari_variant == "xu2016":
            raise WeanError("the xu2016 SARI variant is a mean of sentence scores; compare with another variant")
        if sources is None:
            raise WeanError("metric 'sari' needs a source file")
        deletion = "precision" if sari_variant == "del-precision" else "f1"

        def counts(outputs):
            return _sari_statistics(sources, outputs, reference_streams, sari_variant, lowercase, tokenizer)

        return counts, lambda summed: SariStatistics.from_row(summed).scores(deletion=deletion).sari
    if metric in ("bleu", "multi-bleu"):
        style = "multi-bleu" if metric == "multi-bleu" else "sacrebleu"
        sacrebleu_metric = bleu.scorer(bleu.BleuSettings(style, lowercase, tokenizer))
        references = [list(stream) for stream in reference_streams]

        # sacreBLEU's own sufficient statistics, as its --paired-bs uses them
        def counts(outputs):
            return np.asarray(sacrebleu_metric._extract_corpus_statistics(list(outputs), references), dtype=np.int64)

        return counts, lambda summed: sacrebleu_metric._compute_score_from_stats(summed.tolist()).score
    if metric in rouge.ROUGE_TYPES:
        tokenization = "char" if tokenizer == "char" else "words"

        def counts(outputs):
            per_sentence = rouge.sentence_rouge(outputs, reference_streams, tokenization, lowercase)
            return np.asarray([[1.0, scores[metric]] for scores in per_sentence])  # (count, F1): mean = sum / count

        return counts, lambda summed: summed[1] / summed[0]
    if metric in OUTPUT_STATISTICS:
        return _output_statistic(metric, sources, reference_streams, lowercase, tokenizer)
    for name, registered in _row_metrics().items():
        if metric in registered.keys:
            return _row_metric(name, registered, metric, sources, reference_streams, lowercase, tokenizer, reverse_model,
                               plain_text)
    raise WeanError(f"no paired test for metric {metric!r}; choose from {', '.join(paired_metrics())}")


def _row_metric(name: str, registered, key: str, sources, reference_streams, lowercase: bool, tokenizer: str,
                reverse_model: str | None, plain_text: bool | None):
    """The scorer of ``key`` of a registered metric that gives per-sentence rows."""
    if registered.needs_source and sources is None:
        raise WeanError(f"metric {name!r} needs a source file")
    settings = EvaluationSettings((name,), "default", lowercase, tokenizer, reverse_model=reverse_model,
                                  plain_text=plain_text)

    def counts(outputs):
        return np.asarray(registered.statistics(outputs, MetricInputs(outputs, sources, list(reference_streams), settings)))

    return counts, lambda summed: registered.from_statistics(summed)[key]


def _output_statistic(metric: str, sources, reference_streams, lowercase: bool, tokenizer: str):
    """The scorer of one of OUTPUT_STATISTICS, on the tokens ``wean evaluate``'s stats use."""
    if metric == "identical_to_source":
        if sources is None:
            raise WeanError("metric 'identical_to_source' needs a source file")
        source_tokens = [tokenize(line, lowercase, tokenizer) for line in sources]

        def counts(outputs):
            return np.asarray([[1, tokenize(o, lowercase, tokenizer) == s] for o, s in zip(outputs, source_tokens)])

        return counts, lambda summed: 100.0 * summed[1] / summed[0]
    references = [[tokenize(stream[i], lowercase, tokenizer) for stream in reference_streams]
                  for i in range(len(reference_streams[0]))]

    def counts(outputs):
        odd = odd_generation([tokenize(o, lowercase, tokenizer) for o in outputs], references)
        return np.asarray(odd.repeats if metric == "repeated_tokens" else odd.shortfall)[:, None]

    return counts, lambda summed: float(summed[0])


def bootstrap_p_value(resampled: np.ndarray, observed):
    """The share of resampled differences (rows; columns: several measures at once) that, centred
    on their mean, are at least as far from 0 as the observed one, counting the observed once."""
    centred = np.abs(resampled - resampled.mean(axis=0))
    # >= so that a system compared with itself is never "significant" (p = 1)
    return (np.sum(centred >= np.abs(observed) - 1e-9, axis=0) + 1) / (len(resampled) + 1)


def _compare(
    metric: str, counts_a: np.ndarray, counts_b: np.ndarray, score: Callable, samples: int, seed: int
) -> PairedComparison:
    score_a, score_b = score(counts_a.sum(0)), score(counts_b.sum(0))
    rows = np.random.default_rng(seed).integers(0, len(counts_a), size=(samples, len(counts_a)))
    differences = np.array([score(counts_a[r].sum(0)) - score(counts_b[r].sum(0)) for r in rows])
    observed = score_a - score_b
    p_value = bootstrap_p_value(differences, observed)
    low, high = np.percentile(differences, [2.5, 97.5])
    return PairedComparison(metric, score_a, score_b, observed, float(low), float(high), float(p_value), samples)


def paired_bootstrap(
    outputs_a: Sequence[str],
    outputs_b: Sequence[str],
    sources: Sequence[str] | None,
    reference_streams: Sequence[Sequence[str]],
    metrics: Sequence[str] = ("sari", "bleu"),
    sari_variant: str = "default",
    lowercase: bool = True,
    tokenizer: str = "13a",
    samples: int = 1000,
    seed: int = 1,
    reverse_model: str | None = None,
    plain_text: bool | None = None,
) -> list[PairedComparison]:
    """Compare ``outputs_a`` with ``outputs_b`` on each metric; ``reference_streams[k][i]`` is
    reference k of sentence i. Both systems see the same resampled sentences. ``reverse_model``
    and ``plain_text``: as :class:`wean.evaluation.EvaluationSettings`, for the metric reverse."""
    if samples < 1:
        raise WeanError(f"--samples must be at least 1, not {samples}")
    if not reference_streams:
        raise WeanError("a paired test needs references")
    streams = [("sources", sources)] if sources is not None else []
    streams += [(f"references {k}", stream) for k, stream in enumerate(reference_streams)]
    check_same_length(streams + [("outputs A", outputs_a), ("outputs B", outputs_b)])
    if not outputs_a:
        raise WeanError("nothing to compare: there are no outputs")
    results = []
    rows = _row_metrics()
    metrics = [name for metric in metrics for name in (
        rouge.ROUGE_TYPES if metric == "rouge" else list(rows[metric].keys) if metric in rows else (metric,))]
    for metric in metrics:
        counts, score = _scorer(metric, sources, reference_streams, sari_variant, lowercase, tokenizer, reverse_model,
                                plain_text)
        results.append(_compare(metric, counts(outputs_a), counts(outputs_b), score, samples, seed))
    return results
