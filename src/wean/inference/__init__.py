"""Inference: text in, text out. The pipeline around search (:mod:`~wean.inference.pipeline`:
tokenize, batch, search, detokenize), what a model directory loads into (:mod:`~wean.inference.loading`:
the model or an ensemble, int8 weights, the shortlist; the generator on top), and what judges or restricts outputs (reranking scorers, forced
scores, names and numbers from the source). This package imports nothing on its own, so that
naming one of its modules stays as light as that module."""
