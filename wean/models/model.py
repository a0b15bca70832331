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
from wean.models.decoder import LSTMDecoder
from wean.models.encoder import EncoderOutput, LSTMEncoder
from wean.models.output_layer import LinearOutput, WeanOutput
from wean.models.selective_gate import SelectiveGate
from wean.models.spm import SourcePredictionModule
from wean.models.conditional_decoder import ConditionalLSTMDecoder
from wean.models.conv_encoder import ConvEncoder
from wean.models.word_attention import WordAttentionDecoder

DECODERS = {"luong": LSTMDecoder, "bahdanau": WordAttentionDecoder, "conditional": ConditionalLSTMDecoder}
ENCODERS = {"lstm": LSTMEncoder, "conv": ConvEncoder}


class EncoderDecoder(nn.Module):
    def __init__(
        self,
        encoder: nn.Module,
        decoder: nn.Module,
        output_layer: nn.Module,
        selective_gate: nn.Module | None = None,
        spm: SourcePredictionModule | None = None,
    ):
        super().__init__()
        self.encoder = encoder
        self.selective_gate = selective_gate
        self.decoder = decoder
        self.output_layer = output_layer
        self.spm = spm  # training only

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        encoded = self.encoder(source, lengths)
        return self.selective_gate(encoded) if self.selective_gate is not None else encoded

    def loss_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """The targets the loss compares with: the output layer may not generate every word."""
        map_targets = getattr(self.output_layer, "map_targets", None)
        return map_targets(targets) if map_targets else targets

    def teacher_forced(
        self, source: torch.Tensor, lengths: torch.Tensor, target_input: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The decoder's attentional states (batch, target, hidden), the output layer's queries,
        and the attention (batch, target, source) given the true previous words."""
        encoded = self.encode(source, lengths)
        attentional, _, attention = self.decoder(target_input, encoded, self.decoder.init_state(encoded))
        return attentional, attention

    def forward(
        self, source: torch.Tensor, lengths: torch.Tensor, target_input: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced logits (batch, target, vocabulary) and attention (batch, target, source)."""
        attentional, attention = self.teacher_forced(source, lengths, target_input)
        return self.output_layer(attentional), attention


def build_model(config: ModelConfig, source_vocabulary_size: int, target_vocabulary_size: int) -> EncoderDecoder:
    source_embedding = nn.Embedding(source_vocabulary_size, config.embedding_size, padding_idx=PAD_ID)
    if config.share_embeddings:
        if source_vocabulary_size != target_vocabulary_size:
            raise ValueError("shared embeddings need one vocabulary for source and target")
        target_embedding = source_embedding
    else:
        target_embedding = nn.Embedding(target_vocabulary_size, config.embedding_size, padding_idx=PAD_ID)
    encoder = ENCODERS[config.encoder.type](source_embedding, config.encoder, config.dropout)
    decoder = DECODERS[config.decoder.type](target_embedding, config.decoder, encoder.output_size, config.dropout)
    output = config.output_layer
    if output.type == "wean":
        output_layer = WeanOutput(
            target_embedding, config.decoder.hidden_size, output.score, output.bias, output.detach_embeddings
        )
    else:
        output_layer = LinearOutput(config.decoder.hidden_size, target_vocabulary_size)
    gate = None
    if config.encoder.selective_gate:
        gate = SelectiveGate(encoder.output_size, sentence_from_final_state=config.encoder.type == "lstm")
    spm = None
    if config.spm.enabled:
        spm = SourcePredictionModule(config.decoder.hidden_size, source_vocabulary_size, config.spm.c)
    model = EncoderDecoder(encoder, decoder, output_layer, gate, spm)
    if config.init_range > 0:
        for parameter in model.parameters():  # each tied parameter once
            nn.init.uniform_(parameter, -config.init_range, config.init_range)
        with torch.no_grad():
            source_embedding.weight[PAD_ID].zero_()
            target_embedding.weight[PAD_ID].zero_()
    return model
