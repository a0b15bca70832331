"""Saving and loading models and training state: safetensors for tensors, JSON for the rest,
every file written to a temporary name first and renamed into place, so an interrupted write
never leaves a half-written checkpoint where a good one was.

A model directory holds ``config.yaml``, ``tokenizer.json`` (+ ``sentencepiece.model``), the
vocabularies, ``model.safetensors`` (the selected weights, what :func:`wean.load` reads) and
``checkpoints/step-N/`` with the weights and the full training state of a point in training.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save

from wean.errors import WeanError
from wean.textio import read_json

WEIGHTS = "model.safetensors"


def atomic_write_text(path: Path, text: str) -> None:
    # the process id in the name: two processes writing one file never share a temporary
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(value, indent=1, ensure_ascii=False) + "\n")


def save_weights(model: torch.nn.Module, path: Path) -> None:
    """The weights as safetensors, a tied (shared) tensor stored once: the metadata maps each
    other name to the stored one, as ``safetensors.torch.save_model`` writes it. Not save_model
    itself: on a GPU, cuDNN packs an LSTM's weights into one buffer, which it refuses to save."""
    tensors, aliases, stored = {}, {}, {}
    for name, tensor in model.state_dict().items():
        view = (tensor.data_ptr(), tuple(tensor.shape), tensor.stride())
        if view in stored:
            aliases[name] = stored[view]
        else:
            stored[view] = name
            tensors[name] = tensor.detach().cpu().contiguous()
    _write_tensors(path, tensors, aliases or None)


def _write_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> None:
    """safetensors bytes written by Python, so that the file's mode follows the umask like every
    other file of a model directory (safetensors' own writer makes it 0600: a shared model
    directory was unreadable to others); atomically, through a temporary name."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(save(tensors, metadata=metadata))
    os.replace(temporary, path)


def load_weights(model: torch.nn.Module, path: Path) -> None:
    if not path.exists():
        raise WeanError(f"{path}: weights not found")
    try:
        with safe_open(str(path), "pt") as weights:
            tensors = {name: weights.get_tensor(name) for name in weights.keys()}
            aliases = weights.metadata() or {}
    except (SafetensorError, OSError, RuntimeError) as error:
        raise WeanError(f"{path}: corrupt or incompatible weights ({str(error).splitlines()[0]})") from None
    tensors.update({name: tensors[kept] for name, kept in aliases.items() if kept in tensors})
    expected = model.state_dict()
    missing, unexpected = expected.keys() - tensors.keys(), tensors.keys() - expected.keys()
    misshapen = [name for name in expected.keys() & tensors.keys() if expected[name].shape != tensors[name].shape]
    if missing or unexpected or misshapen:
        names = ", ".join(sorted(missing) + sorted(unexpected) + sorted(misshapen))[:200]
        raise WeanError(f"{path}: weights do not fit this model's configuration ({names})")
    model.load_state_dict(tensors)


def flatten_state(state: Any, prefix: str = "") -> tuple[dict[str, torch.Tensor], Any]:
    """Split a nested state (dicts, lists, tensors, numbers) into named tensors and a JSON
    skeleton in which each tensor is replaced by {"tensor": name}."""
    tensors: dict[str, torch.Tensor] = {}

    def walk(value, name):
        if isinstance(value, torch.Tensor):
            tensors[name] = value.detach().cpu().contiguous()
            return {"tensor": name}
        if isinstance(value, dict):
            return {"dict": [[walk(k, f"{name}.k{i}"), walk(v, f"{name}.{i}")] for i, (k, v) in enumerate(value.items())]}
        if isinstance(value, (list, tuple)):
            return {"list": [walk(v, f"{name}.{i}") for i, v in enumerate(value)], "tuple": isinstance(value, tuple)}
        return {"value": value}

    return tensors, walk(state, prefix or "state")


def unflatten_state(skeleton: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if "tensor" in skeleton:
        return tensors[skeleton["tensor"]]
    if "dict" in skeleton:
        return {unflatten_state(k, tensors): unflatten_state(v, tensors) for k, v in skeleton["dict"]}
    if "list" in skeleton:
        items = [unflatten_state(v, tensors) for v in skeleton["list"]]
        return tuple(items) if skeleton.get("tuple") else items
    return skeleton["value"]


def _set_aside(directory: Path) -> Path:
    return directory.with_name(directory.name + ".old")


def save_checkpoint(directory: Path, model: torch.nn.Module, state: dict) -> None:
    """Write ``directory`` (weights + training state) as a whole: built beside it, renamed in.
    A checkpoint already there (the last save of a run rewrites the step ``latest`` names) is
    renamed aside first and deleted last, so a kill at any point leaves a whole copy under one of
    the two names; :func:`load_checkpoint` takes the one set aside when the other is missing."""
    temporary = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    save_weights(model, temporary / WEIGHTS)
    tensors, skeleton = flatten_state(state)
    _write_tensors(temporary / "training.safetensors", tensors)
    atomic_write_json(temporary / "training.json", skeleton)
    aside = _set_aside(directory)
    if directory.exists():
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(directory, aside)
    os.replace(temporary, directory)
    shutil.rmtree(aside, ignore_errors=True)


def load_checkpoint(directory: Path, model: torch.nn.Module) -> dict:
    if not directory.exists() and _set_aside(directory).is_dir():  # killed between save_checkpoint's renames
        os.replace(_set_aside(directory), directory)
    load_weights(model, directory / WEIGHTS)
    skeleton = read_json(directory / "training.json")
    try:
        tensors = load_file(str(directory / "training.safetensors"))
    except (SafetensorError, OSError) as error:
        raise WeanError(f"{directory / 'training.safetensors'}: corrupt training state ({error})") from None
    return unflatten_state(skeleton, tensors)
