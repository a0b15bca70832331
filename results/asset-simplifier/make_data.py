"""This experiment's training and validation files, made from the data root by split.json (never
committed: they are the data root's lines, rearranged).

    python results/asset-simplifier/make_data.py OUT [--human-copies N] [--pair-scores FILE --drop-noisiest F]
        [--human-only] [--human-references turkcorpus] [--keep-fraction F]

A folder made before with the same arguments is kept as it is; one made with others is refused.

OUT/train.{src,dst}: kauchak_v2/train without its pairs of lost-byte mojibake (the regex of
configs/overlays/kauchak-clean.yaml, applied here to kauchak_v2 alone, since the human references
spell real non-ASCII characters), then each training line's distinct TurkCorpus and ASSET
references as targets of its source, N times (a weight), PTB-tokenized as kauchak_v2 is. With
--drop-noisiest F, the fraction F of those kauchak_v2 pairs a complex -> simple model finds least
likely (the forward cross-entropy of dcce.py's FILE) is left out. With --human-only, the human
references alone (to fine-tune a model trained on both: training.init_from). With
--human-references turkcorpus, only TurkCorpus's 8 references of each line (mostly word for word
paraphrases), not ASSET's 10 (which delete and split too). With --keep-fraction F, a random fraction
F of the kauchak_v2 pairs and of the training lines (each with all its references), the same for a
given F (seeded): the points of a learning curve.
OUT/valid.src and OUT/valid.ref.0-17: the selection lines in plain text, 8 TurkCorpus then 10 ASSET
references (training's validation, data.valid_plain_text). OUT/counts.json says how many pairs
each part gave. References are distinct as written (two that differ only in spacing both count).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from pathlib import Path

from split import REFERENCES, SOURCE, SPLIT, make_split

from wean.data.ptb import ptb_tokenize
from wean.data.root import data_root
from wean.textio import read_lines

LOST_BYTE_MOJIBAKE = re.compile(r"[\u00c2-\u00f4](?=\s|$)")


def write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def without_noisiest(scores: dict, lines: list[int], fraction: float) -> list[int]:
    """``lines`` (kauchak_v2's, 1-based: those dcce.py scored) less the fraction with the highest
    forward cross-entropy: targets that say what the source does not. Not the dual score, which
    ranks deletions, the commonest simplification, as noise (the README reads pairs of both)."""
    if set(scores["pairs"]) != {str(line) for line in lines}:
        raise SystemExit("make_data.py: the pair scores are not of kauchak_v2's pairs without mojibake (dcce.py again)")
    column = scores["columns"].index("forward")
    ranked = sorted(lines, key=lambda line: (scores["pairs"][str(line)][column], line))
    return sorted(ranked[: len(ranked) - int(round(fraction * len(ranked)))])


def random_fraction(items: list[int], fraction: float, seed: str) -> list[int]:
    """``items`` less all but a random ``fraction`` of them, in their order; ``seed`` names the draw."""
    if fraction == 1.0:
        return items
    picked = set(random.Random(seed).sample(items, int(round(fraction * len(items)))))
    return [item for item in items if item in picked]


def made_before(path: Path) -> dict | None:
    """The arguments and counts of a folder made before (None: not made, or cut short before its
    counts were written). Folders of older versions recorded only what they changed from the
    defaults: a folder without ``drop_noisiest`` dropped nothing, so used no pair scores."""
    if not path.exists():
        return None
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"make_data.py: {path}: unreadable ({error}); delete its folder to make it again") from None
    recorded.setdefault("human_copies", 1)
    recorded.setdefault("human_only", False)
    recorded.setdefault("human_references", "all")
    recorded.setdefault("keep_fraction", 1.0)
    if "drop_noisiest" not in recorded and "dropped_noisiest" not in recorded:
        recorded["drop_noisiest"] = 0.0
    if recorded.get("drop_noisiest") == 0.0:
        recorded.setdefault("pair_scores_sha256", None)
    return recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--human-copies", type=int, default=1, help="times each human pair is written (a weight)")
    parser.add_argument("--pair-scores", type=Path, help="dcce.py's scores of kauchak_v2's pairs")
    parser.add_argument("--drop-noisiest", type=float, default=0.0,
                        help="the fraction of kauchak_v2's pairs with the highest forward cross-entropy to leave out")
    parser.add_argument("--human-only", action="store_true", help="no kauchak_v2 pairs: the human references alone")
    parser.add_argument("--human-references", choices=("all", "turkcorpus"), default="all",
                        help="whose references of the training lines: all 18, or TurkCorpus's 8")
    parser.add_argument("--keep-fraction", type=float, default=1.0,
                        help="a random fraction of the kauchak_v2 pairs and of the training lines to keep")
    args = parser.parse_args()
    if not 0 < args.keep_fraction <= 1:
        parser.error("--keep-fraction: a fraction above 0, at most 1")
    if args.human_copies < 1:
        parser.error("--human-copies: 1 or more")
    if not 0 <= args.drop_noisiest < 1 or (args.drop_noisiest > 0) != (args.pair_scores is not None):
        parser.error("--drop-noisiest: a fraction from 0 to below 1, given with --pair-scores")
    if args.pair_scores and not args.pair_scores.is_file():
        parser.error(f"--pair-scores: {args.pair_scores}: file not found")
    if args.human_only and args.pair_scores:
        parser.error("--human-only: no kauchak_v2 pairs to drop noisy ones from (no --pair-scores)")
    made_with = {"human_copies": args.human_copies, "human_only": args.human_only,
                 "human_references": args.human_references, "drop_noisiest": args.drop_noisiest,
                 "keep_fraction": args.keep_fraction,
                 "pair_scores_sha256": hashlib.sha256(args.pair_scores.read_bytes()).hexdigest()
                 if args.pair_scores else None}
    recorded = made_before(args.out / "counts.json")
    if recorded is not None:
        differing = [f"{key} {recorded.get(key)} (asked: {value})" for key, value in made_with.items()
                     if recorded.get(key, "unrecorded") != value]
        if differing:
            raise SystemExit(f"make_data.py: {args.out} was made with other arguments ({'; '.join(differing)}); "
                             "delete it or name another folder")
        print(f"{args.out}: made before with these arguments")
        return
    root = data_root(None)
    split = json.loads(SPLIT.read_text())
    if split != make_split(root):
        raise SystemExit("make_data.py: the split these data give differs from split.json (python split.py --check)")
    args.out.mkdir(parents=True, exist_ok=True)

    kauchak = list(zip(read_lines(root / "kauchak_v2/train.src"), read_lines(root / "kauchak_v2/train.dst")))
    clean = [n for n, (s, d) in enumerate(kauchak, start=1)
             if not (LOST_BYTE_MOJIBAKE.search(s) or LOST_BYTE_MOJIBAKE.search(d))]
    kept = without_noisiest(json.loads(args.pair_scores.read_text()), clean, args.drop_noisiest) if args.pair_scores \
        else clean
    kept = random_fraction(kept, args.keep_fraction, f"kauchak_v2 {args.keep_fraction}")
    sources = read_lines(root / SOURCE)
    references = [read_lines(root / name) for name in REFERENCES]
    taught = [reference for name, reference in zip(REFERENCES, references)  # the selection lines keep all 18
              if args.human_references == "all" or name.startswith("turkcorpus/")]
    human = []
    for line in random_fraction(split["roles"]["training"], args.keep_fraction, f"training lines {args.keep_fraction}"):
        source = sources[line - 1].strip()
        targets = dict.fromkeys(r[line - 1].strip() for r in taught)  # distinct, in order
        human += [(ptb_tokenize(source), ptb_tokenize(" ".join(t.split()))) for t in targets if t]
    pairs = ([] if args.human_only else [kauchak[line - 1] for line in kept]) + human * args.human_copies
    write(args.out / "train.src", [s for s, _ in pairs])
    write(args.out / "train.dst", [d for _, d in pairs])

    selection = split["roles"]["selection"]
    write(args.out / "valid.src", [sources[i - 1] for i in selection])
    for n, reference in enumerate(references):
        write(args.out / f"valid.ref.{n}", [reference[i - 1] for i in selection])
    counts = {**made_with, "kauchak_v2": len(kauchak), "kauchak_v2_clean": len(clean),
              "kauchak_v2_kept": 0 if args.human_only else len(kept),
              "human_pairs": len(human), "train_pairs": len(pairs),
              "human_identical_to_source": sum(s == d for s, d in human)}
    (args.out / "counts.json").write_text(json.dumps(counts, indent=1) + "\n")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
