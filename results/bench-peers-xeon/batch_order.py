"""The peer benchmark's wean training with its batches grouped by target length first (then source
length) instead of source length first: the length-bucketing lever of issue 94, measured against
the shipped grouping. It runs `bench/peers/wean_runner.py train` with `--order target` or
`--order source` (the shipped `make_batches`, untouched), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/batch_order.py --order target \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR

Only the sort key of each shuffled bucket changes (`make_batches`' ``length_key``: the same buckets
of 100 batches, the same batch size, the batches shuffled as before), so each run trains on the same pairs in other batches.
Each epoch's batches are counted first: padded positions per real token, source and target side.
"""

from __future__ import annotations

import argparse
import functools
import runpy
import sys

import wean.training.trainer


def target_then_source(example) -> tuple[int, int]:
    return len(example.target), len(example.source)


def counted(make_batches):
    """``make_batches`` that prints, for the training batches it makes, the padded positions per real token of each side."""

    def make(examples, batch_size, batch_tokens=0, generator=None, bucket_batches=100):
        batches = make_batches(examples, batch_size, batch_tokens, generator, bucket_batches)
        if generator is not None:
            for side in ("source", "target"):
                padded = sum(len(batch) * max(len(getattr(e, side)) for e in batch) for batch in batches)
                real = sum(len(getattr(e, side)) for batch in batches for e in batch)
                print(f"{side}: {padded / real:.3f} padded positions per token", flush=True)
        return batches

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--order", choices=("source", "target"), required=True)
    args, runner_args = parser.parse_known_args()
    shipped = wean.training.trainer.make_batches
    by_target = functools.partial(shipped, length_key=target_then_source)
    wean.training.trainer.make_batches = counted(by_target if args.order == "target" else shipped)
    sys.path.insert(0, "bench/peers")
    sys.argv = ["bench/peers/wean_runner.py", *runner_args]
    runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")


if __name__ == "__main__":
    main()
