"""Does WEAN-concat learn from the presets' initialisation? And how fast is its fused kernel?

1. Learning: the test suite's synthetic task (reverse 5-12 symbols; tests/synthetic.py) with its
   tiny model, WEAN general against concat, seeds 1-3, 6 epochs: concat with every weight drawn
   from U(-0.1, 0.1) (model.init_range, as configs/wean-pwkp.yaml), with only concat's W_q and
   W_e scaled up after that draw, and with init_range 0.5 for every weight. Measured: the share
   of 200 unseen pairs that greedy search reverses exactly, and the last validation loss.
2. Speed: the output layer alone, forward and backward, chunked against fused kernel,
   interleaved, median of 3 rounds (the first fused call compiles; it is not timed).
Run from the repository root: results/wean/concat-init/run.sh.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))
from synthetic import reverse_pairs, tiny_config, write_corpus  # noqa: E402

from wean.inference.generator import load  # noqa: E402
from wean.models.output_layer import WeanOutput  # noqa: E402
from wean.training import Trainer  # noqa: E402

RUNS = Path(os.environ.get("RUNS", "runs")) / "concat-init"
OUT = Path(__file__).resolve().parent
# name -> (score, init_range, factor on concat's W_q and W_e after the draw)
SETTINGS = {
    "general": ("general", 0.1, 1.0),
    "concat": ("concat", 0.1, 1.0),
    "concat-projections-x3": ("concat", 0.1, 3.0),
    "concat-projections-x5": ("concat", 0.1, 5.0),
    "concat-init-0.5": ("concat", 0.5, 1.0),
    "general-init-0.5": ("general", 0.5, 1.0),
}


def learn(name: str, seed: int) -> dict:
    score, init_range, factor = SETTINGS[name]
    data = write_corpus(RUNS / "data")
    model_dir = RUNS / f"{name}-seed{seed}"
    config = tiny_config(data, model_dir, max_epochs=6, seed=seed)
    config.model.output_layer.type, config.model.output_layer.score = "wean", score
    config.model.embedding_size = 64  # the query's size: WEAN scores it against the embeddings
    config.model.init_range = init_range
    trainer = Trainer(config)
    layer = next(module for module in trainer.model.modules() if isinstance(module, WeanOutput))
    if factor != 1.0:
        with torch.no_grad():
            layer.query_projection.weight.mul_(factor)
            layer.embedding_projection.weight.mul_(factor)
    trainer.train()
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [hypothesis.text for hypothesis in load(model_dir).generate(sources, beam=1)]
    history = json.loads((model_dir / "validations.json").read_text())
    return {"exact": sum(o == t for o, t in zip(outputs, targets)) / len(targets), "last_valid_loss": history[-1]["loss"]}


def time_kernels(rounds: int = 3) -> dict:
    torch.manual_seed(0)
    words, hidden, queries = 7904, 256, 128  # converged-cpu's vocabulary and hidden size
    shared = nn.Embedding(words, hidden)
    layers = {kernel: WeanOutput(shared, hidden, score="concat", concat_kernel=kernel) for kernel in ("chunked", "fused")}
    query, weights = torch.randn(queries, hidden, requires_grad=True), torch.randn(queries, words)
    (layers["fused"](query) * weights).sum().backward()  # compiles
    seconds = {kernel: [] for kernel in layers}
    for _ in range(rounds):
        for kernel, layer in layers.items():
            start = time.perf_counter()
            (layer(query) * weights).sum().backward()
            seconds[kernel].append(time.perf_counter() - start)
    return {"queries": queries, "words": words, "hidden": hidden, "torch": torch.__version__,
            "threads": torch.get_num_threads(), "seconds": seconds,
            "median_seconds": {kernel: statistics.median(values) for kernel, values in seconds.items()}}


def main(parts: list[str]) -> None:
    """parts: learning and/or speed (speed wants a quiet machine); each replaces its key in metrics.json."""
    path = OUT / "metrics.json"
    metrics = json.loads(path.read_text()) if path.exists() else {}
    if "learning" in parts:
        metrics["learning"] = {}
        for name in SETTINGS:
            runs = {seed: learn(name, seed) for seed in (1, 2, 3)}
            metrics["learning"][name] = runs
            print(name, " ".join(f"seed {s}: {r['exact']:.3f} ({r['last_valid_loss']:.3f})" for s, r in runs.items()),
                  flush=True)
    if "speed" in parts:
        metrics["speed"] = time_kernels()
        print("speed", metrics["speed"]["median_seconds"])
    path.write_text(json.dumps(metrics, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:] or ["learning", "speed"])
