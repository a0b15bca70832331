"""Parameter counts per module: embeddings, encoder, decoder, attention, output layer."""

from __future__ import annotations

import copy

from torch import nn

from wean.config import Config, OutputLayerConfig
from wean.models.model import build_model
from wean.models.output_layer import WeanOutputLayerConfig

GROUPS = ("embeddings", "encoder", "selective gate", "decoder", "attention", "output layer", "spm (training only)")


def _group(name: str) -> str:
    if name.startswith(("encoder.embedding", "decoder.embedding")):
        return "embeddings"
    if name.startswith(("decoder.attention", "decoder.word_attention")):
        return "attention"
    if name.startswith("output_layer"):
        return "output layer"
    if name.startswith("selective_gate"):
        return "selective gate"
    if name.startswith("spm"):
        return "spm (training only)"
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


def output_layer_table(config, target_size: int) -> str:
    """Output-layer parameters of the linear layer and of WEAN's score functions at this
    config's sizes: the WEAN paper's Table 5. Shared embeddings are not output-layer parameters."""
    hidden = config.model.decoder.hidden_size
    variants = [("linear (Seq2seq)", "linear", "general", True)]
    if hidden == config.model.embedding_size:
        variants.append(("wean dot", "wean", "dot", False))
    variants += [
        ("wean general", "wean", "general", False),
        ("wean general + bias (public code)", "wean", "general", True),
        ("wean concat", "wean", "concat", False),
    ]
    lines = [f"output layer parameters at vocabulary {target_size:,}, hidden {hidden}, embedding "
             f"{config.model.embedding_size}:"]
    for label, kind, score, bias in variants:
        variant = copy.deepcopy(config.model)
        variant.output_layer = (WeanOutputLayerConfig(type=kind, score=score, bias=bias) if kind == "wean"
                                else OutputLayerConfig(type=kind))
        model = build_model(variant, target_size, target_size)
        lines.append(f"  {label:<36} {parameter_groups(model)['output layer']:>12,}")
    return "\n".join(lines)


def inspect_model(config: Config, source_size: int, target_size: int, compare: bool = False) -> str:
    """The parameters per module of the model ``config`` builds at these vocabulary sizes; with
    ``compare``, the output layer's at each output layer and WEAN score function as well."""
    model = build_model(config.model, source_size, target_size)
    title = f"{config.name}: vocabulary {source_size:,} (source) / {target_size:,} (target)"
    output = config.model.output_layer
    name = f"wean {output.score}" if output.type == "wean" else output.type
    report = describe(model, title, name)
    return report + "\n" + output_layer_table(config, target_size) if compare else report
