"""Checkpoint averaging (``wean average``): the element-wise mean of several checkpoints' weights,
written as a model directory, as fairseq's ``average_checkpoints.py`` and Joey NMT's averaging
script make one. The last checkpoints of a run lie close together in weight space; their mean
smooths the noise of the final updates at no training cost.

The mean is taken in float64 and cast back, so that N copies of one checkpoint average to it bit
for bit. Tensors that are not floating point (masks, counts) must be equal in every checkpoint.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import torch

from wean.errors import WeanError
from wean.model_dir import CHECKPOINT_NAME, load_assets, write_model_directory
from wean.models.model import build_model
from wean.tensor_files import WEIGHTS, load_weights

def run_checkpoints(run: Path) -> list[Path]:
    """The checkpoints of a run, oldest first (``checkpoints/step-N``; pruning keeps the best
    ``training.keep_best`` and the latest)."""
    folder = Path(run) / "checkpoints"
    found = [path for path in folder.glob("step-*") if path.is_dir() and CHECKPOINT_NAME.fullmatch(path.name)]
    return sorted(found, key=lambda path: int(CHECKPOINT_NAME.fullmatch(path.name).group(1)))


def choose_checkpoints(run: Path, last: int | None = None, names: Sequence[str] = ()) -> list[Path]:
    """The ``last`` newest checkpoints of ``run``, or those ``names`` gives: a checkpoint's name in
    the run (``step-00001200``) or the path of a checkpoint directory."""
    available = run_checkpoints(run)
    if last is not None:
        if last < 1:
            raise WeanError("--last must be at least 1")
        if len(available) < last:
            have = ", ".join(path.name for path in available) or "none"
            raise WeanError(f"{run}: {last} checkpoints asked for, {len(available)} kept ({have}); "
                            "training.keep_best sets how many a run keeps")
        return available[-last:]
    chosen = []
    for name in names:
        path = Path(run) / "checkpoints" / name
        path = path if path.is_dir() else Path(name)
        if not (path / WEIGHTS).is_file():
            have = ", ".join(p.name for p in available) or "none"
            raise WeanError(f"checkpoint {name!r}: neither one of {run}'s ({have}) nor a checkpoint directory")
        chosen.append(path)
    if not chosen:
        raise WeanError("no checkpoints: give --last N or --checkpoints NAME ...")
    return chosen


def average_checkpoints(run: Path, checkpoints: Sequence[Path], target: Path, trust_plugins: bool = False) -> None:
    """Write ``target``: ``run``'s model directory with the mean of ``checkpoints``' weights."""
    target = Path(target)
    if (target / WEIGHTS).exists():
        raise WeanError(f"{target}: holds a model already; choose a new directory")
    assets = load_assets(run, trust_plugins)
    model = build_model(assets.config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
    sums: dict[str, torch.Tensor] = {}
    for path in checkpoints:
        load_weights(model, path / WEIGHTS)  # one line if it does not fit this run's architecture
        for name, tensor in model.state_dict().items():
            if not tensor.is_floating_point():
                if name in sums and not torch.equal(sums[name], tensor):
                    raise WeanError(f"{path}: {name} differs from the first checkpoint's and cannot be averaged")
                sums.setdefault(name, tensor.clone())
            elif name in sums:
                sums[name] += tensor.double()
            else:
                sums[name] = tensor.double().clone()
    state = model.state_dict()
    model.load_state_dict({name: (total / len(checkpoints)).to(state[name].dtype) if state[name].is_floating_point()
                           else total for name, total in sums.items()})
    config = dataclasses.replace(assets.config, model_dir=str(target))
    write_model_directory(Path(run), target, dataclasses.replace(assets, config=config), model)
