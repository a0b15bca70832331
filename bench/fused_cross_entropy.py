"""The training loss's two forms, timed against each other: PyTorch's composition (``log_softmax``
of the logits, then ``nll_loss`` summed; :func:`wean.training.criterion.cross_entropy`), which
``training.kernels: blas`` keeps, and :func:`wean.training.criterion.softmax_cross_entropy`, the
loss taken from the logits with its gradient in one pass, which the oneDNN path takes. The
composition's backward fills a tokens x vocabulary zero gradient, puts -1 at each target, and
``log_softmax``'s backward reads that gradient and the saved log-probabilities to write
``grad - exp(out) * sum(grad)``; the one-pass form writes ``exp(out) * s`` and subtracts ``s`` at
the targets. Both are timed forward and backward on a batch the size of the peers' model's
(``--tokens`` x ``--vocabulary``), interleaved, and the gradient elements that differ are counted:
PyTorch's log-softmax kernel takes its exponential with another routine than ``torch.exp``, so
the two differ in the last bit here and there.

    python bench/fused_cross_entropy.py [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import torch

from timing import interleaved, load_average, rates, report

from wean.data.corpus import IGNORE
from wean.training.criterion import cross_entropy, softmax_cross_entropy


def composed(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return cross_entropy(torch.log_softmax(logits, -1), targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=1920, help="target tokens of a batch (64 x 30)")
    parser.add_argument("--vocabulary", type=int, default=8126)
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    logits = (3 * torch.randn(args.tokens, args.vocabulary, generator=generator)).requires_grad_()
    targets = torch.randint(0, args.vocabulary, (args.tokens,), generator=generator)
    targets[torch.rand(args.tokens, generator=generator) < 0.1] = IGNORE  # padding
    scale = 1.0 / int((targets != IGNORE).sum())

    def step(loss):
        return lambda: torch.autograd.grad(loss(logits, targets) * scale, logits)

    expected_loss, fused_loss = composed(logits, targets), softmax_cross_entropy(logits, targets)
    expected, = step(composed)()
    found, = step(softmax_cross_entropy)()
    differing = int((expected != found).sum())
    for function in (step(composed), step(softmax_cross_entropy)):  # warm-up
        function()
    times = interleaved({"composed": step(composed), "fused": step(softmax_cross_entropy)}, args.rounds)
    record = {
        "tokens": args.tokens, "vocabulary": args.vocabulary, "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(), "loadavg_at_start": load_average(),
        "loss_identical": bool(torch.equal(expected_loss, fused_loss)),
        "gradient_elements_differing": differing, "gradient_elements": expected.numel(),
        "largest_difference": float((expected - found).abs().max()),
        "seconds": times, **rates(times, 1.0, "composed"),
    }
    report(record, args.out)


if __name__ == "__main__":
    main()
