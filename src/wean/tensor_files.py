"""Saving and loading models and training state: safetensors for tensors, JSON for the rest,
every file written to a temporary name, synced to disk and renamed into place, so an interrupted
write (a kill, a power loss) never leaves a half-written checkpoint where a good one was.

Every safetensors file wean writes carries in its metadata the sha256 of its tensors (their
names, dtypes, shapes and bytes): checked when it is read, so flipped bytes or an edited tensor
are refused in one line. It lives inside the file it covers, so no kill can leave the two apart.

A model directory holds ``config.yaml``, ``tokenizer.json`` (+ ``sentencepiece.model``), the
vocabularies, ``model.safetensors`` (the selected weights, what :func:`wean.load` reads) and
``checkpoints/step-N/`` with the weights and the full training state of a point in training.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load, save

from wean.errors import WeanError
from wean.textio import atomic_write_bytes, atomic_write_json, read_file, read_json, sync_directory

WEIGHTS = "model.safetensors"
DIGEST = "wean.sha256"  # the metadata key of a safetensors file's digest


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
    write_tensors(path, tensors, aliases or None)


def _tensors_digest(data: bytes | memoryview) -> str:
    """sha256 of a safetensors file's tensor entries (names, dtypes, shapes, offsets) and bytes:
    all of it but the metadata, which holds the digest."""
    size = int.from_bytes(data[:8], "little")
    header = json.loads(bytes(data[8 : 8 + size]))
    header.pop("__metadata__", None)
    digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
    digest.update(data[8 + size :])
    return digest.hexdigest()


def write_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> None:
    """safetensors bytes written by Python, so that the file's mode follows the umask like every
    other file of a model directory (safetensors' own writer makes it 0600: a shared model
    directory was unreadable to others); with their digest; atomically."""
    unsigned = save(tensors, metadata=metadata)
    atomic_write_bytes(path, save(tensors, metadata={**(metadata or {}), DIGEST: _tensors_digest(unsigned)}))


class UnverifiedWeightsWarning(UserWarning):
    """A safetensors file without wean's digest: written by an earlier wean or another tool."""


MAX_HEADER_BYTES = 100_000_000  # safetensors' own bound on a header


def _declared_size(path: Path) -> int:
    """The size a safetensors file's header says it has (8 + header + the end of its last tensor),
    read before the rest: a file larger than that is not read (a link to a huge file, padding)."""
    length = int.from_bytes(read_file(path, head=8).ljust(8, b"\0"), "little")
    if length > MAX_HEADER_BYTES:
        raise WeanError(f"{path}: corrupt or incompatible tensors (a header of {length:,} bytes)")
    try:
        header = json.loads(read_file(path, head=8 + length)[8:])
        ends = [entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"]
        if not all(isinstance(end, int) and end >= 0 for end in ends):
            raise ValueError("an offset that is no size")
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        raise WeanError(f"{path}: corrupt or incompatible tensors (its header is not safetensors')") from None
    return 8 + length + max(ends, default=0)


def read_tensors(path: Path, require_digest: bool = False) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """A safetensors file's tensors and metadata (without the digest), its digest checked; a file
    without one (an earlier wean's, another tool's) is read with a warning, or refused with
    ``require_digest``."""
    data = read_file(path, _declared_size(path))
    try:
        tensors = load(data)
        size = int.from_bytes(data[:8], "little")
        metadata = dict(json.loads(data[8 : 8 + size]).get("__metadata__") or {})
    except (SafetensorError, RuntimeError, ValueError) as error:
        reason = str(error).splitlines()[0]
        raise WeanError(f"{path}: corrupt or incompatible tensors ({reason})") from None
    recorded = metadata.pop(DIGEST, None)
    if recorded is None:
        unsigned = (f"{path}: no sha256 of its tensors (written by an earlier wean or another tool), so damage to it "
                    "cannot be detected; `wean export` writes a copy that has one")
        if require_digest:
            raise WeanError(unsigned)
        warnings.warn(unsigned, UnverifiedWeightsWarning, stacklevel=3)
    elif recorded != _tensors_digest(memoryview(data)):
        raise WeanError(f"{path}: damaged: its tensors do not match the sha256 written with them "
                        "(flipped bytes, or an edited file)")
    return tensors, metadata


def _refused(names: list[str]) -> str:
    return ", ".join(sorted(names))[:200]


def load_weights(model: torch.nn.Module, path: Path, require_digest: bool = False) -> None:
    """``path``'s weights into ``model``, refused in one line unless every tensor is there with
    the architecture's shape and dtype (float16 for float32: an fp16 export, cast back), finite,
    and no weight matrix all zero; and unless the digest matches (see :func:`read_tensors`)."""
    if not path.exists():
        raise WeanError(f"{path}: weights not found")
    tensors, aliases = read_tensors(path, require_digest)
    tensors.update({name: tensors[kept] for name, kept in aliases.items() if kept in tensors})
    expected = model.state_dict()
    missing, unexpected = expected.keys() - tensors.keys(), tensors.keys() - expected.keys()
    misshapen = [name for name in expected.keys() & tensors.keys() if expected[name].shape != tensors[name].shape]
    if missing or unexpected or misshapen:
        raise WeanError(f"{path}: weights do not fit this model's configuration "
                        f"({_refused(list(missing) + list(unexpected) + misshapen)})")
    wrong_type = [f"{name} is {tensors[name].dtype}, not {tensor.dtype}" for name, tensor in expected.items()
                  if tensors[name].dtype != tensor.dtype
                  and not (tensor.dtype == torch.float32 and tensors[name].dtype == torch.float16)]
    if wrong_type:
        raise WeanError(f"{path}: weights of the wrong type ({_refused(wrong_type)})")
    not_finite = [name for name, tensor in tensors.items() if tensor.is_floating_point() and not tensor.isfinite().all()]
    if not_finite:
        raise WeanError(f"{path}: weights with NaN or infinite values ({_refused(not_finite)})")
    parameters = dict(model.named_parameters(remove_duplicate=False))
    zero = [name for name in parameters if tensors[name].dim() >= 2 and not tensors[name].any()]
    if zero:
        raise WeanError(f"{path}: weight matrices that are all zero ({_refused(zero)}); no trained model has them")
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
    write_tensors(temporary / "training.safetensors", tensors)
    atomic_write_json(temporary / "training.json", skeleton)
    aside = _set_aside(directory)
    if directory.exists():
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(directory, aside)
    os.replace(temporary, directory)
    sync_directory(directory.parent)
    shutil.rmtree(aside, ignore_errors=True)


def remove_leftovers(folder: Path) -> list[str]:
    """What a kill inside a save or a prune leaves in ``folder``: temporaries (``*.tmp``) and
    checkpoints half deleted (``*.pruned``) are removed; a checkpoint set aside (``*.old``) is
    renamed back where its copy is missing, else removed.
    Returns the names removed or restored."""
    done = []
    if not folder.is_dir():
        return done
    for path in sorted(folder.iterdir()):
        if path.name.endswith((".tmp", ".pruned")):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            done.append(path.name)
        elif path.name.endswith(".old") and path.is_dir() and not path.is_symlink():
            original = path.with_name(path.name[: -len(".old")])
            if original.exists():
                shutil.rmtree(path)
            else:
                os.replace(path, original)
            done.append(path.name)
    return done


def load_checkpoint(directory: Path, model: torch.nn.Module) -> dict:
    if not directory.exists() and _set_aside(directory).is_dir():  # killed between save_checkpoint's renames
        os.replace(_set_aside(directory), directory)
    load_weights(model, directory / WEIGHTS)
    skeleton = read_json(directory / "training.json")
    tensors, _ = read_tensors(directory / "training.safetensors")
    return unflatten_state(skeleton, tensors)
