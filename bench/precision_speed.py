"""Training speed with ``training.precision: bf16`` against fp32, for the model shapes the
experiments in results/ train: each preset's model on random batches of 64 sentences (lengths
typical of its data), one training step (forward with the trainer's Criterion, backward, Adam)
timed in both precisions, rounds interleaved, medians over rounds (bench/timing.py). bf16
autocast pays where the CPU has bfloat16 instructions; elsewhere it is emulated, and slower.

    python bench/precision_speed.py [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import torch
from encoder_speed import batch_of
from timing import interleaved, load_average, rates, report

from wean.config import load_config
from wean.models.model import build_model
from wean.training.criterion import Criterion

CONFIGS = Path(__file__).parent.parent / "configs"
SPM_SCALE = {  # the shared scale-down of results/spm/run.sh
    "embedding_size": 256, "encoder.hidden_size": 128, "encoder.layers": 1,
    "decoder.hidden_size": 256, "decoder.layers": 1,
}
# name: (preset, model overrides, source length, target length)
SHAPES = {
    "seq2seq-pwkp": ("seq2seq-pwkp.yaml", {}, 25, 20),
    "wean-pwkp": ("wean-pwkp.yaml", {}, 25, 20),
    "rnnsearch-simplification": ("rnnsearch-simplification.yaml", {}, 30, 24),
    "rnnsearch-gigaword": ("rnnsearch-gigaword.yaml", {}, 30, 10),
    "encdec-gigaword+spm (scaled)": ("encdec-gigaword.yaml", {**SPM_SCALE, "spm.enabled": True}, 30, 10),
}


def model_for(preset: str, overrides: dict) -> tuple[torch.nn.Module, int]:
    config = load_config(CONFIGS / preset)
    for key, value in overrides.items():
        target = config.model
        *path, last = key.split(".")
        for part in path:
            target = getattr(target, part)
        setattr(target, last, value)
    config.model.dropout = 0.0  # speed only; dropout masks would add noise between repeats
    vocabulary = config.data.tokenizer.vocab_size + 4
    torch.manual_seed(0)
    return build_model(config.model, vocabulary, vocabulary), vocabulary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_at_start = load_average()
    generator = torch.Generator().manual_seed(0)
    results: dict[str, dict] = {}
    for name, (preset, overrides, source_length, target_length) in SHAPES.items():
        model, vocabulary = model_for(preset, overrides)
        batch = batch_of(args.sentences, source_length, target_length, vocabulary, generator, model.extend_target)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-6)
        criteria = {bf16: Criterion(model, autocast=torch.bfloat16 if bf16 else None) for bf16 in (False, True)}

        def step(bf16: bool) -> None:
            loss = criteria[bf16].training_loss(batch) / batch.target_tokens
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        step(False), step(True)  # warm-up
        times = interleaved({"fp32": lambda: step(False), "bf16": lambda: step(True)}, args.rounds)
        record = rates(times, batch.target_tokens, "fp32")
        record["parameters"] = sum(p.numel() for p in model.parameters())
        results[name] = record
        print(f"{name}: fp32 {record['fp32']:.0f} tok/s, bf16 {record['bf16']:.0f} tok/s, "
              f"ratio {record['bf16_over_fp32']:.2f}", flush=True)
    results["setting"] = {
        "sentences": args.sentences, "rounds": args.rounds, "timing": "median over interleaved rounds",
        "load_average_at_start": load_at_start, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
        "measure": "training target tokens per second (forward, backward, Adam step)",
    }
    report(results, args.out)


if __name__ == "__main__":
    main()
