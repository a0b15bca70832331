"""A wean training run of the peers' benchmark with PyTorch's dropout (`--masks torch`) or with
masks drawn as 32 random bits per element from PyTorch's generator (`--masks bits`: `random_` over
the full 64-bit range, viewed as two 32-bit halves, each compared with the keep probability), for
the ABBA comparison of issue 94. Only `F.dropout` is replaced (nn.Dropout calls it); an nn.LSTM's
dropout between its layers runs in C++ and keeps PyTorch's. The arguments after `--masks` are those
of `bench/peers/wean_runner.py train`, from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/dropout_masks.py --masks bits \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR --set training.kernels=blas

`--masks bits` changes the run's random stream, so its losses are not those of `--masks torch`.
"""

from __future__ import annotations

import argparse
import runpy
import sys

import torch
from torch.nn import functional as F


def bits_dropout(x: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> torch.Tensor:
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    count = x.numel()
    bits = torch.empty((count + 1) // 2, dtype=torch.int64).random_(-2**63, None).view(torch.int32)[:count]
    keep = bits.view(x.shape) < -2**31 + round((1.0 - p) * 2**32)
    noise = keep.to(x.dtype).div_(1.0 - p)
    return x.mul_(noise) if inplace else x * noise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--masks", choices=("torch", "bits"), required=True)
    args, runner_args = parser.parse_known_args()
    if args.masks == "bits":
        F.dropout = bits_dropout
    sys.path.insert(0, "bench/peers")
    sys.argv = ["bench/peers/wean_runner.py", *runner_args]
    runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")


if __name__ == "__main__":
    main()
