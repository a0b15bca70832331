"""Building training splits from the benchmark files in the data root (``wean prepare``).

gigaword
    train: ``train10k`` plus every validation sample (``valid10k``, ``valid4k``, ``validsmall``)
    after removing duplicate pairs, every pair whose source is also a source of ``test1951``
    (the test set) or of ``valid1k`` (the selection set), and pairs with an empty side. The
    validation files write rare words as ``<unk>``, the test set as ``UNK``: the training and
    selection files are rewritten with ``UNK`` so that both are one token. valid: ``valid1k``.
lcsts
    LCSTS PART III only (PART I is not available): train on the pairs with human score < 3
    whose text is not also a test text, select on a held-out tenth of them, test on the 725
    pairs with score >= 3 (``lcsts-test``).
lcsts-part2
    The 10,336 LCSTS pairs of ``lcsts/part2/train`` (probably PART II, without its scores; none
    of their texts is a PART III text): 1,000 of them, chosen with the seed, held out for
    selection, the rest for training; the test set is still ``lcsts-test``. A text that is also
    a PART III text (after removing whitespace) would be dropped and counted (the data's README
    says there are none; this checks it).

The files go to ``out_dir`` as ``<split>.src`` / ``<split>.dst``, with a ``README.txt`` of counts.
"""

from __future__ import annotations

import random
from pathlib import Path

from wean.errors import WeanError
from wean.textio import atomic_write_text, check_same_length, read_lines

GIGAWORD_VALIDATION = ("valid10k", "valid4k", "validsmall")


def _pairs(root: Path, prefix: str) -> list[tuple[str, str]]:
    sources, targets = read_lines(root / f"{prefix}.src"), read_lines(root / f"{prefix}.dst")
    check_same_length([(root / f"{prefix}.src", sources), (root / f"{prefix}.dst", targets)])
    return list(zip(sources, targets))


def _write(out_dir: Path, split: str, pairs: list[tuple[str, str]]) -> None:
    atomic_write_text(out_dir / f"{split}.src", "".join(s + "\n" for s, _ in pairs))
    atomic_write_text(out_dir / f"{split}.dst", "".join(t + "\n" for _, t in pairs))


def _unk(text: str) -> str:
    return " ".join("UNK" if token == "<unk>" else token for token in text.split())


def prepare_gigaword(root: Path, out_dir: Path) -> dict[str, int]:
    root = root / "gigaword"
    held_out = {source for source, _ in _pairs(root, "test1951")}
    selection = [(_unk(s), _unk(t)) for s, t in _pairs(root, "valid1k")]
    held_out |= {source for source, _ in selection}
    counts = {"candidates": 0, "duplicates": 0, "overlap": 0, "empty": 0}
    seen, train = set(), []
    for prefix in ("train10k",) + GIGAWORD_VALIDATION:
        for source, target in _pairs(root, prefix):
            pair = (_unk(source), _unk(target))
            counts["candidates"] += 1
            if not pair[0] or not pair[1]:
                counts["empty"] += 1
            elif pair[0] in held_out:
                counts["overlap"] += 1
            elif pair in seen:
                counts["duplicates"] += 1
            else:
                seen.add(pair)
                train.append(pair)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(out_dir, "train", train)
    _write(out_dir, "valid", selection)
    counts.update(train=len(train), valid=len(selection))
    return counts


def prepare_lcsts(root: Path, out_dir: Path, seed: int = 1) -> dict[str, int]:
    root = root / "lcsts"
    pairs = _pairs(root, "part3")
    labels = read_lines(root / "part3.label")
    check_same_length([(root / "part3.src", pairs), (root / "part3.label", labels)])
    if any(label not in {"1", "2", "3", "4", "5"} for label in labels):
        raise WeanError(f"{root / 'part3.label'}: expected human scores 1-5 on every line")
    test = [pair for pair, label in zip(pairs, labels) if int(label) >= 3]
    test_sources = {source for source, _ in test}
    low = [pair for pair, label in zip(pairs, labels) if int(label) < 3]
    overlap = sum(1 for source, _ in low if source in test_sources)
    low = [pair for pair in low if pair[0] not in test_sources]  # the same post scored twice
    random.Random(seed).shuffle(low)
    cut = max(1, len(low) // 10)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(out_dir, "train", low[cut:])
    _write(out_dir, "valid", low[:cut])
    _write(out_dir, "test", test)
    return {"train": len(low) - cut, "valid": cut, "test": len(test), "overlap": overlap}


def prepare_lcsts_part2(root: Path, out_dir: Path, seed: int = 1, held_out: int = 1000) -> dict[str, int]:
    root = root / "lcsts"
    pairs = _pairs(root / "part2", "train")
    part3 = {"".join(source.split()) for source, _ in _pairs(root, "part3")}
    kept = [pair for pair in pairs if "".join(pair[0].split()) not in part3]
    if len(kept) <= held_out:
        raise WeanError(f"{root / 'part2' / 'train.src'}: {len(kept)} pairs, too few to hold {held_out} out for selection")
    random.Random(seed).shuffle(kept)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(out_dir, "train", kept[held_out:])
    _write(out_dir, "valid", kept[:held_out])
    return {"train": len(kept) - held_out, "valid": held_out, "part3_overlap": len(pairs) - len(kept)}


PREPARERS = {"gigaword": prepare_gigaword, "lcsts": prepare_lcsts, "lcsts-part2": prepare_lcsts_part2}


def prepare(corpus: str, root: Path, out_dir: Path) -> dict[str, int]:
    if corpus not in PREPARERS:
        raise WeanError(f"unknown corpus {corpus!r}; choose one of {', '.join(PREPARERS)}")
    counts = PREPARERS[corpus](root, out_dir)
    lines = [f"{corpus} splits written by `wean prepare {corpus}` from {root}", ""]
    lines += [f"{name}: {count}" for name, count in counts.items()]
    atomic_write_text(out_dir / "README.txt", "\n".join(lines) + "\n")
    return counts
