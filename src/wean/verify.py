"""``wean verify``: whether a model directory is whole: its config, tokenizer and vocabularies
agree, and every safetensors file (the model's and each checkpoint's) has the sha256 written with
it and tensors that fit the architecture, finite; the same for each member of an ensemble it
carries (``generation.ensemble``), which must read and write its tokens."""

from __future__ import annotations

from pathlib import Path

from wean.errors import WeanError
from wean.inference.ensemble import load_members
from wean.model_dir import load_assets
from wean.models.model import build_model
from wean.tensor_files import WEIGHTS, load_weights, read_tensors
from wean.textio import read_json


def verify_model_directory(directory: Path, trust_plugins: bool = False) -> list[str]:
    """One line per file checked; the first damage raises a WeanError that names the file. A file
    without wean's digest is refused: it cannot be verified."""
    assets = load_assets(directory, trust_plugins)  # config, tokenizer against it, vocabularies
    report = [f"{directory}: config, tokenizer and vocabularies agree"]
    model = build_model(assets.config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
    weights = [directory / WEIGHTS] if (directory / WEIGHTS).exists() else []
    checkpoints = sorted(path for path in (directory / "checkpoints").glob("step-*")
                         if path.is_dir() and not path.name.endswith((".tmp", ".old")))  # a kill's leftovers
    if not weights and not checkpoints:
        raise WeanError(f"{directory}: no {WEIGHTS} and no checkpoints")
    for path in weights + [checkpoint / WEIGHTS for checkpoint in checkpoints]:
        load_weights(model, path, require_digest=True)
        report.append(f"{path}: sha256 matches; {len(model.state_dict())} tensors fit the architecture, finite")
    for checkpoint in checkpoints:
        read_tensors(checkpoint / "training.safetensors", require_digest=True)
        read_json(checkpoint / "training.json")
        report.append(f"{checkpoint}: training state whole")
    members = load_members(directory, assets, trust_plugins)
    for member, _ in members:
        report += verify_model_directory(member, trust_plugins)
    if members:
        report.append(f"{directory}: its ensemble's {len(members) + 1} models read and write the same tokens")
    return report
