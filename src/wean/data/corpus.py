"""Parallel corpora as aligned text files, and the batches training reads from them.

A split is a file prefix: ``<prefix>.src`` and ``<prefix>.dst``, plus any ``<prefix>.ref.N``
(the layout of the data root's corpora). Reading checks alignment and encoding through
:mod:`wean.textio`; training pairs that are empty or longer than ``max_tokens`` on either side are
dropped with a warning that says how many and where the first one is. Nothing is truncated.
"""

from __future__ import annotations

import dataclasses
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import torch

from wean.control import Control
from wean.data.copy_vocabulary import encode_source, encode_target
from wean.data.tokenizers import Tokenizer
from wean.data.vocabulary import BOS_ID, PAD_ID, Vocabulary
from wean.errors import WeanError
from wean.textio import check_same_length, read_lines


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


@dataclass
class ParallelText:
    sources: list[str]
    targets: list[str]
    references: list[list[str]]  # streams: references[k][i]; the target is stream 0
    source_path: Path
    line_numbers: list[int] | None = None  # of each pair in its files, where not 1, 2, 3, ... (a part of them)

    def line_number(self, i: int) -> int:
        return self.line_numbers[i] if self.line_numbers else i + 1


def hold_out(text: ParallelText, count: int, seed: int) -> tuple[ParallelText, ParallelText]:
    """(the rest, ``count`` pairs chosen with ``seed``): a validation split for a corpus that
    comes without one. Both keep the file order and the pairs' line numbers."""
    if not 0 < count < len(text.sources):
        raise WeanError(f"{text.source_path}: {len(text.sources)} pairs: cannot hold out {count} for validation "
                        "and train on the rest (data.valid_holdout)")
    chosen = set(random.Random(seed).sample(range(len(text.sources)), count))

    def part(held_out: bool) -> ParallelText:
        rows = [i for i in range(len(text.sources)) if (i in chosen) == held_out]
        references = [[stream[i] for i in rows] for stream in text.references]
        return ParallelText([text.sources[i] for i in rows], references[0], references, text.source_path,
                            [text.line_number(i) for i in rows])

    return part(False), part(True)


def drop_matching(text: ParallelText, pattern: str) -> tuple[ParallelText, int]:
    """``text`` without the pairs a side of which (source or any reference) matches ``pattern``
    (data.drop_if_matches), and how many were dropped. The kept pairs keep their line numbers."""
    matches = re.compile(pattern).search
    rows = [i for i, source in enumerate(text.sources)
            if not (matches(source) or any(matches(stream[i]) for stream in text.references))]
    references = [[stream[i] for i in rows] for stream in text.references]
    kept = ParallelText([text.sources[i] for i in rows], references[0], references, text.source_path,
                        [text.line_number(i) for i in rows])
    return kept, len(text.sources) - len(rows)


def reference_paths(prefix: str | Path) -> list[Path]:
    prefix = Path(prefix)
    numbered = sorted(prefix.parent.glob(prefix.name + ".ref.*"), key=lambda p: p.name)
    numbered = [p for p in numbered if p.name.rsplit(".", 1)[-1].isdigit()]
    numbered.sort(key=lambda p: int(p.name.rsplit(".", 1)[-1]))
    target = Path(f"{prefix}.dst")
    return ([target] if target.exists() else []) + numbered


def read_parallel(prefix: str | Path) -> ParallelText:
    """Read ``<prefix>.src`` with its target and references, all checked to be aligned."""
    source_path = Path(f"{prefix}.src")
    paths = reference_paths(prefix)
    if not paths:
        raise WeanError(f"{prefix}.dst: file not found (nor any {Path(prefix).name}.ref.N)")
    sources = read_lines(source_path)
    streams = [read_lines(p) for p in paths]
    check_same_length([(source_path, sources)] + list(zip(paths, streams)))
    if not sources:
        raise WeanError(f"{source_path}: empty file")
    return ParallelText(sources, streams[0], streams, source_path)


LM_SOURCE = "<lm>"  # the source of every pair a language model (data.direction: lm) learns from


def oriented(text: ParallelText, direction: str) -> ParallelText:
    """The pairs as a model trained in ``direction`` (data.direction) reads them: forward as
    written; reverse, the target is the source and the source the only reference; lm, every source
    is :data:`LM_SOURCE` and the targets stay."""
    if direction == "forward":
        return text
    if direction == "reverse":
        return dataclasses.replace(text, sources=text.targets, targets=text.sources, references=[text.sources])
    if direction == "lm":
        return dataclasses.replace(text, sources=[LM_SOURCE] * len(text.targets))
    raise WeanError(f"data.direction is {direction!r}; choose one of forward, reverse, lm")


@dataclass
class Example:
    index: int  # line number - 1 in the source file
    source: list[int]
    target: list[int]  # without <bos>, ending with <eos>


def encode_pairs(
    text: ParallelText,
    tokenizer: Tokenizer,
    source_vocab: Vocabulary,
    target_vocab: Vocabulary,
    max_tokens: int = 0,
    control: Control | None = None,
    quiet: bool = False,
    copies: bool = False,
) -> list[Example]:
    """Encode training pairs, dropping empty and over-long ones with one warning each kind
    (``quiet``: none, as in every training process but the first). With ``control``, each source
    starts with the control tokens that describe its pair (not counted in ``max_tokens``). With
    ``copies`` (a model that copies), words outside the vocabulary get extended ids
    (:mod:`wean.data.copy_vocabulary`)."""
    examples, empty, too_long = [], [], []
    for i, (source, target) in enumerate(zip(text.sources, text.targets)):
        source_tokens, target_tokens = tokenizer.encode(source), tokenizer.encode(target)
        if not source_tokens or not target_tokens:
            empty.append(text.line_number(i))
        elif max_tokens and max(len(source_tokens), len(target_tokens)) > max_tokens:
            too_long.append(text.line_number(i))
        else:
            prefix = control.oracle_tokens(source, target) if control else []
            source_ids, copied = encode_source(prefix + source_tokens, source_vocab, copies)
            examples.append(Example(i, source_ids, encode_target(target_tokens, target_vocab, copied, add_eos=True)))
    if empty and not quiet:
        warn(f"{text.source_path}: dropped {len(empty)} pair(s) with an empty side, first at line {empty[0]}")
    if too_long and not quiet:
        warn(
            f"{text.source_path}: dropped {len(too_long)} pair(s) longer than {max_tokens} tokens "
            f"(data.max_tokens), first at line {too_long[0]}"
        )
    if not examples:
        raise WeanError(f"{text.source_path}: no usable training pairs")
    return examples


IGNORE = -100  # target positions no loss is computed for: the padding of shorter sentences


@dataclass
class Batch:
    source: torch.Tensor  # (batch, source length), padded with <pad>
    source_lengths: torch.Tensor  # (batch,)
    target_input: torch.Tensor  # (batch, target length): <bos> y1 ... yJ, padded with <pad>
    target_output: torch.Tensor  # (batch, target length): y1 ... yJ <eos>, padded with IGNORE

    @property
    def target_tokens(self) -> int:
        return int((self.target_output != IGNORE).sum())

    def to(self, device: torch.device) -> "Batch":
        return Batch(*(getattr(self, f.name).to(device) for f in dataclasses.fields(self)))


def pad(sequences: Sequence[Sequence[int]], value: int = PAD_ID) -> torch.Tensor:
    width = max(len(s) for s in sequences)
    out = torch.full((len(sequences), width), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        out[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return out


def collate(examples: Sequence[Example], extend_target: Callable[[int, list[int]], list[int]] | None = None) -> Batch:
    """Pad a batch. ``extend_target(source length, target)``: the target the decoder is trained
    on, where a loss continues it (SPM's Y', :meth:`wean.models.model.EncoderDecoder.extend_target`)."""
    targets = [extend_target(len(e.source), e.target) if extend_target else e.target for e in examples]
    return Batch(
        source=pad([e.source for e in examples]),
        source_lengths=torch.tensor([len(e.source) for e in examples]),
        target_input=pad([[BOS_ID] + target[:-1] for target in targets]),
        target_output=pad(targets, value=IGNORE),
    )


def source_then_target(example: Example) -> tuple[int, int]:
    """The default grouping: by source length first. PyTorch's packed LSTM runs oneDNN's kernel
    only for a batch of one source length, its own slower loop otherwise
    (results/bench-peers-xeon: grouping by target length first trained at 0.85x)."""
    return len(example.source), len(example.target)


def make_batches(
    examples: Sequence[Example],
    batch_size: int,
    batch_tokens: int = 0,
    generator: torch.Generator | None = None,
    bucket_batches: int = 100,
    length_key: Callable[[Example], tuple[int, ...]] = source_then_target,
) -> list[list[Example]]:
    """Group examples of similar length into batches of at most ``batch_size`` sentences and
    ``batch_tokens`` padded tokens (source and target each).

    With a generator, examples are shuffled, then sorted by ``length_key`` within buckets of
    ``bucket_batches`` batches, and the batches are shuffled: similar lengths waste little
    padding, and the order still changes every epoch. Without one, the order is sorted by length
    (for evaluation).
    """
    order = list(range(len(examples)))
    if generator is not None:
        order = torch.randperm(len(examples), generator=generator).tolist()
    bucket = len(order) if generator is None else batch_size * bucket_batches
    batches: list[list[Example]] = []
    for start in range(0, len(order), bucket):
        chunk = sorted(order[start : start + bucket], key=lambda i: length_key(examples[i]))
        current: list[Example] = []
        longest = 0
        for i in chunk:
            example = examples[i]
            length = max(len(example.source), len(example.target))
            too_many_tokens = batch_tokens and max(longest, length) * (len(current) + 1) > batch_tokens
            if current and (len(current) == batch_size or too_many_tokens):
                batches.append(current)
                current, longest = [], 0
            current.append(example)
            longest = max(longest, length)
        if current:
            batches.append(current)
    if generator is not None:
        batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
    return batches
