"""What a config value may be: the names a choice takes, the range each number keeps, checked
by name wherever the key's section is (a plug-in's fields of these names too)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from wean.errors import WeanError

# the choices of where and how a model runs, named here, where reading them imports no torch
DEVICES = ("auto", "cpu", "cuda")
# what computes the float32 products (wean/models/kernels.py); auto: the faster here, measured
# once per model (wean/models/kernel_choice.py)
KERNELS = ("auto", "onednn", "blas")
QUANTIZATIONS = ("none", "int8")  # the weights inference runs with (wean/inference/quantize.py)

# the keys whose value is one of a few names, wherever the config's section has them
CHOICES = {
    "data.tokenizer.corpus_tokenization": ("none", "ptb"),
    "data.direction": ("forward", "reverse", "lm"),
    "model.decoder.word_attention": ("none", "attention", "gates"),
    "model.decoder.attention": ("dot", "general", "concat"),
    "model.decoder.bridge": ("copy", "linear", "zero"),
    "model.output_layer.score": ("dot", "general", "concat"),
    "model.output_layer.concat_kernel": ("chunked", "fused"),
    "training.precision": ("fp32", "bf16", "fp16"),
    "training.optimizer": ("adam", "sgd"),
    "training.loss_per": ("token", "sentence"),
    "training.kernels": KERNELS,
    "training.device": DEVICES,
}
_ABSENT = object()


def check_choices(config: Any) -> None:
    for key, allowed in CHOICES.items():
        value = lookup(config, key)
        if value is not _ABSENT and value not in allowed:
            raise WeanError(f"config: {key} is {value!r}; choose one of {', '.join(allowed)}")


def lookup(config: Any, key: str) -> Any:
    """The value at a dotted ``key`` (model.decoder.attention), or _ABSENT where a section lacks it."""
    for part in key.split("."):
        config = getattr(config, part, _ABSENT)
    return config


# the numeric settings' ranges by name, wherever their section (a plug-in's fields of these names too)
AT_LEAST_ONE = {"valid_holdout", "vocab_size", "min_frequency", "max_tokens", "hidden_size", "layers", "kernel_width", "max_positions",
                "embedding_size", "batch_size", "max_epochs", "keep_best", "log_every"}
BELOW_ONE = {"dropout", "label_smoothing"}
UP_TO_ONE = {"character_coverage"}
ABOVE_ZERO = {"bucket", "c", "distributed_timeout"}
# upper bounds far above any model a machine of today trains, checked before anything is built:
# a model of a million layers takes minutes to construct, before its memory could be counted
AT_MOST = {"layers": 64, "attention_layers": 64, "hidden_size": 1 << 16, "embedding_size": 1 << 16,
           "kernel_width": 1 << 10, "max_positions": 1 << 20, "vocab_size": 1 << 24}
AT_LEAST_ZERO = {"learning_rate", "coverage_loss", "attention_layers", "candidates", "init_range", "concat_init_range", "seed", "clip_grad_norm", "batch_tokens",
                 "max_updates", "validate_every", "save_every", "lr_patience", "min_learning_rate", "early_stopping_patience",
                 "max_valid_sentences"}


def check_numbers(section: Any, where: str = "") -> None:
    """Sizes, rates and counts in range: ``hidden_size: -5`` is refused here in one line, not by
    PyTorch at model building with a traceback. (``generation`` has wean.search_options.)"""
    for field_ in dataclasses.fields(section):
        value, path = getattr(section, field_.name), f"{where}{field_.name}"
        if dataclasses.is_dataclass(value):
            if field_.name != "generation":
                check_numbers(value, path + ".")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        name = field_.name
        if not math.isfinite(value):
            raise WeanError(f"config: {path} is {value}; it must be a finite number")
        for names, holds, rule in ((AT_LEAST_ONE, value >= 1, "at least 1"), (BELOW_ONE, 0 <= value < 1, "in [0, 1)"),
                                   (UP_TO_ONE, 0 < value <= 1, "in (0, 1]"),
                                   (ABOVE_ZERO, value > 0, "above 0"), (AT_LEAST_ZERO, value >= 0, "at least 0")):
            if name in names and not holds:
                raise WeanError(f"config: {path} is {value}; it must be {rule}")
        if name in AT_MOST and value > AT_MOST[name]:
            raise WeanError(f"config: {path} is {value:,}; wean builds at most {AT_MOST[name]:,}")
