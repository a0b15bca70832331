"""A synthetic task small enough to learn inside the test suite: reverse 5-12 symbols."""

from __future__ import annotations

import random
from pathlib import Path

from wean.config import config_from_dict

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
        "training": {"batch_size": 32, "learning_rate": 0.005, "max_epochs": 6, "log_every": 1000,
                     "selection_metric": "bleu", **training},
        "generation": {"beam": 5, "max_length": 30},
    }
    return config_from_dict(values)
