"""Evaluation: SARI, BLEU, ROUGE, FKGL and output statistics, with named benchmarks."""

from wean.evaluation.benchmarks import BENCHMARKS, Benchmark, data_root, get_benchmark
from wean.evaluation.evaluate import METRICS, Evaluation, EvaluationSettings, evaluate, evaluate_files
from wean.evaluation.sari import SariScores, corpus_sari, sentence_sari

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "data_root",
    "get_benchmark",
    "METRICS",
    "Evaluation",
    "EvaluationSettings",
    "evaluate",
    "evaluate_files",
    "SariScores",
    "corpus_sari",
    "sentence_sari",
]
