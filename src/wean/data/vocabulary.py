"""Token ↔ id mapping with the four special tokens every model uses."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from wean.errors import WeanError
from wean.textio import atomic_write_text, read_json

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = range(4)


class Vocabulary:
    """Ids 0-3 are ``<pad> <unk> <bos> <eos>``; then types by descending frequency (ties by the
    token, so a vocabulary is the same on every machine)."""

    def __init__(self, tokens: Sequence[str]):
        self.itos = list(SPECIALS) + [t for t in tokens if t not in SPECIALS]
        self.stoi = {token: index for index, token in enumerate(self.itos)}

    @classmethod
    def build(
        cls, sentences: Iterable[Sequence[str]], max_size: int, min_frequency: int = 1, reserved: Sequence[str] = ()
    ) -> "Vocabulary":
        """Keep the ``max_size`` most frequent types seen at least ``min_frequency`` times, after
        the specials and the ``reserved`` tokens (control tokens), which are not counted."""
        counts = Counter(token for sentence in sentences for token in sentence)
        reserved_set = set(reserved)
        ranked = sorted(
            (t for t, c in counts.items() if c >= min_frequency and t not in reserved_set), key=lambda t: (-counts[t], t)
        )
        return cls(list(reserved) + ranked[:max_size])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str], add_eos: bool = False) -> list[int]:
        ids = [self.stoi.get(token, UNK_ID) for token in tokens]
        return ids + [EOS_ID] if add_eos else ids

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens up to the first ``<eos>``, without ``<pad>`` and ``<bos>``."""
        tokens = []
        for index in ids:
            if index == EOS_ID:
                break
            if index not in (PAD_ID, BOS_ID):
                tokens.append(self.itos[index])
        return tokens

    def save(self, path: Path) -> None:
        atomic_write_text(path, json.dumps(self.itos, ensure_ascii=False, indent=0) + "\n")

    @classmethod
    def load(cls, path: Path) -> "Vocabulary":
        itos = read_json(path)
        if not isinstance(itos, list) or tuple(itos[:4]) != SPECIALS:
            raise WeanError(f"{path}: not a vocabulary file (expected a list starting with {', '.join(SPECIALS)})")
        if not all(isinstance(token, str) for token in itos):
            raise WeanError(f"{path}: not a vocabulary file (every entry must be a string)")
        seen = set()
        for index, token in enumerate(itos):
            if token in seen:  # two ids for one token: the model's rows would no longer match its words
                raise WeanError(f"{path}: token {token!r} appears twice (again at index {index})")
            seen.add(token)
        return cls(itos[4:])
