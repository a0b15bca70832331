"""The contract between a model's parts, and between the model and what drives it.

Search, validation, the loss and the Generator use a model only through
:class:`~wean.models.model.EncoderDecoder`'s four calls::

    encoded = model.encode(source, lengths)                  # EncoderOutput
    state = model.init_state(encoded)                        # DecoderState
    step = model.decode_step(previous, encoded, state)       # StepOutput: one word per row
    output = model(source, lengths, target_input)            # ModelOutput: teacher-forced

and follow beams with ``encoded.repeat(k)`` and ``state.select(index)``. Both the step and the
teacher-forced pass end in one call, ``model.log_probs``. The model is built from three parts,
each a subclass of a base class here and each picked by one config key:

* an :class:`Encoder`: source ids → :class:`EncoderOutput`;
* a :class:`Decoder`: previous words + encoder output + state → :class:`DecoderOutput`, whose
  ``queries`` the output layer reads;
* an :class:`OutputLayer`: queries and an :class:`OutputContext` (the attention, the source) →
  normalized log-probabilities over the target vocabulary, extended, for a layer that copies,
  with one id per source word outside it (:mod:`wean.data.copy_vocabulary`), or over a compact
  shortlist's words (:class:`Shortlist`); for a training loss that reads nothing else, it may
  score the targets alone (:meth:`OutputLayer.target_log_probs`);

and, around them, registered parts that only some models have: encoder transforms (SEASS's
selective gate) and auxiliary losses (SPM's bag-of-words term, the coverage loss), each an
:class:`AuxiliaryLoss` that the criterion adds to the cross-entropy.

What only some variants compute (word-attention maps, gates, SPM's source predictions) comes back
in ``extras``, a dict of tensors with one row per sentence and one column per target step, when
the caller asks for it (``extras=True``); names used by wean's own parts:

``word_attention``      (batch, steps, source): attention over the source word embeddings
``gate``                (batch, steps): the mean contextual gate (1: hidden context only)
``source_prediction``   (batch, steps, source): the probability SPM gives each source token
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import torch
from torch import nn

from wean.models import kernels

if TYPE_CHECKING:
    from wean.data.tokenizers import Tokenizer
    from wean.data.vocabulary import Vocabulary


@dataclass
class EncoderOutput:
    states: torch.Tensor  # (batch, source, memory size): the values attention averages
    mask: torch.Tensor  # (batch, source), True on real tokens
    embedded: torch.Tensor  # (batch, source, embedding): the source word embeddings
    final: tuple[torch.Tensor, torch.Tensor] | None = None  # (h, c), each (layers, batch, memory size), if recurrent
    keys: torch.Tensor | None = None  # what attention compares with, where not the states (CNN-a)
    # (batch, source): the source ids, words outside the vocabulary as extended ids; kept only for
    # an output layer that reads them (OutputLayer.reads_source)
    source: torch.Tensor | None = None
    # the words the output layer scores for this batch (wean.inference.shortlist), the same for every row
    shortlist: Shortlist | None = None

    @property
    def attention_keys(self) -> torch.Tensor:
        return self.states if self.keys is None else self.keys

    def select(self, index: torch.Tensor) -> "EncoderOutput":
        """The rows (sentences) in ``index``: how search drops the sentences it has finished."""
        return self._rows(lambda tensor, dim: tensor.index_select(dim, index))

    def repeat(self, times: int) -> "EncoderOutput":
        """Each sentence ``times`` times in a row (for beam search)."""
        return self._rows(lambda tensor, dim: tensor.repeat_interleave(times, dim))

    def _rows(self, take) -> "EncoderOutput":
        """``take(tensor, batch dimension)`` applied to every tensor (the final states' batch
        dimension is 1)."""
        def rows(tensor):
            return None if tensor is None else take(tensor, 0)

        return EncoderOutput(
            rows(self.states), rows(self.mask), rows(self.embedded),
            None if self.final is None else tuple(take(state, 1) for state in self.final),
            rows(self.keys), rows(self.source), self.shortlist,
        )


@dataclass
class Shortlist:
    """What scoring only ``words`` takes, worked out once per batch by the output layer: its
    logits over them are linear(query, keys, bias), or, for an int8 layer, its own int8 product
    over its kept rows (``prepacked_int8``)."""

    words: torch.Tensor  # (K,) sorted target ids
    keys: torch.Tensor | None  # (K, hidden); None when ``prepacked_int8`` holds the rows
    bias: torch.Tensor | None  # (K,); -inf for a word the layer never writes
    vocabulary_size: int  # the width of the log-probabilities over the whole vocabulary
    # the log-probabilities over the K words only, column i for words[i] (search then works in those
    # ids): no -inf written over the vocabulary, no top-k over it
    compact: bool = False
    # an int8 layer's kept rows and their bias, prepacked for torch.ops.quantized.linear_dynamic
    # (as the layer computes its full product: the same logits over these words)
    prepacked_int8: object | None = None
    excluded: torch.Tensor | None = None  # (n,) positions that score -inf whatever the query
    onednn: bool = False  # the product's kernels (wean.models.kernels), as the layer's own

    def logits(self, queries: torch.Tensor) -> torch.Tensor:
        if self.prepacked_int8 is None:
            logits = kernels.linear(queries, self.keys, self.bias, self.onednn)
        else:
            logits = torch.ops.quantized.linear_dynamic(queries, self.prepacked_int8, reduce_range=True)
        return logits if self.excluded is None else logits.index_fill_(-1, self.excluded, float("-inf"))


@dataclass
class DecoderState:
    """What a recurrent decoder carries from one step to the next."""

    hidden: tuple[torch.Tensor, torch.Tensor]  # (h, c), each (layers, batch, hidden)
    input_feed: torch.Tensor | None  # (batch, hidden): the previous attentional state
    projected_keys: torch.Tensor  # (batch, source, hidden): computed once per batch
    # tensors a variant computes once per batch from the source (word attention's keys)
    source_side: dict[str, torch.Tensor] = field(default_factory=dict)
    coverage: torch.Tensor | None = None  # (batch, source): the attention so far, where the attention reads it

    def select(self, index: torch.Tensor, same_sources: bool = False) -> "DecoderState":
        """Keep (and reorder) the batch rows in ``index``: how beam search follows its beams.
        With ``same_sources`` every row keeps its source (beams of one sentence), so the
        source-side tensors need no copy."""
        def source_rows(tensor):
            return tensor if same_sources else tensor.index_select(0, index)

        return DecoderState(
            (self.hidden[0].index_select(1, index), self.hidden[1].index_select(1, index)),
            None if self.input_feed is None else self.input_feed.index_select(0, index),
            source_rows(self.projected_keys),
            {name: source_rows(tensor) for name, tensor in self.source_side.items()},
            None if self.coverage is None else self.coverage.index_select(0, index),
        )


@dataclass
class DecoderOutput:
    queries: torch.Tensor  # (batch, steps, hidden): what the output layer scores
    state: DecoderState  # after the last step
    attention: torch.Tensor  # (batch, steps, source): attention over the encoder states
    extras: dict[str, torch.Tensor] = field(default_factory=dict)  # see the module docstring


@dataclass
class StepOutput:
    log_probs: torch.Tensor  # (batch, vocabulary), float32; (batch, its words) under a compact shortlist
    state: DecoderState
    attention: torch.Tensor  # (batch, source)


@dataclass
class OutputContext:
    """What an output layer may read besides the decoder's queries, one row per sentence and
    target step (one step in search)."""

    attention: torch.Tensor  # (batch, steps, source): the attention over the encoder states
    encoded: EncoderOutput  # its ``source`` is set for a layer that reads it
    previous: torch.Tensor  # (batch, steps): the words the decoder read, in the vocabulary


@dataclass
class ModelOutput:
    # (batch, steps, vocabulary [+ extended ids]), float32; None where the model gave ``logits`` instead
    log_probs: torch.Tensor | None
    queries: torch.Tensor  # (batch, steps, hidden): the decoder's output, the output layer's input
    attention: torch.Tensor  # (batch, steps, source)
    extras: dict[str, torch.Tensor] = field(default_factory=dict)
    # (batch, steps, vocabulary), float32: what log_probs is the log-softmax of, where the forward
    # was asked for them (``logits=True``) and the output layer is such a softmax
    logits: torch.Tensor | None = None
    # where the forward was asked to score by target length: the output layer's results in
    # groups of rows, each over its own longest target (log_probs and logits are then None)
    parts: list["OutputPart"] | None = None
    # (batch, steps), float32: the targets' log-probabilities alone, where the forward was given
    # the targets and the output layer scores them alone (OutputLayer.target_log_probs)
    target_log_probs: torch.Tensor | None = None


@dataclass
class OutputPart:
    """The output layer's result for some rows of a batch over their first ``steps`` steps:
    ``log_probs``, or ``logits`` or ``target_log_probs`` where the forward was asked for them, as
    in :class:`ModelOutput`."""

    rows: torch.Tensor  # (rows,) their places in the batch
    steps: int
    log_probs: torch.Tensor | None  # (rows, steps, vocabulary [+ extended ids])
    logits: torch.Tensor | None = None
    target_log_probs: torch.Tensor | None = None  # (rows, steps)


class TrainingCorpus:
    """The training sources, for parts that learn something from the corpus before training."""

    def __init__(self, sources: list[str], tokenizer: "Tokenizer", target_vocabulary: "Vocabulary"):
        self.sources = sources
        self.tokenizer = tokenizer
        self.target_vocabulary = target_vocabulary

    @cached_property
    def source_token_counts(self) -> Counter:
        """Occurrences of every token of the training sources (tokenized once, when first asked)."""
        return Counter(token for source in self.sources for token in self.tokenizer.encode(source))


class Component(nn.Module):
    """What every registered part offers the rest of wean besides its forward pass."""

    @classmethod
    def check_config(cls, config) -> None:
        """Raise a WeanError naming the key if ``config`` (a :class:`wean.config.Config`) asks
        this component for something it cannot do."""

    def prepare(self, corpus: TrainingCorpus) -> None:
        """Called once before a new run trains (not on resume: what it sets is in the weights)."""

    def initialize(self) -> None:
        """Called by build_model after ``model.init_range``'s draw: a part that starts some of its
        weights otherwise draws them here."""


class Encoder(Component):
    """Source ids (batch, source) and lengths (batch,) → :class:`EncoderOutput`."""

    output_size: int  # the size of each state, which the decoder attends over
    max_source_length: int | None = None  # longer sources are refused (never cut); None: no limit

    @classmethod
    def build(cls, config, embedding: nn.Embedding, dropout: float) -> "Encoder":
        """``config``: its ``model.encoder`` section; ``dropout``: the model's, for the embeddings."""
        return cls(embedding, config, dropout)

    @classmethod
    def state_size(cls, model_config) -> int | None:
        """The size of each state for ``model_config`` (a ModelConfig), for checks made before any
        model is built; None: not known before."""
        return None

    def forward(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        raise NotImplementedError


class Decoder(Component):
    """Previous target ids (batch, steps), starting with <bos>, read with the encoder's output."""

    @classmethod
    def build(cls, config, embedding: nn.Embedding, memory_size: int, dropout: float) -> "Decoder":
        """``config``: its ``model.decoder`` section; ``memory_size``: the encoder's state size."""
        return cls(embedding, config, memory_size, dropout)

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        raise NotImplementedError

    def forward(
        self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState, extras: bool = False
    ) -> DecoderOutput:
        raise NotImplementedError


class OutputLayer(Component):
    """Queries (batch, steps, hidden) and their :class:`OutputContext` → log-probabilities
    (batch, steps, vocabulary), normalized, in float32: what the loss and search read (under a
    compact :class:`Shortlist`, a column per kept word instead). (A layer
    that does not read the context is given search's one step as (batch, hidden), which makes a
    linear product cheaper; ``forward`` maps any leading dimensions.)

    A layer that scores the vocabulary only implements ``forward(queries)`` → logits, and the
    softmax is taken here; a layer that reads the context (copies from the source) overrides
    :meth:`log_probs`, and sets ``reads_source`` so that the model keeps the source ids in the
    encoder output, and ``copies_source`` so that the data gives source words outside the
    vocabulary an extended id (:mod:`wean.data.copy_vocabulary`). A layer that multiplies by a
    submodule's weight tensor itself (not by calling the submodule) sets ``reads_weights``, so that
    int8 quantization (:mod:`wean.inference.quantize`) leaves its submodules in float32, and computes that
    product with :func:`wean.models.kernels.linear` under ``onednn_products`` (which
    :func:`wean.models.kernels.use_kernels` sets)."""

    reads_source = False
    copies_source = False
    reads_weights = False
    onednn_products = False

    @classmethod
    def build(cls, config, embedding: nn.Embedding, hidden_size: int, vocabulary_size: int) -> "OutputLayer":
        """``config``: its ``model.output_layer`` section; ``embedding``: the target embeddings;
        ``hidden_size``: the size of the decoder's queries. A layer with ``reads_source`` is also
        given ``memory_size``, the size of the encoder states the attention averages."""
        raise NotImplementedError

    @property
    def softmax_of_logits(self) -> bool:
        """Whether :meth:`log_probs` is the log-softmax of ``forward``'s logits (it is not
        overridden): the training loss is then taken from the logits in one step."""
        return type(self).log_probs is OutputLayer.log_probs

    def log_probs(self, queries: torch.Tensor, context: OutputContext | None) -> torch.Tensor:
        shortlist = None if context is None else context.encoded.shortlist
        if shortlist is None:
            return torch.log_softmax(self(queries).float(), dim=-1)
        kept = torch.log_softmax(shortlist.logits(queries).float(), dim=-1)
        if shortlist.compact:
            return kept
        full = kept.new_full((*kept.shape[:-1], shortlist.vocabulary_size), float("-inf"))
        return full.index_copy_(-1, shortlist.words, kept)

    def target_log_probs(self, queries: torch.Tensor, context: OutputContext,
                         targets: torch.Tensor) -> torch.Tensor | None:
        """(batch, steps): the log-probabilities of ``targets`` (batch, steps: the loss's ids,
        IGNORE where none) alone, equal to :meth:`log_probs` gathered at them up to rounding, for a
        training loss that reads nothing else; None where the layer has no cheaper way than the
        whole distribution (the loss then reads :meth:`log_probs`)."""
        return None

    def shortlist(self, words: torch.Tensor) -> Shortlist | None:
        """What scoring only ``words`` (sorted target ids) takes, worked out once per batch
        (:mod:`wean.inference.shortlist`): a layer whose logits are one linear product over the vocabulary
        gives its rows of that product; None: it scores every word (and a shortlist is refused)."""
        return None

    def map_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """The targets the loss compares with: a layer that cannot generate some words maps them."""
        return targets


class AuxiliaryLoss(Component):
    """A training-only term the criterion adds to the cross-entropy (registered in
    ``wean.registry.AUXILIARY_LOSSES``; ``build`` returns None when the config does not ask for
    it). Its weights, if any, are saved with the model but cost nothing in search."""

    @classmethod
    def build(cls, config, source_vocabulary_size: int) -> "AuxiliaryLoss | None":
        """``config``: the ModelConfig."""
        raise NotImplementedError

    def extend_target(self, source_length: int, target: list[int]) -> list[int]:
        """The target the decoder is trained on (``target`` ends with <eos>): a loss may continue
        it (SPM's Y')."""
        return target

    def loss(self, output: ModelOutput, source: torch.Tensor, source_lengths: torch.Tensor,
             target_mask: torch.Tensor) -> torch.Tensor:
        """The term, summed over the batch (the trainer divides it with the cross-entropy).
        ``source``: ids in the vocabulary; ``target_mask`` (batch, steps): True on trained steps."""
        raise NotImplementedError

    def extras(self, output: ModelOutput, source: torch.Tensor) -> dict[str, torch.Tensor]:
        """What the loss shows of a teacher-forced pass (see the module docstring)."""
        return {}
