"""int8 dynamic quantization for CPU inference (``--quantize int8``): the weights of every LSTM and
linear layer are stored as int8 and activations are quantized on the fly, per batch, by PyTorch's
dynamic quantization. Layers that read their weight tensors directly instead of calling the module
(WEAN's output layer scores the embeddings through its projection's weight) keep fp32.

PyTorch marks ``torch.ao.quantization`` eager mode as deprecated in favour of torchao, which has
no quantized LSTM; it is the maintained path for LSTMs today.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from wean.config import QUANTIZATIONS
from wean.errors import WeanError
from wean.models.interfaces import OutputLayer


def quantize(model: nn.Module, kind: str, device: torch.device) -> nn.Module:
    if kind == "none":
        return model
    if kind not in QUANTIZATIONS:
        raise WeanError(f"--quantize {kind!r}: choose one of {', '.join(QUANTIZATIONS)}")
    if device.type != "cpu":
        raise WeanError(f"--quantize {kind} runs on the CPU; use --device cpu")
    # deferred: PyTorch's quantization package loads only where int8 weights are asked for
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

    # a layer that multiplies by a submodule's weight itself (OutputLayer.reads_weights: WEAN's)
    # needs that weight as a tensor: only modules called as modules are quantized
    direct_weight_users = {name for name, module in model.named_modules() if isinstance(module, OutputLayer)
                           and module.reads_weights}
    spec = {  # a scale per output row of a linear layer: closer to fp32 than one per matrix
        name: per_channel_dynamic_qconfig if isinstance(module, nn.Linear) else default_dynamic_qconfig
        for name, module in model.named_modules()
        if isinstance(module, (nn.LSTM, nn.Linear))
        and not any(name.startswith(owner + ".") for owner in direct_weight_users)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation notice of torch.ao eager mode (module docstring)
        return quantize_dynamic(model, spec, dtype=torch.qint8)
