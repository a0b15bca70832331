"""Experiment configuration: typed sections read from YAML, with ``--set key=value`` overrides.

Every key has a default in :mod:`wean.config.schema` and a comment in
``configs/seq2seq-pwkp.yaml``. An unknown key, a value of the wrong type or an impossible
combination is a :class:`~wean.errors.WeanError` naming the key, never a silent default. The
checks live where their knowledge does: ranges and choices in :mod:`~wean.config.ranges`, each
section's own consistency on its class, and what a component needs of the whole config in its
``check_config`` beside it (tokenizers in wean/data, encoders, decoders and output layers in
wean/models)."""

from wean.config.files import apply_overrides, load_config, parse_yaml
from wean.config.ranges import CHOICES, DEVICES, KERNELS, QUANTIZATIONS
from wean.config.schema import (
    Config, ControlConfig, DataConfig, DecoderConfig, EmbeddingsConfig, EncoderConfig, GenerationConfig, ModelConfig,
    OutputLayerConfig, SPMConfig, TokenizerConfig, TrainingConfig, check_fallback_control, check_model_sections,
    config_from_dict, section_config,
)
from wean.config.sections import COMPONENT_SECTIONS, SetAsideWarning

__all__ = [
    "CHOICES", "COMPONENT_SECTIONS", "DEVICES", "KERNELS", "QUANTIZATIONS", "Config", "ControlConfig", "DataConfig",
    "DecoderConfig", "EmbeddingsConfig", "EncoderConfig", "GenerationConfig", "ModelConfig", "OutputLayerConfig",
    "SPMConfig", "SetAsideWarning", "TokenizerConfig", "TrainingConfig", "apply_overrides", "check_fallback_control",
    "check_model_sections", "config_from_dict", "load_config", "parse_yaml", "section_config",
]
