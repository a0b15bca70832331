"""Ids for words a model can copy from its source but not generate from its vocabulary.

A model whose output layer copies (``OutputLayer.copies_source``: the pointer-generator) reads
every source token outside the vocabulary as an *extended id*, V + j, where V is the vocabulary's
size and j the rank of the token among the sentence's distinct unknown tokens, in order of first
appearance (See et al. 2017's per-article OOV list). A target token outside the vocabulary that the
source holds gets the same id, so the loss trains copying it; one the source lacks stays <unk>.
The model reads extended ids as <unk> (:meth:`wean.models.model.EncoderDecoder.in_vocabulary`);
only its output distribution is extended. Copying needs one vocabulary for source and target
(``data.tokenizer.shared_vocab``), so that a copied in-vocabulary token keeps its id.
"""

from __future__ import annotations

from typing import Sequence

from wean.data.vocabulary import UNK, UNK_ID, Vocabulary


def encode_source(tokens: Sequence[str], vocabulary: Vocabulary, copies: bool) -> tuple[list[int], list[str]]:
    """(the ids of ``tokens``, the sentence's tokens outside the vocabulary, in the order of their
    extended ids); without ``copies``, unknown tokens are <unk> and the list is empty."""
    if not copies:
        return vocabulary.encode(tokens), []
    unknown: dict[str, int] = {}
    ids = []
    for token in tokens:
        index = vocabulary.stoi.get(token)
        if index is None and token != UNK:
            index = unknown.setdefault(token, len(vocabulary) + len(unknown))
        ids.append(UNK_ID if index is None else index)
    return ids, list(unknown)


def encode_target(tokens: Sequence[str], vocabulary: Vocabulary, copied: Sequence[str], add_eos: bool = False) -> list[int]:
    """The ids of ``tokens``, those outside the vocabulary that the source holds (``copied``, as
    :func:`encode_source` lists them) as their extended ids."""
    ids = vocabulary.encode(tokens, add_eos=add_eos)
    if not copied:
        return ids
    extended = {word: len(vocabulary) + j for j, word in enumerate(copied)}
    return [extended.get(token, index) if index == UNK_ID else index for token, index in zip(tokens, ids)] + ids[len(tokens):]


def token_of(index: int, vocabulary: Vocabulary, copied: Sequence[str]) -> str:
    """The token of an output id: a vocabulary word, or the source word an extended id copies."""
    if index < len(vocabulary):
        return vocabulary.itos[index]
    return copied[index - len(vocabulary)]
