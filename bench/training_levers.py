"""One training update of the peers' model (bench/peers) with oneDNN's products, with and without
the levers that keep the arithmetic: a decoder loop's weight gradients, and its attention's keys'
and values' gradients, each as one product over all steps (wean.models.kernels.DeferredGradient),
and the cross-entropy taken from the logits in one step
(wean.training.criterion.softmax_cross_entropy). Interleaved rounds, wall time, the median
of each; the update is forward, backward and Adam on one synthetic batch of the peers' shapes.
With --corpus, the updates are the Trainer's own on the peers' corpus (its batches of varying
length, gradient clipping): one run whose levers are switched on and off every 10 updates, each
update timed (--clock cpu: the process's CPU time, for a machine that is not quiet).

    python bench/training_levers.py [--threads 2] [--rounds 5] [--updates 8] [--out DIR]
    python bench/training_levers.py --corpus [--threads 2] [--updates 300] [--clock wall|cpu] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from peers_setup import peers_config, peers_corpus  # bench/ is the script's folder, so on sys.path
from timing import cpu, report

from wean.models import deferred_gradients, kernels
from wean.models.kernels import use_kernels
from wean.models.model import build_model
from wean.training import Trainer
from wean.training.criterion import cross_entropy, softmax_cross_entropy

VOCABULARY, SENTENCES, SOURCE, TARGET = 10_000, 64, 22, 16
DEFERRING = (kernels.deferring, deferred_gradients.deferred_memory_gradients)


def switch_levers(on: bool) -> None:
    """The deferred gradients on (wean's own functions) or off."""
    weights, memories = DEFERRING
    kernels.deferring = weights if on else (lambda *args: None)
    deferred_gradients.deferred_memory_gradients = memories if on else (lambda module, enabled: memories(module, False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--updates", type=int,
                        help="updates timed per round and setting (default 8); with --corpus, the run's updates "
                        "(default 300, at least 60: 20 of warm-up, then blocks of 10 in turn)")
    parser.add_argument("--corpus", action="store_true", help="the Trainer's updates on the peers' corpus")
    parser.add_argument("--clock", choices=("wall", "cpu"), help="with --corpus: wall time (default) or CPU time")
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()
    if args.corpus:
        args.updates = 300 if args.updates is None else args.updates
        if args.updates < 60:
            parser.error("--updates: at least 60 with --corpus")
    elif args.clock:
        parser.error("--clock: with --corpus only (the synthetic rounds take wall time)")
    torch.set_num_threads(args.threads)
    if args.corpus:
        corpus_updates(args)
        return
    args.updates = 8 if args.updates is None else args.updates
    with tempfile.TemporaryDirectory(prefix="wean-levers-") as folder:
        config = peers_config(Path(folder))
    torch.manual_seed(0)
    model = build_model(config.model, VOCABULARY, VOCABULARY)
    use_kernels(model, "onednn")
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), 1e-3, fused=True)
    source = torch.randint(4, VOCABULARY, (SENTENCES, SOURCE))
    lengths = torch.full((SENTENCES,), SOURCE)
    previous = torch.randint(4, VOCABULARY, (SENTENCES, TARGET))
    targets = torch.randint(4, VOCABULARY, (SENTENCES, TARGET)).reshape(-1)

    def update(levers: bool) -> None:
        switch_levers(levers)
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
        switch_levers(True)
    medians = {levers: statistics.median(values) for levers, values in seconds.items()}
    report({"cpu": cpu(), "threads": args.threads, "rounds": args.rounds, "updates_per_round": args.updates,
            "seconds_per_update": {"levers": seconds[True], "without": seconds[False]},
            "median_seconds": {"levers": medians[True], "without": medians[False]},
            "speedup": round(medians[False] / medians[True], 3)}, args.out)


def corpus_updates(args) -> None:
    """The Trainer's updates on the peers' corpus, the levers on for 10 updates, off for the next
    10, and so on (the first 20 are warm-up); per setting, the median update and the median time
    per target token (the two settings' blocks hold different batches of the one epoch)."""
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    seconds, tokens = {True: [], False: []}, {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="wean-levers-") as folder:
        work = Path(folder)
        peers_corpus(work)
        trainer = Trainer(peers_config(work, [f"training.max_updates={args.updates}", "training.kernels=onednn"]),
                          overwrite=True, log=lambda *_, **__: None)
        update, done = trainer._update, [0]

        def switched(examples):
            levers = done[0] // 10 % 2 == 0
            switch_levers(levers)
            trainer.criterion.loss_from_logits = levers
            started = clock()
            result = update(examples)
            if done[0] >= 20:
                seconds[levers].append(clock() - started)
                tokens[levers].append(result[1])
            done[0] += 1
            return result

        trainer._update = switched
        try:
            trainer.train()
        finally:
            switch_levers(True)

    def summary(levers: bool) -> dict:
        per_token = [s / t for s, t in zip(seconds[levers], tokens[levers])]
        quartiles = statistics.quantiles(seconds[levers], n=4)
        return {"updates": len(seconds[levers]), "median_seconds": statistics.median(seconds[levers]),
                "quartile_seconds": [quartiles[0], quartiles[2]],
                "median_ms_per_target_token": 1000 * statistics.median(per_token)}

    levers, without = summary(True), summary(False)
    per_token = without["median_ms_per_target_token"] / levers["median_ms_per_target_token"]
    report({"cpu": cpu(), "threads": args.threads, "batches": "the peers' corpus (Trainer)",
            "clock": args.clock or "wall", "levers": levers, "without": without,
            "speedup": round(without["median_seconds"] / levers["median_seconds"], 3),
            "speedup_per_token": round(per_token, 3)}, args.out)


if __name__ == "__main__":
    main()
