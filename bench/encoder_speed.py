"""Training speed of the convolutional encoder (Gehring et al. 2016) against the LSTM encoder, in
the two shapes of results/conv-encoder: each whole model (the rows of the table: LSTM encoder +
RNNsearch decoder, conv encoder + conditional decoder, both from configs/rnnsearch-gigaword.yaml)
in training tokens/s, and each encoder alone (forward + backward) in source tokens/s, for short
(Gigaword-like) and long sources. The conv encoder's case is parallelism: its convolutions see
every position at once where the LSTM steps through the source. Random weights and batches;
rounds interleaved, medians over rounds, ratios against the LSTM encoder (bench/timing.py).

    python bench/encoder_speed.py [--lengths 30 100] [--rounds 5] [--device cuda] [--out DIR]

On a GPU each timed step ends by waiting for its kernels (torch.cuda.synchronize), since they run
after the call returns.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import interleaved, load_average, rates, report  # noqa: E402

from wean.config import load_config  # noqa: E402
from wean.data.corpus import Example, collate  # noqa: E402
from wean.models.model import build_model  # noqa: E402

CONFIG = Path(__file__).parent.parent / "configs" / "rnnsearch-gigaword.yaml"
CONV = {"type": "conv", "layers": 6, "hidden_size": 256}  # the conv-encoder row of run-gigaword.sh


def models(vocabulary: int) -> dict[str, torch.nn.Module]:
    built = {}
    for name in ("lstm", "conv"):
        config = load_config(CONFIG).model
        config.dropout = 0.0  # speed only; dropout masks would add noise between repeats
        if name == "conv":
            for key, value in CONV.items():
                setattr(config.encoder, key, value)
            config.decoder.type, config.decoder.bridge = "conditional", "zero"
        torch.manual_seed(0)
        built[name] = build_model(config, vocabulary, vocabulary)
    return built


def batch_of(
    sentences: int, length: int, target_length: int, vocabulary: int, generator: torch.Generator,
    extend_target=None,
):
    """Random pairs; ``extend_target``: the model's (SPM continues the targets)."""
    examples = []
    for i in range(sentences):
        source = torch.randint(4, vocabulary, (length,), generator=generator).tolist()
        target = torch.randint(4, vocabulary, (target_length,), generator=generator).tolist() + [3]
        examples.append(Example(i, source, target))
    return collate(examples, extend_target)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[30, 100], help="source lengths")
    parser.add_argument("--target-length", type=int, default=12)
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--vocabulary", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_at_start = load_average()
    generator = torch.Generator().manual_seed(0)
    device = torch.device(args.device)
    built = {name: model.to(device) for name, model in models(args.vocabulary).items()}
    finish = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    results: dict[str, dict] = {}
    for length in args.lengths:
        batch = batch_of(args.sentences, length, args.target_length, args.vocabulary, generator).to(device)
        optimizers = {name: torch.optim.Adam(model.parameters(), lr=1e-4) for name, model in built.items()}

        def train_step(name):
            model, optimizer = built[name], optimizers[name]
            log_probs = model(batch.source, batch.source_lengths, batch.target_input).log_probs
            loss = torch.nn.functional.nll_loss(log_probs.reshape(-1, log_probs.size(-1)), batch.target_output.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            finish()

        def encoder_step(name):
            encoded = built[name].encoder(batch.source, batch.source_lengths)
            keys = encoded.keys.sum() if encoded.keys is not None else 0  # CNN-a; the LSTM has none
            (encoded.states.sum() + keys).backward()
            built[name].zero_grad()
            finish()

        for name in built:  # warm-up
            train_step(name)
            encoder_step(name)
        train = interleaved({name: lambda name=name: train_step(name) for name in built}, args.rounds)
        encoder = interleaved({name: lambda name=name: encoder_step(name) for name in built}, args.rounds)
        results[f"source_length_{length}"] = {
            "train_target_tokens_per_second": rates(train, batch.target_tokens, "lstm"),
            "encoder_source_tokens_per_second": rates(encoder, args.sentences * length, "lstm"),
        }
    results["setting"] = {
        "config": CONFIG.name, "conv_encoder": CONV, "sentences": args.sentences, "target_length": args.target_length,
        "vocabulary": args.vocabulary, "rounds": args.rounds, "timing": "median over interleaved rounds",
        "load_average_at_start": load_at_start, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "parameters": {name: sum(p.numel() for p in model.parameters()) for name, model in built.items()},
    }
    report(results, args.out)


if __name__ == "__main__":
    main()
