"""Text in, text out: a trained model with its tokenizer and vocabularies.

    import wean
    model = wean.load("runs/seq2seq")
    for g in model.generate(["A complex sentence ."], beam=5):
        print(g.text, g.score, g.attention.shape)

    for g in model.generate(["A complex sentence ."], beam=5, nbest=3)[0].nbest:  # the 3 best
        print(g.score, g.text)

    ensemble = wean.load(["runs/seed1", "runs/seed2", "runs/seed3"])  # log-probabilities averaged

Search options (``strategy``, ``beam``, ``nbest``, ``temperature``, ...) are the fields of
:class:`wean.search_options.SearchOptions`; those not given come from the model's ``generation``
config.
"""

from __future__ import annotations

import copy
import difflib
import warnings
from pathlib import Path
from typing import Callable, Mapping, Sequence

from wean.config import check_fallback_control
from wean.data.tokenizers import without_lone_surrogates
from wean.errors import WeanError
from wean.inference.attention_maps import AttentionMaps, attention_maps
from wean.inference.loading import LoadedModel
from wean.inference.model_scores import ChannelScore, ModelScore
from wean.inference.outputs import Generation
from wean.inference.pipeline import TextSearch
from wean.inference.rerank import Scorer, read_in_directory, resolve as resolve_scorers
from wean.models.device import model_device
from wean.pretrained import pretrained_simplifier
from wean.search_options import SearchOptions, capabilities, check_batch_size, parse_rerank, parse_threshold


class UntrainedControlWarning(UserWarning):
    """A control value was asked for that no training pair had: its token's embedding never learned."""


class ShortlistWarning(UserWarning):
    """A shortlist smaller than the most frequent words its table leaves out."""


class Generator(LoadedModel):
    """What a caller asks for (search options over the model's ``generation`` config, control
    values, reranking, fallback) resolved into a :class:`wean.inference.pipeline.TextSearch`,
    which does the work. Loading is :class:`~wean.inference.loading.LoadedModel`'s."""

    def generate(
        self,
        sentences: Sequence[str],
        replace_unk: bool | None = None,
        batch_size: int | None = None,
        plain_text: bool | None = None,
        control: Mapping[str, float] | None = None,
        split_sentences: bool | None = None,
        wanted: Callable[[int], bool] | None = None,
        rerank: str | Sequence[tuple[str | Scorer, float]] | None = None,
        progress: Callable[[int, int], None] | None = None,
        fallback_control: Sequence[Mapping[str, float]] | None = None,
        **search,
    ) -> list[Generation | None]:
        """Outputs for ``sentences``, in their order. ``search``: the search options
        (:class:`~wean.search_options.SearchOptions`: ``strategy``, ``beam``, ``nbest``, ...); these
        and the others default to the model's ``generation`` config; ``beam=1`` is greedy search.
        With ``nbest`` above 1 each output's ``alternatives`` hold the rest of its n-best list.
        With ``plain_text``, sentences are untokenized text and outputs come back as text for
        people (see :mod:`wean.data.plain_text`).
        ``control``: for a model trained with control tokens, the values asked for, e.g.
        ``{"chars_ratio": 0.8}`` for outputs about 80 % of the source's length (see
        :mod:`wean.control`); attributes not given take the model's defaults.
        ``split_sentences`` (plain text only; default: yes): each text is split into sentences,
        simplified sentence by sentence and joined back, and a sentence longer than the model was
        trained on comes back unchanged with a warning. Benchmarks, whose lines are sentences
        already, are scored without it, as their outputs always were.
        ``wanted(i)``, asked between search steps while ``sentences[i]`` is searched, turns False
        once nobody wants its output (a server's client hung up): its search stops there and its
        place is None. ``rerank``: (scorer, weight) pairs that reorder each sentence's n-best list
        (:mod:`wean.inference.rerank`); a scorer is a registered name or a function (or all of them
        as one string, ``"length=-0.1,unchanged=-2"``; ``"none"`` or ``()``: no reranking). None:
        the model's own (``generation.rerank``), which beam search does on lists of
        ``generation.rerank_size``. ``progress(done, total)`` is told after each
        batch how many of the call's sentences are done (plain text: after splitting).
        ``fallback_control`` (with fallback source; None: ``generation.fallback_control``, () or []:
        none): control settings, each over ``control`` where it asks for less change, a sentence is
        searched again with, in turn, where every output failed the checks, before its source comes
        back unchanged."""
        if isinstance(sentences, str):  # its characters would be taken for texts
            raise WeanError("generate() takes a list of texts; to generate for one, pass [text]")
        sentences = [without_lone_surrogates(sentence) for sentence in sentences]
        prefix = self.control_prefix(control)
        untrained = self._untrained(prefix)
        if untrained:
            warnings.warn(untrained, UntrainedControlWarning, stacklevel=2)
        defaults = self.config.generation
        plain_text = defaults.plain_text if plain_text is None else plain_text
        replace_unk = defaults.replace_unk if replace_unk is None else replace_unk
        batch_size = defaults.batch_size if batch_size is None else batch_size
        check_batch_size(batch_size)
        options = self.search_options(**search)
        keep = options.nbest
        if rerank is None:
            rerank, options = self.own_rerank(options)
        scorers = resolve_scorers(rerank)
        for number, (name, scorer, weight) in enumerate(scorers):
            if isinstance(scorer, ModelScore):  # a reranking model runs where this one does, reading text as it does
                scorer = copy.copy(scorer)  # this call's: a caller's scorer object may serve other calls
                scorer.device = model_device(self.model)
                scorer.kernels = self.kernels
                scorer.plain_text = plain_text
                scorers[number] = (name, scorer, weight)
        if scorers and options.nbest == 1:
            raise WeanError("rerank: an n-best list of one output has nothing to reorder; ask for nbest above 1")
        fallback_channel = None
        if options.fallback != "none":
            if capabilities(options.strategy).outputs == "beam":
                options = options.replace(nbest=options.beam)  # every output the beam found, for the fallback
            fallback_channel = self.fallback_channel(plain_text)
        fallback_prefixes = self.fallback_prefixes(control, fallback_control, options.fallback)
        if options.shortlist:
            self._check_shortlist(options.shortlist)
        search = TextSearch(self.model, self.assets, options, batch_size, replace_unk, prefix=prefix, scorers=scorers,
                            keep=keep, progress=progress,
                            names=self.token_classes if options.names_and_numbers == "from_source" else None,
                            shortlist_table=self.shortlist_table if options.shortlist else None,
                            fallback_channel=fallback_channel, fallback_prefixes=fallback_prefixes)
        if plain_text:
            return search.texts(sentences, True if split_sentences is None else split_sentences, wanted)
        return search.sentences(sentences, [self.tokenizer.encode(sentence) for sentence in sentences], wanted)

    def _check_shortlist(self, most_frequent: int) -> None:
        if not hasattr(self.model, "output_layer"):
            carried = f" ({self.directory} carries one: generation.ensemble)" if self.config.generation.ensemble else ""
            raise WeanError(f"shortlist: a single model's option, not an ensemble's{carried}")
        frequent = self.shortlist_table.frequent
        if most_frequent < frequent:
            warnings.warn(f"shortlist {most_frequent}: the table's words leave out the {frequent:,} most frequent, "
                          f"so those ranked {most_frequent:,} to {frequent - 1:,} are kept only where a source has "
                          f"them (wean shortlist --frequent sets the cut)", ShortlistWarning, stacklevel=3)

    def own_rerank(self, options: SearchOptions) -> tuple[list[tuple[str, float]], SearchOptions]:
        """The model's own reranking (``generation.rerank``, its models read inside its directory)
        and the search ``options`` widened to the lists it reorders; none but for a strategy that
        declares it takes them (beam search) at a beam above 1."""
        defaults = self.config.generation
        if not defaults.rerank or not capabilities(options.strategy).own_rerank or options.beam == 1:
            return [], options
        chosen = parse_rerank(defaults.rerank)
        if self.directory is not None:
            chosen = read_in_directory(chosen, self.directory)
        size = defaults.rerank_size
        return chosen, options.replace(beam=max(options.beam, size), nbest=max(options.nbest, size))

    def fallback_channel(self, plain_text: bool | None = None) -> tuple[ChannelScore, float] | None:
        """The channel model and per-token threshold of ``generation.fallback_channel``, on this
        model's device, reading text as ``plain_text`` says (the search's reading; None: its own
        config's); None when it names none."""
        if not self.config.generation.fallback_channel:
            return None
        directory, threshold = parse_threshold(self.config.generation.fallback_channel)
        if not Path(directory).is_absolute():
            if self.directory is None:
                raise WeanError(f"generation.fallback_channel: {directory} is read inside the model directory; "
                                "this model was given without one")
            directory = str(self.directory / directory)
        if not (Path(directory) / "config.yaml").is_file():
            raise WeanError(f"generation.fallback_channel: {directory}: not a model directory (no config.yaml)")
        channel = ChannelScore(directory)
        channel.device = model_device(self.model)
        channel.kernels = self.kernels
        channel.plain_text = plain_text
        return channel, threshold

    def fallback_prefixes(self, control: Mapping[str, float] | None,
                          settings: Sequence[Mapping[str, float]] | None, fallback: str) -> list[list[str]]:
        """The control tokens of each fallback setting (``settings``, None: the config's) over the
        values asked for (``control`` over the defaults), each value taken only where it asks for
        less change than the one asked for (nearer 1: the source as it is); a setting that then
        asks for nothing new is dropped. None where the fallback is off."""
        if settings is None:
            settings = self.config.generation.fallback_control
            if fallback != "source":  # a call that turns the fallback off turns these off with it
                return []
        else:
            if isinstance(settings, (str, Mapping)):
                raise WeanError("fallback_control takes a list of settings, e.g. [{'levenshtein': 0.8}]")
            settings = [dict(setting) for setting in settings]
            check_fallback_control(settings, self.config.data.control, fallback, "fallback_control")
        if not self.control:
            return []
        asked = {**self.control.defaults, **self.control.check(control or {})}
        prefixes = [self.control_prefix(asked)]
        for setting in settings:
            lighter = {name: value for name, value in setting.items() if abs(value - 1) < abs(asked[name] - 1)}
            prefix = self.control_prefix({**asked, **lighter})
            if prefix not in prefixes:
                prefixes.append(prefix)
        for prefix in prefixes[1:]:
            untrained = self._untrained(prefix)
            if untrained:
                warnings.warn(f"fallback_control: {untrained}", UntrainedControlWarning, stacklevel=3)
        return prefixes[1:]

    def search_options(self, **given) -> SearchOptions:
        """The search options ``given`` (None: not given) over the model's ``generation`` config,
        checked: a WeanError names the first unknown or out of range."""
        unknown = [name for name in given if name not in SearchOptions.names()]
        if unknown:
            close = difflib.get_close_matches(unknown[0], SearchOptions.names(), n=1)
            raise WeanError(f"unknown search option {unknown[0]!r}" + (f" (did you mean {close[0]}?)" if close else ""))
        return SearchOptions.of(self.config.generation).replace(**given)

    def attention_maps(
        self, source: str, target: str | None = None, control: Mapping[str, float] | None = None
    ) -> AttentionMaps:
        """Attention while the model reads ``source`` and writes ``target`` (teacher-forced), or,
        without a target, its own greedy output (:mod:`wean.inference.attention_maps`)."""
        if target is None and self.tokenizer.encode(source):  # an empty source is refused by attention_maps
            target = self.generate([source], strategy="greedy", nbest=1, control=control)[0].text
        return attention_maps(self, source, target, control)


def load(directory: str | Path | Sequence[str | Path] | None = None, device: str = "auto",
         quantization: str = "none", trust_plugins: bool = False, kernels: str = "auto") -> Generator:
    """A trained model, ready to ``generate``; without a directory, the simplifier shipped with
    wean (:data:`wean.pretrained.SIMPLIFIER`); several directories, an ensemble of their models
    (same vocabularies), as is one directory that carries an ensemble (``generation.ensemble``).
    ``device``: auto (the GPU if there is one) | cpu | cuda.
    ``quantization``: none | int8 (int8 weights for the LSTM and linear layers, on the CPU).
    ``kernels``: onednn | blas | auto, what computes the float32 products in inference
    (:mod:`wean.models.kernels`; auto: :mod:`wean.models.kernel_choice`).
    A model directory is data: plug-in code its config names runs only with ``trust_plugins``
    (or once the caller has imported those files with :func:`wean.registry.load_plugins`)."""
    if directory is None:
        directory = pretrained_simplifier()
    return Generator.from_directory(directory, device=device, quantization=quantization, trust_plugins=trust_plugins,
                                    kernels=kernels)
