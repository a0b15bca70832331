"""Training memory and time of WEAN-concat's scores, recomputing each chunk of words in the
backward pass (wean's way) against keeping every chunk for autograd (the baseline: what plain
autograd does), in the same run. Each variant runs one forward and backward pass in its own
process, whose peak resident memory above its start is reported, with the time; ratios against
the baseline. Random weights.

    python bench/concat_memory.py [--rows 256 --vocabulary 8000 --size 256] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

from wean.models.output_layer import WeanOutput


def peak_megabytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def step(variant: str, rows: int, vocabulary: int, size: int) -> dict:
    torch.manual_seed(0)
    layer = WeanOutput(nn.Embedding(vocabulary, size), hidden_size=size, score="concat")
    query = torch.randn(rows, size, requires_grad=True)
    targets = torch.randint(vocabulary, (rows,))
    before = peak_megabytes()
    started = time.perf_counter()
    if variant == "recompute":
        scores = layer(query)
    else:  # the same chunks, each kept whole for the backward pass
        query_side = layer.query_projection(query).unsqueeze(-2)
        keys = layer.embedding_projection(layer.embedding.weight)
        words = max(1, layer.concat_chunk_elements // (rows * size))
        scores = torch.cat([layer._concat_chunk(query_side, keys[i : i + words])
                            for i in range(0, vocabulary, words)], dim=-1)
    nn.functional.cross_entropy(scores, targets).backward()
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_megabytes() - before,
            "gradient_norm": float(query.grad.norm())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=256, help="target tokens in the batch")
    parser.add_argument("--vocabulary", type=int, default=8000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--variant", choices=("keep", "recompute"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(step(args.variant, args.rows, args.vocabulary, args.size)))
        return
    results = {}
    for variant in ("keep", "recompute"):
        command = [sys.executable, __file__, "--variant", variant, "--rows", str(args.rows),
                   "--vocabulary", str(args.vocabulary), "--size", str(args.size)]
        results[variant] = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    keep, recompute = results["keep"], results["recompute"]
    results["memory_ratio"] = recompute["peak_mb"] / keep["peak_mb"]
    results["time_ratio"] = recompute["seconds"] / keep["seconds"]
    results["settings"] = {"rows": args.rows, "vocabulary": args.vocabulary, "size": args.size,
                           "threads": torch.get_num_threads(), "torch": torch.__version__}
    full_gb = args.rows * args.vocabulary * args.size * 4 / 1e9
    print(f"(rows x vocabulary x size) = {full_gb:.2f} GB in fp32")
    for variant in ("keep", "recompute"):
        print(f"{variant:10s} peak +{results[variant]['peak_mb']:8.0f} MB  {results[variant]['seconds']:6.2f} s  "
              f"grad norm {results[variant]['gradient_norm']:.6f}")
    print(f"recompute / keep: memory {results['memory_ratio']:.3f}x, time {results['time_ratio']:.2f}x")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "metrics.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
