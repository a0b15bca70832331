"""A wean training run whose decoder loop computes, at each step, only the rows whose target has
not ended (`--rows live`: what training does under `training.kernels` auto and onednn,
`RecurrentDecoder.skip_ended_rows`) or every row of the batch (`--rows every`), for the ABBA
comparison of issue 94. The arguments after `--rows` are those of `bench/peers/wean_runner.py`
(`--runner peers`, the default) or of `wean` itself (`--runner wean`), from the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/ended_rows.py --rows every \\
        train --config bench/peers/configs/wean.yaml --data DATA --run DIR
    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/ended_rows.py --rows every \\
        --runner wean train results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml --set ...

At the end it prints the run's target tokens per second: with the peers' runner over updates 21
to the last, from its 10-update windows (as `bench/peers/run.py` reads wean's training); with
`wean`, the mean of the rates its `train.log` (`--log`) gives for updates after 100.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import runpy
import sys
from pathlib import Path

from wean.models.recurrent_decoder import RecurrentDecoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--rows", choices=("every", "live"), required=True)
    parser.add_argument("--runner", choices=("peers", "wean"), default="peers")
    parser.add_argument("--log", help="with --runner wean: the run's train.log")
    args, runner_args = parser.parse_known_args()
    if args.rows == "every":  # whatever training.kernels allows
        RecurrentDecoder._skips_ended_rows = lambda self, previous: False
    log = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            log.write(text)
            return sys.__stdout__.write(text)

    with contextlib.redirect_stdout(Tee()), contextlib.redirect_stderr(Tee()):
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
                   re.finditer(r"^update (\d+) loss \S+ tokens (\d+) seconds ([\d.]+)", log.getvalue(), re.M)]
        counted = [(tokens, seconds) for update, tokens, seconds in windows if update > 20]
        print(f"rows {args.rows}: {sum(t for t, _ in counted) / sum(s for _, s in counted):.1f} target tokens/s "
              f"over updates 21-{windows[-1][0]}")
    elif args.log:
        rates = [(int(m[1]), float(m[2])) for m in
                 re.finditer(r"update (\d+) loss \S+ tokens/s (\d+)", Path(args.log).read_text(encoding="utf-8"))]
        counted = [rate for update, rate in rates if update > 100]
        print(f"rows {args.rows}: {sum(counted) / len(counted):.1f} tokens/s, mean of the windows of updates "
              f"101-{rates[-1][0]}")

if __name__ == "__main__":
    main()
