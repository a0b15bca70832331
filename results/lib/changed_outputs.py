"""What a system's changed outputs are made of, counted against a benchmark's sources: per output
file, how many outputs differ from their source, how many sources hold a character outside ASCII
and in how many of those the output lacks one of them (mangled: kauchak_v2, the simplification
rows' training text, carries upstream mojibake, so a model may write `Ã` where the source has
`ü`), how many outputs repeat a word 3-gram more often than their source does (a decoder looping
over a span), and the benchmark's SARI as written and with each mangled output replaced by its
source (what the mangling is worth to SARI; the replacement also undoes any other edit there).

    python results/lib/changed_outputs.py turkcorpus-test \\
        results/word-attention/converged/*-seed?.turkcorpus-test.txt

One tab-separated line per file: file, outputs, changed, non-ASCII sources, mangled, repeating,
SARI, SARI with the mangled outputs restored.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from wean.evaluation import data_root, get_benchmark
from wean.errors import WeanError
from wean.evaluation.evaluate import EvaluationSettings, evaluate


def non_ascii(text: str) -> set[str]:
    return {character for character in text if ord(character) > 127}


def mangles(output: str, source: str) -> bool:
    return any(character not in output for character in non_ascii(source))


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
        "mangled": sum(1 for source, output in pairs if mangles(output, source)),
        "repeating": sum(1 for source, output in changed if repeats_a_trigram(output, source)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmark", help="a benchmark with sources and references, e.g. turkcorpus-test")
    parser.add_argument("outputs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        benchmark = get_benchmark(args.benchmark)
        source_path, reference_paths = benchmark.paths(data_root())
        sources = source_path.read_text(encoding="utf-8").splitlines()
        references = [path.read_text(encoding="utf-8").splitlines() for path in reference_paths]
        written = {path: path.read_text(encoding="utf-8").splitlines() for path in args.outputs}
    except (WeanError, OSError, UnicodeDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings = EvaluationSettings(("sari",), "default", benchmark.lowercase, benchmark.tokenizer)

    def sari(outputs: list[str]) -> float:
        return evaluate(outputs, sources, references, settings).results[0].scores["sari"]

    print("file\toutputs\tchanged\tnon_ascii_sources\tmangled\trepeating\tsari\tsari_mangled_restored")
    for path, outputs in written.items():
        if len(outputs) != len(sources):
            print(f"{path}: {len(outputs)} lines, {source_path} has {len(sources)}", file=sys.stderr)
            return 2
        restored = [source if mangles(output, source) else output for source, output in zip(sources, outputs)]
        print(path.name, *count(sources, outputs).values(), f"{sari(outputs):.2f}", f"{sari(restored):.2f}", sep="\t")
    return 0


if __name__ == "__main__":
    sys.exit(main())
