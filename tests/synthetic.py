"""A synthetic task small enough to learn inside the test suite: reverse 5-12 symbols."""

from __future__ import annotations

import random
from pathlib import Path

import math

import torch
from torch import nn

from wean.config import ModelConfig, config_from_dict, section_config
from wean.models.interfaces import DecoderState, EncoderOutput, StepOutput
from wean.models.model import build_model

A, B, C = 4, 5, 6  # word ids after the four specials, for ScriptedModel

SYMBOLS = list("abcdefghij")
HANZI = list("天地人日月山水火木金")  # for the character-level pipeline: Chinese is written unsegmented


def reverse_pairs(
    count: int, seed: int, reverse: bool = True, symbols: list[str] = SYMBOLS, separator: str = " "
) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    sequences = [[rng.choice(symbols) for _ in range(rng.randint(5, 12))] for _ in range(count)]
    return (
        [separator.join(s) for s in sequences],
        [separator.join(reversed(s) if reverse else s) for s in sequences],
    )


def write_corpus(
    folder: Path, train: int = 2000, valid: int = 100, reverse: bool = True, **symbols
) -> Path:
    """Reverse (or, with ``reverse=False``, copy) 5-12 symbols; ``symbols``: see reverse_pairs."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, count, seed in (("train", train, 0), ("valid", valid, 1)):
        sources, targets = reverse_pairs(count, seed, reverse, **symbols)
        (folder / f"{split}.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
        (folder / f"{split}.dst").write_text("\n".join(targets) + "\n", encoding="utf-8")
    return folder


def tiny_config(data: Path, model_dir: Path, **training):
    values = {
        "model_dir": str(model_dir),
        "data": {"train": str(data / "train"), "valid": str(data / "valid"), "tokenizer": {"type": "word"}},
        "model": {
            "embedding_size": 32,
            "encoder": {"hidden_size": 64, "layers": 1, "bidirectional": True},
            "decoder": {"hidden_size": 64, "layers": 1, "bridge": "linear", "attention": "general"},
        },
        # kernels fixed, not timed (auto, whose choice changes the arithmetic run to run and
        # machine to machine): the tests' thresholds on what these tiny models learn hold for blas
        "training": {"batch_size": 32, "learning_rate": 0.005, "max_epochs": 6, "log_every": 1000,
                     "selection_metric": "bleu", "kernels": "blas", **training},
        "generation": {"beam": 5, "max_length": 30},
    }
    return config_from_dict(values)


def write_prefix_corpus(folder: Path, train: int = 2000, valid: int = 100) -> Path:
    """Keep a prefix of 6-14 symbols whose length is a random share (0.2-1) of the source's: a
    task where only a control token can tell the model how much to keep."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, count, seed in (("train", train, 0), ("valid", valid, 1)):
        rng = random.Random(seed)
        sources, targets = [], []
        for _ in range(count):
            symbols = [rng.choice(SYMBOLS) for _ in range(rng.randint(6, 14))]
            keep = max(1, round(rng.uniform(0.2, 1.0) * len(symbols)))
            sources.append(" ".join(symbols))
            targets.append(" ".join(symbols[:keep]))
        (folder / f"{split}.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
        (folder / f"{split}.dst").write_text("\n".join(targets) + "\n", encoding="utf-8")
    return folder


def control_config(data: Path, model_dir: Path, **training):
    """tiny_config with a length-ratio control token (buckets of 0.1). PyTorch's default
    initialization: with uniform(-0.1, 0.1) this tiny model stalls at copying once its vocabulary
    holds the 21 control tokens (as it does with 21 unused words; seen on three seeds)."""
    values = tiny_config(data, model_dir, **training).to_dict()
    values["model"]["init_range"] = 0
    values["data"]["control"] = {"attributes": ["chars_ratio"], "bucket": 0.1}
    values["generation"]["control"] = {"chars_ratio": 1.0}
    return config_from_dict(values)


def conv_model(decoder="conditional", output="linear", seed=0, position_embeddings=True):
    """A small conv-encoder model (CNN-a: 4 blocks of 24 channels; CNN-c: 2 of 16), in eval mode."""
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=16)
    config.encoder = section_config("model.encoder", {"type": "conv", "hidden_size": 24, "layers": 4,
                                                      "position_embeddings": position_embeddings, "max_positions": 30})
    config.decoder = section_config("model.decoder", {"type": decoder, "hidden_size": 16, "bridge": "zero"})
    config.output_layer = section_config("model.output_layer", {"type": output})
    return build_model(config, 30, 30).eval()


class ScriptedModel(nn.Module):
    """A stand-in encoder-decoder whose next-word distribution depends only on the previous
    word, read from a table: enough to construct cases with known best answers. It implements
    only the model contract that search uses (encode, init_state, decode_step). Its attention
    is uniform over the source, or, for a previous word in ``attention``, the weights given there."""

    def __init__(self, next_word: dict[int, dict[int, float]], vocabulary: int = 7,
                 attention: dict[int, list[float]] | None = None):
        super().__init__()
        table = torch.full((vocabulary, vocabulary), -30.0)
        for previous, choices in next_word.items():
            for word, probability in choices.items():
                table[previous, word] = math.log(probability)
        self.table = table
        self.attention = attention or {}

    def encode(self, source, lengths):
        batch, length = source.shape
        final = (torch.zeros(1, batch, 1), torch.zeros(1, batch, 1))
        return EncoderOutput(torch.zeros(batch, length, 1), source != 0, torch.zeros(batch, length, 1), final)

    def init_state(self, encoded):
        return DecoderState(encoded.final, None, encoded.states)

    def decode_step(self, previous, encoded, state):
        weights = encoded.mask.float() / encoded.mask.sum(1, keepdim=True)
        for word, row in self.attention.items():
            weights[previous == word] = torch.tensor(row)
        return StepOutput(torch.log_softmax(self.table[previous], dim=-1), state, weights)
