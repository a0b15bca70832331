"""How a mapping of config values becomes a typed section: unknown keys refused (with the nearest
known one), types checked, a component section read into the config class its component
registered, another component's keys set aside."""

from __future__ import annotations

import dataclasses
import difflib
import typing
import warnings
from typing import Any

from wean.errors import WeanError
from wean.registry import DECODERS, ENCODERS, OUTPUT_LAYERS, TOKENIZERS


COMPONENT_SECTIONS = {  # config section -> the registry (wean/registry.py) its ``type`` names
    "data.tokenizer": TOKENIZERS,
    "model.encoder": ENCODERS,
    "model.decoder": DECODERS,
    "model.output_layer": OUTPUT_LAYERS,
}


class SetAsideWarning(UserWarning):
    """A component section holds another component's key at a value that asks for something."""


def read_section(cls, values: Any, where: str):
    """``values`` read into the dataclass ``cls``; ``where`` is the section's path, for messages."""
    if not isinstance(values, dict):
        raise WeanError(f"config: {where or 'top level'} must be a mapping, got {values!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in values.items():
        path = f"{where}.{key}" if where else key
        if key not in known:
            owners = other_components_with(where, key)
            if owners:
                # another component's key: a preset's (bidirectional, when --set makes the encoder
                # conv), or one a model directory's config lists for every component. Set aside;
                # said where it is not that component's default, as it asks for something this
                # component does not do
                if all(value != default for _, default in owners):
                    component = where.rsplit(".", 1)[-1].replace("_", " ")
                    warnings.warn(f"config: {path} ({value!r}) is a key of the {component} "
                                  f"{' / '.join(name for name, _ in owners)}; this {component} is "
                                  f"{values.get('type', cls().type)!r} and sets it aside", SetAsideWarning,
                                  stacklevel=2)
                continue
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise WeanError(f"config: unknown key {path}{hint}")
        kind = hints[key]
        if dataclasses.is_dataclass(kind):
            kwargs[key] = read_section(section_class(kind, value, path), value, path)
        else:
            kwargs[key] = coerce(value, kind, path)
    return cls(**kwargs)


def section_class(kind: type, values: Any, path: str) -> type:
    """A component section is read into the config dataclass its component registered (a subclass
    of the section's own, with the component's extra keys); wean's own use the section's."""
    if path not in COMPONENT_SECTIONS or not isinstance(values, dict):
        return kind
    registry = COMPONENT_SECTIONS[path]
    name = values.get("type", kind().type)
    config = registry.entry(name, f"{path}.type").config if isinstance(name, str) else None
    if config is None:
        return kind
    if not (isinstance(config, type) and dataclasses.is_dataclass(config) and issubclass(config, kind)):
        raise WeanError(f"{registry.kind} {name!r}: its config class must be a dataclass subclass of {kind.__name__}")
    return config


def other_components_with(section: str, key: str) -> list[tuple[str, Any]]:
    """The registered components of ``section`` whose own config has ``key``, each with its
    default there."""
    if section not in COMPONENT_SECTIONS:
        return []
    registry = COMPONENT_SECTIONS[section]
    owners = []
    for name in registry.names():
        config = registry.entry(name).config
        for item in dataclasses.fields(config) if config is not None else ():
            if item.name == key:
                default = item.default_factory() if item.default is dataclasses.MISSING else item.default
                owners.append((name, default))
    return owners


def coerce(value: Any, kind: Any, path: str):
    origin = typing.get_origin(kind)
    if origin is list:
        if not isinstance(value, list):
            raise WeanError(f"config: {path} must be a list, got {value!r}")
        (item,) = typing.get_args(kind)
        return [coerce(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise WeanError(f"config: {path} must be a mapping, got {value!r}")
        key_kind, value_kind = typing.get_args(kind)
        return {coerce(k, key_kind, path): coerce(v, value_kind, f"{path}.{k}") for k, v in value.items()}
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise WeanError(f"config: {path} must be {kind.__name__}, got {value!r}")
    return value
