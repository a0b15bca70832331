"""Training tokens/s and beam-5 sentences/s of wean's baseline model, each as a ratio against
the minimal plain-PyTorch implementation in bench/reference_seq2seq.py, measured in the same run
on the same batches, rounds interleaved, medians over rounds (bench/timing.py; random weights:
speed does not depend on them).

    python bench/seq2seq_speed.py [--size 256 --layers 2 --vocabulary 50004] [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from reference_seq2seq import ReferenceSeq2seq  # noqa: E402
from timing import interleaved, load_average, rates, report  # noqa: E402

from wean.config import ModelConfig  # noqa: E402
from wean.data.corpus import Example, collate, make_batches  # noqa: E402
from wean.models.model import build_model  # noqa: E402
from wean.search import beam_search  # noqa: E402


def synthetic_examples(count: int, vocabulary: int, generator: torch.Generator) -> list[Example]:
    """Random sentences with Kauchak-like lengths (source 10-40 tokens, target a bit shorter)."""
    examples = []
    for i in range(count):
        length = int(torch.randint(10, 41, (1,), generator=generator))
        source = torch.randint(4, vocabulary, (length,), generator=generator).tolist()
        target = source[: max(3, length - int(torch.randint(0, 8, (1,), generator=generator)))] + [3]
        examples.append(Example(i, source, target))
    return examples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocabulary", type=int, default=50004)
    parser.add_argument("--train-batches", type=int, default=6)
    parser.add_argument("--beam-sentences", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_at_start = load_average()
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)

    config = ModelConfig(embedding_size=args.size, dropout=0.0)
    config.encoder.hidden_size = config.decoder.hidden_size = args.size
    config.encoder.layers = config.decoder.layers = args.layers
    ours = build_model(config, args.vocabulary, args.vocabulary)
    reference = ReferenceSeq2seq(args.vocabulary, args.size, args.layers)
    examples = synthetic_examples(64 * args.train_batches, args.vocabulary, generator)
    batches = [collate(b) for b in make_batches(examples, 64, generator=generator)][: args.train_batches]
    tokens = sum(b.target_tokens for b in batches)

    def train(model, loss_of):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

        def run(subset=batches):
            for batch in subset:
                loss = loss_of(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        return run

    def ours_loss(batch):
        log_probs = ours(batch.source, batch.source_lengths, batch.target_input).log_probs
        return torch.nn.functional.nll_loss(
            log_probs.reshape(-1, log_probs.size(-1)), batch.target_output.reshape(-1), ignore_index=-100
        )

    def reference_loss(batch):
        return reference.loss(batch.source, batch.target_input, batch.target_output)

    training = {"wean": train(ours, ours_loss), "reference": train(reference, reference_loss)}
    for run in training.values():
        run(batches[:1])  # warm-up: first calls allocate, and Adam creates its state
    results = {"train_tokens_per_second": rates(interleaved(training, args.rounds), tokens, "reference")}

    ours.eval()
    reference.eval()
    sentences = synthetic_examples(args.beam_sentences, args.vocabulary, generator)
    batch = collate(sentences)
    beam_search(ours, batch.source[:2], batch.source_lengths[:2], beam_size=5, max_length=50)  # warm-up
    reference.beam_search(torch.tensor([sentences[0].source]), 5, 50)
    results["beam5_sentences_per_second"] = rates(interleaved({
        "wean": lambda: beam_search(ours, batch.source, batch.source_lengths, beam_size=5, max_length=50),
        "reference": lambda: [reference.beam_search(torch.tensor([e.source]), 5, 50) for e in sentences],
    }, args.rounds), len(sentences), "reference")
    results["setting"] = {
        "size": args.size, "layers": args.layers, "vocabulary": args.vocabulary, "train_batches": len(batches),
        "train_tokens": tokens, "beam_sentences": len(sentences), "rounds": args.rounds,
        "timing": "median over interleaved rounds", "load_average_at_start": load_at_start, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
    }
    report(results, args.out)


if __name__ == "__main__":
    main()
