"""The configuration's schema: every section and key with its default and meaning (each also
commented in ``configs/seq2seq-pwkp.yaml``), each section's own consistency checks, and
:meth:`Config.validate`, which runs them and asks each registered component what it needs of the
whole config. An impossible combination is a :class:`~wean.errors.WeanError` naming the key."""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field
from typing import Any

from wean.config.ranges import check_choices, check_numbers, lookup
from wean.config.sections import COMPONENT_SECTIONS, coerce, read_section, section_class
from wean.control import Control
from wean.errors import WeanError
from wean.registry import METRICS, load_plugins, selectable_key
from wean.search_options import (
    SearchOptions, check_batch_size, check_fallback_words, check_search_options, parse_rerank, parse_threshold,
)


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

    def check(self) -> None:
        if self.drop_if_matches:
            try:
                re.compile(self.drop_if_matches)
            except re.error as error:
                raise WeanError(f"config: data.drop_if_matches is not a regular expression: {error}") from None
        if self.direction == "lm" and self.control.attributes:
            raise WeanError("config: data.control describes a pair's change; a language model (data.direction: lm) has none")


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

    def check(self, tokenizer: TokenizerConfig) -> None:
        if self.share_embeddings and not tokenizer.shared_vocab:
            raise WeanError("config: model.share_embeddings needs data.tokenizer.shared_vocab: true")
        check_model_sections(self)


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
    # auto | onednn | blas: the CPU's float32 products through oneDNN or PyTorch's own (whose
    # floats the tables' runs keep; wean/models/kernels.py); auto: the faster of the two for this
    # model on this machine, measured when the run starts and kept for its resumes (kernels.json)
    kernels: str = "auto"
    device: str = "auto"  # auto | cpu | cuda: auto takes the GPU when PyTorch sees one
    # several processes (torchrun): seconds one waits for the others, to join and while rank 0
    # validates, before it stops with an error rather than hang (wean/training/distributed.py)
    distributed_timeout: float = 1800.0
    # a model directory (a finished run or an export) whose tokenizer, vocabularies and weights a
    # new run starts from: fine-tuning, e.g. the pretrained simplifier on one's own pairs. Its
    # model and tokens must be this config's (wean/training/fine_tuning.py); it is validated at
    # update 0; the optimizer, schedule, counts and best score start afresh. "": random weights
    init_from: str = ""

    def check(self) -> None:
        owner, _ = selectable_key(self.selection_metric, "config: training.selection_metric")
        validated = [("training.validation_metrics", name) for name in self.validation_metrics]
        if owner is not None:
            validated.append(("training.selection_metric", owner))
        for key, name in validated:
            if METRICS.get(name, key).needs_reverse_model:
                raise WeanError(f"config: {key}: metric {name!r} needs a reverse model, which validation does not have")


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

    def check(self, control: ControlConfig) -> None:
        """The options in range and each text option readable; ``control``: the model's control
        tokens, which generation.control and fallback_control name."""
        try:
            Control(control.attributes, control.bucket, self.control)
        except WeanError as error:
            raise WeanError(f"config: data.control / generation.control: {error}") from None
        if self.rerank:
            try:
                parse_rerank(self.rerank)
            except WeanError as error:
                raise WeanError(f"config: generation.rerank: {error}") from None
            if not 2 <= self.rerank_size <= 100:
                raise WeanError(f"config: generation.rerank_size is {self.rerank_size}; a list to rerank holds "
                                "2 to 100 outputs")
        if self.fallback_channel:
            try:
                parse_threshold(self.fallback_channel)
            except WeanError as error:
                raise WeanError(f"config: generation.fallback_channel: {error}") from None
        check_search_options(dataclasses.asdict(SearchOptions.of(self)), lambda name: f"config: generation.{name}")
        check_fallback_words(self.fallback, self.fallback_words, lambda name: f"config: generation.{name}")
        check_fallback_control(self.fallback_control, control, self.fallback)
        check_batch_size(self.batch_size, "config: generation.batch_size")


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
        """Each value in its range and each section consistent (checked here), then each registered
        component's own demands on the whole config (its ``check_config``, beside the component)."""
        check_choices(self)
        self.data.check()
        self.training.check()
        check_numbers(self)
        self.generation.check(self.data.control)
        self.model.check(self.data.tokenizer)
        for path, registry in COMPONENT_SECTIONS.items():
            component = registry.get(lookup(self, f"{path}.type"), f"{path}.type")
            check = getattr(component, "check_config", None)  # a plug-in need not define one
            if check is not None:
                check(self)
        return self


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


def config_from_dict(values: dict, import_plugins: bool = True) -> Config:
    """``import_plugins`` false: the plug-ins the values name must be imported already (a model
    directory's, untrusted: nothing is read from its files again, so none can be swapped in)."""
    if import_plugins and isinstance(values, dict) and values.get("plugins"):
        load_plugins(coerce(values["plugins"], list[str], "plugins"))
    return read_section(Config, values, "").validate()


def section_config(path: str, values: dict) -> Any:
    """The section at ``path`` (``model.decoder``, ...) read from ``values`` as a config file's
    would be: a component section into the class of the ``type`` they name, another type's keys
    set aside. To change a component in code::

        config.model.decoder = section_config("model.decoder", {**asdict(config.model.decoder), "type": "bahdanau"})
    """
    return read_section(section_class(_declared(path), values, path), values, path)


def check_model_sections(model: ModelConfig) -> None:
    """Each part's section is its type's class: a type changed in code without its keys (see
    :func:`section_config`) is refused before a model is built from the wrong keys."""
    for name in ("encoder", "decoder", "output_layer"):
        path, section = f"model.{name}", getattr(model, name)
        if type(section) is not section_class(_declared(path), {"type": section.type}, path):
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
