"""Training throughput on 1 process against N processes (torchrun, DistributedDataParallel), and
fp32 against bf16 / fp16 where the device has them, measured in one run, interleaved.

    python bench/distributed.py --system 1:fp32 --system 2:fp32 --system 1:fp32:2 \
        --rounds 3 --out results/bench-distributed
    python bench/distributed.py --device cuda --system 1:fp32 --system 1:bf16 \\
        --system 2:fp32 --rounds 3 --out results/bench-distributed/gpu      # a machine with 2 GPUs

A system is ``PROCESSES:PRECISION[:THREADS]`` (threads per process on a CPU, default 1). Each trains the model of bench/peers (configs/wean.yaml:
7.85M parameters, biLSTM encoder, 2-layer input-feeding Luong decoder) from scratch on the same
synthetic corpus (bench/scaling.py's: sources of ``--length`` words, targets 0.6 of them), batches
of 64 sentences (the global batch: 32 per process on 2), for ``--updates`` updates, never
validating. ``wean train`` runs it (``torchrun --standalone -m wean train`` for more than one
process). Throughput is target tokens per second from the
run's own log (rank 0's, counting the whole batch), the median of its 10-update windows after the
first (start-up and warm-up excluded). Systems run in an order rotated each round; the ratio to
the first system is taken within each round, then the median over rounds. Stop other work first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from scaling import CONFIG, write_corpus


def run_training(folder: Path, data: Path, system: str, device: str, updates: int) -> float:
    """Target tokens/s of one training run (the median of its logged windows but the first)."""
    processes, precision, threads = parse_system(system)
    run = folder / f"run-{system.replace(':', '-')}"
    shutil.rmtree(run, ignore_errors=True)
    config = run.with_suffix(".yaml")
    config.write_text(CONFIG.read_text().replace("@DATA@", str(data)).replace("@RUN@", str(run)))
    overrides = [f"training.max_updates={updates}", "training.log_every=10", f"training.precision={precision}",
                 f"training.device={device}", "data.max_tokens=200"]
    wean = [sys.executable, "-m", "wean", "train", str(config)] + [f"--set={o}" for o in overrides]
    if processes > 1:
        wean = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
                "-m", *wean[2:]]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    result = subprocess.run(wean, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{system} failed:\n{result.stderr[-3000:]}")
    rates = [float(rate) for rate in re.findall(r"tokens/s (\d+)", (run / "model" / "train.log").read_text())]
    if len(rates) < 3:
        raise SystemExit(f"{system}: {len(rates)} logged windows; raise --updates")
    return statistics.median(rates[1:])


def parse_system(system: str) -> tuple[int, str, int]:
    processes, precision, *threads = system.split(":")
    return int(processes), precision, int(threads[0]) if threads else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", action="append", metavar="PROCESSES:PRECISION[:THREADS]",
                        help="repeatable (default: 1:fp32 and 2:fp32)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=80)
    parser.add_argument("--length", type=int, default=20, help="source words per pair")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names = args.system or ["1:fp32", "2:fp32"]
    rates: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names}
    load: list[float] = []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        data = folder / "data"
        data.mkdir()
        write_corpus(data, args.length, pairs=64 * args.updates)
        for round_ in range(args.rounds):
            order = names[round_ % len(names):] + names[: round_ % len(names)]
            measured = {}
            for system in order:
                load.append(float(Path("/proc/loadavg").read_text().split()[0]))
                started = time.perf_counter()
                measured[system] = rate = run_training(folder, data, system, args.device, args.updates)
                print(f"round {round_ + 1} {system}: {rate:.0f} target tokens/s "
                      f"({time.perf_counter() - started:.0f} s with start-up; load {load[-1]:.2f})", flush=True)
            for name in names:
                rates[name].append(measured[name])
                ratios[name].append(measured[name] / measured[names[0]])
    medians = {name: {"target_tokens_per_second": statistics.median(rates[name]),
                      f"ratio_to_{names[0]}": statistics.median(ratios[name])} for name in names}
    for name in names:
        print(f"median {name}: {medians[name]['target_tokens_per_second']:.0f} tokens/s, "
              f"{medians[name][f'ratio_to_{names[0]}']:.2f}x {names[0]} "
              f"(per round {', '.join(f'{r:.2f}' for r in ratios[name])})")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        device = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine()
        metrics = {"settings": {**{k: v for k, v in vars(args).items() if k not in ("out", "system")},
                                "systems": names, "batch_size": 64, "model": "bench/peers/configs/wean.yaml"},
                   "hardware": {"device": device, "cores": os.cpu_count(), "torch": torch.__version__},
                   "load_average_at_starts": load, "rounds": {"rates": rates, "ratios": ratios}, "medians": medians}
        (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")


if __name__ == "__main__":
    main()
