"""Experiment configuration: typed sections read from YAML, with ``--set key=value`` overrides.

Every key has a default here and a comment in ``configs/seq2seq-pwkp.yaml``. An unknown key, a
value of the wrong type or an impossible combination is a :class:`~wean.errors.WeanError` naming
the key, never a silent default.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import typing
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from wean.control import Control
from wean.errors import WeanError
from wean.registry import (
    DECODERS, ENCODERS, METRICS, OUTPUT_LAYERS, TOKENIZERS, load_plugins, plugin_loaded, selectable_key,
)
from wean.search_options import (
    SearchOptions, check_batch_size, check_fallback_words, check_search_options, parse_rerank, parse_threshold,
)
from wean.textio import read_file

# the choices of where and how a model runs, named here, where reading them imports no torch
DEVICES = ("auto", "cpu", "cuda")
KERNELS = ("onednn", "blas")  # what computes the float32 products (wean/models/kernels.py)
QUANTIZATIONS = ("none", "int8")  # the weights inference runs with (wean/inference/quantize.py)


class SetAsideWarning(UserWarning):
    """A component section holds another component's key at a value that asks for something."""


@dataclass
class TokenizerConfig:
    type: str = "word"  # word | char | bpe | unigram
    lowercase: bool = False
    vocab_size: int = 50000  # most frequent types kept (word/char), or sentencepiece pieces
    min_frequency: int = 1
    shared_vocab: bool = True
    # How the corpus text was tokenized before wean saw it. ptb (Penn Treebank: -LRB-, ``, do n't):
    # plain text is PTB-tokenized on its way into the model and outputs detokenized on the way out
    # (wean simplify, wean serve, generate(plain_text=True)); none: text goes in as it is.
    corpus_tokenization: str = "none"
    # bpe / unigram: characters sentencepiece leaves out of its pieces (the rarest, beyond
    # character_coverage) are spelt as UTF-8 byte pieces, so every character of any input can be
    # read and written back; without it they are <unk>
    byte_fallback: bool = False
    character_coverage: float = 1.0  # bpe / unigram: share of the training characters given pieces


@dataclass
class ControlConfig:
    # control tokens (ACCESS, Martin et al. 2020; wean/control.py): attributes of each training
    # pair prepended to its source; empty: none. Choose from chars_ratio, levenshtein, word_rank
    attributes: list[str] = field(default_factory=list)
    bucket: float = 0.05  # values are rounded to multiples of this


@dataclass
class DataConfig:
    train: str = ""  # file prefix: <train>.src and <train>.dst
    valid: str = ""  # prefix; references are <valid>.dst and any <valid>.ref.N
    # without data.valid: this many training pairs, chosen with training.seed, are held out and
    # validated on instead (the log says so)
    valid_holdout: int = 500
    # the validation split is plain text (EASSE's detokenized TurkCorpus): sources are tokenized as
    # the training corpus was (tokenizer.corpus_tokenization) and outputs detokenized before scoring,
    # exactly as `wean test --plain-text` does
    valid_plain_text: bool = False
    max_tokens: int = 100  # training pairs with a longer side are dropped (and counted)
    # repair mojibake (ZÃ¼rich -> Zürich) in the training pairs with ftfy, counted in the log;
    # validation and test text stay as written. kauchak_v2's mojibake lost its bytes: ftfy only
    # guesses there (wean/data/fix_text.py)
    fix_text: bool = False
    # which way the pairs are learnt: forward (source -> target); reverse (target -> source: the
    # channel model of noisy-channel reranking, `--rerank channel:DIR`); lm (every source is the
    # word <lm>: a language model of the target side, `--rerank lm:DIR`)
    direction: str = "forward"
    # a regular expression: training pairs either side of which it matches are dropped (counted in
    # the log); validation and test text stay as written. For kauchak_v2, whose every non-ASCII
    # character is mojibake that lost its continuation bytes (ZÃ rich), '[\u00c2-\u00f4](?=\s|$)'
    drop_if_matches: str = ""
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    control: ControlConfig = field(default_factory=ControlConfig)


# The component sections below (encoder, decoder, output layer) hold the keys every component of
# their kind has; each registered component reads its section into a subclass with its own keys
# (the registry names it; each of wean's own is defined beside its component in wean/models/, as a
# plug-in brings its own).
@dataclass
class EncoderConfig:
    type: str = "lstm"  # lstm | conv (Gehring et al. 2016)
    hidden_size: int = 256  # LSTM state size, or CNN-a channels
    layers: int = 2  # LSTM layers, or CNN-a depth
    selective_gate: bool = False  # SEASS's gate on the encoder states (Zhou et al. 2017)


@dataclass
class DecoderConfig:
    type: str = "luong"  # luong: attend after the LSTM step (s_t); bahdanau: before it (s_{t-1});
    # conditional: Gehring et al.'s (query W_d h_{t-1} + b_d + previous word embedding)
    hidden_size: int = 256
    layers: int = 2
    dropout: float = 0.0
    bridge: str = "copy"  # copy | linear | zero


@dataclass
class OutputLayerConfig:
    type: str = "linear"  # linear | wean | pointer_generator (wean/models/pointer_generator.py)


@dataclass
class SPMConfig:
    enabled: bool = False  # the source-side prediction module (Kiyono et al. 2018), training only
    c: float = 10.0  # C of equation (9): the bag-of-words loss is divided by it


@dataclass
class EmbeddingsConfig:
    # word2vec / GloVe text file (.gz too) the embeddings start from, read when a new run starts
    # (wean/models/pretrained_embeddings.py); "": random
    pretrained: str = ""
    freeze: bool = False  # true: the embeddings do not train


@dataclass
class ModelConfig:
    embedding_size: int = 256
    share_embeddings: bool = True  # encoder and decoder use one embedding table
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    dropout: float = 0.0  # on embeddings and on the attentional state before the output layer
    init_range: float = 0.1  # parameters start uniform in [-init_range, init_range]; 0: PyTorch defaults
    # each section is read into the config class its component registered (wean/models/): LSTMEncoderConfig
    # in encoder.py, LuongDecoderConfig in decoder.py, ...
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    output_layer: OutputLayerConfig = field(default_factory=OutputLayerConfig)
    spm: SPMConfig = field(default_factory=SPMConfig)
    # lambda of See et al.'s coverage loss (wean/models/coverage_loss.py): attention that returns to
    # a source token costs; 0: off
    coverage_loss: float = 0.0

    def __post_init__(self):
        # a section given as its base class (a default, or one built in code) becomes the class its
        # component registered, with that component's defaults for the keys it adds
        for name, base in (("encoder", EncoderConfig), ("decoder", DecoderConfig), ("output_layer", OutputLayerConfig)):
            section = getattr(self, name)
            if type(section) is base:
                setattr(self, name, section_config(f"model.{name}", dataclasses.asdict(section)))


@dataclass
class TrainingConfig:
    seed: int = 1
    optimizer: str = "adam"  # adam | sgd (plain, fairseq-lua's; wean/training/optimizers.py)
    learning_rate: float = 0.001
    clip_grad_norm: float = 5.0
    # token | sentence: the training loss (and so its gradient, the clip and an SGD learning
    # rate) averaged over the batch's target tokens, or over its sentences as fairseq-lua does
    loss_per: str = "token"
    label_smoothing: float = 0.0
    batch_size: int = 64  # sentences per batch at most
    batch_tokens: int = 0  # padded tokens per batch at most (0: no limit)
    max_epochs: int = 50
    max_updates: int = 0  # 0: no limit
    validate_every: int = 0  # updates; 0: at the end of every epoch
    # updates between resumable checkpoints besides those of validations (0: at validations only):
    # a killed run loses at most this many updates when epochs are long
    save_every: int = 0
    # loss, perplexity or a score key of a registered metric (bleu, sari, rouge2, invented_names,
    # a plug-in's own, ...): chooses checkpoints, LR and stopping, in the key's own direction
    selection_metric: str = "loss"
    # registered metrics scored at each validation besides sari, bleu and rouge (e.g. fidelity);
    # the metric that reports selection_metric is scored whether listed or not
    validation_metrics: list[str] = field(default_factory=list)
    lr_patience: int = 1  # the learning rate is halved every this many validations without improvement (0: never)
    min_learning_rate: float = 1e-5
    early_stopping_patience: int = 5  # validations without improvement before training stops
    # true: a validation whose loss improved on the best loss so far is progress too, so a model
    # still learning in a plateau of the selection metric is neither halved nor stopped
    patience_watches_loss: bool = False
    keep_best: int = 3
    log_every: int = 100
    max_valid_sentences: int = 0  # 0: the whole validation set
    # fp32 | bf16 | fp16: bf16 runs the training forward pass under bfloat16 autocast (matrix
    # products in bf16; weights, optimizer, loss and validation stay fp32): about 2x faster where
    # the CPU has AVX-512 BF16 or AMX, or on a recent GPU; fp16 likewise in float16, on CUDA only,
    # with a gradient scaler (wean/training/precision.py)
    precision: str = "fp32"
    # onednn | blas: the CPU's float32 products through oneDNN (faster on the CPUs measured) or
    # PyTorch's own, whose floats the tables' runs keep (wean/models/kernels.py)
    kernels: str = "onednn"
    device: str = "auto"  # auto | cpu | cuda: auto takes the GPU when PyTorch sees one
    # several processes (torchrun): seconds one waits for the others, to join and while rank 0
    # validates, before it stops with an error rather than hang (wean/training/distributed.py)
    distributed_timeout: float = 1800.0


@dataclass
class GenerationConfig(SearchOptions):
    # the search options (strategy, beam, nbest, ...) are SearchOptions' fields, defined and
    # explained in wean/search_options.py
    replace_unk: bool = True
    batch_size: int = 32
    # generate() takes untokenized text and returns text for people unless told otherwise (see
    # data.tokenizer.corpus_tokenization); false for research models, whose outputs are scored
    plain_text: bool = False
    # the control values asked for when the user asks for none (models trained with control tokens);
    # wean tune-control writes the ones it chose on validation data here. Attributes not named: 1.0
    control: dict[str, float] = field(default_factory=dict)
    # the reranking beam search does when the caller names none (wean/inference/rerank.py):
    # NAME=WEIGHT,..., e.g. channel:reranker/channel=0.1,lm:reranker/lm=0.05; a relative DIR is read
    # inside the model directory, which so carries its reranking models. The search then keeps
    # rerank_size outputs per sentence (widening the beam to as many) for the scorers to reorder;
    # the caller still gets nbest. Other strategies (greedy, sampling, diverse beams) are not
    # reranked unless asked
    rerank: str = ""
    rerank_size: int = 5
    # with fallback: source, an output also counts as unfaithful where the channel model in DIR
    # (trained simple -> complex, data.direction: reverse; a relative DIR is read inside the model
    # directory) gives the source less than THRESHOLD log-probability per token given the output:
    # DIR=THRESHOLD, e.g. reranker/channel=-2.5 (wean/inference/pipeline.py); empty: fidelity faults only
    fallback_channel: str = ""
    # with fallback: source and control tokens, where every output of a sentence fails the checks, the
    # sentence is searched again with each of these control settings in turn (each over the values
    # asked for, a value taken only where it asks for less change), e.g. [{levenshtein: 0.8}], before
    # the source comes back unchanged: a lighter change that passes serves a reader better than none
    fallback_control: list[dict[str, float]] = field(default_factory=list)
    # model directories searched together with this one as an ensemble, their log-probabilities
    # averaged per step (wean/inference/ensemble.py); a relative DIR is read inside the model directory, which
    # so carries its members (wean export puts them in ensemble/1, ensemble/2, ...). They must read
    # and write this model's tokens; their own generation settings are not read
    ensemble: list[str] = field(default_factory=list)


@dataclass
class Config:
    name: str = "model"
    model_dir: str = ""  # where checkpoints, logs and the final model go
    # Python files of the user's own components (wean/registry.py), imported before the rest is
    # read: their registered names can then be chosen like wean's own
    plugins: list[str] = field(default_factory=list)
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def validate(self) -> "Config":
        for key, allowed in CHOICES.items():
            value = _lookup(self, key)
            if value is not _ABSENT and value not in allowed:
                raise WeanError(f"config: {key} is {value!r}; choose one of {', '.join(allowed)}")
        owner, _ = selectable_key(self.training.selection_metric, "config: training.selection_metric")
        validated = [("training.validation_metrics", name) for name in self.training.validation_metrics]
        if owner is not None:
            validated.append(("training.selection_metric", owner))
        for key, name in validated:
            if METRICS.get(name, key).needs_reverse_model:
                raise WeanError(f"config: {key}: metric {name!r} needs a reverse model, which validation does not have")
        tokenizer = self.data.tokenizer
        if tokenizer.byte_fallback and tokenizer.type not in ("bpe", "unigram"):
            raise WeanError("config: data.tokenizer.byte_fallback is for the bpe and unigram tokenizers")
        if not 0 < tokenizer.character_coverage <= 1:
            raise WeanError(f"config: data.tokenizer.character_coverage is {tokenizer.character_coverage}; "
                            "it must be in (0, 1]")
        if self.data.drop_if_matches:
            try:
                re.compile(self.data.drop_if_matches)
            except re.error as error:
                raise WeanError(f"config: data.drop_if_matches is not a regular expression: {error}") from None
        if self.data.direction == "lm" and self.data.control.attributes:
            raise WeanError("config: data.control describes a pair's change; a language model (data.direction: lm) has none")
        try:
            Control(self.data.control.attributes, self.data.control.bucket, self.generation.control)
        except WeanError as error:
            raise WeanError(f"config: data.control / generation.control: {error}") from None
        _check_numbers(self, "")
        generation = self.generation
        if generation.rerank:
            try:
                parse_rerank(generation.rerank)
            except WeanError as error:
                raise WeanError(f"config: generation.rerank: {error}") from None
            if not 2 <= generation.rerank_size <= 100:
                raise WeanError(f"config: generation.rerank_size is {generation.rerank_size}; a list to rerank holds "
                                "2 to 100 outputs")
        if generation.fallback_channel:
            try:
                parse_threshold(generation.fallback_channel)
            except WeanError as error:
                raise WeanError(f"config: generation.fallback_channel: {error}") from None
        check_search_options(dataclasses.asdict(SearchOptions.of(generation)), lambda name: f"config: generation.{name}")
        check_fallback_words(generation.fallback, generation.fallback_words, lambda name: f"config: generation.{name}")
        check_fallback_control(generation.fallback_control, self.data.control, generation.fallback)
        check_batch_size(generation.batch_size, "config: generation.batch_size")
        if self.model.share_embeddings and not self.data.tokenizer.shared_vocab:
            raise WeanError("config: model.share_embeddings needs data.tokenizer.shared_vocab: true")
        check_model_sections(self.model)
        TOKENIZERS.get(self.data.tokenizer.type, "data.tokenizer.type")

        encoder, decoder = self.model.encoder, self.model.decoder
        encoder_class = ENCODERS.get(encoder.type, "model.encoder.type")
        for component in (encoder_class, DECODERS.get(decoder.type, "model.decoder.type"),
                          OUTPUT_LAYERS.get(self.model.output_layer.type, "model.output_layer.type")):
            component.check_config(self)
        memory_size = encoder_class.state_size(self.model)
        if getattr(decoder, "attention", None) == "dot" and memory_size not in (None, decoder.hidden_size):
            raise WeanError(
                f"config: dot attention needs encoder states ({memory_size}) as large as "
                f"model.decoder.hidden_size ({decoder.hidden_size}); use general or concat"
            )
        if decoder.bridge == "copy" and (encoder.layers != decoder.layers or memory_size not in (None, decoder.hidden_size)):
            raise WeanError(
                "config: bridge copy needs as many encoder as decoder layers and equal state sizes; "
                "use bridge: linear"
            )
        return self


# the keys whose value is one of a few names, wherever the config's section has them
CHOICES = {
    "data.tokenizer.corpus_tokenization": ("none", "ptb"),
    "data.direction": ("forward", "reverse", "lm"),
    "model.decoder.word_attention": ("none", "attention", "gates"),
    "model.decoder.attention": ("dot", "general", "concat"),
    "model.decoder.bridge": ("copy", "linear", "zero"),
    "model.output_layer.score": ("dot", "general", "concat"),
    "model.output_layer.concat_kernel": ("chunked", "fused"),
    "training.precision": ("fp32", "bf16", "fp16"),
    "training.optimizer": ("adam", "sgd"),
    "training.loss_per": ("token", "sentence"),
    "training.kernels": KERNELS,
    "training.device": DEVICES,
}
_ABSENT = object()


def _lookup(config: Any, key: str) -> Any:
    for part in key.split("."):
        config = getattr(config, part, _ABSENT)
    return config


# the numeric settings' ranges by name, wherever their section (a plug-in's fields of these names too)
AT_LEAST_ONE = {"valid_holdout", "vocab_size", "min_frequency", "max_tokens", "hidden_size", "layers", "kernel_width", "max_positions",
                "embedding_size", "batch_size", "max_epochs", "keep_best", "log_every"}
BELOW_ONE = {"dropout", "label_smoothing"}
ABOVE_ZERO = {"bucket", "c", "distributed_timeout"}
# upper bounds far above any model a machine of today trains, checked before anything is built:
# a model of a million layers took minutes to construct before its memory could be counted
AT_MOST = {"layers": 64, "attention_layers": 64, "hidden_size": 1 << 16, "embedding_size": 1 << 16,
           "kernel_width": 1 << 10, "max_positions": 1 << 20, "vocab_size": 1 << 24}
AT_LEAST_ZERO = {"learning_rate", "coverage_loss", "attention_layers", "candidates", "init_range", "concat_init_range", "seed", "clip_grad_norm", "batch_tokens",
                 "max_updates", "validate_every", "save_every", "lr_patience", "min_learning_rate", "early_stopping_patience",
                 "max_valid_sentences"}


def _check_numbers(section: Any, where: str) -> None:
    """Sizes, rates and counts in range: ``hidden_size: -5`` is refused here in one line, not by
    PyTorch at model building with a traceback. (``generation`` has wean.search_options.)"""
    for field_ in dataclasses.fields(section):
        value, path = getattr(section, field_.name), f"{where}{field_.name}"
        if dataclasses.is_dataclass(value):
            if field_.name != "generation":
                _check_numbers(value, path + ".")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        name = field_.name
        if not math.isfinite(value):
            raise WeanError(f"config: {path} is {value}; it must be a finite number")
        for names, holds, rule in ((AT_LEAST_ONE, value >= 1, "at least 1"), (BELOW_ONE, 0 <= value < 1, "in [0, 1)"),
                                   (ABOVE_ZERO, value > 0, "above 0"), (AT_LEAST_ZERO, value >= 0, "at least 0")):
            if name in names and not holds:
                raise WeanError(f"config: {path} is {value}; it must be {rule}")
        if name in AT_MOST and value > AT_MOST[name]:
            raise WeanError(f"config: {path} is {value:,}; wean builds at most {AT_MOST[name]:,}")


def _from_dict(cls, values: Any, where: str):
    if not isinstance(values, dict):
        raise WeanError(f"config: {where or 'top level'} must be a mapping, got {values!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in values.items():
        path = f"{where}.{key}" if where else key
        if key not in known:
            owners = _other_components_with(where, key)
            if owners:
                # another component's key: a preset's (bidirectional, when --set makes the encoder
                # conv), or a model directory's saved when each section held every component's
                # keys. Set aside; said where it is not that component's default, as it asks for
                # something this component does not do
                if all(value != default for _, default in owners):
                    component = where.rsplit(".", 1)[-1].replace("_", " ")
                    warnings.warn(f"config: {path} ({value!r}) is a key of the {component} "
                                  f"{' / '.join(name for name, _ in owners)}; this {component} is "
                                  f"{values.get('type', cls().type)!r} and sets it aside", SetAsideWarning,
                                  stacklevel=2)
                continue
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise WeanError(f"config: unknown key {path}{hint}")
        kind = hints[key]
        if dataclasses.is_dataclass(kind):
            kwargs[key] = _from_dict(_section_class(kind, value, path), value, path)
        else:
            kwargs[key] = _coerce(value, kind, path)
    return cls(**kwargs)


COMPONENT_SECTIONS = {  # config section -> the registry (wean/registry.py) its ``type`` names
    "data.tokenizer": TOKENIZERS,
    "model.encoder": ENCODERS,
    "model.decoder": DECODERS,
    "model.output_layer": OUTPUT_LAYERS,
}


def _section_class(kind: type, values: Any, path: str) -> type:
    """A component section is read into the config dataclass its component registered (a subclass
    of the section's own, with the component's extra keys); wean's own use the section's."""
    if path not in COMPONENT_SECTIONS or not isinstance(values, dict):
        return kind
    registry = COMPONENT_SECTIONS[path]
    name = values.get("type", kind().type)
    config = registry.entry(name, f"{path}.type").config if isinstance(name, str) else None
    if config is None:
        return kind
    if not (isinstance(config, type) and dataclasses.is_dataclass(config) and issubclass(config, kind)):
        raise WeanError(f"{registry.kind} {name!r}: its config class must be a dataclass subclass of {kind.__name__}")
    return config


def _other_components_with(section: str, key: str) -> list[tuple[str, Any]]:
    """The registered components of ``section`` whose own config has ``key``, each with its
    default there."""
    if section not in COMPONENT_SECTIONS:
        return []
    registry = COMPONENT_SECTIONS[section]
    owners = []
    for name in registry.names():
        config = registry.entry(name).config
        for item in dataclasses.fields(config) if config is not None else ():
            if item.name == key:
                default = item.default_factory() if item.default is dataclasses.MISSING else item.default
                owners.append((name, default))
    return owners


def check_fallback_control(settings: list[dict[str, float]], control: ControlConfig, fallback: str,
                           name: str = "config: generation.fallback_control") -> None:
    """Each setting names trained attributes with values in range, and there is a fallback to serve."""
    if not settings:
        return
    if not control.attributes:
        raise WeanError(f"{name}: this model has no control tokens (data.control.attributes)")
    if fallback != "source":
        raise WeanError(f"{name} needs fallback source (it is {fallback}): its settings are tried only where the "
                        "fallback would return the source")
    for number, setting in enumerate(settings):
        try:
            Control(control.attributes, control.bucket, setting)
        except WeanError as error:
            raise WeanError(f"{name}[{number}]: {error}") from None


def _coerce(value: Any, kind: Any, path: str):
    origin = typing.get_origin(kind)
    if origin is list:
        if not isinstance(value, list):
            raise WeanError(f"config: {path} must be a list, got {value!r}")
        (item,) = typing.get_args(kind)
        return [_coerce(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise WeanError(f"config: {path} must be a mapping, got {value!r}")
        key_kind, value_kind = typing.get_args(kind)
        return {_coerce(k, key_kind, path): _coerce(v, value_kind, f"{path}.{k}") for k, v in value.items()}
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise WeanError(f"config: {path} must be {kind.__name__}, got {value!r}")
    return value


def config_from_dict(values: dict, import_plugins: bool = True) -> Config:
    """``import_plugins`` false: the plug-ins the values name must be imported already (a model
    directory's, untrusted: nothing is read from its files again, so none can be swapped in)."""
    if import_plugins and isinstance(values, dict) and values.get("plugins"):
        load_plugins(_coerce(values["plugins"], list[str], "plugins"))
    return _from_dict(Config, values, "").validate()


def section_config(path: str, values: dict) -> Any:
    """The section at ``path`` (``model.decoder``, ...) read from ``values`` as a config file's
    would be: a component section into the class of the ``type`` they name, another type's keys
    set aside. To change a component in code::

        config.model.decoder = section_config("model.decoder", {**asdict(config.model.decoder), "type": "bahdanau"})
    """
    return _from_dict(_section_class(_declared(path), values, path), values, path)


def check_model_sections(model: ModelConfig) -> None:
    """Each part's section is its type's class: a type changed in code without its keys (see
    :func:`section_config`) is refused before a model is built from the wrong keys."""
    for name in ("encoder", "decoder", "output_layer"):
        path, section = f"model.{name}", getattr(model, name)
        if type(section) is not _section_class(_declared(path), {"type": section.type}, path):
            raise WeanError(f"config: {path} holds the keys of {_owner(path, type(section))}, not of its type "
                            f"{section.type!r}; build the section with wean.config.section_config")


def _declared(path: str) -> type:
    """The section class ``path`` is declared with in :class:`Config`."""
    kind: Any = Config
    for part in path.split("."):
        kind = typing.get_type_hints(kind)[part]
    return kind


def _owner(path: str, config: type) -> str:
    """Which registered components read their section into ``config``, for messages."""
    registry = COMPONENT_SECTIONS[path]
    names = [name for name in registry.names() if (registry.entry(name).config or _declared(path)) is config]
    return f"{registry.kind} {' / '.join(repr(name) for name in names) or config.__name__}"


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
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise WeanError(f"{path}: {path.stat().st_size:,} bytes; a config file is at most {MAX_CONFIG_BYTES:,}")
        values = parse_yaml(read_file(path).decode("utf-8"), str(path)) or {}
    except FileNotFoundError:
        raise WeanError(f"{path}: config file not found") from None
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
    plugins = _coerce(values["plugins"], list[str], "plugins") if values.get("plugins") else []
    if not trust_plugins and plugins:
        untrusted = [raw for raw in plugins if not plugin_loaded(raw)]
        if untrusted:
            raise WeanError(
                f"{where}: names plug-in code ({', '.join(untrusted)}), which loading a model directory does not run "
                "unless asked: pass --trust-plugins (wean.load(..., trust_plugins=True)), or import a file you have "
                "read with --plugins FILE")
    if plugins and check_plugins is not None:
        check_plugins(plugins)
    try:
        return config_from_dict(apply_overrides(values, overrides or []), import_plugins=trust_plugins)
    except WeanError as error:
        raise WeanError(f"{where}: {error}") from None
