"""What the shipped simplifier's guard costs: `wean simplify`'s default pipeline (beam 5, every
output checked for fidelity and by the channel model, lighter settings and the source as
fallbacks) against plain beam 5 of the same model, on TurkCorpus test's sources (plain text), in
one process, interleaved, median of the rounds; sentences/s and the ratio. The outputs of each are
checked against the previous round's (the same every round). ``--control``: a third system, the
pipeline with those control values asked for (its fallbacks as the model's config says, a
setting the values already ask for searched once), timed in the same rounds.

    python bench/guard_cost.py [--rounds 3] [--sentences 359] [--control chars_ratio=0.8] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from timing import MIN_ROUNDS, cpu, report  # bench/ is the script's folder, so on sys.path

import wean
from wean.control import parse_control
from wean.errors import WeanError
from wean.evaluation import data_root, get_benchmark
from wean.textio import read_lines

SYSTEMS = {
    "guarded (the default pipeline)": {},
    "plain beam 5": {"fallback": "none", "rerank": ""},
}


def control_values(text: str) -> dict[str, float]:
    try:
        values = parse_control(text)
    except WeanError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not values:
        raise argparse.ArgumentTypeError("give NAME=VALUE,..., e.g. chars_ratio=0.8")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=359)
    parser.add_argument("--model", default=None, help="a model directory (default: the shipped simplifier)")
    parser.add_argument("--control", type=control_values, help="NAME=VALUE,...: a third system asking for these values")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    sources = read_lines(get_benchmark("turkcorpus-test").source_path(data_root()))[: args.sentences]
    model = wean.load(args.model)
    systems = dict(SYSTEMS)
    if args.control:
        try:
            model.control_prefix(args.control)  # checked before anything is timed
        except WeanError as error:
            parser.error(f"--control: {error}")
        asked = ",".join(f"{name}={value:g}" for name, value in args.control.items())
        systems[f"guarded, control {asked}"] = {"control": args.control}
    load_before = os.getloadavg()[0]
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    outputs: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for name, options in systems.items():
            started = time.perf_counter()
            texts = [g.text for g in model.generate(sources, beam=5, **options)]
            seconds[name].append(time.perf_counter() - started)
            assert outputs.setdefault(name, texts) == texts, f"{name}: outputs changed between rounds"
    guarded, plain, *asked_control = systems
    result = {
        "cpu": cpu(), "threads": int(os.environ.get("OMP_NUM_THREADS", "0")) or None, "load_before": load_before,
        "sentences": len(sources), "rounds": args.rounds, "kernels": model.kernels,
        **{f"{name} sentences/s": len(sources) / statistics.median(times) for name, times in seconds.items()},
        "guard cost (guarded time / plain time)": statistics.median(
            g / p for g, p in zip(seconds[guarded], seconds[plain])),
        "outputs changed by the guard": sum(a != b for a, b in zip(outputs[guarded], outputs[plain])),
        **{f"{name}: its time / plain time": statistics.median(
            c / p for c, p in zip(seconds[name], seconds[plain])) for name in asked_control},
        **{f"{name}: its time / the default pipeline's": statistics.median(
            c / g for c, g in zip(seconds[name], seconds[guarded])) for name in asked_control},
        **{f"{name}: outputs identical to the default pipeline's": sum(a == b for a, b in zip(outputs[name], outputs[guarded]))
           for name in asked_control},
    }
    report(result, args.out)


if __name__ == "__main__":
    main()
