"""The encoder-decoder, assembled from configuration.

A model is an encoder (source → states), a decoder (previous words + states → attentional
states, step by step or all at once) and an output layer (attentional states → log-probabilities).
Each is its own module and each is picked by a config key, so a paper's variant replaces one part.
Registered parts that only some models have sit around them: encoder transforms (the selective
gate), which change the encoder's output, and auxiliary losses (SPM, coverage), which only
training reads.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable

import torch
from torch import nn

from wean.config import ModelConfig, check_model_sections
from wean.data.vocabulary import PAD_ID, UNK_ID
from wean.errors import WeanError
from wean.models.interfaces import (
    AuxiliaryLoss, Component, Decoder, DecoderState, Encoder, EncoderOutput, ModelOutput, OutputContext, OutputPart,
    OutputLayer, StepOutput, TrainingCorpus,
)
from wean.registry import AUXILIARY_LOSSES, DECODERS, ENCODER_TRANSFORMS, ENCODERS, OUTPUT_LAYERS


# what an output layer gives in a teacher-forced pass: (log_probs, logits, target_log_probs)
ScoredOutput = tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]

class EncoderDecoder(nn.Module):
    """The model contract (:mod:`wean.models.interfaces`): everything outside ``wean/models``
    drives a model through these calls only."""

    def __init__(
        self,
        encoder: Encoder,
        decoder: Decoder,
        output_layer: OutputLayer,
        vocabulary_size: int,
        encoder_transforms: dict[str, nn.Module] | None = None,
        auxiliary_losses: dict[str, AuxiliaryLoss] | None = None,
    ):
        super().__init__()
        self.encoder = encoder
        # each part under its registered name: the names are those of its weights
        self.encoder_transforms = list(encoder_transforms or {})
        for name, transform in (encoder_transforms or {}).items():
            self.add_module(name, transform)
        self.decoder = decoder
        self.output_layer = output_layer
        self.auxiliary_losses = list(auxiliary_losses or {})  # training only
        for name, loss in (auxiliary_losses or {}).items():
            self.add_module(name, loss)
        self.vocabulary_size = vocabulary_size  # the target's, which a copying model shares with the source

    @property
    def max_source_length(self) -> int | None:
        """Longer sources are refused by the encoder; None: no limit."""
        return self.encoder.max_source_length

    @property
    def copies_source(self) -> bool:
        """Whether the source's words outside the vocabulary come as extended ids
        (:mod:`wean.data.copy_vocabulary`)."""
        return self.output_layer.copies_source

    def losses(self) -> list[AuxiliaryLoss]:
        return [getattr(self, name) for name in self.auxiliary_losses]

    def prepare(self, corpus: TrainingCorpus) -> None:
        """Before a new run trains: each part learns what it needs from the corpus."""
        for part in (self.encoder, self.decoder, self.output_layer):
            if isinstance(part, Component):
                part.prepare(corpus)

    def in_vocabulary(self, ids: torch.Tensor) -> torch.Tensor:
        """``ids`` with every extended id (a copied word outside the vocabulary) as <unk>: what
        embeddings read. Any model may be given extended ids (an ensemble with a copying model)."""
        return ids.masked_fill(ids >= self.vocabulary_size, UNK_ID)

    def extend_target(self, source_length: int, target: list[int]) -> list[int]:
        """The target the decoder is trained on, as the auxiliary losses continue it."""
        for loss in self.losses():
            target = loss.extend_target(source_length, target)
        return target

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        encoded = self.encoder(self.in_vocabulary(source), lengths)
        for name in self.encoder_transforms:
            encoded = getattr(self, name)(encoded)
        return replace(encoded, source=source) if self.output_layer.reads_source else encoded

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        return self.decoder.init_state(encoded)

    def log_probs(self, queries: torch.Tensor, attention: torch.Tensor, encoded: EncoderOutput,
                  previous: torch.Tensor) -> torch.Tensor:
        """(batch, [steps,] vocabulary [+ extended ids]): the output layer's distribution after the
        decoder's ``queries`` and ``attention``, which read ``previous`` (batch, [steps])."""
        return self.output_layer.log_probs(queries, OutputContext(attention, encoded, previous))

    def decode_step(self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState) -> StepOutput:
        """One step of search: ``previous`` (batch,) the last word of each row."""
        previous = self.in_vocabulary(previous).unsqueeze(1)
        output = self.decoder(previous, encoded, state)
        attention = output.attention.squeeze(1)
        if self.output_layer.reads_source:  # a layer that reads the context always has the steps dimension
            log_probs = self.log_probs(output.queries, output.attention, encoded, previous).squeeze(1)
        else:  # (batch, hidden): a linear layer's product on 2-D input folds its bias in, 2.2 ms a step faster
            log_probs = self.log_probs(output.queries.squeeze(1), attention, encoded, previous.squeeze(1))
        return StepOutput(log_probs, output.state, attention)

    def loss_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """The targets the loss compares with: the output layer may not generate every word."""
        return self.output_layer.map_targets(targets)

    def forward(
        self, source: torch.Tensor, lengths: torch.Tensor, target_input: torch.Tensor, extras: bool = False,
        logits: bool = False, by_target_length: bool = False, targets: torch.Tensor | None = None,
    ) -> ModelOutput:
        """Teacher-forced: the true previous words ``target_input`` (batch, steps), <bos> first.
        With ``extras``, what the variant computes besides (see :mod:`wean.models.interfaces`).
        With ``logits``, an output layer that is a softmax over logits gives those instead of the
        log-probabilities (the training loss takes them in one step). With ``by_target_length``
        (and no ``extras``), the output layer scores groups of rows of similar target length, each
        over its own longest target, and skips most padded positions (:func:`target_length_groups`):
        the output is in ``parts``. With ``targets`` (the loss's, batch x steps), an output layer
        that scores the targets alone (:meth:`OutputLayer.target_log_probs`) gives only their
        log-probabilities (unless it gives logits, as asked); another gives what it gives without them."""
        encoded = self.encode(source, lengths)
        target_input = self.in_vocabulary(target_input)
        decoded = self.decoder(target_input, encoded, self.init_state(encoded), extras=extras)
        groups = target_length_groups(target_input) if by_target_length and not extras else None
        if groups is not None:
            parts = [self._output_part(rows, steps, decoded, encoded, target_input, logits, targets)
                     for rows, steps in groups]
            return ModelOutput(None, decoded.queries, decoded.attention, dict(decoded.extras), parts=parts)
        log_probs, logits_out, picked = self._scored(
            decoded.queries, lambda: OutputContext(decoded.attention, encoded, target_input),
            encoded.shortlist is None, logits, None if extras else targets)
        output = ModelOutput(log_probs, decoded.queries, decoded.attention, dict(decoded.extras),
                             logits=logits_out, target_log_probs=picked)
        if extras:
            for loss in self.losses():
                output.extras.update(loss.extras(output, self.in_vocabulary(source)))
        return output

    def _output_part(self, rows: torch.Tensor, steps: int, decoded, encoded: EncoderOutput,
                     target_input: torch.Tensor, logits: bool, targets: torch.Tensor | None) -> OutputPart:
        def context() -> OutputContext:
            return OutputContext(decoded.attention[:, :steps].index_select(0, rows), encoded.select(rows),
                                 target_input[:, :steps].index_select(0, rows))

        queries = decoded.queries[:, :steps].index_select(0, rows)
        picked = None if targets is None else targets[:, :steps].index_select(0, rows)
        return OutputPart(rows, steps, *self._scored(queries, context, encoded.shortlist is None, logits, picked))

    def _scored(self, queries: torch.Tensor, context: Callable[[], OutputContext], whole_vocabulary: bool,
                logits: bool, targets: torch.Tensor | None) -> ScoredOutput:
        """(log_probs, logits, target_log_probs), one of them set: what the forward's output layer
        gives for ``queries``: its logits where asked for them and it is a softmax of them over the
        whole vocabulary, else the targets' log-probabilities where given them and it scores them
        alone, else every log-probability. ``context`` is built only where the layer reads it."""
        layer = self.output_layer
        if logits and layer.softmax_of_logits and whole_vocabulary:
            return None, layer(queries).float(), None
        read = context()
        picked = None if targets is None else layer.target_log_probs(queries, read, targets)
        if picked is not None:
            return None, None, picked
        return layer.log_probs(queries, read), None, None


def target_length_groups(target_input: torch.Tensor, most: int = 4) -> list[tuple[torch.Tensor, int]] | None:
    """Rows of ``target_input`` (batch, steps) in at most ``most`` groups of similar target length,
    each with its longest target: the rows sorted by length and cut into groups of equal size, the
    cut whose positions, times 1 + 0.02 per group beyond the first, are fewest (the smaller cut on
    a tie). None where one group over every step does as well."""
    lengths = (target_input != PAD_ID).sum(1).cpu()
    ordered, order = lengths.sort(descending=True, stable=True)
    ordered, batch = ordered.tolist(), len(ordered)
    best, best_cost = None, batch * target_input.size(1)
    for count in range(2, min(most, batch) + 1):
        size = -(-batch // count)
        starts = range(0, batch, size)
        cost = sum(min(size, batch - start) * ordered[start] for start in starts) * (1 + 0.02 * (count - 1))
        if cost < best_cost:
            best, best_cost = [(start, min(size, batch - start)) for start in starts], cost
    if best is None:
        return None
    order = order.to(target_input.device)
    return [(order[start:start + size], ordered[start]) for start, size in best]


def build_model(config: ModelConfig, source_vocabulary_size: int, target_vocabulary_size: int) -> EncoderDecoder:
    """The model of ``config``; one that could not fit in this machine's memory is refused in one
    line before any of it is allocated (built first on PyTorch's meta device, which holds shapes only)."""
    check_model_sections(config)
    with torch.device("meta"):
        parameters = sum(p.numel() for p in _build(config, source_vocabulary_size, target_vocabulary_size).parameters())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if parameters * 4 > memory:
        raise WeanError(f"config: the model has {parameters:,} parameters ({parameters * 4 / 2**30:,.1f} GiB in float32), "
                        f"more than this machine's {memory / 2**30:,.1f} GiB of memory")
    return _build(config, source_vocabulary_size, target_vocabulary_size)


def _build(config: ModelConfig, source_vocabulary_size: int, target_vocabulary_size: int) -> EncoderDecoder:
    source_embedding = nn.Embedding(source_vocabulary_size, config.embedding_size, padding_idx=PAD_ID)
    if config.share_embeddings:
        if source_vocabulary_size != target_vocabulary_size:
            raise ValueError("shared embeddings need one vocabulary for source and target")
        target_embedding = source_embedding
    else:
        target_embedding = nn.Embedding(target_vocabulary_size, config.embedding_size, padding_idx=PAD_ID)
    encoder = ENCODERS.get(config.encoder.type).build(config.encoder, source_embedding, config.dropout)
    decoder = DECODERS.get(config.decoder.type).build(
        config.decoder, target_embedding, encoder.output_size, config.dropout
    )
    output_class = OUTPUT_LAYERS.get(config.output_layer.type)
    # a layer that reads the context (the attention's values) is told their size
    memory = {"memory_size": encoder.output_size} if output_class.reads_source else {}
    output_layer = output_class.build(
        config.output_layer, target_embedding, config.decoder.hidden_size, target_vocabulary_size, **memory
    )
    transforms = {name: ENCODER_TRANSFORMS.get(name).build(config, encoder.output_size)
                  for name in ENCODER_TRANSFORMS.names()}
    losses = {name: AUXILIARY_LOSSES.get(name).build(config, source_vocabulary_size)
              for name in AUXILIARY_LOSSES.names()}
    model = EncoderDecoder(encoder, decoder, output_layer, target_vocabulary_size,
                           {name: part for name, part in transforms.items() if part is not None},
                           {name: part for name, part in losses.items() if part is not None})
    if config.embeddings.freeze:  # pretrained vectors kept as they are (wean/models/pretrained_embeddings.py)
        source_embedding.weight.requires_grad_(False)
        target_embedding.weight.requires_grad_(False)
    if config.init_range > 0:
        for parameter in model.parameters():  # each tied parameter once
            nn.init.uniform_(parameter, -config.init_range, config.init_range)
        with torch.no_grad():
            source_embedding.weight[PAD_ID].zero_()
            target_embedding.weight[PAD_ID].zero_()
    for part in model.modules():
        if isinstance(part, Component):
            part.initialize()
    return model
