"""What a system's changed outputs are made of, counted against the sources: per output file, how
many outputs differ from their source, how many sources hold a character outside ASCII and in how
many of those the output lacks one of them (mangled: kauchak_v2, the simplification rows' training
text, carries upstream mojibake, so a model may write `Ã` where the source has `ü`), and how many
outputs repeat a word 3-gram more often than their source does (a decoder looping over a span).

    .venv/bin/python results/lib/changed_outputs.py ../shared/data/turkcorpus/case_detok/test.src \\
        results/word-attention/converged/*-seed?.turkcorpus-test.txt

One tab-separated line per file: file, outputs, changed, non-ASCII sources, mangled, repeating.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path


def non_ascii(text: str) -> set[str]:
    return {character for character in text if ord(character) > 127}


def repeats_a_trigram(output: str, source: str) -> bool:
    """True if some word 3-gram occurs more than once in the output and more often than in the source."""

    def trigrams(text: str) -> Counter:
        words = text.split()
        return Counter(zip(words, words[1:], words[2:]))

    in_output, in_source = trigrams(output), trigrams(source)
    return any(count > 1 and count > in_source[gram] for gram, count in in_output.items())


def count(sources: list[str], outputs: list[str]) -> dict[str, int]:
    pairs = [(source.strip(), output.strip()) for source, output in zip(sources, outputs, strict=True)]
    changed = [(source, output) for source, output in pairs if source != output]
    return {
        "outputs": len(pairs),
        "changed": len(changed),
        "non_ascii_sources": sum(1 for source, _ in pairs if non_ascii(source)),
        "mangled": sum(1 for source, output in pairs if any(c not in output for c in non_ascii(source))),
        "repeating": sum(1 for source, output in changed if repeats_a_trigram(output, source)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", type=Path)
    parser.add_argument("outputs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    sources = args.sources.read_text(encoding="utf-8").splitlines()
    print("file\toutputs\tchanged\tnon_ascii_sources\tmangled\trepeating")
    for path in args.outputs:
        outputs = path.read_text(encoding="utf-8").splitlines()
        if len(outputs) != len(sources):
            print(f"{path}: {len(outputs)} lines, {args.sources} has {len(sources)}", file=sys.stderr)
            return 2
        print(path.name, *count(sources, outputs).values(), sep="\t")
    return 0


if __name__ == "__main__":
    sys.exit(main())
