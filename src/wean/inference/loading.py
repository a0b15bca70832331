"""Loading what a model directory holds into memory: weights built into a model (or an ensemble
of several, :mod:`wean.inference.ensemble`) on a device, with its int8 weights and float32
kernels chosen, beside its tokenizer, vocabularies, control tokens and shortlist table."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Mapping, Sequence

from wean.data.plain_text import PlainText
from wean.errors import WeanError
from wean.inference.ensemble import Ensemble
from wean.inference.quantize import quantize
from wean.inference.shortlist import ShortlistTable
from wean.inference.source_names import TokenClasses
from wean.model_dir import (
    SHORTLIST, Assets, check_same_vocabularies, load_assets, load_members, read_control_counts,
)
from wean.models.device import resolve_device
from wean.models.kernel_choice import resolved as resolved_kernels
from wean.models.kernels import kernels_of, use_kernels
from wean.models.model import EncoderDecoder, build_model
from wean.tensor_files import WEIGHTS, load_weights


class LoadedModel:
    """A model directory loaded: the model (or the ensemble of several), its tokenizer,
    vocabularies and configuration, and the tables it carries; the control tokens a source starts
    with. What generates from it is :class:`wean.inference.generator.Generator`; forced scores and
    attention maps need only this."""

    def __init__(self, model: EncoderDecoder, assets: Assets, control_counts: dict[str, int] | None = None,
                 directory: Path | None = None):
        """``control_counts``: training pairs per control token (the model directory's
        control-counts.json), to warn of values never trained on; None: not known. ``directory``:
        the model directory, where what it carries is read (its shortlist table, the reranking and
        fallback models a relative path names)."""
        self.model = model.eval()
        self.directory = directory
        self.kernels = kernels_of(model)
        self.assets = assets
        self.control_counts = control_counts
        self.tokenizer = assets.tokenizer
        self.plain_text = PlainText(assets.config.data.tokenizer)
        self.control = assets.control

    @classmethod
    def from_directory(
        cls, directory: str | Path | Sequence[str | Path], weights: str | Path | None = None, device: str = "auto",
        quantization: str = "none", trust_plugins: bool = False, kernels: str = "auto",
    ) -> "LoadedModel":
        """``quantization``: none, or int8 (CPU only; see :mod:`wean.inference.quantize`). ``kernels``:
        onednn or blas, what computes the float32 products (:mod:`wean.models.kernels`); auto: the
        faster of the two for this model here (:mod:`wean.models.kernel_choice`). Several
        directories, or one whose config names ``generation.ensemble``: their models as one
        ensemble (:mod:`wean.inference.ensemble`), with the first one's tokenizer, configuration and
        generation defaults. ``trust_plugins``: import the plug-in files a directory's config
        names (their code runs); without it, only those already imported
        (:func:`wean.registry.load_plugins`) are accepted."""
        given = [Path(directory)] if isinstance(directory, (str, Path)) else [Path(d) for d in directory]
        if not given:
            raise WeanError("no model directory given")
        directories, every_assets = [], []
        for path in given:
            assets = load_assets(path, trust_plugins)
            directories.append(path)
            every_assets.append(assets)
            for member, its_assets in load_members(path, assets, trust_plugins):
                directories.append(member)
                every_assets.append(its_assets)
        if weights is not None and len(directories) > 1:
            carrying = [path for path, assets in zip(given, every_assets) if assets.config.generation.ensemble]
            raise WeanError("weights: one file for one model, not an ensemble" +
                            (f" ({carrying[0]} carries one: generation.ensemble)" if carrying else ""))
        resolved = resolve_device(device)
        models = []
        for path, assets in zip(directories, every_assets):
            model = build_model(assets.config.model, len(assets.source_vocabulary), len(assets.target_vocabulary))
            load_weights(model, Path(weights) if weights else path / WEIGHTS)
            model = quantize(model.eval(), quantization, resolved).to(resolved)
            models.append(use_kernels(model, resolved_kernels(model, kernels)))
        if len(models) == 1:
            return cls(models[0], every_assets[0], read_control_counts(directories[0]), directories[0])
        check_same_vocabularies(directories, every_assets)
        return cls(Ensemble(models), every_assets[0], read_control_counts(directories[0]), directories[0])

    @property
    def config(self):
        return self.assets.config

    @cached_property
    def token_classes(self) -> TokenClasses:
        """The target tokens that are numbers and names (names_and_numbers: from_source)."""
        return TokenClasses.of(self.assets.target_vocabulary)

    @cached_property
    def shortlist_table(self) -> ShortlistTable:
        """The model directory's shortlist table (``wean shortlist``)."""
        if self.directory is None:
            raise WeanError("shortlist: the table is read from a model directory; this model was given without one")
        return ShortlistTable.load(self.directory / SHORTLIST, self.assets.source_vocabulary,
                                   self.assets.target_vocabulary)

    def control_prefix(self, control: Mapping[str, float] | None = None) -> list[str]:
        """The control tokens a source starts with: ``control`` over the model's defaults."""
        if not self.control:
            if control:
                raise WeanError("control: this model was trained without control tokens")
            return []
        return self.control.tokens(control)

    def untrained_control(self, control: Mapping[str, float] | None = None) -> str | None:
        """Why the control values asked for (over the defaults) may be misread: the tokens no
        training pair had; None when all were trained, or when the counts are not known."""
        return self._untrained(self.control_prefix(control))

    def _untrained(self, prefix: list[str]) -> str | None:
        if not prefix or self.control_counts is None:
            return None
        unseen = [token for token in prefix if not self.control_counts.get(token)]
        if not unseen:
            return None
        return (f"control {', '.join(unseen)}: no training pair had {'this value' if len(unseen) == 1 else 'these values'}, "
                "so the model never learned what it asks for; outputs may ignore it")
