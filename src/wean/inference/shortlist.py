"""Vocabulary shortlist (vocabulary selection, L'Hostis et al. 2016; Marian's lexical shortlists,
here for any output layer that is one product over the vocabulary): per batch of sources, the
output layer scores only the words the batch is likely to need,

- the ``size`` most frequent target words of the training pairs,
- the sources' own tokens (in the target vocabulary), and
- each source token's ``per_word`` most likely target words under a translation table learned
  from the training pairs (co-occurrence in a pair: the target words t with the highest
  count(s, t) / count(s), seen together at least twice, beyond the frequent words),

and <eos> and <unk>. The scores of the kept words are computed exactly as without the shortlist;
the softmax is taken over them, as Marian's shortlists do; beam, greedy and diverse beam search
rank only them (the log-probabilities have a column per kept word; :class:`Shortlisted`), the
others see the vocabulary's width with -inf outside the list. The table lies
in the model directory (``shortlist.safetensors``, tensors only), made by ``wean shortlist``; the
search option ``shortlist: N`` uses it. Training never does.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from wean.data.corpus import encode_pairs
from wean.data.training_text import training_pairs
from wean.data.vocabulary import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK_ID, Vocabulary
from wean.errors import WeanError
from wean.model_dir import SHORTLIST, load_assets
from wean.search import decode
from wean.search.common import Abandoned, Hypothesis
from wean.search.wrapper import SearchWrapper
from wean.search_options import SearchOptions, capabilities
from wean.tensor_files import read_tensors, write_tensors


@dataclass
class ShortlistTable:
    by_frequency: torch.Tensor  # (target vocabulary,): target ids, the most frequent in training first
    translations: torch.Tensor  # (source vocabulary, per_word): target ids, -1 where fewer
    source_to_target: torch.Tensor  # (source vocabulary,): each source token's target id, -1 where none
    frequent: int = 0  # the most frequent target words the translations leave out
    vocabularies: str = ""  # sha256 of the vocabularies it was made for (vocabularies_digest)

    @classmethod
    def learn(cls, pairs: list[tuple[list[int], list[int]]], source_size: int, target_size: int,
              source_to_target: list[int], per_word: int = 10, frequent: int = 1000, chunk: int = 2000) -> "ShortlistTable":
        """From the training ``pairs`` (source ids, target ids). Co-occurrence is counted on the
        words beyond the ``frequent`` most frequent targets only: those are in every shortlist of
        that size or more, and counting them would fill every row of the table with them."""
        target_counts = np.zeros(target_size, dtype=np.int64)
        source_counts = np.zeros(source_size, dtype=np.int64)
        for source, target in pairs:
            target_counts[np.unique(target)] += 1
            source_counts[np.unique(source)] += 1
        by_frequency = np.lexsort((np.arange(target_size), -target_counts))  # ties: the lower id first
        rare = np.ones(target_size, dtype=bool)
        rare[by_frequency[:frequent]] = False
        # each (source word, rare target word) seen together in a pair, once per pair, as the key
        # s * target_size + t: counted per chunk and merged once, so memory follows the pairs seen,
        # not V x V
        chunk_keys, chunk_counts = [], []
        for start in range(0, len(pairs), chunk):
            keys = []
            for source, target in pairs[start : start + chunk]:
                s = np.unique(np.asarray(source, dtype=np.int64))
                t = np.unique(np.asarray(target, dtype=np.int64))
                t = t[rare[t]]
                keys.append((s[:, None] * target_size + t[None, :]).ravel())
            unique, counts = np.unique(np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64), return_counts=True)
            chunk_keys.append(unique)
            chunk_counts.append(counts)
        keys, inverse = np.unique(np.concatenate(chunk_keys or [np.zeros(0, dtype=np.int64)]), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate(chunk_counts or [np.zeros(0, dtype=np.int64)]),
                             minlength=len(keys)).astype(np.int64)
        kept = counts >= 2  # a word seen with the source word once says little
        keys, counts = keys[kept], counts[kept]
        sources, targets = keys // target_size, keys % target_size
        score = counts / np.maximum(source_counts[sources], 1)
        order = np.lexsort((targets, -score, sources))  # by source word, then best first
        sources, targets = sources[order], targets[order]
        rank = np.arange(len(sources)) - np.searchsorted(sources, sources)  # place within its source word
        top = rank < per_word
        translations = np.full((source_size, per_word), -1, dtype=np.int64)
        translations[sources[top], rank[top]] = targets[top]
        return cls(torch.from_numpy(by_frequency), torch.from_numpy(translations),
                   torch.tensor(source_to_target, dtype=torch.long), frequent)

    @property
    def per_word(self) -> int:
        return self.translations.size(1)

    def words(self, source: torch.Tensor, most_frequent: int) -> torch.Tensor:
        """The sorted target ids a batch of ``source`` ids (batch, length; padding 0, extended ids
        past the vocabulary ignored) may be written with: the ``most_frequent`` words, the sources'
        tokens and their translations, <eos> and <unk>."""
        device = source.device
        known = source[(source > 0) & (source < self.source_to_target.numel())].unique().cpu()
        parts = [self.by_frequency[:most_frequent], self.source_to_target[known], self.translations[known].flatten(),
                 torch.tensor([EOS_ID, UNK_ID])]
        words = torch.cat(parts).unique()  # sorted
        return words[words >= 0].to(device)

    def save(self, path: Path) -> None:
        write_tensors(path, {"by_frequency": self.by_frequency, "translations": self.translations,
                             "source_to_target": self.source_to_target},
                      {"frequent": str(self.frequent), "vocabularies": self.vocabularies})

    @classmethod
    def load(cls, path: Path, source: Vocabulary, target: Vocabulary) -> "ShortlistTable":
        """The table at ``path``, refused in one line unless made for these vocabularies."""
        if not path.exists():
            raise WeanError(f"{path.parent}: no {SHORTLIST}; make one with `wean shortlist {path.parent}`")
        tensors, metadata = read_tensors(path)
        try:
            table = cls(tensors["by_frequency"], tensors["translations"], tensors["source_to_target"],
                        int(metadata.get("frequent", 0)), metadata.get("vocabularies", ""))
        except (KeyError, ValueError) as missing:
            raise WeanError(f"{path}: not a shortlist table ({missing})") from None
        sizes = (table.source_to_target.numel(), table.translations.size(0), table.by_frequency.numel())
        if table.vocabularies != vocabularies_digest(source, target) or sizes != (len(source), len(source), len(target)):
            raise WeanError(f"{path}: made for another model's vocabularies; make it again with "
                            f"`wean shortlist {path.parent}`")
        return table


def vocabularies_digest(source: Vocabulary, target: Vocabulary) -> str:
    return hashlib.sha256("\n".join([*source.itos, "", *target.itos]).encode("utf-8")).hexdigest()


class Shortlisted(SearchWrapper):
    """A model whose output layer scores, for each batch, only its shortlist's words.

    ``compact``: its log-probabilities have one column per shortlist word, and the ids it reads and
    search writes are positions in the batch's list (:func:`compact_decode` maps them); otherwise
    they span the vocabulary, -inf outside the list. The list then holds every special token, so
    that <pad>, <unk>, <bos> and <eos> keep their ids; <pad> and <bos> score -inf, as the words
    outside the list do (the same distribution; its normalizer's float sum may round differently,
    in the last bits). A model whose output layer reads the source is never compact: copying
    writes ids past the vocabulary, which no position in a list names."""

    def __init__(self, model: nn.Module, table: ShortlistTable, most_frequent: int, compact: bool = False):
        super().__init__(model)
        self.table = table
        self.most_frequent = most_frequent
        self.compact = compact and not model.copies_source and not model.output_layer.reads_source

    def words(self, source: torch.Tensor) -> torch.Tensor:
        """The sorted target ids the batch ``source`` is scored over."""
        words = self.table.words(source, self.most_frequent)
        if self.compact:
            words = torch.cat([words, torch.arange(len(SPECIALS), device=words.device)]).unique()
        return words

    def encode(self, source: torch.Tensor, lengths: torch.Tensor):
        encoded = self.model.encode(source, lengths)
        shortlist = self.model.output_layer.shortlist(self.words(source))
        if shortlist is None:
            raise WeanError("shortlist: this model's output layer scores every word (WEAN's concat score): "
                            "a shortlist would change nothing")
        if self.compact:  # <pad> and <bos> never written; the specials' positions are their ids
            excluded = torch.tensor([PAD_ID, BOS_ID], device=shortlist.words.device)
            shortlist = replace(shortlist, excluded=excluded, compact=True)
        return replace(encoded, shortlist=shortlist)

    def decode_step(self, previous: torch.Tensor, encoded, state):
        if self.compact:  # positions in the batch's list, as search wrote them
            previous = encoded.shortlist.words[previous]
        return self.model.decode_step(previous, encoded, state)


def searches_compactly(options: SearchOptions) -> bool:
    """Whether a shortlist search with ``options`` ranks over the list's width: the strategies that
    declare it (:class:`~wean.search_options.Capabilities`; not sampling, whose seeded noise is
    drawn per word id, the same samples whatever the batch) do, unless the names constraint (which
    masks columns by word id) is on."""
    return capabilities(options.strategy).compact and options.names_and_numbers != "from_source"


def compact_decode(
    model: Shortlisted, source: torch.Tensor, lengths: torch.Tensor, options: SearchOptions,
    banned_ids: Sequence[int] = (), abandoned: Abandoned | None = None,
) -> list[list[Hypothesis] | None]:
    """:func:`wean.search.decode` over a compact shortlisted model: the banned ids become positions
    in the batch's list, and the outputs' positions become ids again."""
    words = model.words(source)
    position = {int(word): i for i, word in enumerate(words.tolist())}
    banned = [position[word] for word in banned_ids if word in position]
    nbest_lists = decode(model, source, lengths, options, banned, abandoned)
    ids = words.tolist()
    for hypotheses in nbest_lists:
        for hypothesis in hypotheses or ():
            hypothesis.tokens = [ids[token] for token in hypothesis.tokens]
    return nbest_lists


def make_shortlist_table(directory: Path, train: str | None = None, per_word: int = 10, frequent: int = 1000,
                         trust_plugins: bool = False) -> tuple[ShortlistTable, int]:
    """The table of the model in ``directory``, learned from its training pairs (``train``: another
    file prefix), written to ``directory/shortlist.safetensors``; and how many pairs it read."""
    if per_word < 0 or frequent < 0:
        raise WeanError("shortlist: --per-word and --frequent are counts (0 or more)")
    assets = load_assets(directory, trust_plugins)
    config = assets.config
    if train:
        config = dataclasses.replace(config, data=dataclasses.replace(config.data, train=train))
    if not config.data.train:
        raise WeanError(f"{directory}: its config names no data.train; give the training pairs with --train PREFIX")
    text = training_pairs(config)  # as training read them (direction, cleaning, hold-out)
    source, target = assets.source_vocabulary, assets.target_vocabulary
    examples = encode_pairs(text, assets.tokenizer, source, target, assets.config.data.max_tokens, quiet=True)
    pairs = [(example.source, example.target) for example in examples]
    to_target = [target.stoi.get(token, -1) for token in source.itos]
    table = ShortlistTable.learn(pairs, len(source), len(target), to_target, per_word, frequent)
    table.vocabularies = vocabularies_digest(source, target)
    table.save(directory / SHORTLIST)
    return table, len(pairs)
