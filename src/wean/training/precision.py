"""``training.precision``: the arithmetic of the training forward pass.

- ``fp32``: everything in float32.
- ``bf16``: the forward pass under bfloat16 autocast (matrix products in bf16; weights, optimizer,
  loss and validation stay fp32). On a GPU with bf16 (Ampere or newer), or a CPU with AVX-512 BF16
  or AMX, about 2x faster; a CPU without them must emulate it and has no bf16 LSTM at all.
- ``fp16``: float16 autocast, on CUDA only (CPUs have no fp16 LSTM); small fp16 gradients
  underflow to zero, so the trainer scales the loss up with a ``torch.amp.GradScaler``, which
  also skips the steps whose gradients overflowed.
"""

from __future__ import annotations

import torch

from wean.errors import WeanError
from wean.models.device import bf16_lstm_supported

DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def autocast_dtype(precision: str) -> torch.dtype | None:
    return DTYPES[precision]


def check_precision(precision: str, device: torch.device) -> None:
    """A WeanError, in one line, where ``precision`` cannot run on ``device``."""
    if precision == "fp16" and device.type != "cuda":
        raise WeanError(f"training.precision: fp16 runs on CUDA GPUs only, not on this {device.type}; "
                        "use fp32 (or bf16 where the CPU has it)")
    if precision == "bf16" and not bf16_lstm_supported(device):
        raise WeanError(
            f"training.precision: bf16 cannot run here: PyTorch has no bfloat16 LSTM for this "
            f"{device.type} (on a CPU it needs AVX-512); use fp32"
        )
