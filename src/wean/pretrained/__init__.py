"""The models shipped inside the package, so that ``wean simplify`` and ``wean.load()`` work
with no data and no training. Each is an ordinary model directory (see :mod:`wean.model_dir`)
with fp16 weights and a ``MODEL_CARD.md``."""

from __future__ import annotations

from pathlib import Path

from wean.errors import WeanError

SIMPLIFIER = Path(__file__).parent / "simplifier"


def pretrained_simplifier() -> Path:
    if not (SIMPLIFIER / "model.safetensors").exists():
        raise WeanError(f"{SIMPLIFIER}: the pretrained simplifier is missing from this installation; "
                        "give a model directory instead")
    return SIMPLIFIER
