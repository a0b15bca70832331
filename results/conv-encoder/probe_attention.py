"""Does a trained model attend to source words or to source positions?

Two probes on the first N validation pairs of each model's own validation split:

* keys vs position: the cosine between the attention keys of a sentence and the keys of a
  sentence of the same length made only of <unk>. Where keys are mostly position, the two agree
  (cosine near 1) whatever the words are. Printed for the trained model and for the same
  architecture freshly initialised (same seed), to tell what training added.
* shuffled source: the reference is teacher-forced once with the source and once with the same
  source tokens in a random order. The share of attention mass that stays on the same position
  (1 - total variation between the two maps) against the share that moves with its word.

Usage: python results/conv-encoder/probe_attention.py MODEL_DIR [MODEL_DIR ...] [--pairs 100]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import torch

import wean
from wean.data.corpus import read_parallel
from wean.data.vocabulary import BOS_ID, UNK_ID
from wean.models.model import build_model


def encode(generator, sentence: str) -> list[int]:
    return generator.assets.source_vocabulary.encode(generator.tokenizer.encode(sentence))


def keys_cosine_with_unk_sentence(model, sources: list[list[int]]) -> float:
    cosines = []
    for ids in sources:
        real = model.encode(torch.tensor([ids]), torch.tensor([len(ids)])).attention_keys[0]
        unknown = model.encode(torch.tensor([[UNK_ID] * len(ids)]), torch.tensor([len(ids)])).attention_keys[0]
        cosines.append(torch.cosine_similarity(real, unknown, -1).mean().item())
    return sum(cosines) / len(cosines)


def teacher_forced_attention(model, source: list[int], target: list[int]) -> torch.Tensor:
    output = model(torch.tensor([source]), torch.tensor([len(source)]), torch.tensor([[BOS_ID] + target[:-1]]))
    return output.attention[0]  # (target, source)


def shuffle_probe(model, sources, targets, seed: int = 0) -> tuple[float, float]:
    rng = random.Random(seed)
    stays, follows = [], []
    for source, target in zip(sources, targets):
        order = list(range(len(source)))
        rng.shuffle(order)
        original = teacher_forced_attention(model, source, target)
        shuffled = teacher_forced_attention(model, [source[i] for i in order], target)
        by_word = torch.zeros_like(shuffled)
        by_word[:, order] = shuffled  # the weight each original token receives after the shuffle
        stays.append(1 - 0.5 * (original - shuffled).abs().sum(-1).mean().item())
        follows.append(1 - 0.5 * (original - by_word).abs().sum(-1).mean().item())
    return sum(stays) / len(stays), sum(follows) / len(follows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--pairs", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for directory in args.models:
        generator = wean.load(directory)
        valid = read_parallel(generator.config.data.valid)
        pairs = list(zip(valid.sources, valid.targets))[: args.pairs]
        sources = [encode(generator, source) for source, _ in pairs]
        targets = [
            generator.assets.target_vocabulary.encode(generator.tokenizer.encode(target), add_eos=True)
            for _, target in pairs
        ]
        torch.manual_seed(generator.config.training.seed)
        untrained = build_model(
            generator.config.model, len(generator.assets.source_vocabulary), len(generator.assets.target_vocabulary)
        ).eval()
        with torch.no_grad():
            stays, follows = shuffle_probe(generator.model, sources, targets)
            row = {
                "keys_cosine_with_unk_sentence": round(keys_cosine_with_unk_sentence(generator.model, sources), 3),
                "keys_cosine_with_unk_sentence_untrained": round(keys_cosine_with_unk_sentence(untrained, sources), 3),
                "attention_staying_at_position": round(stays, 3),
                "attention_following_its_word": round(follows, 3),
            }
        print(Path(directory).name, json.dumps(row))  # the run's name: no machine paths in results/


if __name__ == "__main__":
    main()
