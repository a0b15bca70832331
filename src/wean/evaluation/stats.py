"""Statistics of outputs that are not scores against references: how much was compressed or
copied, and the odd-generation counts of Kiyono et al. (PACLIC 2018, section 6.1).

Odd generation, per output, on the tokens of the chosen tokenizer:

repeated tokens
    "the frequency of tokens that occur more than once in the generated headline", from which
    "the frequency of tokens in the reference headline" is subtracted. Per token type t that the
    output holds more than once: max(0, c_output(t) - c_reference(t)), summed over types. Per
    type, because a reference that repeats "the" does not excuse an output that repeats "duran":
    "duran duran duran duran" against "duran duran group fashionable again" counts 4 - 2 = 2, and
    "a b a" against "c" counts 2.
length shortfall
    how many tokens the output is shorter than the reference, max(0, |reference| - |output|):
    the paper's proxy for lost important phrases.

With several references, the most lenient one counts (the minimum over references), as the best
reference counts in ROUGE.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

Tokens = Sequence[str]


def repeated_tokens(output: Tokens, reference: Tokens) -> int:
    reference_counts = Counter(reference)
    return sum(
        max(0, count - reference_counts[token]) for token, count in Counter(output).items() if count > 1
    )


def length_shortfall(output: Tokens, reference: Tokens) -> int:
    return max(0, len(reference) - len(output))


@dataclass(frozen=True)
class OddGeneration:
    """Per-output odd-generation counts, in input order."""

    repeats: list[int]
    shortfall: list[int]

    def summary(self) -> dict[str, float]:
        count = len(self.repeats)
        return {
            "repeated_tokens": sum(self.repeats),
            "outputs_with_repeats": sum(1 for r in self.repeats if r > 0),
            "length_shortfall": sum(self.shortfall),
            "outputs_shorter_than_reference": sum(1 for s in self.shortfall if s > 0),
            "mean_repeated_tokens": sum(self.repeats) / count,
            "mean_length_shortfall": sum(self.shortfall) / count,
        }


def odd_generation(outputs: Sequence[Tokens], references: Sequence[Sequence[Tokens]]) -> OddGeneration:
    """``references[i]`` holds the references of output i."""
    return OddGeneration(
        repeats=[min(repeated_tokens(o, r) for r in refs) for o, refs in zip(outputs, references)],
        shortfall=[min(length_shortfall(o, r) for r in refs) for o, refs in zip(outputs, references)],
    )


def copy_statistics(sources: Sequence[Tokens], outputs: Sequence[Tokens]) -> dict[str, float]:
    """Compression ratio (output characters / source characters, mean over sentences, as EASSE's
    quality estimation), the share of outputs identical to their source (in %), and mean lengths."""
    ratios = []
    for source, output in zip(sources, outputs):
        source_chars = len(" ".join(source))
        if source_chars:
            ratios.append(len(" ".join(output)) / source_chars)
    count = len(outputs)
    return {
        "compression_ratio": sum(ratios) / len(ratios) if ratios else 0.0,
        "identical_to_source": 100.0 * sum(1 for s, o in zip(sources, outputs) if tuple(s) == tuple(o)) / count,
        "output_tokens": sum(len(o) for o in outputs) / count,
        "source_tokens": sum(len(s) for s in sources) / count,
    }
