"""The shipped simplifier's beam-5 generate() in fp32, int8, with the vocabulary shortlist, and int8
with the shortlist: sentences/s (interleaved rounds, each in a rotated order; medians), and the
share of outputs identical to fp32's (run.sh writes each mode's outputs with `wean test`).

    python results/bench-int8/modes.py --model DIR --sentences FILE --benchmark NAME --rounds 3 --out DIR

DIR: a copy of the shipped model with its shortlist table (`wean shortlist DIR`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

import wean

SHORTLIST = 1000
MODES = {"fp32": ("none", 0), "int8": ("int8", 0), f"shortlist-{SHORTLIST}": ("none", SHORTLIST),
         f"int8-shortlist-{SHORTLIST}": ("int8", SHORTLIST)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--benchmark", required=True, help="the outputs' file name part")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sources = args.sentences.read_text(encoding="utf-8").splitlines()
    models = {name: wean.load(args.model, device="cpu", quantization=quantization)
              for name, (quantization, _) in MODES.items()}
    for name, model in models.items():  # warm-up
        model.generate(sources[:8], beam=5, plain_text=True, shortlist=MODES[name][1])
    rates: dict[str, list[float]] = {name: [] for name in MODES}
    outputs: dict[str, list[str]] = {}
    names = list(MODES)
    for round_ in range(args.rounds):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:
            start = time.perf_counter()
            generated = models[name].generate(sources, beam=5, plain_text=True, shortlist=MODES[name][1])
            rates[name].append(len(sources) / (time.perf_counter() - start))
            outputs[name] = [g.text for g in generated]
    result = {"sentences": len(sources), "threads": torch.get_num_threads(), "rounds": args.rounds, "modes": {}}
    fp32 = statistics.median(rates["fp32"])
    for name in names:
        same = sum(a == b for a, b in zip(outputs[name], outputs["fp32"])) / len(sources)
        median = statistics.median(rates[name])
        result["modes"][name] = {"sentences_per_second": rates[name], "median": median, "ratio_to_fp32": median / fp32,
                                 "per_round_ratio_to_fp32": [r / f for r, f in zip(rates[name], rates["fp32"])],
                                 "identical_to_fp32": same}
        print(f"{name:>22}: {median:6.1f} sentences/s ({median / fp32:.2f}x fp32), "
              f"{100 * same:.1f} % of outputs identical to fp32's")
    (args.out / f"modes.{args.benchmark}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
