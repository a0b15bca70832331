"""One training update of the peers' model (bench/peers) with oneDNN's products, with and without
the levers that keep the arithmetic: a decoder loop's weight gradients as one product over all
steps (wean.models.kernels.DeferredWeightGradient) and the cross-entropy taken from the logits in
one step (wean.training.criterion.softmax_cross_entropy). Interleaved rounds, wall time, the median
of each; the update is forward, backward and Adam on one synthetic batch of the peers' shapes.

    python bench/training_levers.py [--threads 2] [--rounds 5] [--updates 8] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from timing import cpu, report  # bench/ is the script's folder, so on sys.path

from wean.config import load_config
from wean.models import kernels
from wean.models.kernels import use_kernels
from wean.models.model import build_model
from wean.training.criterion import cross_entropy, softmax_cross_entropy

HERE = Path(__file__).resolve().parent
VOCABULARY, SENTENCES, SOURCE, TARGET = 10_000, 64, 22, 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--updates", type=int, default=8, help="updates timed per round and setting")
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config_file = Path(tempfile.mkdtemp(prefix="wean-levers-")) / "wean.yaml"
    config_file.write_text((HERE / "peers" / "configs" / "wean.yaml").read_text()
                           .replace("@DATA@", str(config_file.parent)).replace("@RUN@", str(config_file.parent)))
    torch.manual_seed(0)
    model = build_model(load_config(config_file).model, VOCABULARY, VOCABULARY)
    use_kernels(model, "onednn")
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3, fused=True)
    source = torch.randint(4, VOCABULARY, (SENTENCES, SOURCE))
    lengths = torch.full((SENTENCES,), SOURCE)
    previous = torch.randint(4, VOCABULARY, (SENTENCES, TARGET))
    targets = torch.randint(4, VOCABULARY, (SENTENCES, TARGET)).reshape(-1)
    deferring = kernels.deferring

    def update(levers: bool) -> None:
        kernels.deferring = deferring if levers else (lambda *args: None)
        if levers:
            logits = model(source, lengths, previous, logits=True).logits
            loss = softmax_cross_entropy(logits.reshape(-1, VOCABULARY), targets)
        else:
            log_probs = model(source, lengths, previous).log_probs
            loss = cross_entropy(log_probs.reshape(-1, VOCABULARY), targets)
        optimizer.zero_grad()
        (loss / targets.numel()).backward()
        optimizer.step()

    try:
        for levers in (True, False) * 3:  # warm-up: first calls allocate and pick their code paths
            update(levers)
        seconds: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.rounds):
            for levers in seconds:
                started = time.perf_counter()
                for _ in range(args.updates):
                    update(levers)
                seconds[levers].append((time.perf_counter() - started) / args.updates)
    finally:
        kernels.deferring = deferring
    medians = {levers: statistics.median(values) for levers, values in seconds.items()}
    report({"cpu": cpu(), "threads": args.threads, "rounds": args.rounds, "updates_per_round": args.updates,
            "seconds_per_update": {"levers": seconds[True], "without": seconds[False]},
            "median_seconds": {"levers": medians[True], "without": medians[False]},
            "speedup": round(medians[False] / medians[True], 3)}, args.out)


if __name__ == "__main__":
    main()
