"""Registries: the names a config can choose, and what each name builds.

A component is a class registered under a name, with the config dataclass its section is read
into::

    from wean.registry import OUTPUT_LAYERS

    @OUTPUT_LAYERS.register("copy", config=CopyOutputConfig)   # CopyOutputConfig(OutputLayerConfig)
    class CopyOutput(OutputLayer): ...

and ``model.output_layer.type: copy`` selects it; config validation and error messages list the
registered names. wean's own components register in their modules, which :meth:`Registry.get`
imports on first use (this module imports no torch). A user's components register in a file of
their own, named in the config's ``plugins`` list (see :func:`load_plugins`), as fairseq's
``--user-dir``: no edit to wean.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from wean.errors import WeanError
from wean.textio import file_digest


@dataclass(frozen=True)
class Entry:
    name: str
    component: Any  # the class (or function) registered
    config: type | None  # the dataclass its config section is read into; None: the section's default


class Registry:
    def __init__(self, kind: str, builtins: str):
        self.kind = kind  # what the error messages call an entry, e.g. "encoder"
        self._builtins = builtins  # the module whose import registers wean's own entries
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, config: type | None = None) -> Callable:
        def decorate(component):
            known = self._entries.get(name)
            if known is not None and known.component != component:  # equal: the same registration again
                raise WeanError(f"{self.kind} {name!r} is registered already (by {_where(known.component)})")
            self._entries[name] = Entry(name, component, config)
            return component

        return decorate

    def _load_builtins(self) -> None:
        importlib.import_module(self._builtins)

    def names(self) -> list[str]:
        self._load_builtins()
        return list(self._entries)

    def entry(self, name: str, key: str | None = None) -> Entry:
        """The entry of ``name``; unknown names are one line naming the config ``key``."""
        self._load_builtins()
        if name not in self._entries:
            where = f"config: {key} is {name!r}" if key else f"unknown {self.kind} {name!r}"
            raise WeanError(f"{where}; choose one of {', '.join(self._entries)}")
        return self._entries[name]

    def get(self, name: str, key: str | None = None) -> Any:
        return self.entry(name, key).component


def _where(component) -> str:
    component = getattr(component, "origin", None) or component  # a metric: the function registered
    return f"{getattr(component, '__module__', '?')}.{getattr(component, '__qualname__', component)}"


ENCODERS = Registry("encoder", "wean.models")
DECODERS = Registry("decoder", "wean.models")
OUTPUT_LAYERS = Registry("output layer", "wean.models")
ENCODER_TRANSFORMS = Registry("encoder transform", "wean.models")  # built where the model config asks
AUXILIARY_LOSSES = Registry("auxiliary loss", "wean.models")  # built where the model config asks
TOKENIZERS = Registry("tokenizer", "wean.data.tokenizers")
METRICS = Registry("metric", "wean.evaluation.evaluate")  # what `wean evaluate --metrics` and benchmarks name
STRATEGIES = Registry("search strategy", "wean.search")  # generation.strategy, --strategy
RERANKERS = Registry("reranking scorer", "wean.search.rerank")  # --rerank NAME=WEIGHT

_loaded_plugins: dict[Path, str] = {}
_loaded_code: set[str] = set()  # the sha256 of each file imported: a model directory's copy of one is the same code


def plugin_loaded(raw: str) -> bool:
    """Whether the file ``raw`` names, or a file of the same content (a model directory keeps a
    copy of its plug-ins), has been imported as a plug-in (by the user's --plugins, or by a config
    they gave)."""
    path = Path(raw).expanduser().resolve()
    return path in _loaded_plugins or (path.is_file() and file_digest(path) in _loaded_code)


def load_plugins(paths: list[str], option: str = "config: plugins") -> None:
    """Import each user file (once), so that the components it registers can be chosen by name;
    ``option`` names where the paths came from in error messages."""
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if path in _loaded_plugins:
            continue
        if not path.is_file():
            raise WeanError(f"{option}: {raw}: file not found")
        digest = file_digest(path)
        if digest in _loaded_code:  # a copy of a file imported already: its components are registered
            continue
        module_name = f"wean_plugin_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise WeanError(f"{option}: {raw}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except WeanError:
            del sys.modules[module_name]
            raise
        except Exception as error:  # a user's file: one line naming its line, not a traceback
            del sys.modules[module_name]
            frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
            line = f":{frames[-1].lineno}" if frames else ""
            raise WeanError(f"{option}: {raw}{line}: {type(error).__name__}: {error}") from None
        _loaded_plugins[path] = module_name
        _loaded_code.add(digest)
