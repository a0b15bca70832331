"""A training run of this folder's ABBA comparisons, in this process: `bench/peers/wean_runner.py
train ...` (runner `peers`) or `wean train ...` (runner `wean`), and its speed: with the peers'
runner, target tokens per second over updates 21 to the last, from its 10-update windows (as
`bench/peers/run.py` reads wean's training); with `wean`, the mean of the rates its train.log
gives for the windows after update 100."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import statistics
import sys
from pathlib import Path


def run(runner: str, arguments: list[str]) -> str:
    """What the run printed on stdout (shown as it runs, too)."""
    printed = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            printed.write(text)
            return sys.__stdout__.write(text)

    with contextlib.redirect_stdout(Tee()):
        if runner == "wean":
            sys.argv = ["wean", *arguments]
            with contextlib.suppress(SystemExit):
                runpy.run_module("wean", run_name="__main__")
        else:
            sys.path.insert(0, "bench/peers")
            sys.argv = ["bench/peers/wean_runner.py", *arguments]
            runpy.run_path("bench/peers/wean_runner.py", run_name="__main__")
    return printed.getvalue()


def speed(runner: str, printed: str, log: str | None) -> str:
    """The run's speed, in words; ``log``: a `wean` run's train.log."""
    if runner == "peers":
        windows = [(int(m[1]), float(m[2]), float(m[3])) for m in
                   re.finditer(r"^update (\d+) loss \S+ tokens (\d+) seconds ([\d.]+)", printed, re.M)]
        counted = [(tokens, seconds) for update, tokens, seconds in windows if update > 20]
        return (f"{sum(t for t, _ in counted) / sum(s for _, s in counted):.1f} target tokens/s "
                f"over updates 21-{windows[-1][0]}")
    if not log:
        return "no speed: give --log"
    rates = [(int(m[1]), float(m[2])) for m in
             re.finditer(r"update (\d+) loss \S+ tokens/s (\d+)", Path(log).read_text(encoding="utf-8"))]
    counted = [rate for update, rate in rates if update > 100]
    return f"{statistics.mean(counted):.1f} tokens/s, mean of the windows of updates 101-{rates[-1][0]}"
