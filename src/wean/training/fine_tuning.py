"""What a run that starts from a trained model (``training.init_from``) takes from it: its
tokenizer and vocabularies, its weights (an fp16 export's cast back to float32) and the models
its generation settings name inside it (a fallback's channel model, reranking models), once
this run's config builds the same network over the same tokens: the same model section (but
for what only shapes training: dropout, initialization, the source of pretrained embeddings),
tokenizer (how the corpus was tokenized aside), control tokens and direction. As fairseq's
``--finetune-from-model``, or Joey NMT's ``load_model`` with its three resets: the optimizer,
the schedule, the counts and the best score start afresh, and a resumed run reads its own
checkpoints instead."""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

from wean.config import Config
from wean.errors import UntrustedPlugins, WeanError
from wean.model_dir import Assets, carried_scorers, load_assets
from wean.models.model import EncoderDecoder, build_model
from wean.tensor_files import WEIGHTS, load_weights

# model settings that change how a network trains, not what its weights mean
TRAINING_ONLY = frozenset({"dropout", "init_range", "pretrained", "freeze", "coverage_loss"})


@dataclass
class StartingModel:
    directory: Path
    assets: Assets  # its tokenizer and vocabularies, under the run's config
    model: EncoderDecoder  # built by the run's config, with its weights
    carried: list[str]  # the folders of the models the run's generation settings name inside it


def starting_model(config: Config, run_directory: Path) -> StartingModel:
    """``training.init_from``'s model, checked against this run's ``config`` before anything of the
    run is written."""
    key = "config: training.init_from"
    directory = Path(config.training.init_from).expanduser()
    if not (directory / "config.yaml").is_file():
        raise WeanError(f"{key}: {directory}: not a model directory (no config.yaml)")
    if not (directory / WEIGHTS).is_file():
        raise WeanError(f"{key}: {directory}: no {WEIGHTS}; start from a finished run or an export")
    here, there = run_directory.resolve(), directory.resolve()
    if here == there or here in there.parents or there in here.parents:
        raise WeanError(f"{key}: {directory} and model_dir {run_directory} overlap; train into another directory")
    if any(not Path(member).is_absolute() for member in config.generation.ensemble):
        raise WeanError(f"{key}: generation.ensemble names models inside the starting model; a run trains one "
                        "model (--set generation.ensemble=[])")
    carried = []
    for path in carried_scorers(directory, config):
        folder = path.relative_to(directory)
        if ".." in folder.parts:
            raise WeanError(f"config: generation: {folder} is outside the model directory; name it by an absolute path")
        if not (path / "config.yaml").is_file():
            raise WeanError(f"{key}: {directory}: holds no model at {folder}, which generation.rerank or "
                            "generation.fallback_channel names")
        carried.append(str(folder))
    try:
        saved = load_assets(directory)
    except UntrustedPlugins as error:  # wean train runs only the plug-ins its own config names
        raise WeanError(f"{key}: {directory} names plug-in code ({', '.join(error.plugins)}) that this run's "
                        "config does not import: name those files (or copies of them) under plugins: in yours") from None
    for name, before, now in _architecture_and_tokens(saved.config, config):
        difference = _first_difference(before, now, name)
        if difference:
            path, was, asked = difference
            raise WeanError(f"{key}: {directory}: {path} is {was!r} there and {asked!r} here; a run starts from a "
                            "model only with its architecture and tokens (take its config.yaml as yours)")
    assets = Assets(config, saved.tokenizer, saved.source_vocabulary, saved.target_vocabulary)
    model = build_model(config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
    load_weights(model, directory / WEIGHTS)
    return StartingModel(directory, assets, model, carried)


def carry_generation_models(start: StartingModel, run_directory: Path) -> None:
    """The starting model's generation models copied into the run, so that the tuned model is used
    as the starting one was."""
    for folder in start.carried:
        shutil.copytree(start.directory / folder, run_directory / folder, dirs_exist_ok=True)


def _architecture_and_tokens(saved: Config, config: Config):
    """(name, the starting model's, this run's) of each setting its weights depend on."""
    def tokens(c: Config) -> dict:
        return dataclasses.asdict(dataclasses.replace(c.data.tokenizer, corpus_tokenization="none"))
    yield "model", dataclasses.asdict(saved.model), dataclasses.asdict(config.model)
    yield "data.tokenizer", tokens(saved), tokens(config)
    yield "data.control", dataclasses.asdict(saved.data.control), dataclasses.asdict(config.data.control)
    yield "data.direction", saved.data.direction, config.data.direction


def _first_difference(before, now, path: str):
    """(dotted key, value there, value here) of the first setting that differs, those of
    TRAINING_ONLY aside; None if none."""
    if isinstance(before, dict) and isinstance(now, dict):
        for key in sorted(before.keys() | now.keys()):
            if key in TRAINING_ONLY:
                continue
            found = _first_difference(before.get(key), now.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    return None if before == now else (path, before, now)
