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

import difflib
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
    # what it declares it can do, where its kind asks (a search strategy's: wean.search_options.Capabilities)
    capabilities: Any = None


class Registry:
    def __init__(self, kind: str, *builtins: str):
        self.kind = kind  # what the error messages call an entry, e.g. "encoder"
        self._builtins = builtins  # the modules whose import registers wean's own entries
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, config: type | None = None, capabilities: Any = None) -> Callable:
        def decorate(component):
            known = self._entries.get(name)
            if known is not None and known.component != component:  # equal: the same registration again
                raise WeanError(f"{self.kind} {name!r} is registered already (by {_where(known.component)})")
            self._entries[name] = Entry(name, component, config, capabilities)
            return component

        return decorate

    def _load_builtins(self) -> None:
        for module in self._builtins:
            importlib.import_module(module)

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
# what `wean evaluate --metrics` and benchmarks name; reverse, which needs a model, registers with inference
METRICS = Registry("metric", "wean.evaluation.evaluate", "wean.inference.reverse_metric")
STRATEGIES = Registry("search strategy", "wean.search")  # generation.strategy, --strategy
RERANKERS = Registry("reranking scorer", "wean.inference.rerank", "wean.inference.model_scores")  # --rerank NAME=WEIGHT

# score keys: what a record of scores holds, and which way each is better (a metric declares its own)


def validation_directions() -> dict[str, str]:
    """Keys every validation record holds besides the metrics' own."""
    return {"loss": "lower", "perplexity": "lower"}


def score_key(key: str) -> tuple[str | None, str | None]:
    """(the registered metric that reports ``key``, whether higher or lower is better); the
    validation loss and perplexity belong to no metric. An unknown key is one line."""
    if key in validation_directions():
        return None, validation_directions()[key]
    for name in METRICS.names():
        keys = METRICS.get(name).keys
        if key in keys:
            return name, keys[key]
    known = sorted({k for n in METRICS.names() for k in METRICS.get(n).keys} | set(validation_directions()))
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise WeanError(f"no registered metric reports {key!r}; {hint}known score keys: {', '.join(known)}")


def selectable_key(key: str, what: str) -> tuple[str | None, str]:
    """:func:`score_key` of a key that ``what`` optimises: it must have a direction."""
    try:
        name, direction = score_key(key)
    except WeanError as error:
        raise WeanError(f"{what}: {error}") from None
    if direction is None:
        raise WeanError(f"{what}: {key!r} is neither better high nor low (it describes outputs); choose another key")
    return name, direction


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
