"""Training updates/s of the word-attention and conv-encoder tables' rows (issue 24), with the
decoder's LSTM unrolled by hand over the teacher-forced target (``UnrolledLSTM``, what training
uses) against one ``nn.LSTM`` call per step (what it used before, and what search still does),
measured in the same run on the same batches, interleaved, median of ``--rounds``.

    python bench/decoder_speed.py [--rounds 3] [--updates 12] [--out DIR]

Every row is its task's config (configs/rnnsearch-gigaword.yaml, configs/rnnsearch-simplification.yaml)
with the keys of results/word-attention/converged/run.sh, at their vocabulary sizes, untrained
(speed does not depend on the weights). Batches: 64 pairs whose lengths are drawn from the task's
training pairs (words per side, $WEAN_DATA_ROOT or data/ of `wean prepare gigaword`), bucketed by
length as the trainer's are, random tokens. An update is what the trainer does: forward, loss,
backward, clipping, Adam. Stop other work first; one thread unless OMP_NUM_THREADS says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import random
import statistics
import time
from pathlib import Path
from unittest import mock

import torch

from wean.config import load_config
from wean.data.corpus import Example, make_batches
from wean.data.root import data_path
from wean.models import recurrent_decoder
from wean.models.model import build_model
from wean.training.criterion import Criterion

ROOT = Path(__file__).resolve().parent.parent
CONV = ["model.encoder.type=conv", "model.encoder.layers=6", "model.encoder.hidden_size=256",
        "model.decoder.type=conditional", "model.decoder.bridge=zero"]
ROWS = {  # results/word-attention/converged/run.sh
    "rnnsearch": [],
    "word-attention": ["model.decoder.word_attention=attention"],
    "contextual-gates": ["model.decoder.word_attention=gates"],
    "lstm-conditional": ["model.decoder.type=conditional", "model.decoder.bridge=zero"],
    "conv-encoder": CONV,
}
TASKS = {  # config, training pairs whose lengths the batches take
    "gigaword": ("configs/rnnsearch-gigaword.yaml", "data/gigaword/train"),
    "simplification": ("configs/rnnsearch-simplification.yaml", "${WEAN_DATA_ROOT}/kauchak_v2/train"),
}


def batches_like(pairs: Path, vocabulary: int, count: int, max_tokens: int, seed: int) -> list[list[Example]]:
    """``count`` batches of 64 pairs with the lengths of ``pairs``' lines, bucketed by length as the
    trainer's batches are (make_batches), random tokens."""
    sources = pairs.with_suffix(".src").read_text(encoding="utf-8").splitlines()
    targets = pairs.with_suffix(".dst").read_text(encoding="utf-8").splitlines()
    lengths = [(len(s.split()), len(t.split())) for s, t in zip(sources, targets)
               if 0 < len(s.split()) <= max_tokens and 0 < len(t.split()) <= max_tokens]
    rng = random.Random(seed)
    examples = [Example(i, [rng.randrange(4, vocabulary) for _ in range(source)],
                        [rng.randrange(4, vocabulary) for _ in range(target)] + [3])
                for i, (source, target) in enumerate(rng.sample(lengths, 6400))]
    return make_batches(examples, 64, generator=torch.Generator().manual_seed(seed))[:count]


def updates_per_second(model, criterion, optimizer, batches, clip: float, unrolled: bool) -> float:
    """The trainer's update on every batch, the decoder's LSTM unrolled or called per step."""
    per_step = mock.patch.object(recurrent_decoder, "UnrolledLSTM", lambda *args: None)  # forward's None: per step
    with contextlib.nullcontext() if unrolled else per_step:
        start = time.perf_counter()
        for examples in batches:
            batch = criterion.training_batch(examples)
            loss = criterion.training_loss(batch) / batch.target_tokens
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
        return len(batches) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=12)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    torch.manual_seed(0)
    setups = {}
    for task, (config_path, pairs) in TASKS.items():
        for row, changes in ROWS.items():
            config = load_config(ROOT / config_path, changes)
            vocabulary = config.data.tokenizer.vocab_size
            model = build_model(config.model, vocabulary, vocabulary).train()
            optimizer = torch.optim.Adam(model.parameters(), lr=config.training.learning_rate, fused=True)
            batches = batches_like(ROOT / data_path(pairs), vocabulary, args.updates + 1, config.data.max_tokens, seed=0)
            setups[f"{task} {row}"] = (model, Criterion(model), optimizer, batches, config.training.clip_grad_norm)
    rates = {name: {"unrolled": [], "per_step": []} for name in setups}
    for round_ in range(args.rounds):
        order = list(setups.items())
        rotated = order[round_ % len(order):] + order[:round_ % len(order)]
        for name, (model, criterion, optimizer, batches, clip) in rotated:
            for unrolled in ((True, False) if round_ % 2 == 0 else (False, True)):
                updates_per_second(model, criterion, optimizer, batches[:1], clip, unrolled)  # warm-up
                rate = updates_per_second(model, criterion, optimizer, batches[1:], clip, unrolled)
                rates[name]["unrolled" if unrolled else "per_step"].append(rate)
        print(f"round {round_ + 1} done", flush=True)
    results = {}
    for name, measured in rates.items():
        unrolled, per_step = statistics.median(measured["unrolled"]), statistics.median(measured["per_step"])
        results[name] = {"unrolled_updates_per_second": unrolled, "per_step_updates_per_second": per_step,
                         "speedup": unrolled / per_step}
        print(f"{name:32s} unrolled {unrolled:6.2f} updates/s, per step {per_step:6.2f}: {unrolled / per_step:.2f}x")
    results["setting"] = {"rounds": args.rounds, "updates": args.updates, "batch": 64, "torch": torch.__version__,
                          "threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine()}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "metrics.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
