"""A wean training run with the LSTM encoder's batches in one packed call (`--calls packed`) or in
one call per source length where a batch holds few lengths (`--calls by-length`: what training
does under `training.kernels` auto and onednn, `LSTMEncoder.split_by_length`), for the ABBA
comparison of issue 94. The arguments after `--calls` are those of `bench/peers/wean_runner.py`
(`--runner peers`, the default) or of `wean` itself (`--runner wean`), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/encoder_calls.py --calls packed \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/encoder_calls.py --calls packed \\
        --runner wean train results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml --set ...

Both configs train with kernels other than blas. Only the encoder's path changes; its states
agree to float rounding (tests/test_encoder.py).
"""

from __future__ import annotations

import argparse
import runpy
import sys

from wean.models.encoder import LSTMEncoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--calls", choices=("packed", "by-length"), required=True)
    parser.add_argument("--runner", choices=("peers", "wean"), default="peers")
    args, runner_args = parser.parse_known_args()
    if args.calls == "packed":  # whatever training.kernels allows
        LSTMEncoder.min_sources_per_length = sys.maxsize
    if args.runner == "wean":
        sys.argv = ["wean", *runner_args]
        runpy.run_module("wean", run_name="__main__")
    else:
        sys.path.insert(0, "bench/peers")
        sys.argv = ["bench/peers/wean_runner.py", *runner_args]
        runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")


if __name__ == "__main__":
    main()
