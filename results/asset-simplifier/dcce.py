"""Dual conditional cross-entropy (Junczys-Dowmunt 2018) of kauchak_v2's training pairs: how
noisy each pair looks to a model trained complex -> simple and one trained simple -> complex.

    python results/asset-simplifier/dcce.py --forward MODEL --backward MODEL --out FILE

For pair (x, y): H_f = -log P(y | x) / |y| under the forward model (each pair with its own control
tokens, as training gave them), H_b = -log P(x | y) / |x| under the backward one, and the score
|H_f - H_b| + (H_f + H_b) / 2: low when both models find the pair likely and agree on it, high for
a misaligned pair (a target that says something else) whichever direction notices it. FILE
(JSON) maps each kept pair's line in kauchak_v2/train (1-based; the pairs make_data.py keeps) to
its score and the two cross-entropies. The models this experiment uses trained on most of these
pairs (not on those over 80 pieces, nor on the channel model's 500 held out), unlike the paper's,
which trained on clean data; a pair they could not learn still stands out. A model without
control tokens (the channel model) reads every pair as it is.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from make_data import LOST_BYTE_MOJIBAKE

from wean.data.root import data_root
from wean.inference.forced_scores import forced_log_probs
from wean.inference.loading import LoadedModel
from wean.textio import read_lines


def cross_entropies(model: Path, sources: list[str], targets: list[str]) -> list[float]:
    loaded = LoadedModel.from_directory(model)
    scores = forced_log_probs(loaded, sources, targets, plain_text=False, batch_size=64, oracle_control=True)
    return [-total / count for total, count in scores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forward", type=Path, required=True, help="a model trained complex -> simple")
    parser.add_argument("--backward", type=Path, required=True, help="a model trained simple -> complex")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    root = data_root(None)
    pairs = [(n, s, d) for n, (s, d) in enumerate(zip(read_lines(root / "kauchak_v2/train.src"),
                                                      read_lines(root / "kauchak_v2/train.dst")), start=1)
             if not (LOST_BYTE_MOJIBAKE.search(s) or LOST_BYTE_MOJIBAKE.search(d))]
    sources, targets = [s for _, s, _ in pairs], [d for _, _, d in pairs]
    forward = cross_entropies(args.forward, sources, targets)
    backward = cross_entropies(args.backward, targets, sources)
    scores = {str(n): [round(abs(f - b) + (f + b) / 2, 4), round(f, 4), round(b, 4)]
              for (n, _, _), f, b in zip(pairs, forward, backward)}
    args.out.write_text(json.dumps({"columns": ["dcce", "forward", "backward"], "forward": str(args.forward),
                                    "backward": str(args.backward), "pairs": scores}) + "\n")
    print(f"{args.out}: {len(scores)} pairs scored")


if __name__ == "__main__":
    main()
