"""Why int8 moves the shipped simplifier's outputs: how far it moves the log-probabilities the
search ranks by, and how far a perturbation of known size moves the beam-5 outputs. On the first
SENTENCES lines of a validation file (TurkCorpus tune), one thread:

    python results/bench-int8/sensitivity.py --sentences FILE [--count 300] [--out FILE.json]

1. int8 error: the fp32 model's beam-5 outputs are scored teacher-forced (one sentence a batch) by
   the fp32 and the int8 model; per step, the absolute difference of the log-probabilities of fp32's
   five likeliest tokens.
2. Closeness of the decisions: per step of those outputs, the gap between fp32's two likeliest tokens.
3. Tolerance: fp32 beam search with Gaussian noise of standard deviation sigma added to every
   log-probability of every step (seeded); the share of outputs identical to the noiseless ones.
4. Batch invariance: fp32 outputs in batches of 1 and 8 against batches of 32.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

import wean
import wean.search.beam as beam_search
from wean.inference.forced_scores import forced_log_probs

SIGMAS = (1e-5, 1e-4, 1e-3, 3e-3, 1e-2)
GAPS = (0.001, 0.01, 0.05, 0.1)


def step_log_probs(generator, sources: list[str], outputs: list[str]) -> torch.Tensor:
    """(steps, vocabulary): the log-probabilities of every step of ``outputs``, teacher-forced."""
    rows = []
    original = generator.model.log_probs

    def capture(*args, **kwargs):
        result = original(*args, **kwargs)
        rows.append(result.reshape(-1, result.size(-1)).clone())
        return result

    generator.model.log_probs = capture
    try:  # one sentence a batch: no padded steps among the rows
        forced_log_probs(generator, sources, outputs, plain_text=True, batch_size=1)
    finally:
        generator.model.log_probs = original
    return torch.cat(rows)


def identical(a: list[str], b: list[str]) -> float:
    return sum(x == y for x, y in zip(a, b)) / len(a)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sources = args.sentences.read_text(encoding="utf-8").splitlines()[: args.count]
    fp32 = wean.load(device="cpu")
    int8 = wean.load(device="cpu", quantization="int8")
    outputs = [g.text for g in fp32.generate(sources, beam=5, plain_text=True)]
    result: dict = {"sentences": len(sources)}

    exact, quantized = step_log_probs(fp32, sources, outputs), step_log_probs(int8, sources, outputs)
    error = (exact - quantized).abs().gather(1, exact.topk(5, dim=1).indices).flatten()
    result["int8_error"] = {"steps": exact.size(0), "mean": error.mean().item(), "median": error.median().item(),
                            "p90": error.quantile(0.9).item(), "max": error.max().item()}
    best_two = exact.topk(2, dim=1).values
    gap = best_two[:, 0] - best_two[:, 1]
    result["steps_with_gap_below"] = {str(t): (gap < t).float().mean().item() for t in GAPS}

    plain_step = beam_search.decoder_step
    result["identical_under_noise"] = {}
    for sigma in SIGMAS:
        noise_source = torch.Generator().manual_seed(0)

        def noisy(*step_args, sigma=sigma, noise_source=noise_source):
            log_probs, state, weights = plain_step(*step_args)
            return log_probs + sigma * torch.randn(log_probs.shape, generator=noise_source), state, weights

        beam_search.decoder_step = noisy
        try:
            noisy_outputs = [g.text for g in fp32.generate(sources, beam=5, plain_text=True)]
        finally:
            beam_search.decoder_step = plain_step
        result["identical_under_noise"][str(sigma)] = identical(noisy_outputs, outputs)
    int8_outputs = [g.text for g in int8.generate(sources, beam=5, plain_text=True)]
    result["int8_identical"] = identical(int8_outputs, outputs)
    result["fp32_identical_in_batches_of"] = {
        str(size): identical([g.text for g in fp32.generate(sources, beam=5, plain_text=True, batch_size=size)],
                             outputs) for size in (1, 8)}

    e = result["int8_error"]
    print(f"int8 - fp32, |log-probability| of fp32's 5 likeliest tokens over {e['steps']} steps: mean {e['mean']:.4f}, "
          f"median {e['median']:.4f}, 90th percentile {e['p90']:.4f}, max {e['max']:.3f}")
    for t, share in result["steps_with_gap_below"].items():
        print(f"steps whose two likeliest tokens are within {t}: {100 * share:.2f} %")
    for sigma, share in result["identical_under_noise"].items():
        print(f"noise sigma {sigma} on every log-probability: {100 * share:.1f} % of outputs identical")
    print(f"int8: {100 * result['int8_identical']:.1f} % of outputs identical")
    for size, share in result["fp32_identical_in_batches_of"].items():
        print(f"fp32 in batches of {size} instead of 32: {100 * share:.1f} % identical")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
