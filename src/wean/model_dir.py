"""What a model directory holds: the resolved configuration, the tokenizer and the vocabularies
(everything :func:`wean.load` needs to turn text into outputs besides the weights), the weights
and checkpoints, copies of its plug-ins, the members of an ensemble it carries; writing one,
reading one, and ``wean verify``: whether one is whole (its config, tokenizer and vocabularies
agree; every safetensors file, the model's and each checkpoint's, has the sha256 written with it
and tensors that fit the architecture, finite; the same for each member of its ensemble, which
must read and write its tokens)."""

from __future__ import annotations

import re
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
from wean.models.model import build_model
from wean.search_options import parse_rerank, parse_threshold
from wean.tensor_files import WEIGHTS, load_weights, read_tensors, remove_leftovers, save_weights
from wean.textio import (
    atomic_write_bytes, atomic_write_json, atomic_write_text, file_digest, is_file, read_file, read_json,
)


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
KERNELS_CHOSEN = "kernels.json"  # what training.kernels: auto chose for a run, which its resumes keep


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


# the files that turn text into ids and back: a swapped pair of words or a flipped byte in one loads
# without an error and writes wrong words, so each one's sha256 is kept beside them
TOKENIZER_FILES = ("sentencepiece.model", "tokenizer.json")  # an ensemble's members must have the same
TOKEN_FILES = ("vocab.json", "vocab.src.json", "vocab.tgt.json", *TOKENIZER_FILES)
TOKEN_DIGESTS = "tokens.sha256.json"

# a checkpoint's folder, checkpoints/step-00001200; a kill may leave step-N.tmp, .old or .pruned beside it
CHECKPOINT_NAME = re.compile(r"step-(\d+)")


RERANKER_FOLDER = "reranker"  # where an exported model keeps the models it reranks with
ENSEMBLE_FOLDER = "ensemble"  # where it keeps the other members of its ensemble
MODEL_CARD = "MODEL_CARD.md"  # what people wrote about the model it came with; wrong of one written over it
# what belongs to the model a directory holds, written by others than a run or carried by an
# export: removed with that model, but no sign by itself that a directory holds one
DESCRIBING = frozenset({MODEL_CARD, RERANKER_FOLDER, ENSEMBLE_FOLDER})
MODEL_FOLDERS = frozenset({"checkpoints", "tensorboard", PLUGIN_FOLDER, RERANKER_FOLDER, ENSEMBLE_FOLDER})
# what a model directory holds (training, export and tune-control write it); --overwrite removes these
MODEL_FILES = frozenset({
    *MODEL_FOLDERS, *DESCRIBING, "config.yaml", "vocab.json", "vocab.src.json", "vocab.tgt.json",
    "sentencepiece.model", "tokenizer.json", "model.safetensors", "best.json", "train.log", "validations.json",
    CONTROL_COUNTS, PLUGIN_DIGESTS, "control-tuning.json", "control-tuning-unmet.json", SHORTLIST, TOKEN_DIGESTS,
    KERNELS_CHOSEN,
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
    if not looks_like_a_model and not all(_written_by_wean(path) and path.name not in DESCRIBING
                                          for path in directory.iterdir()):
        raise WeanError(f"{directory}: --overwrite replaces a wean model directory, and this is none; choose an "
                        "empty directory")


def _written_by_wean(path: Path) -> bool:
    """Whether a model directory's entry is one wean writes, of the kind it writes (a folder for
    checkpoints/, a file for config.yaml), or the temporary file of one that a kill left."""
    name = path.name
    if name.endswith(".tmp"):
        stem = name[: -len(".tmp")]  # NAME or NAME.PID
        name = stem.rsplit(".", 1)[0] if stem.rsplit(".", 1)[-1].isdigit() else stem
        return name in MODEL_FILES and name not in MODEL_FOLDERS and path.is_file()
    return name in MODEL_FILES and (path.is_dir() if name in MODEL_FOLDERS else path.is_file())


def unfinished_start(directory: Path) -> bool:
    """Whether ``directory`` holds a training run killed before its first checkpoint: some of what
    a run writes before it (its config, tokenizer, vocabularies, log) and nothing else: no
    checkpoint, no model, no file of anyone else's."""
    if not directory.is_dir() or (directory / "model.safetensors").exists():
        return False
    entries = list(directory.iterdir())
    checkpoints = directory / "checkpoints"
    # reranker/ too: a run started from a trained model copies the models its settings name first
    # (wean.training.fine_tuning)
    started = DESCRIBING - {RERANKER_FOLDER}
    return (bool(entries) and all(_written_by_wean(path) and path.name not in started for path in entries)
            and not (checkpoints.is_dir()
                     and any(CHECKPOINT_NAME.fullmatch(path.name) for path in checkpoints.iterdir())))


def clear_model_files(directory: Path, keep: Path | None = None) -> None:
    """Remove what a model directory holds (MODEL_FILES: the files, and the checkpoints/ and
    tensorboard/ folders, and the temporaries a kill left of them), nothing else; refused where
    ``keep`` lies inside what would go."""
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
        for path in sorted(directory.glob("*.tmp")):
            if _written_by_wean(path):
                path.unlink()
    except OSError as error:
        raise WeanError(f"{directory}: cannot remove the old model's files: {error.strerror or error}") from None


def remove_leftovers_of_a_kill(directory: Path) -> list[str]:
    """The temporaries a kill during a save leaves beside a model directory's files and in its
    checkpoints/ (see :func:`wean.tensor_files.remove_leftovers`); the names removed or restored."""
    done = []
    for path in sorted(directory.glob("*.tmp")):
        if _written_by_wean(path):
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
    atomic_write_json(directory / TOKEN_DIGESTS, {name: file_digest(directory / name) for name in TOKEN_FILES
                                                  if (directory / name).is_file()})


def check_token_digests(directory: Path, required: bool = False) -> None:
    """Each token file against the sha256 written with it; a directory written before wean kept
    them passes, unless ``required`` (wean verify: what has no digest cannot be verified)."""
    if not (directory / TOKEN_DIGESTS).exists():
        if required:
            raise WeanError(f"{directory}: no {TOKEN_DIGESTS} (written by an earlier wean), so damage to its "
                            "vocabularies and tokenizer cannot be detected; `wean export` writes a copy that has one")
        return
    recorded = read_json(directory / TOKEN_DIGESTS)
    if not isinstance(recorded, dict):
        raise WeanError(f"{directory / TOKEN_DIGESTS}: expected a JSON object of file names and sha256 digests")
    for name in TOKEN_FILES:
        path = directory / name
        if name in recorded and file_digest(path) != recorded[name]:
            raise WeanError(f"{path}: damaged: its sha256 differs from the one {TOKEN_DIGESTS} records (changed "
                            "bytes, or an edited file)")
        if path.is_file() and name not in recorded:
            raise WeanError(f"{path}: not in {TOKEN_DIGESTS}, which names every token file written with the model")


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
    if not config_path.exists():
        raise WeanError(f"{config_path}: not found; is {directory} a wean model directory?")
    if not read_file(config_path).decode("utf-8", errors="replace").strip():
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
    check_token_digests(directory)  # after reading, whose errors say more where a file does not parse
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


def check_same_vocabularies(directories: list[Path], assets: list) -> None:
    """One line naming the first model that reads or writes other tokens than the first one."""
    first, first_assets = directories[0], assets[0]
    for directory, other in zip(directories[1:], assets[1:]):
        for what, mine, theirs in (
            ("source vocabulary", first_assets.source_vocabulary.itos, other.source_vocabulary.itos),
            ("target vocabulary", first_assets.target_vocabulary.itos, other.target_vocabulary.itos),
            ("tokenizer", first_assets.config.data.tokenizer, other.config.data.tokenizer),
            ("control tokens", first_assets.config.data.control, other.config.data.control),
        ):
            if mine != theirs:
                raise WeanError(f"model {directory}: its {what} differs from {first}'s; an ensemble's models "
                                "must read and write the same tokens")
        for name in TOKENIZER_FILES:
            mine, theirs = first / name, directory / name
            if mine.is_file() != theirs.is_file() or (mine.is_file() and mine.read_bytes() != theirs.read_bytes()):
                raise WeanError(f"model {directory}: its {name} differs from {first}'s; an ensemble's models "
                                "must read and write the same tokens")


def ensemble_members(directory: Path, config: Config, base: Path | None = None) -> list[Path]:
    """The model directories ``config.generation.ensemble`` names, a relative one inside
    ``directory`` (or inside ``base``: the current directory, for names given on the command
    line); refused in one line where one is no model directory, or is named twice or is
    ``directory`` itself (its model would count twice in the average)."""
    members, seen = [], {directory.resolve()}
    for name in config.generation.ensemble:
        member = Path(name) if Path(name).is_absolute() else (directory if base is None else base) / name
        if not (member / "config.yaml").is_file():
            raise WeanError(f"{directory}: generation.ensemble: {name}: not a model directory (no config.yaml)")
        if member.resolve() in seen:
            raise WeanError(f"{directory}: generation.ensemble: {name} is named twice (or is the model itself)")
        seen.add(member.resolve())
        members.append(member)
    return members


def load_members(directory: Path, assets: Assets, trust_plugins: bool = False, config: Config | None = None,
                 base: Path | None = None) -> list[tuple[Path, Assets]]:
    """The other members of the ensemble the model in ``directory`` (its ``assets``; ``config``: a
    changed configuration of it) carries, each with its assets; refused in one line where a member
    carries an ensemble of its own or reads or writes other tokens. ``base``: see
    :func:`ensemble_members`."""
    config = config or assets.config
    members = [(member, load_assets(member, trust_plugins)) for member in ensemble_members(directory, config, base)]
    for member, its_assets in members:
        if its_assets.config.generation.ensemble:
            raise WeanError(f"{directory}: generation.ensemble: {member} names an ensemble of its own; "
                            "list its members in this one instead")
    if members:
        check_same_vocabularies([directory, *(m for m, _ in members)], [assets, *(a for _, a in members)])
    return members


def verify_model_directory(directory: Path, trust_plugins: bool = False) -> list[str]:
    """One line per file checked; the first damage raises a WeanError that names the file. A file
    without wean's digest is refused: it cannot be verified."""
    assets = load_assets(directory, trust_plugins)  # config, tokenizer against it, vocabularies
    check_token_digests(directory, required=True)
    report = [f"{directory}: config, tokenizer and vocabularies agree; sha256 of each token file matches"]
    model = build_model(assets.config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
    weights = [directory / WEIGHTS] if (directory / WEIGHTS).exists() else []
    checkpoints = sorted(path for path in (directory / "checkpoints").glob("step-*")
                         if path.is_dir() and CHECKPOINT_NAME.fullmatch(path.name))  # not what a kill left
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
    for carried in carried_scorers(directory, assets.config):
        report += verify_model_directory(carried, trust_plugins)
    return report


def carried_scorers(directory: Path, config: Config) -> list[Path]:
    """The model directories that ``config``'s reranking (``NAME:DIR`` of ``generation.rerank``) and
    fallback (``generation.fallback_channel``) read, those named relative to ``directory`` (which
    so carries them); each once."""
    named = [name.partition(":")[2].strip() for name, _ in parse_rerank(config.generation.rerank)]
    if config.generation.fallback_channel:
        named.append(parse_threshold(config.generation.fallback_channel)[0])
    carried = []
    for name in named:
        if name and not Path(name).is_absolute() and directory / name not in carried:
            carried.append(directory / name)
    return carried
