"""wean: paraphrase-oriented text generation (simplification, headline generation) in PyTorch."""

from wean.evaluation import evaluate, evaluate_files

__all__ = ["evaluate", "evaluate_files"]
