"""log_softmax at one class per row, for a loss that reads nothing else: the picked logit less the
logits' logsumexp, and its gradient in one pass over the logits (the pointer-generator's training
loss, :meth:`wean.models.pointer_generator.PointerGenerator.target_log_probs`)."""

from __future__ import annotations

import torch


class _LogSoftmaxAt(torch.autograd.Function):
    """log_softmax(logits) at one class per row, without the log-softmax written out: the picked
    logit less the logsumexp; its gradient in one pass over the logits (onehot - softmax, times
    the row's gradient) rather than a dense one-hot's and then the log-softmax's."""

    @staticmethod
    def forward(ctx, logits, picked):
        normalizer = torch.logsumexp(logits, dim=-1, keepdim=True)
        ctx.save_for_backward(logits, normalizer, picked)
        return (logits.gather(-1, picked.unsqueeze(-1)) - normalizer).squeeze(-1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        logits, normalizer, picked = ctx.saved_tensors
        grad = grad.unsqueeze(-1)
        grads = (logits - normalizer).exp_().mul_(-grad)
        return grads.scatter_add_(-1, picked.unsqueeze(-1), grad), None


def log_softmax_at(logits: torch.Tensor, picked: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits, -1).gather(-1, picked[..., None])[..., 0]`` up to rounding, with a
    cheaper pass and gradient; (..., classes) float ``logits``, (...) ``picked`` class ids."""
    return _LogSoftmaxAt.apply(logits, picked)
