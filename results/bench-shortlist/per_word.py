"""How the table's words per source word trade the shortlist's size against agreement with the full
vocabulary: for tables of K = 10, 50, 100 words per source word (each a copy of MODEL with its own
`wean shortlist --per-word K`), the words a batch of 32 TurkCorpus tune sentences keeps at
--shortlist 1000, and the share of beam-5 outputs identical to the full vocabulary's.

    python results/bench-shortlist/per_word.py --model DIR --sentences tune.src
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

import wean
from wean.inference.shortlist import ShortlistTable


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    sentences = args.sentences.read_text(encoding="utf-8").splitlines()
    full = None
    with tempfile.TemporaryDirectory() as folder:
        for per_word in (10, 50, 100):
            copy = Path(folder) / f"k{per_word}"
            shutil.copytree(args.model, copy)
            (copy / "shortlist.safetensors").unlink(missing_ok=True)
            subprocess.run([sys.executable, "-m", "wean", "shortlist", str(copy), "--per-word", str(per_word)],
                           check=True, capture_output=True)
            model = wean.load(copy)
            if full is None:
                full = [g.text for g in model.generate(sentences, beam=5, plain_text=True)]
            vocabulary = model.assets.source_vocabulary
            table = ShortlistTable.load(copy / "shortlist.safetensors", vocabulary, model.assets.target_vocabulary)
            ids = [[vocabulary.stoi.get(token, 3) for token in model.tokenizer.encode(model.plain_text.to_model_text(s))]
                   for s in sentences]
            kept = []
            for start in range(0, len(ids), 32):
                rows = ids[start : start + 32]
                width = max(map(len, rows))
                kept.append(len(table.words(torch.tensor([r + [0] * (width - len(r)) for r in rows]), args.size)))
            short = [g.text for g in model.generate(sentences, beam=5, plain_text=True, shortlist=args.size)]
            same = sum(a == b for a, b in zip(full, short)) / len(full)
            print(f"per word {per_word:>3}: a batch of 32 keeps {statistics.median(kept):,.0f} of "
                  f"{len(model.assets.target_vocabulary):,} words (median); {100 * same:.1f} % of beam-5 outputs "
                  f"identical to the full vocabulary's")


if __name__ == "__main__":
    main()
