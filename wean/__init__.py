"""wean: paraphrase-oriented text generation (simplification, headline generation) in PyTorch."""

from wean.evaluation import evaluate, evaluate_files


def load(directory):
    """A trained model from its directory, ready to ``generate`` (see :mod:`wean.generator`)."""
    from wean.generator import load as load_generator  # torch is imported only when a model is used

    return load_generator(directory)


__all__ = ["evaluate", "evaluate_files", "load"]
