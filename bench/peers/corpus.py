"""A synthetic simplification corpus for the peer benchmark: every toolkit trains and decodes the
same pairs, and the data carry no licence or download.

Sources are English-like sentences of pseudo-words from a small grammar (15-30 tokens); each
target is a deterministic simplification of its source: adjectives, adverbs, relative clauses and
introductory phrases are dropped. So the task is learnable, the vocabularies are realistic
(~10k source types, a few thousand fewer on the target side) and the lengths are those of
simplification data. Standard library only, seeded: the same files on every machine.

    python bench/peers/corpus.py --out DIR      # DIR/{train,valid,test}.{src,dst}
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

CONSONANTS = "bcdfghjklmnprstvwz"
VOWELS = "aeiou"


def pseudo_words(rng: random.Random, count: int, suffix: str = "") -> list[str]:
    words: set[str] = set()
    while len(words) < count:
        syllables = rng.randint(1, 3)
        words.add("".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(syllables)) + suffix)
    words = sorted(words)
    rng.shuffle(words)  # the rank order (frequency) is unrelated to spelling
    return words


class Grammar:
    """Word classes drawn once; their sizes set the vocabularies (adjectives and adverbs occur
    only in sources, so the target vocabulary is smaller)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.cumulative: dict[int, list[float]] = {}
        self.nouns = pseudo_words(rng, 3200)
        self.verbs = pseudo_words(rng, 1600, "s")
        self.adjectives = pseudo_words(rng, 2500, "ic")
        self.adverbs = pseudo_words(rng, 1200, "ly")
        self.names = [w.capitalize() for w in pseudo_words(rng, 1200)]
        self.determiners = ["the", "a", "this", "that", "every", "some"]
        self.prepositions = ["in", "on", "near", "after", "before", "with", "under", "over"]
        self.openers = [["in", "the", "end", ","], ["however", ","], ["at", "first", ","], ["later", ","]]

    def pick(self, words: list[str]) -> str:
        # Zipf-Mandelbrot frequencies (weight 1 / (rank + 10)), as in real text
        if len(words) not in self.cumulative:
            total, cumulative = 0.0, []
            for rank in range(len(words)):
                total += 1 / (rank + 10)
                cumulative.append(total)
            self.cumulative[len(words)] = cumulative
        return self.rng.choices(words, cum_weights=self.cumulative[len(words)])[0]

    def noun_phrase(self) -> tuple[list[str], list[str]]:
        """(source words, target words) of one noun phrase."""
        if self.rng.random() < 0.2:
            name = self.pick(self.names)
            return [name], [name]
        head = [self.rng.choice(self.determiners)]
        adjectives = [self.pick(self.adjectives) for _ in range(self.rng.choice([0, 1, 1, 2]))]
        noun = self.pick(self.nouns)
        return head + adjectives + [noun], head + [noun]

    def clause(self) -> tuple[list[str], list[str]]:
        subject, subject_simple = self.noun_phrase()
        source, target = list(subject), list(subject_simple)
        if self.rng.random() < 0.35:  # relative clause: dropped
            relative, _ = self.noun_phrase()
            source += [",", "which", self.pick(self.verbs)] + relative + [","]
        if self.rng.random() < 0.4:
            source.append(self.pick(self.adverbs))
        verb = self.pick(self.verbs)
        obj, obj_simple = self.noun_phrase()
        source += [verb] + obj
        target += [verb] + obj_simple
        if self.rng.random() < 0.5:  # prepositional phrase: kept, simplified
            preposition = self.rng.choice(self.prepositions)
            place, place_simple = self.noun_phrase()
            source += [preposition] + place
            target += [preposition] + place_simple
        return source, target

    def pair(self, min_length: int = 15, max_length: int = 30) -> tuple[str, str]:
        while True:
            source, target = [], []
            if self.rng.random() < 0.3:
                source += self.rng.choice(self.openers)
            first, first_simple = self.clause()
            source += first
            target += first_simple
            if self.rng.random() < 0.6:
                second, second_simple = self.clause()
                source += ["and"] + second
                target += ["and"] + second_simple
            source.append(".")
            target.append(".")
            if min_length <= len(source) <= max_length:
                return " ".join(source), " ".join(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=int, default=19200, help="pairs (19,200 = 300 batches of 64)")
    parser.add_argument("--valid", type=int, default=500)
    parser.add_argument("--test", type=int, default=1000)
    args = parser.parse_args()
    grammar = Grammar(random.Random(args.seed))
    args.out.mkdir(parents=True, exist_ok=True)
    for split, count in (("train", args.train), ("valid", args.valid), ("test", args.test)):
        pairs = [grammar.pair() for _ in range(count)]
        for side, column in (("src", 0), ("dst", 1)):
            (args.out / f"{split}.{side}").write_text("".join(p[column] + "\n" for p in pairs))
    print(f"wrote {args.out}/{{train,valid,test}}.{{src,dst}}")


if __name__ == "__main__":
    main()
