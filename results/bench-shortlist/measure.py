"""The shipped simplifier with and without a vocabulary shortlist of each size: outputs identical to
the full vocabulary's (share of sentences) and generate() speed, beam 5, plain text, interleaved
rounds (each round times every setting once, in a rotated order; medians over rounds).

    python results/bench-shortlist/measure.py --model DIR --sentences FILE --sizes 0 500 1000 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

import wean


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="0: the full vocabulary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sentences = args.sentences.read_text(encoding="utf-8").splitlines()
    model = wean.load(args.model, device="cpu")
    model.generate(sentences[:8], beam=5, plain_text=True)  # warm-up
    rates: dict[int, list[float]] = {size: [] for size in args.sizes}
    outputs: dict[int, list[str]] = {}
    for round_ in range(args.rounds):
        order = args.sizes[round_ % len(args.sizes):] + args.sizes[: round_ % len(args.sizes)]
        for size in order:
            start = time.perf_counter()
            texts = [g.text for g in model.generate(sentences, beam=5, plain_text=True, shortlist=size)]
            rates[size].append(len(sentences) / (time.perf_counter() - start))
            outputs[size] = texts
    full = outputs[0]
    result = {"sentences": len(sentences), "threads": torch.get_num_threads(), "rounds": args.rounds,
              "sizes": {}}
    for size in args.sizes:
        same = sum(a == b for a, b in zip(outputs[size], full)) / len(full)
        median = statistics.median(rates[size])
        result["sizes"][str(size)] = {
            "sentences_per_second": rates[size], "median": median,
            "ratio_to_full": median / statistics.median(rates[0]),
            "per_round_ratio_to_full": [r / f for r, f in zip(rates[size], rates[0])],
            "identical_to_full": same,
        }
        print(f"shortlist {size or 'none':>6}: {median:6.1f} sentences/s ({median / statistics.median(rates[0]):.2f}x), "
              f"{100 * same:.1f} % outputs identical to the full vocabulary's")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
