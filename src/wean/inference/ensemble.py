"""Several trained models searched as one: at every step the next-word log-probabilities of the
models are averaged (OpenNMT-py's ``-model A B``; fairseq averages probabilities instead), and
the attention shown is the first model's. The ensemble is an :class:`EncoderDecoder` to every
search strategy: it encodes with each model and carries each model's decoder state, so any mix
of encoders, decoders and output layers works, as long as the models read and write the same
vocabularies with the same tokenizer (:func:`check_same_vocabularies`). A model directory may
carry its ensemble: ``generation.ensemble`` names its other members (:func:`ensemble_members`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from wean.errors import WeanError
from wean.model_dir import Assets, Config, load_assets
from wean.models.interfaces import StepOutput

NEG_INF = float("-inf")
TOKENIZER_FILES = ("sentencepiece.model", "tokenizer.json")  # what, besides the vocabularies, must match


@dataclass
class EnsembleEncoding:
    """Each model's encoder output, selected and repeated together."""

    parts: list

    def select(self, index: torch.Tensor) -> "EnsembleEncoding":
        return EnsembleEncoding([part.select(index) for part in self.parts])

    def repeat(self, times: int) -> "EnsembleEncoding":
        return EnsembleEncoding([part.repeat(times) for part in self.parts])


@dataclass
class EnsembleState:
    """Each model's decoder state."""

    parts: list

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "EnsembleState":
        return EnsembleState([part.select(index, same_sources=same_sources) for part in self.parts])


class Ensemble(nn.Module):
    def __init__(self, models: list[nn.Module]):
        super().__init__()
        if not models:
            raise WeanError("an ensemble needs at least one model")
        self.models = nn.ModuleList(models)

    @property
    def max_source_length(self) -> int | None:
        limits = [model.max_source_length for model in self.models if model.max_source_length]
        return min(limits) if limits else None

    @property
    def copies_source(self) -> bool:
        """Whether a model copies: then every model is given the source's extended ids (and reads them as <unk>)."""
        return any(model.copies_source for model in self.models)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> EnsembleEncoding:
        return EnsembleEncoding([model.encode(source, lengths) for model in self.models])

    def init_state(self, encoded: EnsembleEncoding) -> EnsembleState:
        return EnsembleState([model.init_state(part) for model, part in zip(self.models, encoded.parts)])

    def decode_step(self, previous: torch.Tensor, encoded: EnsembleEncoding, state: EnsembleState) -> StepOutput:
        steps = [model.decode_step(previous, part, part_state)
                 for model, part, part_state in zip(self.models, encoded.parts, state.parts)]
        # a model that does not copy gives the extended ids of a copying one's source words no
        # probability, and so vetoes them
        width = max(step.log_probs.size(1) for step in steps)
        log_probs = torch.stack([nn.functional.pad(step.log_probs, (0, width - step.log_probs.size(1)), value=NEG_INF)
                                 for step in steps]).mean(0)
        return StepOutput(log_probs, EnsembleState([step.state for step in steps]), steps[0].attention)

    def forward(self, *args, **kwargs):
        """The first model's forward pass (teacher-forced attention maps are the first model's)."""
        return self.models[0](*args, **kwargs)


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
