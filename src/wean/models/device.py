"""Where a model runs: ``auto`` takes the GPU when PyTorch sees one, else the CPU."""

from __future__ import annotations

import torch

from wean.config import DEVICES
from wean.errors import WeanError


def resolve_device(name: str) -> torch.device:
    if name not in DEVICES:
        raise WeanError(f"device {name!r}: choose one of {', '.join(DEVICES)}")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise WeanError("device 'cuda': PyTorch sees no CUDA GPU here (use cpu or auto)")
        full_fp32_on_gpus()
    return torch.device(name)


def full_fp32_on_gpus() -> None:
    """fp32 on a GPU is IEEE fp32: by default PyTorch lets cuDNN's convolutions (the conv encoder)
    run in TF32, 10 mantissa bits, on Ampere and newer GPUs, so a GPU's fp32 run would differ from
    a CPU's by more than rounding. bf16 / fp16 autocast still decide their own products."""
    # the old flags, not PyTorch 2.9's fp32_precision: they set the new ones too (conv and rnn alike),
    # where setting only the new ones makes every later read of the old flag an error
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def model_device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def bf16_lstm_supported(device: torch.device) -> bool:
    """Whether an LSTM runs under bfloat16 autocast here. On a CPU without AVX-512 (no bf16
    instructions), oneDNN has no bf16 LSTM and PyTorch fails at the first forward pass."""
    lstm = torch.nn.LSTM(4, 4).to(device)
    try:
        with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16):
            lstm(torch.zeros(2, 1, 4, device=device))
    except RuntimeError:
        return False
    return True
