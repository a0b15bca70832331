"""Sentences per second of the shipped simplifier and of the reranking pipeline (run.sh step 3's
runs/shipped-rerank) on TurkCorpus test, plain text, 2 threads, the two interleaved, median of 3
rounds: a ratio measured in one run. Run from the repository root on an otherwise idle machine.

    python results/faithful/speed.py [--pipeline runs/shipped-rerank] [--baseline runs/shipped-unguarded] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from wean.evaluation import data_root
from wean.inference.generator import load
from wean.textio import read_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", default="runs/shipped-rerank")
    parser.add_argument("--baseline", default="runs/shipped-unguarded",
                        help="the shipped model as it was before its faithful pipeline (results/lib/unguarded_shipped.sh)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(2)
    sources = read_lines(data_root() / "turkcorpus/case_detok/test.src")
    systems = {"shipped": load(args.baseline), "pipeline": load(args.pipeline)}
    systems["pipeline"].generate(sources[:4], plain_text=True, split_sentences=False)  # its reranking models load
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    for round_ in range(args.rounds):
        for name in (list(systems) if round_ % 2 == 0 else list(reversed(systems))):
            start = time.perf_counter()
            systems[name].generate(sources, plain_text=True, split_sentences=False)
            seconds[name].append(time.perf_counter() - start)
            print(f"round {round_ + 1} {name}: {seconds[name][-1]:.1f} s", flush=True)
    rates = {name: len(sources) / statistics.median(times) for name, times in seconds.items()}
    print(" ".join(f"{name} {rate:.2f} sentences/s" for name, rate in rates.items()),
          f"ratio {rates['pipeline'] / rates['shipped']:.3f}")


if __name__ == "__main__":
    main()
