"""The encoder-decoder, assembled from configuration.

A model is an encoder (source → states), a decoder (previous words + states → attentional
states, step by step or all at once) and an output layer (attentional states → logits). Each is
its own module and each is picked by a config key, so a paper's variant replaces one part.
"""

from __future__ import annotations

import torch
from torch import nn

from wean.config import ModelConfig
from wean.data.vocabulary import PAD_ID
from wean.models.interfaces import (
    Component, Decoder, DecoderState, Encoder, EncoderOutput, ModelOutput, OutputLayer, StepOutput, TrainingCorpus,
)
from wean.models.selective_gate import SelectiveGate
from wean.models.spm import SourcePredictionModule
from wean.registry import DECODERS, ENCODERS, OUTPUT_LAYERS


class EncoderDecoder(nn.Module):
    """The model contract (:mod:`wean.models.interfaces`): everything outside ``wean/models``
    drives a model through these calls only."""

    def __init__(
        self,
        encoder: Encoder,
        decoder: Decoder,
        output_layer: OutputLayer,
        selective_gate: nn.Module | None = None,
        spm: SourcePredictionModule | None = None,
    ):
        super().__init__()
        self.encoder = encoder
        self.selective_gate = selective_gate
        self.decoder = decoder
        self.output_layer = output_layer
        self.spm = spm  # training only

    @property
    def max_source_length(self) -> int | None:
        """Longer sources are refused by the encoder; None: no limit."""
        return self.encoder.max_source_length

    def prepare(self, corpus: TrainingCorpus) -> None:
        """Before a new run trains: each part learns what it needs from the corpus."""
        for part in (self.encoder, self.decoder, self.output_layer):
            if isinstance(part, Component):
                part.prepare(corpus)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        encoded = self.encoder(source, lengths)
        return self.selective_gate(encoded) if self.selective_gate is not None else encoded

    def init_state(self, encoded: EncoderOutput) -> DecoderState:
        return self.decoder.init_state(encoded)

    def decode_step(self, previous: torch.Tensor, encoded: EncoderOutput, state: DecoderState) -> StepOutput:
        """One step of search: ``previous`` (batch,) the last word of each row."""
        output = self.decoder(previous.unsqueeze(1), encoded, state)
        log_probs = torch.log_softmax(self.output_layer(output.queries.squeeze(1)).float(), dim=-1)
        return StepOutput(log_probs, output.state, output.attention.squeeze(1))

    def loss_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """The targets the loss compares with: the output layer may not generate every word."""
        return self.output_layer.map_targets(targets)

    def forward(
        self, source: torch.Tensor, lengths: torch.Tensor, target_input: torch.Tensor, extras: bool = False
    ) -> ModelOutput:
        """Teacher-forced: the true previous words ``target_input`` (batch, steps), <bos> first.
        With ``extras``, what the variant computes besides (see :mod:`wean.models.interfaces`)."""
        encoded = self.encode(source, lengths)
        decoded = self.decoder(target_input, encoded, self.init_state(encoded), extras=extras)
        logits = self.output_layer(decoded.queries)
        kept = dict(decoded.extras)
        if extras and self.spm is not None:
            kept["source_prediction"] = self.spm.alignment(decoded.queries, source)
        return ModelOutput(logits, decoded.queries, decoded.attention, kept)


def build_model(config: ModelConfig, source_vocabulary_size: int, target_vocabulary_size: int) -> EncoderDecoder:
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
    output_layer = OUTPUT_LAYERS.get(config.output_layer.type).build(
        config.output_layer, target_embedding, config.decoder.hidden_size, target_vocabulary_size
    )
    gate = SelectiveGate(encoder.output_size) if config.encoder.selective_gate else None
    spm = None
    if config.spm.enabled:
        spm = SourcePredictionModule(config.decoder.hidden_size, source_vocabulary_size, config.spm.c)
    model = EncoderDecoder(encoder, decoder, output_layer, gate, spm)
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
