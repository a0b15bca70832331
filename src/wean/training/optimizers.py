"""The optimizer a run trains with (``training.optimizer``).

- ``adam`` (the default, every shipped config): Adam, all parameters in one fused kernel.
- ``sgd``: plain stochastic gradient descent, no momentum, fairseq-lua's default and the optimizer
  Gehring et al.'s convolutional encoder was trained with there (``train.lua``: ``-optim sgd
  -lr 0.1 -clip 25``, learning rate and clip per sentence: ``training.loss_per: sentence``). A
  module may ask for its parameters' gradients to be multiplied by a factor (its
  ``gradient_scale`` attribute), fairseq-lua's ``GradMultiply``: the convolutions of the conv
  encoder learn at 1/sqrt(fan-in) of the rate. The factor is applied to the gradient itself, before
  clipping, as there. Under Adam, which normalizes every parameter's step, it would change nothing
  but the clipping norm, so it is left out.
"""

from __future__ import annotations

import torch
from torch import nn


def build_optimizer(model: nn.Module, name: str, learning_rate: float) -> torch.optim.Optimizer:
    if name == "adam":
        # fused: every parameter's update in one kernel, not a dozen tensor operations each
        return torch.optim.Adam(model.parameters(), lr=learning_rate, fused=True)
    if name == "sgd":
        scale_gradients(model)
        return torch.optim.SGD(model.parameters(), lr=learning_rate)
    raise ValueError(f"unknown optimizer {name!r}")  # the config's validation names the choices first


def scale_gradients(model: nn.Module) -> None:
    """Multiply the gradients of every module's own parameters by its ``gradient_scale``."""
    for module in model.modules():
        scale = getattr(module, "gradient_scale", None)
        if scale is None:
            continue
        for parameter in module.parameters(recurse=False):
            parameter.register_hook(lambda gradient, scale=scale: gradient * scale)
