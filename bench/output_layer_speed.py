"""Decoding speed of WEAN's output layer against the linear layer it replaces: beam-5
sentences/s of the same model with each output layer, and the time of the output layer alone for
one beam step, measured in the same run on the same sentences (rounds interleaved, medians over rounds:
bench/timing.py), as ratios against the linear layer. Random weights; every model decodes the same
number of steps (min_length = max_length), so the comparison is per step, not per output length.

    python bench/output_layer_speed.py [--vocabulary 50004 --size 256] [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from seq2seq_speed import synthetic_examples  # noqa: E402
from timing import interleaved, load_average, rates, report  # noqa: E402

from wean.config import ModelConfig, section_config  # noqa: E402
from wean.data.corpus import collate  # noqa: E402
from wean.models.model import build_model  # noqa: E402
from wean.search import beam_search  # noqa: E402

VARIANTS = [("linear", "general"), ("wean", "dot"), ("wean", "general"), ("wean", "concat")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--vocabulary", type=int, default=50004)
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_at_start = load_average()
    generator = torch.Generator().manual_seed(0)
    batch = collate(synthetic_examples(args.sentences, args.vocabulary, generator))
    models = {}
    for kind, score in VARIANTS:
        torch.manual_seed(0)
        config = ModelConfig(embedding_size=args.size)
        config.encoder.hidden_size = config.decoder.hidden_size = args.size
        config.output_layer = section_config("model.output_layer", {"type": kind, **({"score": score} if kind == "wean" else {})})
        models[kind if kind == "linear" else f"wean-{score}"] = build_model(config, args.vocabulary, args.vocabulary).eval()

    def decode(model):
        beam_search(model, batch.source, batch.source_lengths, beam_size=5, max_length=args.steps, min_length=args.steps)

    queries = torch.randn(args.sentences * 5, args.size)  # one beam step's queries
    for model in models.values():
        decode(model)  # warm-up; for WEAN this also fills the cache of the embedding side
    decoding = rates(interleaved({name: lambda model=model: decode(model) for name, model in models.items()},
                                 args.rounds), args.sentences, "linear")
    with torch.no_grad():
        steps = rates(interleaved({name: lambda model=model: model.output_layer(queries)
                                   for name, model in models.items()}, args.rounds), 1, "linear")
    results = {
        name: {
            "sentences_per_second": decoding[name],
            "ratio_to_linear": decoding.get(f"{name}_over_linear", 1.0),
            "output_layer_ms_per_step": 1000 / steps[name],
            "output_layer_time_ratio_to_linear": 1 / steps.get(f"{name}_over_linear", 1.0),
        }
        for name in models
    }
    results["setting"] = {"size": args.size, "vocabulary": args.vocabulary, "sentences": args.sentences,
                          "steps": args.steps, "beam": 5, "rounds": args.rounds, "timing": "median over interleaved rounds",
                          "load_average_at_start": load_at_start,
                          "torch": torch.__version__, "threads": torch.get_num_threads()}
    report(results, args.out)


if __name__ == "__main__":
    main()
