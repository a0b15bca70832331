"""Evaluation: SARI, BLEU, ROUGE, FKGL and output statistics, with named benchmarks."""

from wean.data.root import data_root
from wean.evaluation import fidelity
from wean.evaluation.benchmarks import BENCHMARKS, Benchmark, get_benchmark
from wean.evaluation.evaluate import (
    METRICS, Evaluation, EvaluationSettings, MetricInputs, MetricResult, evaluate, evaluate_files, metric,
)
from wean.evaluation.sari import SariScores, corpus_sari, sentence_sari
from wean.registry import score_key

__all__ = [
    "BENCHMARKS",
    "fidelity",
    "Benchmark",
    "data_root",
    "get_benchmark",
    "METRICS",
    "Evaluation",
    "EvaluationSettings",
    "evaluate",
    "evaluate_files",
    "metric",
    "MetricInputs",
    "MetricResult",
    "score_key",
    "SariScores",
    "corpus_sari",
    "sentence_sari",
]
