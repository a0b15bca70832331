"""The checkpoints of one training run: ``checkpoints/step-N/`` (weights and training state, see
:mod:`wean.tensor_files`) and ``checkpoints/latest``, the name of the newest, replaced atomically."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch

from wean.model_dir import CHECKPOINT_NAME
from wean.tensor_files import load_checkpoint, save_checkpoint
from wean.textio import atomic_write_text


class RunCheckpoints:
    def __init__(self, model_dir: Path):
        self.folder = model_dir / "checkpoints"
        self.latest_file = self.folder / "latest"

    def exist(self) -> bool:
        return self.latest_file.exists()

    def latest(self) -> str:
        return self.latest_file.read_text().strip()

    def save(self, name: str, model: torch.nn.Module, state: dict) -> None:
        save_checkpoint(self.folder / name, model, state)
        atomic_write_text(self.latest_file, name + "\n")

    def load_latest(self, model: torch.nn.Module) -> tuple[str, dict]:
        """The latest checkpoint's name and state; its weights are loaded into ``model``."""
        name = self.latest()
        return name, load_checkpoint(self.folder / name, model)

    def prune(self, keep: set[str]) -> None:
        """Delete every checkpoint but those in ``keep`` and the latest one. Each is renamed first
        (``step-N.pruned``), so that a kill while it is deleted leaves no half checkpoint under a
        checkpoint's name (the next start removes the rest)."""
        keep = keep | {self.latest()}
        for path in sorted(self.folder.glob("step-*")):
            if path.is_dir() and CHECKPOINT_NAME.fullmatch(path.name) and path.name not in keep:
                doomed = path.with_name(path.name + ".pruned")
                os.replace(path, doomed)
                shutil.rmtree(doomed)
