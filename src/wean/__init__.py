"""wean: paraphrase-oriented text generation (simplification, headline generation) in PyTorch."""

from wean.evaluation import evaluate, evaluate_files


def load(directory=None, device="auto", quantization="none", kernels="auto", trust_plugins=False):
    """A trained model from its directory, ready to ``generate`` (see :mod:`wean.inference.generator`);
    without one, the pretrained simplifier shipped with wean:

        import wean
        print(wean.load().generate(["A sentence that is rather too complicated."])[0].text)

    ``device``: auto (the GPU if PyTorch sees one), cpu or cuda; ``quantization``: none or int8;
    ``kernels``: onednn or blas, what computes the float32 products (see :mod:`wean.models.kernels`);
    auto, the faster of the two for this model here, measured once (:mod:`wean.models.kernel_choice`).
    ``trust_plugins``: run the plug-in code a model directory's config names (see
    :func:`wean.inference.generator.load`); without it such a directory is refused.
    """
    from wean.inference.generator import load as load_generator  # torch is imported only when a model is used

    return load_generator(directory, device=device, quantization=quantization, kernels=kernels,
                          trust_plugins=trust_plugins)


__all__ = ["evaluate", "evaluate_files", "load"]
