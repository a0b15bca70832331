"""Which kernels compute a model's float32 matrix products on the CPU (``--kernels`` in
inference, ``training.kernels`` in training; the default, ``auto``, measures which is faster for
a model here: :mod:`wean.models.kernel_choice`).

``onednn``: the products of every linear layer, of the output layer over the
vocabulary and of the decoder's LSTM written out in training go through oneDNN's linear
(``torch.ops.mkldnn._linear_pointwise``, PyTorch's own binding of it). PyTorch's eager product
calls MKL's sgemm, which on the AMD CPUs measured here runs an output layer's product at about 55
GFLOP/s on one core where oneDNN runs it at about 94 (results/bench-kernels). In training, the
gradient of a product's input goes through oneDNN too; the gradient of its weight stays with MKL,
which is faster there. Where a decoder's loop multiplies by the same weight at every step, that
weight's gradient is one product over all steps (:class:`DeferredWeightGradient`); with the loss
taken from the logits in one step (wean.training.criterion), an update of the peers' model runs
1.15x faster (results/bench-peers-levers). The two libraries sum in different orders, so
results differ in their last bits (a few 1e-6 on logits of about ±1): in search an output can
change only where two hypotheses tie that closely: none of the TurkCorpus and WikiSmall test
outputs of the simplifier measured in results/bench-kernels does.
``blas``: PyTorch's own products and autograd's own gradients, the floats of the tables' runs
(results/lib/converge.yaml).
``blas-fused``: PyTorch's own products on onednn's training path (the weights' gradients deferred,
the loss taken from the logits, each the same up to rounding). On a 2-core Xeon with AMX, where
MKL's products beat oneDNN's, an update of the peers' model runs about 1.06x faster than under
``blas`` (results/bench-peers-xeon). In inference it is ``blas``, float for float.

Elsewhere (a GPU, float64, under autocast, with ``torch.backends.mkldnn`` off, a PyTorch without
oneDNN) ``onednn`` falls back to PyTorch's product, and ``blas-fused`` does off the CPU, in float64
and under autocast; the trainer still takes the loss from the logits under both. Gradients of
gradients are refused.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn
from torch.nn import functional as F

from wean.config import KERNELS
from wean.errors import WeanError


def _onednn_available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


ONEDNN = _onednn_available()


def _autocast_on_cpu() -> bool:
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # PyTorch before 2.4 takes no device
        return torch.is_autocast_cpu_enabled()


FUSED = ("onednn", "blas-fused")  # the kernels that take the training path of this module's functions


def applies(x: torch.Tensor, weight: torch.Tensor, kernels: str) -> bool:
    """Whether ``kernels`` computes ``x``'s product with ``weight`` by this module's functions
    (oneDNN's product, or the fused training path) rather than by ``F.linear``."""
    if kernels not in FUSED or x.device.type != "cpu" or _autocast_on_cpu():
        return False
    if x.dtype != torch.float32 or weight.dtype != torch.float32:
        return False
    return kernels == "blas-fused" or (ONEDNN and torch.backends.mkldnn.enabled)


def _product(rows: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, kernels: str) -> torch.Tensor:
    if kernels == "onednn":
        return torch.ops.mkldnn._linear_pointwise(rows, weight, bias, "none", [], "")
    return rows.mm(weight.t()) if bias is None else torch.addmm(bias, rows, weight.t())


class _LinearFunction(torch.autograd.Function):
    """rows (N, K) x weight (M, K)^T + bias, its input's gradient by the same kernels."""

    @staticmethod
    def forward(ctx, rows, weight, bias, kernels):
        ctx.save_for_backward(rows, weight)
        ctx.has_bias, ctx.kernels = bias is not None, kernels
        return _product(rows, weight, bias, kernels)

    @staticmethod
    @torch.autograd.function.once_differentiable  # oneDNN's product has no derivative of its own
    def backward(ctx, grad):
        rows, weight = ctx.saved_tensors
        grad_rows = _product(grad, weight.t(), None, ctx.kernels) if ctx.needs_input_grad[0] else None
        grad_weight = grad.t().mm(rows) if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_rows, grad_weight, grad_bias, None


class DeferredWeightGradient:
    """One weight multiplied at every step of a loop (a decoder's LSTM and attentional layer over
    a teacher-forced target): the gradient of each step's product is kept, and the weight's
    gradient is one product over all steps once the last of them is through, rather than a small
    product per step added into the sum (a 1024 x 768 weight read and written 16 times)."""

    def __init__(self, weight: torch.Tensor):
        self.grads: list[torch.Tensor] = []
        self.rows: list[torch.Tensor] = []
        self.backward_pass: int | None = None
        # every step's product reads it, so autograd runs its backward after all of theirs
        self.anchor: torch.Tensor | None = _WeightGradientAnchor.apply(weight, self)

    def keep(self, grad: torch.Tensor, rows: torch.Tensor) -> None:
        # a backward pass that reached the steps but not the weight (autograd.grad of the inputs
        # only) leaves what it kept behind: the weight's gradient counts only this pass's steps
        backward_pass = torch._C._current_graph_task_id()
        if backward_pass != self.backward_pass:
            self.grads, self.rows, self.backward_pass = [], [], backward_pass
        self.grads.append(grad)
        self.rows.append(rows)

    def take_gradient(self) -> torch.Tensor:
        """The weight's gradient from the steps kept in this backward pass, which are let go."""
        grads, rows = torch.cat(self.grads), torch.cat(self.rows)
        self.grads, self.rows, self.backward_pass = [], [], None
        self.anchor = None  # the anchor's node refers back to this object: no cycle is left
        return grads.t().mm(rows)


class _WeightGradientAnchor(torch.autograd.Function):
    """A zero that every step's product takes as an input: its backward runs once all of theirs
    have, and gives the weight the gradient they kept."""

    @staticmethod
    def forward(ctx, weight, deferred):
        ctx.deferred = deferred
        return weight.new_zeros(())

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, _):
        return ctx.deferred.take_gradient(), None


class _DeferredLinearFunction(torch.autograd.Function):
    """:class:`_LinearFunction` whose weight's gradient a DeferredWeightGradient computes."""

    @staticmethod
    def forward(ctx, rows, weight, bias, anchor, deferred, kernels):
        ctx.save_for_backward(rows, weight)
        ctx.has_bias, ctx.kernels = bias is not None, kernels
        ctx.deferred = deferred
        return _product(rows, weight, bias, kernels)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        rows, weight = ctx.saved_tensors
        ctx.deferred.keep(grad, rows)
        grad_rows = _product(grad, weight.t(), None, ctx.kernels) if ctx.needs_input_grad[0] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_rows, None, grad_bias, grad.new_zeros(()), None, None


def linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, kernels: str,
    deferred: DeferredWeightGradient | None = None,
) -> torch.Tensor:
    """``F.linear(x, weight, bias)`` computed by ``kernels`` (see the module docstring) where they
    apply; ``deferred`` (made by :func:`deferring` for this ``weight``) then computes the weight's
    gradient."""
    if not isinstance(kernels, str):
        raise TypeError(f"kernels: one of {', '.join(k for k in KERNELS if k != 'auto')}, not {kernels!r}")
    if not applies(x, weight, kernels):
        return F.linear(x, weight, bias)
    needs_gradient = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad
                                                  or (bias is not None and bias.requires_grad))
    if kernels == "blas-fused" and not needs_gradient:  # blas's floats in inference
        return F.linear(x, weight, bias)
    if kernels == "onednn":
        # oneDNN reads a weight of any other layout (a slice of columns) about a thousand times
        # slower on two threads; the transposed weight of the input's gradient below is fast
        weight = weight.contiguous()
    rows = x.reshape(-1, x.size(-1))
    if not needs_gradient:
        out = _product(rows, weight, bias, kernels)
    elif deferred is not None and weight.requires_grad:
        out = _DeferredLinearFunction.apply(rows, weight.detach(), bias, deferred.anchor, deferred, kernels)
    else:
        out = _LinearFunction.apply(rows, weight, bias, kernels)
    return out.view(*x.shape[:-1], weight.size(0))


def deferring(kernels: str, weight: torch.Tensor) -> DeferredWeightGradient | None:
    """A DeferredWeightGradient for ``weight`` where a loop's products under ``kernels`` would use one."""
    if applies(weight, weight, kernels) and torch.is_grad_enabled() and weight.requires_grad:
        return DeferredWeightGradient(weight)
    return None


class KernelsLinear(nn.Linear):
    """An ``nn.Linear`` whose products are computed by ``kernels`` (onednn or blas-fused); its
    parameters and state-dict keys are nn.Linear's. :func:`use_kernels` turns a model's linear
    layers into it. Within :func:`deferred_weight_gradients` its weight's gradient is deferred."""

    kernels = "onednn"
    deferred: DeferredWeightGradient | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, self.kernels, deferred=self.deferred)


@contextmanager
def deferred_weight_gradients(module: nn.Module):
    """Within it, the weights of ``module``'s KernelsLinear layers get their gradients through a
    :class:`DeferredWeightGradient` each: for a loop that calls them once per step. Without
    gradients (search) it does nothing."""
    layers = [m for m in module.modules() if isinstance(m, KernelsLinear)] if torch.is_grad_enabled() else []
    for layer in layers:
        layer.deferred = deferring(layer.kernels, layer.weight)
    try:
        yield
    finally:
        for layer in layers:
            layer.deferred = None


def kernels_of(model: nn.Module) -> str:
    """The kernels :func:`use_kernels` gave ``model``."""
    for module in model.modules():
        if isinstance(module, KernelsLinear):
            return module.kernels
        if getattr(module, "product_kernels", "blas") != "blas":
            return module.product_kernels
    return "blas"


def use_kernels(model: nn.Module, kernels: str, option: str = "--kernels") -> nn.Module:
    """``model`` with its products computed by ``kernels`` (see the module docstring), in place.
    Modules that multiply by weights they hold as tensors (the output layers, a decoder's LSTM
    written out) say so with a ``product_kernels`` attribute, which is set here. ``option``
    names the setting in an error."""
    if kernels not in KERNELS or kernels == "auto":  # auto is resolved first (kernel_choice.resolved)
        raise WeanError(f"{option} {kernels!r}: choose one of {', '.join(k for k in KERNELS if k != 'auto')}")
    for module in model.modules():
        if type(module) in (nn.Linear, KernelsLinear):  # not int8 layers, which have their own kernels
            module.__class__ = nn.Linear if kernels == "blas" else KernelsLinear
            if kernels != "blas":
                module.kernels = kernels
            elif "kernels" in vars(module):
                del module.kernels
        if hasattr(module, "product_kernels"):
            module.product_kernels = kernels
    return model
