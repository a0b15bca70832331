"""The convolutional encoder of Gehring et al. (2016, "A Convolutional Encoder Model for Neural
Machine Translation"), as applied to simplification by Manne and Azov.

    e_j  = w_j + l_j                       word embedding + learned position embedding
    z_j  = CNN-a(e)_j                      attention keys
    z'_j = CNN-c(e)_j                      attention values (the paper's "conditional input")

Both CNNs are stacks of residual blocks, block(x) = tanh(conv(x) + x), with "same" padding (the
sentence keeps its length) and no pooling, as in fairseq-lua's ``conv_model.lua``: CNN-a works at ``hidden_size`` channels between a linear
up-projection from and a down-projection to the embedding size, and its last convolution has no
residual; CNN-c has ``attention_layers`` blocks at the embedding size, by default
floor(layers / 2) clamped to [1, 5] (15 -> 5 as in the paper). By default every one of them is
residual, unlike fairseq-lua, whose CNN-c ends, like CNN-a, with a convolution without residual:
``values_last_residual: false`` builds fairseq-lua's (the default builds what the saved conv models
and their results were trained with). Padding is zeroed before every
convolution so that it never leaks into real positions. fairseq-lua scales the convolutions'
gradients by 1/sqrt(fan-in) for SGD: each convolution's ``gradient_scale``, applied under
``training.optimizer: sgd`` (wean/training/optimizers.py); with Adam, which normalizes each
parameter's step, that scaling has no effect and is left out.

The encoder has no recurrent final state: decoders start from zeros (``bridge: zero``).
Sources longer than ``max_positions`` have no position embedding and are refused, never cut.
``position_embeddings: false`` leaves them out, an ablation: word
order then reaches CNN-a only through the convolutions' zero padding at the sentence edges, and
attention can no longer find a source word by its position alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from wean.config import EncoderConfig
from wean.errors import WeanError
from wean.models.interfaces import Encoder, EncoderOutput
from wean.registry import ENCODERS


@dataclass
class ConvEncoderConfig(EncoderConfig):
    kernel_width: int = 3
    attention_layers: int = 0  # CNN-c depth; 0: floor(layers / 2) in [1, 5]
    max_positions: int = 1024  # longest source with a position embedding
    position_embeddings: bool = True  # false ablates them (word order from the edges' padding alone)
    values_last_residual: bool = True  # false: CNN-c's last block without residual, as fairseq-lua's


def default_attention_layers(layers: int) -> int:
    return min(5, max(1, layers // 2))


class ConvBlock(nn.Module):
    def __init__(self, channels: int, kernel_width: int, residual: bool = True):
        super().__init__()
        if kernel_width % 2 == 0:
            raise ValueError("kernel_width must be odd so that 'same' padding keeps the length")
        self.conv = nn.Conv1d(channels, channels, kernel_width, padding=kernel_width // 2)
        self.conv.gradient_scale = channels ** -0.5  # fairseq-lua's GradMultiply (fan-in: input channels)
        self.residual = residual

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """x (batch, channels, length); keep (batch, 1, length) is 1 on real tokens."""
        y = self.conv(x * keep)
        return torch.tanh(y + x if self.residual else y)


@ENCODERS.register("conv", config=ConvEncoderConfig)
class ConvEncoder(Encoder):
    def __init__(self, embedding: nn.Embedding, config: ConvEncoderConfig, embedding_dropout: float = 0.0):
        super().__init__()
        size = embedding.embedding_dim
        self.embedding = embedding
        self.max_source_length = config.max_positions if config.position_embeddings else None
        self.positions = nn.Embedding(config.max_positions, size) if config.position_embeddings else None
        self.dropout = nn.Dropout(embedding_dropout)
        self.up = nn.Linear(size, config.hidden_size) if config.hidden_size != size else nn.Identity()
        self.down = nn.Linear(config.hidden_size, size) if config.hidden_size != size else nn.Identity()
        self.attention_cnn = nn.ModuleList(
            ConvBlock(config.hidden_size, config.kernel_width, residual=i < config.layers - 1)
            for i in range(config.layers)
        )
        value_layers = config.attention_layers or default_attention_layers(config.layers)
        self.value_cnn = nn.ModuleList(
            ConvBlock(size, config.kernel_width, residual=config.values_last_residual or i < value_layers - 1)
            for i in range(value_layers)
        )
        self.output_size = size

    @classmethod
    def state_size(cls, model_config) -> int:
        return model_config.embedding_size  # CNN-a and CNN-c both end at the embedding size

    @classmethod
    def check_config(cls, config) -> None:
        encoder = config.model.encoder
        if config.model.decoder.bridge != "zero":
            raise WeanError("config: the conv encoder has no final state; use model.decoder.bridge: zero")
        if encoder.position_embeddings and (config.data.max_tokens > encoder.max_positions or not config.data.max_tokens):
            raise WeanError(
                f"config: data.max_tokens ({config.data.max_tokens}) must be between 1 and "
                f"model.encoder.max_positions ({encoder.max_positions})"
            )

    def forward(self, source: torch.Tensor, lengths: torch.Tensor) -> EncoderOutput:
        length = source.size(1)
        if self.max_source_length is not None and length > self.max_source_length:
            raise ValueError(f"a source of {length} tokens is longer than max_positions {self.max_source_length}")
        mask = torch.arange(length, device=source.device).unsqueeze(0) < lengths.to(source.device).unsqueeze(1)
        words = self.embedding(source)
        embedded = words
        if self.positions is not None:
            embedded = words + self.positions(torch.arange(length, device=source.device)).unsqueeze(0)
        embedded = self.dropout(embedded)
        keep = mask.unsqueeze(1).to(embedded.dtype)  # (batch, 1, length)

        keys = self.up(embedded).transpose(1, 2)
        for block in self.attention_cnn:
            keys = block(keys, keep)
        keys = self.down(keys.transpose(1, 2))

        values = embedded.transpose(1, 2)
        for block in self.value_cnn:
            values = block(values, keep)
        values = values.transpose(1, 2)

        return EncoderOutput(values, mask, words, keys=keys)  # no final state: the decoder starts from zeros
