"""How wean's speed grows with batch size and source length: training target tokens/s and decoding
sentences/s (beam 5 and greedy) for batches of 16, 64 and 256 sentences and sources of 10, 30 and
100 words, on the model of bench/peers (configs/wean.yaml: 7.85M parameters, biLSTM encoder,
2-layer input-feeding Luong decoder, linear output layer), untrained.

    python bench/scaling.py --rounds 3 --out results/bench-scaling

Per source length L, a synthetic corpus: sources of exactly L words (Zipf-like over 9,000 types),
targets of round(0.6 L) of their words (the peer corpus's target/source ratio is 0.58), so no batch
has padding. Training: ``Trainer._update`` (forward, backward, clipping, Adam) on batches of B
pairs, about ``--train-tokens`` target tokens per measurement after two warm-up updates. Decoding:
``--sentences`` sources in batches of B, forced to round(0.6 L) + 1 decoder steps (the untrained
model would stop anywhere). Every cell is measured once per round, in an order rotated each round;
the figure and ``metrics.json`` hold the medians. Stop other work first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch

from wean.config import load_config
from wean.search import beam_search, greedy_search
from wean.training import Trainer

CONFIG = Path(__file__).resolve().parent / "peers" / "configs" / "wean.yaml"


def write_corpus(folder: Path, length: int, pairs: int) -> None:
    rng = random.Random(length)
    words = [f"w{i}" for i in range(9000)]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    target_length = round(0.6 * length)
    for split, count in (("train", pairs), ("valid", 8)):
        sources, targets = [], []
        for _ in range(count):
            source = rng.choices(words, weights, k=length)
            kept = sorted(rng.sample(range(length), target_length))
            sources.append(" ".join(source))
            targets.append(" ".join(source[i] for i in kept))
        (folder / f"{split}.src").write_text("\n".join(sources) + "\n")
        (folder / f"{split}.dst").write_text("\n".join(targets) + "\n")


def trainer_for(folder: Path, length: int, pairs: int) -> Trainer:
    write_corpus(folder, length, pairs)
    config_file = folder / "wean.yaml"
    config_file.write_text(CONFIG.read_text().replace("@DATA@", str(folder)).replace("@RUN@", str(folder)))
    return Trainer(load_config(config_file, ["data.max_tokens=200"]), log=lambda *_: None)


def training_rate(trainer: Trainer, batch: int, tokens_wanted: int) -> float:
    examples = trainer.train_examples
    batches = [examples[i : i + batch] for i in range(0, len(examples) - batch + 1, batch)]
    tokens_per_batch = sum(len(example.target) for example in batches[0])
    updates = max(2, math.ceil(tokens_wanted / tokens_per_batch))
    trainer.model.train()
    for examples_of_batch in batches[:2]:  # warm-up
        trainer._update(examples_of_batch)
    tokens, start = 0, time.perf_counter()
    for update in range(updates):
        tokens += trainer._update(batches[update % len(batches)])[1]
    return tokens / (time.perf_counter() - start)


def decoding_rate(trainer: Trainer, batch: int, sentences: int, beam: int, steps: int) -> float:
    model = trainer.model.eval()
    rows = [example.source for example in trainer.train_examples[:sentences]]
    source = torch.tensor(rows)  # every source has the same length: no padding
    lengths = torch.full((len(rows),), source.size(1))

    def run(begin: int, end: int) -> None:
        if beam == 1:
            greedy_search(model, source[begin:end], lengths[begin:end], max_length=steps, min_length=steps - 1)
        else:
            beam_search(model, source[begin:end], lengths[begin:end], beam_size=beam, max_length=steps,
                        min_length=steps - 1)

    with torch.inference_mode():
        run(0, min(batch, 8))  # warm-up
        start = time.perf_counter()
        for begin in range(0, len(rows), batch):
            run(begin, begin + batch)
        return len(rows) / (time.perf_counter() - start)


def plot(medians: dict, batches: list[int], lengths: list[int], threads: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    measures = (("train_tokens_per_second", "training: target tokens/s"),
                ("beam5_sentences_per_second", "beam 5: sentences/s"),
                ("greedy_sentences_per_second", "greedy: sentences/s"))
    figure, axes = plt.subplots(1, 3, figsize=(13, 4))
    for axis, (measure, title) in zip(axes, measures):
        for length in lengths:
            axis.plot(batches, [medians[f"{batch}x{length}"][measure] for batch in batches], marker="o",
                      label=f"source {length} words")
        axis.set_xscale("log", base=2)
        axis.set_xticks(batches, [str(batch) for batch in batches])
        axis.set_yscale("log")
        axis.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # labelled ticks within a decade too
        axis.yaxis.set_major_formatter(ScalarFormatter())
        axis.yaxis.set_minor_formatter(NullFormatter())
        axis.set_xlabel("batch size (sentences)")
        axis.set_title(title)
        axis.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    figure.suptitle(f"wean fp32, {threads} thread(s), medians of the rounds")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--train-tokens", type=int, default=8000, help="target tokens per training measurement")
    parser.add_argument("--sentences", type=int, default=256, help="sentences per decoding measurement")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--replot", action="store_true", help="only draw the figure again from --out's metrics.json")
    args = parser.parse_args()
    if args.replot:
        metrics = json.loads((args.out / "metrics.json").read_text())
        settings = metrics["settings"]
        plot(metrics["medians"], settings["batches"], settings["lengths"], metrics["hardware"]["threads"],
             args.out / "scaling.png")
        return

    torch.manual_seed(1)
    pairs = max(args.sentences, 2 * max(args.batches))
    runs: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as work:
        trainers = {}
        for length in args.lengths:
            (Path(work) / str(length)).mkdir()
            trainers[length] = trainer_for(Path(work) / str(length), length, pairs)
        cells = [(batch, length) for length in args.lengths for batch in args.batches]
        for round_number in range(args.rounds):
            shift = round_number * len(cells) // args.rounds
            for batch, length in cells[shift:] + cells[:shift]:
                trainer, steps = trainers[length], round(0.6 * length) + 1
                run = {"train_tokens_per_second": training_rate(trainer, batch, args.train_tokens),
                       "beam5_sentences_per_second": decoding_rate(trainer, batch, args.sentences, 5, steps),
                       "greedy_sentences_per_second": decoding_rate(trainer, batch, args.sentences, 1, steps),
                       "load_average": float(Path("/proc/loadavg").read_text().split()[0])}
                runs.setdefault(f"{batch}x{length}", []).append(run)
                print(f"round {round_number + 1} batch {batch} source {length}: "
                      f"train {run['train_tokens_per_second']:.0f} tok/s, beam-5 "
                      f"{run['beam5_sentences_per_second']:.1f} sent/s, greedy "
                      f"{run['greedy_sentences_per_second']:.1f} sent/s (load {run['load_average']:.2f})", flush=True)

    measures = ("train_tokens_per_second", "beam5_sentences_per_second", "greedy_sentences_per_second")
    medians = {cell: {measure: statistics.median(run[measure] for run in values) for measure in measures}
               for cell, values in runs.items()}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        metrics = {"settings": {key: value for key, value in vars(args).items() if key != "out"},
                   "hardware": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                                "threads": torch.get_num_threads(), "torch": torch.__version__},
                   "medians": medians, "runs": runs}
        (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        plot(medians, args.batches, args.lengths, torch.get_num_threads(), args.out / "scaling.png")


if __name__ == "__main__":
    main()
