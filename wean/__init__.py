"""wean: paraphrase-oriented text generation (simplification, headline generation) in PyTorch."""

from wean.evaluation import evaluate, evaluate_files


def load(directory=None):
    """A trained model from its directory, ready to ``generate`` (see :mod:`wean.generator`);
    without one, the pretrained simplifier shipped with wean:

        import wean
        print(wean.load().generate(["A sentence that is rather too complicated."])[0].text)
    """
    from wean.generator import load as load_generator  # torch is imported only when a model is used

    return load_generator(directory)


__all__ = ["evaluate", "evaluate_files", "load"]
