"""A model's tokenizer and vocabularies, learned from its training pairs (:class:`~wean.model_dir.Assets`
is what a model directory holds besides the weights)."""

from __future__ import annotations

from wean.config import Config
from wean.control import Control
from wean.data.corpus import ParallelText
from wean.data.tokenizers import SentencePieceTokenizer, build_tokenizer
from wean.data.vocabulary import Vocabulary
from wean.model_dir import Assets


def build_assets(config: Config, train: ParallelText) -> Assets:
    """Tokenizer and vocabularies learned from the training pairs. The source vocabulary reserves
    every control token; with byte fallback both hold every piece of the tokenizer, so no text
    becomes <unk>."""
    tokenizer = build_tokenizer(config.data.tokenizer, train.sources + train.targets)
    settings = config.data.tokenizer
    reserved = Control.from_config(config).reserved_tokens()
    if isinstance(tokenizer, SentencePieceTokenizer) and tokenizer.byte_fallback:
        source = Vocabulary(reserved + tokenizer.pieces())
        target = source if settings.shared_vocab else Vocabulary(tokenizer.pieces())
        return Assets(config, tokenizer, source, target)
    source_tokens = [tokenizer.encode(s) for s in train.sources]
    target_tokens = [tokenizer.encode(t) for t in train.targets]
    if settings.shared_vocab:
        source = target = Vocabulary.build(
            source_tokens + target_tokens, settings.vocab_size, settings.min_frequency, reserved
        )
    else:
        source = Vocabulary.build(source_tokens, settings.vocab_size, settings.min_frequency, reserved)
        target = Vocabulary.build(target_tokens, settings.vocab_size, settings.min_frequency)
    return Assets(config, tokenizer, source, target)
