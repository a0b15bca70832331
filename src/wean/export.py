"""A trained model directory made into one to ship: the selected weights alone (no checkpoints,
no logs), optionally in fp16, generation settings changed for its users, and the models it
reranks with and the other members of its ensemble carried inside it. fp16 halves the size; the
weights are cast back to fp32 when loaded, so inference runs as before."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from wean.config import apply_overrides, config_from_dict
from wean.errors import WeanError
from wean.inference.rerank import resolve
from wean.model_dir import (
    ENSEMBLE_FOLDER, RERANKER_FOLDER, check_directory, clear_model_files, load_assets, load_members,
    write_model_directory,
)
from wean.models.model import build_model
from wean.search_options import parse_rerank, parse_threshold
from wean.tensor_files import WEIGHTS, load_weights


def export_model(source: Path, target: Path, fp16: bool = False, overrides: list[str] | None = None,
                 overwrite: bool = False, trust_plugins: bool = False, rerank: str | None = None) -> int:
    """Write ``target`` from the model directory ``source``; returns the weights' size in bytes.
    A ``target`` that holds anything is refused unless ``overwrite`` (which removes its model files).
    ``rerank``: NAME=WEIGHT,... the exported model reranks with by itself (``generation.rerank``);
    each model directory a scorer names (``channel:DIR``, ``lm:DIR``) is exported with it, into
    ``target/reranker/NAME``, reading text as the exported model does. Without it, the reranking
    models a source that reranks by itself keeps in its directory are exported with it; so are the
    channel model of its fallback (``generation.fallback_channel``) and the other members of its
    ensemble (``generation.ensemble``, into ``target/ensemble/N``; members named by ``overrides``
    are read from the current directory, those of the source's config inside it)."""
    assets = load_assets(source, trust_plugins)
    overrides = overrides or []
    for override in overrides:
        if not override.startswith("generation."):
            raise WeanError(f"--set {override!r}: only generation.* settings can change after training")
    config = config_from_dict(apply_overrides(assets.config.to_dict(), overrides))
    config.model_dir = str(target)  # where it now is, not the training machine's run directory
    carried = []  # (model directory, its folder in target)
    fresh = []  # the folders of models --rerank names: they read text as the exported model does
    if rerank is None:  # the source's own reranking models, at the same places
        for name, _ in parse_rerank(config.generation.rerank):
            scorer, colon, argument = name.partition(":")
            if colon and not Path(argument).is_absolute() and (source / argument / "config.yaml").is_file():
                carried.append((source / argument, argument))
    else:
        resolve(rerank)  # every scorer known and every DIR a model directory: one line, before anything is written
        chosen = []
        for name, weight in parse_rerank(rerank):
            scorer, colon, argument = name.partition(":")
            if colon and (Path(argument) / "config.yaml").is_file():
                folder = f"{RERANKER_FOLDER}/{scorer}"
                if folder in [taken for _, taken in carried]:  # two models of one kind
                    folder += f"-{len(carried)}"
                carried.append((Path(argument), folder))
                fresh.append(folder)
                name = f"{scorer}:{folder}"
            chosen.append(f"{name}={weight!r}")
        config.generation.rerank = ",".join(chosen)
        config.validate()
    if config.generation.fallback_channel:  # the fallback's channel model, where the source keeps it
        channel, _ = parse_threshold(config.generation.fallback_channel)
        if not Path(channel).is_absolute() and (source / channel / "config.yaml").is_file() \
                and channel not in [folder for _, folder in carried]:
            carried.append((source / channel, channel))
    if config.generation.ensemble:  # its other members, wherever they are, into ensemble/1, ensemble/2, ...
        given_here = any(override.split("=", 1)[0].strip() == "generation.ensemble" for override in overrides)
        members = [member for member, _ in load_members(source, assets, trust_plugins, config,
                                                         base=Path.cwd() if given_here else None)]
        folders = [f"{ENSEMBLE_FOLDER}/{number}" for number in range(1, len(members) + 1)]
        carried += zip(members, folders)
        config.generation.ensemble = folders
    model = build_model(config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
    load_weights(model, source / WEIGHTS)
    if target.resolve() == source.resolve():
        raise WeanError(f"{target}: export needs a new directory, not the model's own")
    for directory, _ in carried:  # writing the target must not touch a model it copies
        inside = target.resolve(), directory.resolve()
        if inside[0] == inside[1] or inside[0] in inside[1].parents or inside[1] in inside[0].parents:
            raise WeanError(f"{target}: overlaps {directory}, which it would carry; export to another directory")
    check_directory(target, overwrite)
    if overwrite and target.exists():
        clear_model_files(target, keep=source)
    write_model_directory(source, target, dataclasses.replace(assets, config=config), model.half() if fp16 else model)
    # searches tell a reranking or fallback model how to read their text; its own
    # generation.plain_text is what it reads when loaded by itself (choose_guard.py, the reverse
    # metric), so a model the source carries keeps it unless the export sets generation.plain_text
    plain_text = f"generation.plain_text={str(config.generation.plain_text).lower()}"
    plain_text_set = any(override.split("=", 1)[0].strip() == "generation.plain_text" for override in overrides)
    for directory, folder in carried:
        carried_overrides = [plain_text] if folder in fresh or plain_text_set else []
        if folder.startswith(ENSEMBLE_FOLDER + "/"):  # a member's own search settings are never read
            carried_overrides += ['generation.rerank=""', 'generation.fallback_channel=""']
        export_model(directory, target / folder, fp16, carried_overrides, overwrite, trust_plugins)
    return (target / WEIGHTS).stat().st_size
