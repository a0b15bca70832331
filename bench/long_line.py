"""Memory and time of one long line against the same sentences one per line, with the shipped
simplifier (`wean simplify`, plain text, its default pipeline). A paragraph is split into
sentences and simplified one by one, so it should cost what its sentences cost: the ratios of the
line's peak resident memory and time to the one-per-line run's are the figures (1.0: no cost of
its own). Each run is its own process, interleaved, median of the rounds; sentences drawn with a
seed from examples/complex.txt.

    python bench/long_line.py [--words 20000] [--rounds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import cpu, report  # bench/ is the script's folder, so on sys.path


def run(text: str) -> dict:
    """`wean simplify` over ``text`` in a child process: its peak memory (MB) and seconds."""
    with tempfile.TemporaryDirectory() as folder:
        inputs = Path(folder) / "in.txt"
        inputs.write_text(text, encoding="utf-8")
        script = ("import resource, sys; from wean.cli import main; status = main(sys.argv[1:]); "
                  "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr); sys.exit(status)")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", script, "simplify", "--input", str(inputs), "--output",
                               str(Path(folder) / "out.txt")], capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
        seconds = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(done.stderr)
        lines = (Path(folder) / "out.txt").read_text(encoding="utf-8")
    return {"seconds": seconds, "peak_mb": float(done.stderr.strip().splitlines()[-1]), "output": lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    random.seed(1)
    examples = Path("examples/complex.txt").read_text(encoding="utf-8").splitlines()
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < args.words:
        sentences.append(random.choice(examples))
    texts = {"one line": " ".join(sentences) + "\n", "one per line": "".join(s + "\n" for s in sentences)}
    measured: dict[str, list[dict]] = {name: [] for name in texts}
    for _ in range(args.rounds):
        for name, text in texts.items():
            measured[name].append(run(text))
    line, lines = measured["one line"], measured["one per line"]
    same = line[0]["output"].strip() == " ".join(lines[0]["output"].split("\n")).strip()
    result = {
        "words": sum(len(s.split()) for s in sentences), "sentences": len(sentences), "rounds": args.rounds,
        "cpu": cpu(), "load_before": os.getloadavg(),
        **{f"{name} {key}": statistics.median(r[key] for r in runs)
           for name, runs in measured.items() for key in ("seconds", "peak_mb")},
        "memory ratio": statistics.median(a["peak_mb"] / b["peak_mb"] for a, b in zip(line, lines)),
        "time ratio": statistics.median(a["seconds"] / b["seconds"] for a, b in zip(line, lines)),
        "outputs the same": same,
    }
    report(result, args.out)


if __name__ == "__main__":
    main()
