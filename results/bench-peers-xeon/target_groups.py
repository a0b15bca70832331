"""A wean training run whose loss takes the output layer over the whole padded batch
(`--output-layer whole`) or over groups of rows of similar target length, each to its own longest
target (`--output-layer grouped`: what training does under `training.kernels` auto and onednn,
`Criterion.by_target_length`), for the ABBA comparison of issue 94. The arguments after
`--output-layer` are those of `bench/peers/wean_runner.py` (`--runner peers`, the default) or of
`wean` itself (`--runner wean`), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/target_groups.py --output-layer whole \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/target_groups.py --output-layer whole \\
        --runner wean --log DIR/train.log train results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml \\
        --set model_dir=DIR --set training.max_updates=300 --set training.validate_every=100000

At the end it prints the run's speed (`training_run.py`; `--log`: a `wean` run's train.log).
"""

from __future__ import annotations

import argparse
import functools

import training_run  # this folder's, on the path as the script's own

from wean.training import criterion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--output-layer", choices=("whole", "grouped"), required=True)
    parser.add_argument("--runner", choices=("peers", "wean"), default="peers")
    parser.add_argument("--log", help="with --runner wean: the run's train.log")
    args, runner_args = parser.parse_known_args()
    made = criterion.Criterion.__init__

    @functools.wraps(made)
    def setting(self, *positional, **named):
        made(self, *positional, **named)
        self.by_target_length = args.output_layer == "grouped"

    criterion.Criterion.__init__ = setting
    printed = training_run.run(args.runner, runner_args)
    print(f"{args.output_layer}: {training_run.speed(args.runner, printed, args.log)}")


if __name__ == "__main__":
    main()
