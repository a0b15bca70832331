"""What a fused cross-entropy gradient would buy a CPU training step, and what it would cost.

wean's loss is PyTorch's composition: ``log_softmax`` of the logits, then ``nll_loss`` summed;
its backward fills a tokens x vocabulary zero gradient, puts -1 at each target, and
``log_softmax``'s backward reads that gradient and the saved log-probabilities to write
``grad - exp(out) * sum(grad)``. A fused backward writes ``exp(out) * s`` and subtracts ``s`` at the
targets: one read and one write instead of three and two. The benchmark times both (forward and
backward, on a batch the size of the peers' model's: ``--tokens`` x ``--vocabulary``), interleaved,
and counts the gradient elements the fused form gets other than PyTorch's: PyTorch's log-softmax
kernel takes its exponential with another routine than ``torch.exp``, so the two differ in the
last bit here and there, and training would no longer repeat an earlier run bit for bit.

    python bench/fused_cross_entropy.py [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import torch
from torch.nn import functional as F

from timing import MIN_ROUNDS, interleaved, load_average, rates, report

IGNORE = -100


class FusedCrossEntropy(torch.autograd.Function):
    """The summed cross-entropy of ``logits`` with ``targets``; the same loss value as PyTorch's
    composition (its forward is that composition), the gradient in one pass."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        log_probs = torch.log_softmax(logits, -1)
        ctx.save_for_backward(log_probs, targets)
        return F.nll_loss(log_probs, targets, ignore_index=IGNORE, reduction="sum")

    @staticmethod
    def backward(ctx, scale: torch.Tensor):
        log_probs, targets = ctx.saved_tensors
        grad = log_probs.exp_().mul_(scale)  # the saved tensor is not needed after this
        trained = targets != IGNORE
        rows = trained.nonzero().squeeze(1)
        grad[rows, targets[rows]] -= scale
        grad[~trained] = 0.0
        return grad, None


def composed(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.nll_loss(torch.log_softmax(logits, -1), targets, ignore_index=IGNORE, reduction="sum")


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

    expected_loss, fused_loss = composed(logits, targets), FusedCrossEntropy.apply(logits, targets)
    expected, = step(composed)()
    found, = step(FusedCrossEntropy.apply)()
    differing = int((expected != found).sum())
    for function in (step(composed), step(FusedCrossEntropy.apply)):  # warm-up
        function()
    times = interleaved({"composed": step(composed), "fused": step(FusedCrossEntropy.apply)}, args.rounds)
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
