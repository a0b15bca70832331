"""Vocabulary shortlist (vocabulary selection, L'Hostis et al. 2016; Marian's lexical shortlists,
here for any output layer that is one product over the vocabulary): per batch of sources, the
output layer scores only the words the batch is likely to need,

- the ``size`` most frequent target words of the training pairs,
- the sources' own tokens (in the target vocabulary), and
- each source token's ``per_word`` most likely target words under a translation table learned
  from the training pairs (co-occurrence in a pair: the target words t with the highest
  count(s, t) / count(s), seen together at least twice, beyond the frequent words),

and <eos> and <unk>. The scores of the kept words are computed exactly as without the shortlist;
the softmax is taken over them (the others get -inf), as Marian's shortlists do. The table lies
in the model directory (``shortlist.safetensors``, tensors only), made by ``wean shortlist``; the
search option ``shortlist: N`` uses it. Training never does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from wean.data.vocabulary import EOS_ID, UNK_ID
from wean.errors import WeanError
from wean.model_dir import SHORTLIST
from wean.search.wrapper import SearchWrapper
from wean.tensor_files import read_tensors, write_tensors


@dataclass
class ShortlistTable:
    by_frequency: torch.Tensor  # (target vocabulary,): target ids, the most frequent in training first
    translations: torch.Tensor  # (source vocabulary, per_word): target ids, -1 where fewer
    source_to_target: torch.Tensor  # (source vocabulary,): each source token's target id, -1 where none

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
        # s * target_size + t: counted in chunks, so memory follows the pairs seen, not V x V
        keys, counts = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        for start in range(0, len(pairs), chunk):
            chunk_keys = []
            for source, target in pairs[start : start + chunk]:
                s = np.unique(np.asarray(source, dtype=np.int64))
                t = np.unique(np.asarray(target, dtype=np.int64))
                t = t[rare[t]]
                chunk_keys.append((s[:, None] * target_size + t[None, :]).ravel())
            keys, inverse = np.unique(np.concatenate([keys, *chunk_keys]), return_inverse=True)
            counts = np.bincount(inverse, weights=np.concatenate(
                [counts, np.ones(len(inverse) - len(counts), dtype=np.int64)]), minlength=len(keys)).astype(np.int64)
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
                   torch.tensor(source_to_target, dtype=torch.long))

    @property
    def per_word(self) -> int:
        return self.translations.size(1)

    def words(self, source: torch.Tensor, size: int) -> torch.Tensor:
        """The sorted target ids a batch of ``source`` ids (batch, length; padding 0, extended ids
        past the vocabulary ignored) may be written with: the ``size`` most frequent, the sources'
        tokens and their translations, <eos> and <unk>."""
        device = source.device
        known = source[(source > 0) & (source < self.source_to_target.numel())].unique().cpu()
        parts = [self.by_frequency[:size], self.source_to_target[known], self.translations[known].flatten(),
                 torch.tensor([EOS_ID, UNK_ID])]
        words = torch.cat(parts).unique()  # sorted
        return words[words >= 0].to(device)

    def save(self, path: Path) -> None:
        write_tensors(path, {"by_frequency": self.by_frequency, "translations": self.translations,
                             "source_to_target": self.source_to_target})

    @classmethod
    def load(cls, path: Path, source_size: int, target_size: int) -> "ShortlistTable":
        """The table at ``path``, refused in one line unless made for vocabularies of these sizes."""
        if not path.exists():
            raise WeanError(f"{path.parent}: no {SHORTLIST}; make one with `wean shortlist {path.parent}`")
        tensors, _ = read_tensors(path)
        try:
            table = cls(tensors["by_frequency"], tensors["translations"], tensors["source_to_target"])
        except KeyError as missing:
            raise WeanError(f"{path}: not a shortlist table (no {missing})") from None
        sizes = (table.source_to_target.numel(), table.translations.size(0), table.by_frequency.numel())
        highest = max((int(part.max()) for part in (table.by_frequency, table.translations, table.source_to_target)
                       if part.numel()), default=-1)
        if sizes != (source_size, source_size, target_size) or highest >= target_size:
            raise WeanError(f"{path}: made for another model's vocabularies (not {source_size:,} source and "
                            f"{target_size:,} target words); make it again with `wean shortlist {path.parent}`")
        return table


class Shortlisted(SearchWrapper):
    """A model whose output layer scores, for each batch, only its shortlist's words."""

    def __init__(self, model: nn.Module, table: ShortlistTable, size: int):
        if not hasattr(model, "output_layer"):
            raise WeanError("shortlist: a single model's option, not an ensemble's")
        super().__init__(model)
        self.table = table
        self.size = size

    def encode(self, source: torch.Tensor, lengths: torch.Tensor):
        encoded = self.model.encode(source, lengths)
        shortlist = self.model.output_layer.shortlist(self.table.words(source, self.size))
        return encoded if shortlist is None else replace(encoded, shortlist=shortlist)


def make_shortlist_table(directory: Path, train: str | None = None, per_word: int = 10, frequent: int = 1000,
                         trust_plugins: bool = False) -> tuple[ShortlistTable, int]:
    """The table of the model in ``directory``, learned from its training pairs (``train``: another
    file prefix), written to ``directory/shortlist.safetensors``; and how many pairs it read."""
    from wean.data.corpus import encode_pairs, read_parallel
    from wean.data_root import data_path
    from wean.model_dir import load_assets

    if per_word < 0 or frequent < 0:
        raise WeanError("shortlist: --per-word and --frequent are counts (0 or more)")
    assets = load_assets(directory, trust_plugins)
    prefix = train or assets.config.data.train
    if not prefix:
        raise WeanError(f"{directory}: its config names no data.train; give the training pairs with --train PREFIX")
    text = read_parallel(data_path(prefix))
    source, target = assets.source_vocabulary, assets.target_vocabulary
    examples = encode_pairs(text, assets.tokenizer, source, target, assets.config.data.max_tokens, quiet=True)
    pairs = [(example.source, example.target) for example in examples]
    to_target = [target.stoi.get(token, -1) for token in source.itos]
    table = ShortlistTable.learn(pairs, len(source), len(target), to_target, per_word, frequent)
    table.save(directory / SHORTLIST)
    return table, len(pairs)
