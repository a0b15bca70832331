"""What gradient clipping's multiply costs on the peers' model, for issue 94's "clipping and Adam
in one pass": `clip_grad_norm_` (the norm, then every gradient multiplied), the norm alone, and
the fused Adam step, each timed over 50 calls on random gradients of the model's 7.9M parameters,
three rounds, two threads. From the repository root:

    OMP_NUM_THREADS=2 python results/bench-peers-xeon/clip_pass.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, "bench")
from peers_setup import peers_config  # noqa: E402  (bench/ is not a package)

from wean.models.model import build_model  # noqa: E402


def timed(function, calls: int = 50) -> float:
    function()
    started = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - started) / calls * 1000


def main() -> None:
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as folder:
        config = peers_config(Path(folder))
    model = build_model(config.model, 10004, 5995)  # the benchmark's vocabularies with wean's specials
    parameters = list(model.parameters())
    for parameter in parameters:
        parameter.grad = torch.randn_like(parameter)
    optimizer = torch.optim.Adam(parameters, lr=1e-3, fused=True)
    print(f"{sum(p.numel() for p in parameters):,} parameters")
    for round_number in range(1, 4):
        clip = timed(lambda: nn.utils.clip_grad_norm_(parameters, 5.0))
        norm = timed(lambda: nn.utils.get_total_norm([p.grad for p in parameters]))
        adam = timed(optimizer.step)
        print(f"round {round_number}: clip_grad_norm_ {clip:.2f} ms, the norm alone {norm:.2f} ms, "
              f"so the multiply {clip - norm:.2f} ms; fused Adam {adam:.2f} ms")


if __name__ == "__main__":
    main()
