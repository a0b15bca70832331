"""Training speed under other memory allocators than glibc's, preloaded with LD_PRELOAD.

On this CPU a training step frees and asks again for tensors of tens of megabytes (the logits of
a batch alone); glibc hands allocations that large straight back to the kernel, so every step
page-faults them in anew (seen as 7-14 % system time in the experiments' training runs).
jemalloc and tcmalloc keep such memory for reuse. The allocator should not change a result (PyTorch
aligns every tensor itself); the benchmark checks that every logged loss (4 decimals) is identical.

Each round runs ``wean train`` for ``--updates`` updates of each experiment config under each
allocator in turn (bench/timing.py's interleaving, in subprocesses, since the allocator is fixed
when a process starts); a run's speed is its target tokens per second over the log windows after
the first (the first holds the warm-up). Allocators not installed are skipped with a note
(Debian: ``apt-get install libjemalloc2 libtcmalloc-minimal4``).

    python bench/allocator_speed.py [--rounds 3] [--updates 80] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import MIN_ROUNDS, load_average, report

ROOT = Path(__file__).parent.parent
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
ALLOCATORS = {"glibc": None, "jemalloc": "libjemalloc.so.2", "tcmalloc": "libtcmalloc_minimal.so.4"}
# the simplification rows of results/word-attention/converged/run.sh (issue 24's longest runs)
CONFIGS = {
    "lstm-conditional": ["model.decoder.type=conditional", "model.decoder.bridge=zero"],
    "contextual-gates": ["model.decoder.word_attention=gates"],
}
LOG_LINE = re.compile(r"update (\d+) loss (\S+) tokens/s (\d+)")


def library_path(name: str) -> str | None:
    """The first of LIBRARY_DIRS that holds library ``name``, None if none does."""
    for directory in LIBRARY_DIRS:
        if (Path(directory) / name).exists():
            return str(Path(directory) / name)
    return None


def train(config: list[str], preload: str | None, updates: int, log_every: int) -> tuple[float, list[str]]:
    """Tokens/s over the log windows after the first, and every logged loss."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if preload:
        env["LD_PRELOAD"] = preload
    with tempfile.TemporaryDirectory() as model_dir:
        overrides = [
            f"model_dir={model_dir}", f"training.max_updates={updates}", f"training.log_every={log_every}",
            "training.validate_every=0", "training.max_epochs=1", "training.device=cpu",
            "training.precision=fp32", "training.seed=2", *config,
        ]
        command = [sys.executable, "-m", "wean", "train", str(ROOT / "configs/rnnsearch-simplification.yaml")]
        for override in overrides:
            command += ["--set", override]
        finished = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        if finished.returncode:
            raise SystemExit(f"wean train failed under LD_PRELOAD={preload}: {finished.stderr.strip()[-500:]}")
        log = (Path(model_dir) / "train.log").read_text()
    lines = LOG_LINE.findall(log)
    if len(lines) < 2:
        raise SystemExit(f"--updates {updates} gives fewer than two log windows of {log_every}")
    return statistics.mean(int(rate) for _, _, rate in lines[1:]), [loss for _, loss, _ in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--updates", type=int, default=80)
    parser.add_argument("--log-every", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS} for a median, got {args.rounds}")
    preloads: dict[str, str | None] = {"glibc": None}  # None: nothing preloaded
    for name, library in ALLOCATORS.items():
        if library is None:
            continue
        if path := library_path(library):
            preloads[name] = path
        else:
            print(f"note: {library} not found, {name} skipped", file=sys.stderr)
    results: dict = {
        "machine": platform.processor() or platform.machine(), "threads": 1, "rounds": args.rounds,
        "updates": args.updates, "load_average_before": load_average(), "configs": {},
    }
    for config, overrides in CONFIGS.items():
        rates: dict[str, list[float]] = {name: [] for name in preloads}
        losses: dict[str, list[str]] = {}
        for _ in range(args.rounds):
            for name, preload in preloads.items():
                rate, logged = train(overrides, preload, args.updates, args.log_every)
                rates[name].append(rate)
                if losses.setdefault(name, logged) != logged:
                    raise SystemExit(f"{config}: losses differ between rounds under {name}")
        record = {f"{name}_tokens_per_second": statistics.median(values) for name, values in rates.items()}
        for name, values in rates.items():
            if name != "glibc":
                record[f"{name}_over_glibc"] = statistics.median(o / b for o, b in zip(values, rates["glibc"]))
        record["losses_identical"] = all(logged == losses["glibc"] for logged in losses.values())
        results["configs"][config] = record
    results["load_average_after"] = load_average()
    report(results, args.out)


if __name__ == "__main__":
    main()
