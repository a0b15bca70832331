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
weight's gradient is one product over all steps (:mod:`wean.models.deferred_gradients`); with
the loss taken from the logits in one step (wean.training.criterion), an update of the peers'
model runs 1.15x faster (results/bench-peers-levers). So are the gradients of the encoder's states
that the loop's attention reads at every step: 1.03x more in training runs of the peers'
benchmark (results/bench-peers-xeon). The two libraries sum in different orders, so
results differ in their last bits (a few 1e-6 on logits of about ±1): in search an output can
change only where two hypotheses tie that closely: none of the TurkCorpus and WikiSmall test
outputs of the simplifier measured in results/bench-kernels does.
``blas``: PyTorch's own products, the floats of the tables' runs (results/lib/converge.yaml).
Training under any other setting, ``auto`` whichever products it picks, also lets an LSTM encoder
split a batch by source length (:meth:`wean.models.encoder.LSTMEncoder._splits_by_length`).

Elsewhere (a GPU, float64, under autocast, with ``torch.backends.mkldnn`` off, a PyTorch without
oneDNN) ``onednn`` falls back to PyTorch's product. Gradients of gradients are refused.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn
from torch.nn import functional as F

from wean.config import KERNELS
from wean.errors import WeanError
from wean.models.deferred_gradients import DeferredWeightGradient, release_anchors


def _onednn_available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


ONEDNN = _onednn_available()


def autocast_on_cpu() -> bool:
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:  # PyTorch before 2.4 takes no device
        return torch.is_autocast_cpu_enabled()


def applies(x: torch.Tensor, weight: torch.Tensor, onednn: bool) -> bool:
    """Whether oneDNN computes ``x``'s product with ``weight`` when ``onednn`` asks for it."""
    return (onednn and ONEDNN and torch.backends.mkldnn.enabled and x.device.type == "cpu"
            and x.dtype == torch.float32 and weight.dtype == torch.float32 and not autocast_on_cpu())


def _product(rows: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(rows, weight, bias, "none", [], "")


class _OneDNNLinearFunction(torch.autograd.Function):
    """rows (N, K) x weight (M, K)^T + bias, its input's gradient through oneDNN as well."""

    @staticmethod
    def forward(ctx, rows, weight, bias):
        ctx.save_for_backward(rows, weight)
        ctx.has_bias = bias is not None
        return _product(rows, weight, bias)

    @staticmethod
    @torch.autograd.function.once_differentiable  # oneDNN's product has no derivative of its own
    def backward(ctx, grad):
        rows, weight = ctx.saved_tensors
        grad_rows = _product(grad, weight.t(), None) if ctx.needs_input_grad[0] else None
        grad_weight = grad.t().mm(rows) if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_rows, grad_weight, grad_bias


class _DeferredLinearFunction(torch.autograd.Function):
    """:class:`_OneDNNLinearFunction` whose weight's gradient a DeferredWeightGradient computes."""

    @staticmethod
    def forward(ctx, rows, weight, bias, anchor, deferred):
        ctx.save_for_backward(rows, weight)
        ctx.has_bias = bias is not None
        ctx.deferred = deferred
        return _product(rows, weight, bias)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        rows, weight = ctx.saved_tensors
        ctx.deferred.keep(grad, rows)
        grad_rows = _product(grad, weight.t(), None) if ctx.needs_input_grad[0] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_rows, None, grad_bias, grad.new_zeros(()), None


def linear(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, onednn: bool,
    deferred: DeferredWeightGradient | None = None,
) -> torch.Tensor:
    """``F.linear(x, weight, bias)``, through oneDNN where ``onednn`` asks for it and it applies;
    ``deferred`` (made by :func:`deferring` for this ``weight``) then computes the weight's gradient."""
    if not applies(x, weight, onednn):
        return F.linear(x, weight, bias)
    # oneDNN reads a weight of any other layout (a slice of columns) about a thousand times slower
    # on two threads; the transposed weight of the input's gradient below is fast
    weight = weight.contiguous()
    rows = x.reshape(-1, x.size(-1))
    if not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad
                                         or (bias is not None and bias.requires_grad))):
        out = _product(rows, weight, bias)
    elif deferred is not None and weight.requires_grad:
        out = _DeferredLinearFunction.apply(rows, weight.detach(), bias, deferred.anchor, deferred)
    else:
        out = _OneDNNLinearFunction.apply(rows, weight, bias)
    return out.view(*x.shape[:-1], weight.size(0))


def deferring(onednn: bool, weight: torch.Tensor) -> DeferredWeightGradient | None:
    """A DeferredWeightGradient for ``weight`` where a loop's products would use one."""
    if onednn and ONEDNN and torch.is_grad_enabled() and weight.requires_grad:
        return DeferredWeightGradient(weight)
    return None


class OneDNNLinear(nn.Linear):
    """An ``nn.Linear`` whose products go through oneDNN; its parameters and state-dict keys are
    nn.Linear's. :func:`use_kernels` turns a model's linear layers into it. Within
    :func:`deferred_weight_gradients` its weight's gradient is deferred."""

    deferred: DeferredWeightGradient | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, onednn=True, deferred=self.deferred)


@contextmanager
def deferred_weight_gradients(module: nn.Module):
    """Within it, the weights of ``module``'s oneDNN linear layers get their gradients through a
    :class:`DeferredWeightGradient` each: for a loop that calls them once per step. Without
    gradients (search) it does nothing."""
    layers = [m for m in module.modules() if isinstance(m, OneDNNLinear)] if torch.is_grad_enabled() else []
    for layer in layers:
        layer.deferred = deferring(True, layer.weight)
    try:
        yield
    finally:
        release_anchors(layer.deferred for layer in layers)
        for layer in layers:
            layer.deferred = None


def kernels_of(model: nn.Module) -> str:
    """The kernels :func:`use_kernels` gave ``model`` (blas: none)."""
    onednn = any(isinstance(m, OneDNNLinear) or getattr(m, "onednn_products", False) for m in model.modules())
    return "onednn" if onednn else "blas"


def use_kernels(model: nn.Module, kernels: str, option: str = "--kernels") -> nn.Module:
    """``model`` with its products computed by ``kernels`` (see the module docstring), in place.
    Modules that multiply by weights they hold as tensors (the output layers, a decoder's LSTM
    written out) say so with an ``onednn_products`` attribute, which is set here. ``option``
    names the setting in an error."""
    if kernels not in KERNELS or kernels == "auto":  # auto is resolved first (kernel_choice.resolved)
        raise WeanError(f"{option} {kernels!r}: choose one of {', '.join(k for k in KERNELS if k != 'auto')}")
    onednn = kernels == "onednn"
    for module in model.modules():
        if type(module) in (nn.Linear, OneDNNLinear):  # not int8 layers, which have their own kernels
            module.__class__ = OneDNNLinear if onednn else nn.Linear
        if hasattr(module, "onednn_products"):
            module.onednn_products = onednn
    return model
