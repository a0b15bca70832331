"""Config files: YAML read safely within bounds, presets over their ``base`` files, ``--set
key=value`` overrides, and the plug-ins a file names imported only where trusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from wean.config.schema import Config, config_from_dict
from wean.config.sections import coerce
from wean.errors import UntrustedPlugins, WeanError
from wean.registry import plugin_loaded
from wean.textio import read_file


def apply_overrides(values: dict, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` strings (values parsed as YAML) to a nested dict."""
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key:
            raise WeanError(f"--set {override!r}: expected key=value, e.g. training.learning_rate=0.0005")
        node = values
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise WeanError(f"--set {override!r}: {part} is not a section")
        node[leaf] = parse_yaml(raw, f"--set {key.strip()}")
    return values


# a config is a few KB; these refuse what only an attack or a mistake writes (an alias bomb
# expands 2 KB of YAML into gigabytes of values) before it is expanded
MAX_CONFIG_BYTES = 1 << 20
MAX_CONFIG_VALUES = 100_000  # scalars, lists and mappings, each alias counted as what it expands to
MAX_CONFIG_DEPTH = 50


def parse_yaml(text: str, where: str) -> Any:
    """YAML (safe: no Python objects) within MAX_CONFIG_VALUES and MAX_CONFIG_DEPTH, counted on
    the parsed graph before any alias is expanded; ``where`` names the text in errors."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise WeanError(f"{where}: nested deeper than {MAX_CONFIG_DEPTH} levels") from None
        except yaml.YAMLError as error:
            if where.startswith("--set"):  # a file's errors are named with their line by _read_yaml
                raise WeanError(f"{where}: not valid YAML ({getattr(error, 'problem', None) or error})") from None
            raise
        if node is None:
            return None
        _check_expanded_size(node, where)
        try:
            return loader.construct_document(node)
        except ValueError as error:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            raise WeanError(f"{where}: a value that cannot be read as a number ({str(error).split(';')[0]})") from None
    finally:
        loader.dispose()


def _check_expanded_size(root: yaml.Node, where: str) -> None:
    sizes: dict[int, int] = {}  # per node, shared by its aliases: linear in the text's size
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_CONFIG_DEPTH:
            raise WeanError(f"{where}: nested deeper than {MAX_CONFIG_DEPTH} levels")
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_nodes:
            raise WeanError(f"{where}: an alias refers to a value that contains it")
        open_nodes.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else (
            [item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode) else [])
        total = 1 + sum(size(child, depth + 1) for child in children)
        open_nodes.discard(id(node))
        if total > MAX_CONFIG_VALUES:
            raise WeanError(f"{where}: more than {MAX_CONFIG_VALUES:,} values once its aliases are expanded")
        sizes[id(node)] = total
        return total

    size(root, 1)


def _read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """A config file's values, with those of its ``base`` file (relative to it) underneath: a
    preset names its base and only the keys that differ. ``base`` may be a list of files, read in
    order, each over the ones before (a preset and a training schedule). Mappings merge key by
    key; any other value (a list included) replaces the base's."""
    if not path.exists():
        raise WeanError(f"{path}: config file not found")
    try:
        values = parse_yaml(read_file(path, MAX_CONFIG_BYTES).decode("utf-8"), str(path)) or {}
    except UnicodeDecodeError:
        raise WeanError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise WeanError(f"{path}{line}: not valid YAML ({getattr(error, 'problem', error)})") from None
    if isinstance(values, dict) and isinstance(values.get("plugins"), list):
        # like base: a relative path is the config file's neighbour, wherever wean runs from
        values["plugins"] = [str(path.parent.resolve() / item) if isinstance(item, str)
                             and not Path(item).expanduser().is_absolute() else item for item in values["plugins"]]
    if not isinstance(values, dict) or "base" not in values:
        return values
    bases = values.pop("base")
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not bases or not all(isinstance(base, str) for base in bases):
        raise WeanError(f"{path}: base must be the path of another config file, or a list of them; got {bases!r}")
    merged: dict = {}
    for base in bases:
        base_path = (path.parent / base).resolve()
        if base_path in seen or base_path == path.resolve():
            raise WeanError(f"{path}: base {base} leads back to itself")
        merged = _merged(merged, _read_yaml(base_path, (*seen, path.resolve())))
    return _merged(merged, values)


def _merged(base: dict, values: dict) -> dict:
    """``values`` over ``base``, section by section; a key set to null takes wean's default,
    whatever the base says."""
    merged = dict(base)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _without_nulls(values: dict) -> dict:
    """A key set to null takes wean's default: it is left out, at any depth."""
    return {key: _without_nulls(value) if isinstance(value, dict) else value
            for key, value in values.items() if value is not None}


def load_config(path: str | Path | Sequence[str | Path], overrides: list[str] | None = None,
                trust_plugins: bool = True, check_plugins: Callable[[list[str]], None] | None = None) -> Config:
    """The config of a YAML file, or of several read in order, each over the ones before (as if
    each named the ones before as its ``base``). Without ``trust_plugins`` (a model directory's
    config: data, not code), a plug-in file it names is imported only if the user has imported it
    already (``--plugins``); any other is refused in one line. ``check_plugins(paths)``, called
    once they are allowed and before any is imported, may refuse them too."""
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    where = " + ".join(str(each) for each in paths)  # what errors name
    values: dict = {}
    for each in paths:
        read = _read_yaml(each)
        if not isinstance(read, dict):
            raise WeanError(f"{each}: a config file is a mapping of sections (data:, model:, ...)")
        values = _merged(values, read)
    values = _without_nulls(values)
    plugins = coerce(values["plugins"], list[str], "plugins") if values.get("plugins") else []
    if not trust_plugins and plugins:
        untrusted = [raw for raw in plugins if not plugin_loaded(raw)]
        if untrusted:
            raise UntrustedPlugins(
                f"{where}: names plug-in code ({', '.join(untrusted)}), which loading a model directory does not run "
                "unless asked: pass --trust-plugins (wean.load(..., trust_plugins=True)), or import a file you have "
                "read with --plugins FILE", untrusted)
    if plugins and check_plugins is not None:
        check_plugins(plugins)
    try:
        return config_from_dict(apply_overrides(values, overrides or []), import_plugins=trust_plugins)
    except WeanError as error:
        raise WeanError(f"{where}: {error}") from None
