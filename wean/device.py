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
    if name == "cuda" and not torch.cuda.is_available():
        raise WeanError("device 'cuda': PyTorch sees no CUDA GPU here (use cpu or auto)")
    return torch.device(name)


def model_device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device
