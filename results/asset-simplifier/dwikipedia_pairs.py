"""How many sentence pairs the one unused simplification data of the data root, D-Wikipedia's
3,000 validation documents (an English Wikipedia lead section and its Simple English Wikipedia
one, lowercased, PTB-tokenized), would give: each document split into sentences, each simple
sentence aligned with the most similar sentence of its complex document (difflib's ratio over
tokens), counted at each similarity threshold. It writes nothing: a count, to weigh against the
learning curve (README, "How much the data limits it").

    python results/asset-simplifier/dwikipedia_pairs.py [--examples 12]
"""

from __future__ import annotations

import argparse
import random
import re
from difflib import SequenceMatcher

from wean.data.root import data_root
from wean.textio import read_lines

# the corpus lost some spaces after a full stop ("highland.between"); a stop between two word
# characters and two letters is taken for one, which "u.s." (one letter after) is not
JOINED = re.compile(r"(?<=\w\w)\.(?=[a-z]{2})")
SENTENCE_END = re.compile(r"(?<= [.?!]) (?!'')")
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def sentences(document: str) -> list[str]:
    """The document's sentences of five tokens or more."""
    document = JOINED.sub(" . ", document)
    return [s.strip() for s in SENTENCE_END.split(document) if len(s.split()) >= 5]


def aligned(complex_document: str, simple_document: str) -> list[tuple[float, str, str]]:
    """(similarity, complex sentence, simple sentence) for each simple sentence: its most similar complex one."""
    candidates = sentences(complex_document)
    pairs = []
    for simple in sentences(simple_document):
        tokens = simple.split()
        best = max(((SequenceMatcher(None, c.split(), tokens, autojunk=False).ratio(), c) for c in candidates),
                   default=(0.0, ""))
        pairs.append((best[0], best[1], simple))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=12, help="pairs printed at random (seed 91), similarity 0.6-1")
    args = parser.parse_args()
    root = data_root(None) / "dwikipedia"
    complex_documents = read_lines(root / "valid.src")
    pairs = [pair for c, s in zip(complex_documents, read_lines(root / "valid.dst")) for pair in aligned(c, s)]
    complex_count = sum(len(sentences(c)) for c in complex_documents)
    print(f"{complex_count} complex and {len(pairs)} simple sentences of five tokens or more")
    for threshold in THRESHOLDS:
        kept = [p for p in pairs if p[0] >= threshold]
        identical = sum(c == s for _, c, s in kept)
        print(f"similarity >= {threshold}: {len(kept)} pairs, {identical} identical, {len(kept) - identical} changed")
    changed = [p for p in pairs if 0.6 <= p[0] < 1.0]
    for similarity, complex_sentence, simple in random.Random(91).sample(changed, min(args.examples, len(changed))):
        print(f"\n{similarity:.2f} {complex_sentence}\n  -> {simple}")


if __name__ == "__main__":
    main()
