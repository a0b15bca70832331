"""A wean training run whose decoder loop computes, at each step, only the rows whose target has
not ended (`--rows live`: what training does under `training.kernels` auto and onednn,
`RecurrentDecoder.skip_ended_rows`) or every row of the batch (`--rows every`), for the ABBA
comparison of issue 94. The arguments after `--rows` are those of `bench/peers/wean_runner.py`
(`--runner peers`, the default) or of `wean` itself (`--runner wean`), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/ended_rows.py --rows every \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/ended_rows.py --rows every \\
        --runner wean train results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml --set ...

At the end it prints the run's speed (`training_run.py`; `--log`: a `wean` run's train.log).
"""

from __future__ import annotations

import argparse

import training_run  # this folder's, on the path as the script's own

from wean.models.recurrent_decoder import RecurrentDecoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--rows", choices=("every", "live"), required=True)
    parser.add_argument("--runner", choices=("peers", "wean"), default="peers")
    parser.add_argument("--log", help="with --runner wean: the run's train.log")
    args, runner_args = parser.parse_known_args()
    if args.rows == "every":  # whatever training.kernels allows
        RecurrentDecoder._skips_ended_rows = lambda self, previous: False
    printed = training_run.run(args.runner, runner_args)
    print(f"{args.rows}: {training_run.speed(args.runner, printed, args.log)}")


if __name__ == "__main__":
    main()
