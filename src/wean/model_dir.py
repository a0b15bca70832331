"""What a model directory holds besides weights: the resolved configuration, the tokenizer and
the vocabularies. Everything :func:`wean.load` needs to turn text into outputs."""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from wean.config import Config, load_config
from wean.control import Control
from wean.data.tokenizers import SentencePieceTokenizer, Tokenizer, load_tokenizer
from wean.data.vocabulary import Vocabulary
from wean.errors import WeanError
from wean.tensor_files import WEIGHTS, remove_leftovers, save_weights
from wean.textio import atomic_write_bytes, atomic_write_json, atomic_write_text, file_digest, is_file, read_json


@dataclass
class Assets:
    config: Config
    tokenizer: Tokenizer
    source_vocabulary: Vocabulary
    target_vocabulary: Vocabulary

    @property
    def control(self) -> Control:
        """The model's control attributes and their default values (empty without control tokens)."""
        return Control.from_config(self.config)


CONTROL_COUNTS = "control-counts.json"
SHORTLIST = "shortlist.safetensors"  # the vocabulary shortlist's table (wean.inference.shortlist)


def write_control_counts(directory: Path, assets: Assets, examples) -> None:
    """How many training pairs carried each control token: a value never seen in training has an
    untrained embedding, so tune-control leaves it out. ``examples`` are encoded training pairs,
    whose sources start with the control tokens."""
    attributes = len(assets.control.attributes)
    itos = assets.source_vocabulary.itos
    counts = Counter(itos[i] for example in examples for i in example.source[:attributes])
    atomic_write_json(directory / CONTROL_COUNTS, dict(sorted(counts.items())))


def read_control_counts(directory: Path) -> dict[str, int] | None:
    """The counts written at training time; None for a model trained before they were kept."""
    path = directory / CONTROL_COUNTS
    if not path.exists():
        return None
    counts = read_json(path)
    if not isinstance(counts, dict) or not all(isinstance(v, int) for v in counts.values()):
        raise WeanError(f"{path}: not a JSON object of token counts")
    return counts


PLUGIN_DIGESTS = "plugins.json"  # the sha256 of each plug-in file the config names, when it was saved


PLUGIN_FOLDER = "plugins"  # a model directory's copies of its plug-in files


def plugin_key(directory: Path, plugin: str) -> str:
    """How a model directory's config and plugins.json name a plug-in file: relative to the
    directory for its own copies (so the directory can move), as given for any other."""
    path = Path(plugin).expanduser()
    try:
        return path.resolve().relative_to(directory.resolve()).as_posix()
    except ValueError:
        return plugin


def _recorded_digests(directory: Path) -> dict[str, str]:
    """plugins.json: each plug-in file's sha256 when the model directory was written ({} if none)."""
    path = directory / PLUGIN_DIGESTS
    if not path.exists():
        return {}
    recorded = read_json(path)
    if not isinstance(recorded, dict) or not all(isinstance(value, str) for value in recorded.values()):
        raise WeanError(f"{path}: not a JSON object of plug-in files and their sha256")
    return recorded


def check_plugin_digests(directory: Path, plugins: list[str]) -> None:
    """A plug-in file that changed since the model directory was written is refused in one line:
    the code that built the weights is not the code that would now load them."""
    recorded = _recorded_digests(directory) if plugins else {}
    for raw in plugins:
        file, key = Path(raw).expanduser(), plugin_key(directory, raw)
        if key in recorded and is_file(file) and file_digest(file) != recorded[key]:
            raise WeanError(f"{raw}: this plug-in file changed since {directory} was written (sha256 "
                            f"{recorded[key][:12]}... then, {file_digest(file)[:12]}... now); restore it, or "
                            f"delete {directory / PLUGIN_DIGESTS} to accept the new code")


def check_resumed_plugins(directory: Path, plugins: list[str]) -> None:
    """On --resume: each plug-in file of the config given is, by content, one the run was trained
    with; a changed one is refused in one line before anything loads."""
    recorded = _recorded_digests(directory) if plugins else {}
    for raw in plugins:
        file = Path(raw).expanduser()
        if recorded and is_file(file) and file_digest(file) not in recorded.values():
            raise WeanError(f"{raw}: this plug-in file changed since {directory} was trained with it; restore it "
                            "to resume, or train into a new directory")


def copy_plugins(directory: Path, plugins: list[str]) -> list[str]:
    """Each plug-in file copied into ``directory``/plugins/ (a model travels with its code, and
    loads from any working directory); the names the directory's config gives them."""
    names = []
    for raw in plugins:
        source = Path(raw).expanduser()
        if not source.is_file():
            names.append(raw)
            continue
        folder = directory / PLUGIN_FOLDER
        target, copy = folder / source.name, 1
        while any(Path(name).name == target.name for name in names):  # two plug-ins of one file name
            target, copy = folder / f"{source.stem}-{copy}{source.suffix}", copy + 1
        if source.resolve() != target.resolve():
            folder.mkdir(exist_ok=True)
            atomic_write_bytes(target, source.read_bytes())
        names.append(plugin_key(directory, str(target)))
    return names


MODEL_FOLDERS = frozenset({"checkpoints", "tensorboard", PLUGIN_FOLDER})
# what wean writes into a model directory (training, export, tune-control); --overwrite removes these
MODEL_FILES = frozenset({
    "config.yaml", "vocab.json", "vocab.src.json", "vocab.tgt.json", "sentencepiece.model", "tokenizer.json",
    "model.safetensors", "best.json", "train.log", "validations.json", "checkpoints", "tensorboard",
    CONTROL_COUNTS, PLUGIN_DIGESTS, PLUGIN_FOLDER, "control-tuning.json", "control-tuning-unmet.json",
    SHORTLIST,
})


def check_directory(directory: Path, overwrite: bool) -> None:
    """Before a new model is written into ``directory``: one that holds anything is refused in one
    line unless ``overwrite``, and even then unless it is a wean model directory (whose model
    files :func:`clear_model_files` removes, so that none of the old model is left beside the new)."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise WeanError(f"{directory}: not a directory")
    entries = sorted(path.name for path in directory.iterdir())
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        raise WeanError(f"{directory}: not empty ({shown}); choose another directory, or pass --overwrite to "
                        "replace the model there")
    looks_like_a_model = (directory / "config.yaml").is_file() and any(
        (directory / name).exists() for name in ("model.safetensors", "tokenizer.json", "checkpoints/latest"))
    if not looks_like_a_model:
        raise WeanError(f"{directory}: --overwrite replaces a wean model directory, and this is none; choose an "
                        "empty directory")


def clear_model_files(directory: Path, keep: Path | None = None) -> None:
    """Remove what a model directory holds (MODEL_FILES: the files, and the checkpoints/ and
    tensorboard/ folders), nothing else; refused where ``keep`` lies inside what would go."""
    for name in MODEL_FILES:
        path = directory / name
        if keep is not None and (keep.resolve() == path.resolve() or path.resolve() in keep.resolve().parents):
            raise WeanError(f"{keep}: inside {path}, which --overwrite would remove")
    try:
        for name in sorted(MODEL_FILES):
            path = directory / name
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir() and name in MODEL_FOLDERS:
                shutil.rmtree(path)
    except OSError as error:
        raise WeanError(f"{directory}: cannot remove the old model's files: {error.strerror or error}") from None


def remove_leftovers_of_a_kill(directory: Path) -> list[str]:
    """The temporaries a kill during a save leaves beside a model directory's files and in its
    checkpoints/ (see :func:`wean.tensor_files.remove_leftovers`); the names removed or restored."""
    done = []
    for path in sorted(directory.glob("*.tmp")):
        stem = path.name[: -len(".tmp")]  # NAME or NAME.PID
        owner = stem.rsplit(".", 1)[0] if stem.rsplit(".", 1)[-1].isdigit() else stem
        if owner in MODEL_FILES and path.is_file():
            path.unlink()
            done.append(path.name)
    return done + [f"checkpoints/{name}" for name in remove_leftovers(directory / "checkpoints")]


def save_assets(directory: Path, assets: Assets) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    values = assets.config.to_dict()
    values["plugins"] = copy_plugins(directory, assets.config.plugins)
    atomic_write_text(directory / "config.yaml", yaml.safe_dump(values, sort_keys=False))
    digests = {name: file_digest(directory / name) for name in values["plugins"] if (directory / name).is_file()}
    if digests:
        atomic_write_json(directory / PLUGIN_DIGESTS, digests)
    assets.tokenizer.save(directory)
    if assets.config.data.tokenizer.shared_vocab:
        assets.source_vocabulary.save(directory / "vocab.json")
    else:
        assets.source_vocabulary.save(directory / "vocab.src.json")
        assets.target_vocabulary.save(directory / "vocab.tgt.json")


def write_model_directory(source: Path, target: Path, assets: Assets, model: torch.nn.Module) -> None:
    """``target`` as a model directory of ``model`` with ``assets``, and the records of how
    ``source``'s default control values were chosen and which values training saw (for
    tune-control), and its shortlist table."""
    save_assets(target, assets)
    save_weights(model, target / WEIGHTS)
    for record in (source / "control-tuning.json", source / CONTROL_COUNTS, source / SHORTLIST):
        if record.exists():
            atomic_write_bytes(target / record.name, record.read_bytes())


def load_assets(directory: Path, trust_plugins: bool = False) -> Assets:
    """A model directory's configuration, tokenizer and vocabularies. A plug-in file its config
    names is imported only with ``trust_plugins`` or if the user has imported it already."""
    if not directory.is_dir():
        raise WeanError(f"{directory}: model directory not found")
    config_path = directory / "config.yaml"
    if not config_path.is_file():
        raise WeanError(f"{config_path}: not found; is {directory} a wean model directory?")
    if not config_path.read_text(encoding="utf-8", errors="replace").strip():
        # defaults would build another architecture, and the weights would be blamed
        raise WeanError(f"{config_path}: empty; a model directory's config names its architecture")
    # its errors name the file (and the line of bad YAML); the digests are checked before any plug-in is imported
    config = load_config(config_path, trust_plugins=trust_plugins,
                         check_plugins=lambda plugins: check_plugin_digests(directory, plugins))
    tokenizer = load_tokenizer(directory)
    if config.data.tokenizer.shared_vocab:
        source = target = Vocabulary.load(directory / "vocab.json")
    else:
        source, target = Vocabulary.load(directory / "vocab.src.json"), Vocabulary.load(directory / "vocab.tgt.json")
    check_tokenizer(directory, config, tokenizer, target)
    return Assets(config, tokenizer, source, target)


def check_tokenizer(directory: Path, config: Config, tokenizer: Tokenizer, vocabulary: Vocabulary) -> None:
    """The tokenizer files against config.yaml and the vocabulary: another tokenizer's files
    would turn every input into other tokens, and every output into garbage, without an error."""
    settings = config.data.tokenizer
    if tokenizer.kind != settings.type or tokenizer.lowercase != settings.lowercase:
        raise WeanError(f"{directory / 'tokenizer.json'}: a {tokenizer.kind} tokenizer (lowercase "
                        f"{str(tokenizer.lowercase).lower()}), but config.yaml says data.tokenizer.type {settings.type}, "
                        f"lowercase {str(settings.lowercase).lower()}")
    if isinstance(tokenizer, SentencePieceTokenizer):
        # every vocabulary entry is a piece of the model, but wean's specials and control tokens
        stray = [token for token in vocabulary.itos
                 if not (token.startswith("<") and token.endswith(">")) and not tokenizer.has_piece(token)]
        if stray:
            raise WeanError(f"{directory / tokenizer.MODEL_FILE}: not the tokenizer of this vocabulary "
                            f"({len(stray):,} of its entries are no piece of it, e.g. {stray[0]!r})")
