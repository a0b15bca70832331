"""Whether the channel model's scores would be cheaper read at the targets alone: the
log-probabilities of a (32, 30, 8,126) block of logits at one class per position, the shape of
one channel call on the shipped simplifier's outputs, three ways, interleaved rounds, one
thread, medians: the log-softmax written out and gathered (what forced_scores does), the
training loss's log_softmax_at (torch.logsumexp), and max, exp and sum by hand.

    OMP_NUM_THREADS=1 python results/bench-guard-cost-asset/channel_targets_alone.py
"""

from __future__ import annotations

import statistics
import time

import torch

from wean.models.log_softmax_at import log_softmax_at


def written_out(logits, picked):
    return torch.log_softmax(logits, -1).gather(-1, picked.unsqueeze(-1)).squeeze(-1)


def logsumexp(logits, picked):
    return log_softmax_at(logits, picked)


def by_hand(logits, picked):
    top = logits.amax(-1, keepdim=True)
    return (logits.gather(-1, picked.unsqueeze(-1)) - top).squeeze(-1) - (logits - top).exp_().sum(-1).log_()


def main() -> None:
    torch.manual_seed(0)
    logits = torch.randn(32, 30, 8126) * 3
    picked = torch.randint(0, 8126, (32, 30))
    ways = (written_out, logsumexp, by_hand)
    times = {way.__name__: [] for way in ways}
    with torch.no_grad():
        for _ in range(5):
            for way in ways:
                started = time.perf_counter()
                for _ in range(20):
                    way(logits, picked)
                times[way.__name__].append((time.perf_counter() - started) / 20 * 1e3)
        reference = written_out(logits, picked)
        for way in ways:
            largest = (way(logits, picked) - reference).abs().max().item()
            print(f"{way.__name__}: {statistics.median(times[way.__name__]):.2f} ms (median of 5), "
                  f"largest difference from the written-out log-softmax {largest:.1e}")


if __name__ == "__main__":
    main()
