"""The vocabulary product of one beam step (queries of beam x batch rows times a linear output
layer's weight, plus its bias) under the kernels PyTorch offers on this CPU, timed against the
product `nn.Linear` computes, and whether each gives the same floats.

A linear layer's product is most of an fp32 beam step (results/bench-peers-shortlist's profile:
a third or more of a step on the peer benchmark's model), and beam outputs are byte-identical only if the
product's floats are. This measures which kernels could speed it up without changing an output:

- ``addmm``: ``torch.addmm(bias, queries, weight.t())``, what ``nn.Linear`` calls (the baseline);
- ``addmm-contiguous``: the same with the weight stored transposed once;
- ``mm-then-bias``: the product, then the bias added;
- ``mkldnn``: oneDNN's linear on a weight converted once (``torch.utils.mkldnn``);
- ``bf16``: the product in bfloat16 (fast where the CPU has AVX512_BF16).

    python bench/output_product_kernels.py [--rows 320 --size 256 --vocabulary 5991] [--rounds 5] [--out DIR]

The defaults are bench/peers' model at beam 5 over batches of 64 (320 rows, 256 wide, 5,991
target words). Random weights of the layer's scale; one thread.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import interleaved, load_average, rates, report, seconds  # noqa: E402


def kernels(weight: torch.Tensor, bias: torch.Tensor) -> dict:
    from torch.utils import mkldnn

    linear = torch.nn.Linear(weight.size(1), weight.size(0))
    linear.weight.data, linear.bias.data = weight, bias
    oned = mkldnn.to_mkldnn(linear)
    transposed = weight.t().contiguous()
    weight16, bias16 = weight.bfloat16(), bias.bfloat16()
    return {
        "addmm": lambda q: torch.addmm(bias, q, weight.t()),
        "addmm-contiguous": lambda q: torch.addmm(bias, q, transposed),
        "mm-then-bias": lambda q: torch.mm(q, weight.t()) + bias,
        "mkldnn": lambda q: oned(q.to_mkldnn()).to_dense(),
        "bf16": lambda q: torch.addmm(bias16, q.bfloat16(), weight16.t()).float(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--vocabulary", type=int, default=5991)
    parser.add_argument("--repeats", type=int, default=50, help="products per timing")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    load_at_start = load_average()
    generator = torch.Generator().manual_seed(0)
    weight = torch.empty(args.vocabulary, args.size).uniform_(-0.1, 0.1, generator=generator)
    bias = torch.empty(args.vocabulary).uniform_(-0.1, 0.1, generator=generator)
    queries = torch.randn(args.rows, args.size, generator=generator)
    products = kernels(weight, bias)
    baseline = products["addmm"](queries)
    identical, largest_difference = {}, {}
    for name, product in products.items():
        result = product(queries)
        identical[name] = bool(torch.equal(result, baseline))
        largest_difference[name] = float((result - baseline).abs().max().detach())

    def timed(product):
        def run():
            for _ in range(args.repeats):
                product(queries)
        return run

    for product in products.values():  # warm up every kernel before the rounds
        timed(product)()
    times = interleaved({name: timed(product) for name, product in products.items()}, args.rounds)
    speed = rates(times, args.repeats, "addmm")
    # the same library on a square product of 1,024, for the GFLOP/s this core reaches at all
    square = torch.randn(1024, 1024, generator=generator)
    square_seconds = min(seconds(lambda: [square @ square for _ in range(10)]) for _ in range(args.rounds)) / 10
    report({
        "shape": {"rows": args.rows, "size": args.size, "vocabulary": args.vocabulary},
        "products_per_second": {name: speed[name] for name in products},
        "gflops": {name: speed[name] * 2 * args.rows * args.size * args.vocabulary / 1e9 for name in products},
        "square_1024_gflops": 2 * 1024 ** 3 / square_seconds / 1e9,
        "speed_over_addmm": {name: speed[f"{name}_over_addmm"] for name in products if name != "addmm"},
        "identical_to_addmm": identical,
        "largest_difference": largest_difference,
        "rounds": args.rounds,
        "load_average_at_start": load_at_start,
        "load_average_at_end": load_average(),
        "torch": torch.__version__,
    }, args.out)


if __name__ == "__main__":
    main()
