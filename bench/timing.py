"""How the speed benchmarks time what they compare: every system once per round, the rounds
interleaved so that drift in the machine's speed hits each alike, and each reported as the median
over rounds; a ratio to the baseline is the median of the per-round ratios, since a round's
systems ran under the same load."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

MIN_ROUNDS = 3


def seconds(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def interleaved(functions: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of each function in each round, the functions run in turn within a round."""
    if rounds < MIN_ROUNDS:
        raise ValueError(f"--rounds must be at least {MIN_ROUNDS} for a median, got {rounds}")
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            times[name].append(seconds(function))
    return times


def rates(times: dict[str, list[float]], amount: float, baseline: str) -> dict[str, float]:
    """``amount`` per second for each system (median over rounds), and ``NAME_over_BASELINE``, the
    median of the per-round ratios, for each system but the baseline."""
    record = {name: amount / statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        if name != baseline:
            record[f"{name}_over_{baseline}"] = statistics.median(
                base / own for base, own in zip(times[baseline], values)
            )
    return record


def load_average() -> float:
    """The 1-minute load average: a quiet machine shows about the threads the benchmark uses."""
    return os.getloadavg()[0]


# the instruction sets a CPU's float32 and bf16 products run on, which decide which kernels win
CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile")


def cpu() -> dict:
    """The CPU's model name and which of CPU_FLAGS it has (Linux; elsewhere the platform's name)."""
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.exists() else []
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    return {"model": model or platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "flags": [flag for flag in CPU_FLAGS if flag in flags]}


def report(results: dict, out: Path | None) -> None:
    """Print the results as JSON, and keep them as ``out``/metrics.json where ``out`` is given."""
    text = json.dumps(results, indent=2)
    print(text)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "metrics.json").write_text(text + "\n")
