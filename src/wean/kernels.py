"""Which kernels compute a loaded model's float32 matrix products in inference (``--kernels``).

``onednn`` (the default): the products of every linear layer and of the output layer over the
vocabulary go through oneDNN's linear (``torch.ops.mkldnn._linear_pointwise``, the kernel
PyTorch's own compiler emits for linear layers on the CPU). PyTorch's eager product calls MKL's
sgemm, which on the AMD CPUs measured here runs at about 55 GFLOP/s on one core where oneDNN
runs the same product at about 94 (results/bench-kernels). The two sum in different orders, so
logits differ in their last bits (a few 1e-6 on logits of about ±1): an output can change only
where two hypotheses tie that closely, which none of the shipped model's test outputs does
(results/bench-kernels counts them).
``blas``: PyTorch's own product, the floats training computed.

Only inference is affected: with autograd on (training, and anything that asks for gradients) the
layers compute as PyTorch does. Elsewhere (a GPU, float64, a PyTorch without oneDNN) ``onednn``
falls back to PyTorch's product.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from wean.errors import WeanError

KERNELS = ("onednn", "blas")


def _onednn_available() -> bool:
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


ONEDNN = _onednn_available()


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, onednn: bool) -> torch.Tensor:
    """``F.linear(x, weight, bias)``, through oneDNN where ``onednn`` asks for it and it applies
    (no autograd, float32 on the CPU)."""
    if (not onednn or not ONEDNN or torch.is_grad_enabled() or x.device.type != "cpu"
            or x.dtype != torch.float32 or weight.dtype != torch.float32):
        return F.linear(x, weight, bias)
    rows = x.reshape(-1, x.size(-1))
    out = torch.ops.mkldnn._linear_pointwise(rows, weight, bias, "none", [], "")
    return out.view(*x.shape[:-1], weight.size(0))


class OneDNNLinear(nn.Linear):
    """An ``nn.Linear`` whose inference product goes through oneDNN; its parameters, state-dict
    keys and training are nn.Linear's. :func:`use_kernels` turns loaded layers into it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, onednn=True)


def use_kernels(model: nn.Module, kernels: str) -> nn.Module:
    """``model`` with its inference products computed by ``kernels`` (see the module docstring),
    in place. Layers that multiply by weights they hold as tensors (the output layers) say so
    with an ``onednn_products`` attribute, which is set here."""
    if kernels not in KERNELS:
        raise WeanError(f"--kernels {kernels!r}: choose one of {', '.join(KERNELS)}")
    onednn = kernels == "onednn"
    for module in model.modules():
        if type(module) in (nn.Linear, OneDNNLinear):  # not int8 layers, which have their own kernels
            module.__class__ = OneDNNLinear if onednn else nn.Linear
        if hasattr(module, "onednn_products"):
            module.onednn_products = onednn
    return model
