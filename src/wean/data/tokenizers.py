"""Text ↔ tokens, saved with the model so that generation splits text as training did.

``word``
    whitespace tokens (the corpora here are already tokenized), optionally lowercased.
``char``
    one token per character, for Chinese; a run of whitespace becomes one ``▁`` token so that
    decoding restores the spaces.
``bpe`` / ``unigram``
    sentencepiece models trained on the training text, with the identity normalization so that
    ``decode(encode(text)) == text`` for whitespace-normalized text. With ``byte_fallback`` a
    character without a piece of its own is spelt as its UTF-8 bytes (``<0xC2> <0xA3>`` for £), so
    every input character has tokens and decoding gives it back.

``decode(encode(text))`` returns ``text`` with runs of whitespace collapsed to one space (and,
with ``lowercase``, lowercased).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Iterable

import sentencepiece

from wean.config import TokenizerConfig
from wean.errors import WeanError
from wean.registry import TOKENIZERS
from wean.textio import atomic_write_bytes, atomic_write_text, read_file, read_json

SPACE = "▁"
# sentencepiece (and the char tokenizer) write a space as U+2581: one in the input would come back
# as a space. A Unicode noncharacter (not for interchange: never in real text) stands in for it
# until decoding; an input one becomes U+FFFD.
SPACE_MARK_STAND_IN = "\ufdd0"
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str never holds a pair: any surrogate is alone


def without_lone_surrogates(text: str) -> str:
    """A lone surrogate (from JSON's "\\ud800", or bytes of a command line that are not UTF-8) is
    no character and cannot be written as UTF-8: U+FFFD stands for it, as a UTF-8 decoder writes
    for bytes it cannot read."""
    return LONE_SURROGATE.sub("\ufffd", text)


class Tokenizer:
    """Registered in :data:`wean.registry.TOKENIZERS` under the name ``data.tokenizer.type`` gives."""

    kind = ""

    def __init__(self, lowercase: bool = False):
        self.lowercase = lowercase

    @classmethod
    def check_config(cls, config) -> None:
        """Raise a WeanError naming the key if ``config`` (a :class:`wean.config.Config`) asks
        this tokenizer for something it cannot do."""
        if config.data.tokenizer.byte_fallback:
            raise WeanError("config: data.tokenizer.byte_fallback is for the bpe and unigram tokenizers")

    @classmethod
    def learn(cls, config: TokenizerConfig, training_texts: list[str]) -> "Tokenizer":
        """The tokenizer for ``config``, learned from the training texts where it learns anything."""
        return cls(config.lowercase)

    @classmethod
    def load(cls, directory: Path, settings: dict) -> "Tokenizer":
        """The tokenizer saved in a model directory; ``settings``: its tokenizer.json."""
        return cls(bool(settings.get("lowercase")))

    def _prepare(self, text: str) -> str:
        """The one normalisation every text passes on its way to the model (all tokenizers)."""
        text = " ".join(without_lone_surrogates(text).split())
        # the stand-in itself, should an input hold it, is no character either
        text = text.replace(SPACE_MARK_STAND_IN, "\ufffd").replace(SPACE, SPACE_MARK_STAND_IN)
        return text.lower() if self.lowercase else text

    @staticmethod
    def _restore(text: str) -> str:
        """Decoded text with what _prepare stood in for given back."""
        return text.replace(SPACE_MARK_STAND_IN, SPACE)

    def encode(self, text: str) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        raise NotImplementedError

    def save(self, directory: Path) -> None:
        atomic_write_text(directory / "tokenizer.json", json.dumps({"type": self.kind, "lowercase": self.lowercase}) + "\n")


@TOKENIZERS.register("word")
class WordTokenizer(Tokenizer):
    kind = "word"

    def encode(self, text: str) -> list[str]:
        return self._prepare(text).split()

    def decode(self, tokens: list[str]) -> str:
        return self._restore(" ".join(tokens))


@TOKENIZERS.register("char")
class CharTokenizer(Tokenizer):
    kind = "char"

    def encode(self, text: str) -> list[str]:
        return [SPACE if char == " " else char for char in self._prepare(text)]

    def decode(self, tokens: list[str]) -> str:
        return self._restore("".join(" " if token == SPACE else token for token in tokens).strip())


@TOKENIZERS.register("unigram")
@TOKENIZERS.register("bpe")
class SentencePieceTokenizer(Tokenizer):
    MODEL_FILE = "sentencepiece.model"
    MAX_MODEL_BYTES = 1 << 28  # a model of a million pieces is tens of MB

    def __init__(self, kind: str, model_proto: bytes, lowercase: bool = False):
        super().__init__(lowercase)
        self.kind = kind
        self.model_proto = model_proto
        self.processor = sentencepiece.SentencePieceProcessor(model_proto=model_proto)

    @classmethod
    def check_config(cls, config) -> None:
        """Byte fallback is sentencepiece's own."""

    @classmethod
    def learn(cls, config: TokenizerConfig, training_texts: list[str]) -> "SentencePieceTokenizer":
        return cls.train(config.type, training_texts, config.vocab_size, config.lowercase, config.byte_fallback,
                         config.character_coverage)

    @classmethod
    def load(cls, directory: Path, settings: dict) -> "SentencePieceTokenizer":
        model_path = directory / cls.MODEL_FILE
        if not model_path.exists():
            raise WeanError(f"{model_path}: sentencepiece model not found")
        model_proto = read_file(model_path, cls.MAX_MODEL_BYTES)
        if not model_proto:  # sentencepiece loads empty bytes, and fails at the first text
            raise WeanError(f"{model_path}: not a sentencepiece model (the file is empty)")
        try:
            return cls(settings["type"], model_proto, bool(settings.get("lowercase")))
        except RuntimeError as error:  # what sentencepiece raises for bytes that are not a model
            raise WeanError(f"{model_path}: not a sentencepiece model ({str(error).splitlines()[0]})") from None

    @property
    def byte_fallback(self) -> bool:
        return self.processor.piece_to_id("<0x41>") != self.processor.unk_id()

    def has_piece(self, piece: str) -> bool:
        return self.processor.piece_to_id(piece) != self.processor.unk_id()

    def pieces(self) -> list[str]:
        """Every piece of the model but its <unk>: with byte fallback, the vocabulary that covers
        any text."""
        unk = self.processor.unk_id()
        return [self.processor.id_to_piece(i) for i in range(self.processor.get_piece_size()) if i != unk]

    @classmethod
    def train(
        cls, kind: str, texts: Iterable[str], vocab_size: int, lowercase: bool,
        byte_fallback: bool = False, character_coverage: float = 1.0,
    ) -> "SentencePieceTokenizer":
        model = io.BytesIO()
        lines = [(text.lower() if lowercase else text) for text in texts]
        try:
            sentencepiece.SentencePieceTrainer.train(
                sentence_iterator=iter(lines),
                model_writer=model,
                model_type=kind,
                vocab_size=vocab_size,
                normalization_rule_name="identity",  # keep the text as it is, so decoding round-trips
                character_coverage=character_coverage,
                byte_fallback=byte_fallback,
                hard_vocab_limit=False,  # a small corpus may not have vocab_size pieces
                bos_id=-1,
                eos_id=-1,  # wean's vocabulary adds its own specials
                minloglevel=2,
                num_threads=2,
            )
        except RuntimeError as error:
            raise WeanError(f"sentencepiece could not train a {kind} model: {error}") from None
        return cls(kind, model.getvalue(), lowercase)

    def encode(self, text: str) -> list[str]:
        return self.processor.encode(self._prepare(text), out_type=str)

    def decode(self, tokens: list[str]) -> str:
        tokens = _whole_characters(tokens) if self.byte_fallback else tokens
        return self._restore(self.processor.decode_pieces(tokens))

    def save(self, directory: Path) -> None:
        super().save(directory)
        atomic_write_bytes(directory / self.MODEL_FILE, self.model_proto)


BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")


def _whole_characters(tokens: list[str]) -> list[str]:
    """Byte pieces that do not make whole UTF-8 characters (a model may write one alone) left
    out: sentencepiece would print U+FFFD, a character nobody wrote. A U+FFFD the text holds (its
    three bytes, whole) is kept."""
    kept: list[str] = []
    run: list[int] = []

    def close_run() -> None:
        text = bytes(run).decode("utf-8", errors="ignore")
        kept.extend(f"<0x{byte:02X}>" for byte in text.encode("utf-8"))
        run.clear()

    for token in tokens:
        byte = BYTE_PIECE.fullmatch(token)
        if byte:
            run.append(int(byte.group(1), 16))
            continue
        if run:
            close_run()
        kept.append(token)
    if run:
        close_run()
    return kept


def build_tokenizer(config: TokenizerConfig, training_texts: list[str]) -> Tokenizer:
    return TOKENIZERS.get(config.type, "data.tokenizer.type").learn(config, training_texts)


def load_tokenizer(directory: Path) -> Tokenizer:
    settings_path = directory / "tokenizer.json"
    settings = read_json(settings_path)
    if not isinstance(settings, dict):
        raise WeanError(f"{settings_path}: corrupt tokenizer settings (expected a JSON object)")
    kind = settings.get("type")
    if kind not in TOKENIZERS.names():
        raise WeanError(f"{settings_path}: unknown tokenizer type {kind!r}")
    return TOKENIZERS.get(kind).load(directory, settings)
