"""What a run that starts from a trained model (``training.init_from``) takes from it: its
tokenizer and vocabularies, and its weights (an fp16 export's cast back to float32), but only
where this run's config builds the same network over the same tokens: the same model section,
tokenizer (how the corpus was tokenized aside, which only turns plain text into model text),
control tokens and direction. Fairseq's ``--restore-file`` with its ``--reset-*`` flags, or Joey
NMT's ``load_model``: the optimizer, the schedule and the counts start afresh."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from wean.config import Config
from wean.errors import WeanError
from wean.model_dir import Assets, load_assets
from wean.search_options import parse_rerank, parse_threshold
from wean.tensor_files import WEIGHTS


def assets_to_fine_tune(directory: Path, config: Config) -> Assets:
    """The starting model's tokenizer and vocabularies, under this run's ``config``."""
    key = "config: training.init_from"
    if not (directory / "config.yaml").is_file():
        raise WeanError(f"{key}: {directory}: not a model directory (no config.yaml)")
    if not (directory / WEIGHTS).is_file():
        raise WeanError(f"{key}: {directory}: no {WEIGHTS}; start from a finished run or an export")
    if any(not Path(member).is_absolute() for member in config.generation.ensemble):
        raise WeanError(f"{key}: generation.ensemble names models inside the starting model; a run trains one "
                        "model (--set generation.ensemble=[])")
    saved = load_assets(directory)
    for name, before, now in _weights_depend_on(saved.config, config):
        difference = _first_difference(before, now, name)
        if difference:
            path, there, here = difference
            raise WeanError(f"{key}: {directory}: {path} is {there!r} there and {here!r} here; a run starts from a "
                            "model only with its architecture and tokens (take its config.yaml as yours)")
    return Assets(config, saved.tokenizer, saved.source_vocabulary, saved.target_vocabulary)


def carry_generation_models(start: Path, config: Config, directory: Path) -> list[str]:
    """The models this run's generation settings name inside the model directory (the fallback's
    channel model, reranking models) copied from the starting model into the run's ``directory``,
    so that the tuned model is used as the starting one was; the folders copied."""
    generation = config.generation
    named = [parse_threshold(generation.fallback_channel)[0]] if generation.fallback_channel else []
    for name, _ in parse_rerank(generation.rerank):
        _, colon, argument = name.partition(":")
        if colon:
            named.append(argument)
    copied = []
    for folder in dict.fromkeys(named):
        if not Path(folder).is_absolute() and (start / folder / "config.yaml").is_file():
            shutil.copytree(start / folder, directory / folder, dirs_exist_ok=True)
            copied.append(folder)
    return copied


def _weights_depend_on(saved: Config, config: Config):
    """(name, the starting model's, this run's) of each setting its weights depend on."""
    def tokens(c: Config) -> dict:
        return dataclasses.asdict(dataclasses.replace(c.data.tokenizer, corpus_tokenization="none"))
    yield "model", dataclasses.asdict(saved.model), dataclasses.asdict(config.model)
    yield "data.tokenizer", tokens(saved), tokens(config)
    yield "data.control", dataclasses.asdict(saved.data.control), dataclasses.asdict(config.data.control)
    yield "data.direction", saved.data.direction, config.data.direction


def _first_difference(before, now, path: str):
    """(dotted key, value there, value here) of the first setting that differs; None if none."""
    if isinstance(before, dict) and isinstance(now, dict):
        for key in sorted(before.keys() | now.keys()):
            found = _first_difference(before.get(key), now.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    return None if before == now else (path, before, now)
