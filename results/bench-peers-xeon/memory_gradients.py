"""A wean training run of the peers' benchmark with the attention's keys' and values' gradients
deferred to one product over the decoder's steps (`--memory deferred`: what training does on the
oneDNN path, `wean.models.deferred_gradients.deferred_memory_gradients`) or added step by step
(`--memory per-step`), for the ABBA comparison of issue 94; `--memory none` gives the keys and
values no gradient at all: wrong, an upper bound on what deferring them can save. The arguments after `--memory` are those of
`bench/peers/wean_runner.py train`, from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/memory_gradients.py --memory deferred \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR --set training.kernels=onednn

Only where the gradients are summed changes; they agree to float rounding (tests/test_decoder.py).
"""

from __future__ import annotations

import argparse
import runpy
import sys

from wean.models import deferred_gradients
from wean.models.attention import LuongAttention


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--memory", choices=("deferred", "per-step", "none"), required=True)
    args, runner_args = parser.parse_known_args()
    if args.memory == "per-step":
        deferring = deferred_gradients.deferred_memory_gradients
        deferred_gradients.deferred_memory_gradients = lambda module, enabled: deferring(module, False)
    elif args.memory == "none":
        attend = LuongAttention.forward
        LuongAttention.forward = lambda self, queries, keys, values, mask, coverage=None: attend(
            self, queries, keys.detach(), values.detach(), mask, coverage)
    sys.path.insert(0, "bench/peers")
    sys.argv = ["bench/peers/wean_runner.py", *runner_args]
    runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")


if __name__ == "__main__":
    main()
