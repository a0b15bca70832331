"""Parameter counts per module: embeddings, encoder, decoder, attention, output layer."""

from __future__ import annotations

from pathlib import Path

from torch import nn

from wean.config import load_config
from wean.data.vocabulary import SPECIALS
from wean.models.model import build_model

GROUPS = ("embeddings", "encoder", "decoder", "attention", "output layer")


def _group(name: str) -> str:
    if name.startswith(("encoder.embedding", "decoder.embedding")):
        return "embeddings"
    if name.startswith("decoder.attention"):
        return "attention"
    if name.startswith("output_layer"):
        return "output layer"
    return name.split(".")[0]


def parameter_groups(model: nn.Module) -> dict[str, int]:
    """Parameters per group; a tied tensor is counted once (``named_parameters`` dedups)."""
    counts = dict.fromkeys(GROUPS, 0)
    for name, parameter in model.named_parameters():
        counts[_group(name)] += parameter.numel()
    return counts


def describe(model: nn.Module, title: str, output_layer: str) -> str:
    counts = parameter_groups(model)
    lines = [title]
    for group, count in counts.items():
        label = f"output layer ({output_layer})" if group == "output layer" else group
        lines.append(f"  {label:<28} {count:>12,}")
    lines.append(f"  {'total':<28} {sum(counts.values()):>12,}")
    return "\n".join(lines)


def inspect_target(target: Path, overrides: list[str], source_size: int | None, target_size: int | None) -> str:
    if target.is_dir():
        from wean.model_dir import load_assets

        assets = load_assets(target)
        config = assets.config
        source_size, target_size = len(assets.source_vocabulary), len(assets.target_vocabulary)
    else:
        config = load_config(target, overrides)
        default = config.data.tokenizer.vocab_size + len(SPECIALS)
        source_size = source_size or default
        target_size = target_size or (source_size if config.data.tokenizer.shared_vocab else default)
    model = build_model(config.model, source_size, target_size)
    title = f"{config.name}: vocabulary {source_size:,} (source) / {target_size:,} (target)"
    return describe(model, title, config.model.output_layer.type)
