"""Where a training update's time goes, on the peer benchmark's model and data (bench/peers): the
batch built from its examples, the encoder, the decoder's steps, the output layer and loss, the
backward pass and the optimizer step, each as a share of the update; then the operators that take
the most time in the whole update (PyTorch's profiler, self time). The backward pass is the update
less the rest (autograd runs it in one call). It finds the levers; speeds are measured by
bench/peers/run.py against the peers.

    python bench/training_profile.py [--updates 60] [--threads 1] [--kernels auto] [--out DIR]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from peers_setup import peers_config, peers_corpus  # bench/ is the script's folder, so on sys.path
from timing import cpu, report

from wean.training import Trainer


def timed(function, name: str, spent: dict):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=60, help="updates timed, after 10 of warm-up")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--kernels", default="auto", choices=("auto", "onednn", "blas"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="wean-profile-"))
    peers_corpus(work)
    config = peers_config(work, [f"training.kernels={args.kernels}", f"training.max_updates={args.updates + 10}"])
    trainer = Trainer(config, overwrite=True)
    model, spent, per_update, tokens = trainer.model, {}, [], [0]
    trainer.criterion.training_batch = timed(trainer.criterion.training_batch, "batch", spent)
    model.encoder.forward = timed(model.encoder.forward, "encoder", spent)
    model.decoder.forward = timed(model.decoder.forward, "decoder", spent)
    trainer.criterion.training_loss = timed(trainer.criterion.training_loss, "forward", spent)
    trainer.optimizer.step = timed(trainer.optimizer.step, "optimizer", spent)
    update = trainer._update
    warm = {"left": 10, "profiler": None}

    def measured(examples):
        if warm["left"]:
            warm["left"] -= 1
            result = update(examples)
            spent.clear()
            return result
        started = time.perf_counter()
        result = update(examples)
        per_update.append(time.perf_counter() - started)
        tokens[0] += result[1]
        return result

    trainer._update = measured
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        trainer.train()
    total = sum(per_update)
    shares = {
        "batch": spent.get("batch", 0.0),
        "encoder": spent.get("encoder", 0.0),
        "decoder": spent.get("decoder", 0.0),
        # training_loss runs the whole forward: what the encoder and decoder did not take is the output layer and loss
        "output layer and loss": spent.get("forward", 0.0) - spent.get("encoder", 0.0) - spent.get("decoder", 0.0),
        "optimizer": spent.get("optimizer", 0.0),
    }
    shares["backward and the rest"] = total - sum(shares.values())
    operators = sorted(profiler.key_averages(), key=lambda event: event.self_cpu_time_total, reverse=True)
    all_self = sum(event.self_cpu_time_total for event in profiler.key_averages()) or 1
    result = {
        "cpu": cpu(), "threads": args.threads, "kernels": args.kernels, "updates": len(per_update),
        "median_update_s": statistics.median(per_update), "target_tokens_per_s": tokens[0] / total,
        "shares": {name: round(value / total, 4) for name, value in shares.items()},
        "top_operators_self_share": {event.key: round(event.self_cpu_time_total / all_self, 4) for event in operators[:15]},
    }
    report(result, args.out)


if __name__ == "__main__":
    main()
