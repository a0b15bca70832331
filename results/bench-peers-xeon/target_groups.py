"""A wean training run whose loss takes the output layer over the whole padded batch (`--output-layer
whole`) or over groups of rows of similar target length, each to its own longest target (`--output-layer
grouped`: what training does under `training.kernels` auto and onednn,
`Criterion.by_target_length`), for the ABBA comparison of issue 94. The arguments after
`--output-layer` are those of `bench/peers/wean_runner.py` (`--runner peers`, the default) or of `wean` itself
(`--runner wean`), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/target_groups.py --output-layer whole \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/target_groups.py --output-layer whole \\
        --runner wean --log DIR/train.log train results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml \\
        --set model_dir=DIR --set training.max_updates=300 --set training.validate_every=100000

At the end it prints the run's target tokens per second: with the peers' runner over updates 21
to the last, from its 10-update windows (as `bench/peers/run.py` reads wean's training); with
`wean`, the mean of the rates its `train.log` (`--log`) gives for the windows after update 100.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import runpy
import statistics
import sys
from pathlib import Path

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
    printed = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            printed.write(text)
            return sys.__stdout__.write(text)

    with contextlib.redirect_stdout(Tee()):
        if args.runner == "wean":
            sys.argv = ["wean", *runner_args]
            with contextlib.suppress(SystemExit):
                runpy.run_module("wean", run_name="__main__")
        else:
            sys.path.insert(0, "bench/peers")
            sys.argv = ["bench/peers/wean_runner.py", *runner_args]
            runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")
    if args.runner == "peers":
        windows = [(int(m[1]), float(m[2]), float(m[3])) for m in
                   re.finditer(r"^update (\d+) loss \S+ tokens (\d+) seconds ([\d.]+)", printed.getvalue(), re.M)]
        counted = [(tokens, seconds) for update, tokens, seconds in windows if update > 20]
        print(f"{args.output_layer}: {sum(t for t, _ in counted) / sum(s for _, s in counted):.1f} target tokens/s "
              f"over updates 21-{windows[-1][0]}")
    elif args.log:
        rates = [(int(m[1]), float(m[2])) for m in
                 re.finditer(r"update (\d+) loss \S+ tokens/s (\d+)", Path(args.log).read_text(encoding="utf-8"))]
        counted = [rate for update, rate in rates if update > 100]
        print(f"{args.output_layer}: {statistics.mean(counted):.1f} tokens/s, "
              f"mean of the windows of updates 101-{rates[-1][0]}")


if __name__ == "__main__":
    main()
